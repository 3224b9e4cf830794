#!/usr/bin/env python3
"""Trace decoding and scheduling speed: records per second per core.

Generates synthetic traces (never real ones) in /tmp, then reads each
through `mcbench trace-stat`, which runs the replay's own feed (decode,
spread over each second, batch, hand over) into a consumer that only
counts. The whole process is pinned to one core (taskset), so the figure is
per core with the reader and the consumer sharing it. Median of --runs.

    python3 bench/trace.py [--lines 5000000] [--runs 3] [--core 1]
"""
import argparse
import os
import re
import statistics
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCBENCH = os.environ.get("MCBENCH", os.path.join(ROOT, "target/release/mcbench"))


def twitter(path, lines):
    """Twitter-like lines: 40-70 byte keys with namespaces, 100k per second."""
    with open(path, "w") as f:
        for i in range(lines):
            key = "nz:u:%s" % format((i * 2654435761) % 10**12, "x").rjust(40 + i % 30, "Z")
            op = "set" if i % 10 == 0 else "get"
            f.write("%d,%s,%d,%d,%d,%s,0\n" % (i // 100000, key, len(key), 100 + i % 400, i % 50, op))


def oracle(path, lines):
    rec = struct.Struct("<IQIq")
    with open(path, "wb") as f:
        for i in range(lines):
            f.write(rec.pack(i // 100000, (i * 2654435761) % 2**64, 100 + i % 400, -1))


def rate(path, core, speed):
    cmd = ["taskset", "-c", str(core), MCBENCH, "trace-stat", path]
    if speed:
        cmd += ["--trace-speed", speed]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"([0-9.]+) records/s", out).group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lines", type=int, default=5_000_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--core", type=int, default=1)
    a = p.parse_args()
    files = []
    tw = "/tmp/mcbench-bench-twitter.csv"
    twitter(tw, a.lines)
    subprocess.run(["zstd", "-q", "-f", tw, "-o", tw + ".zst"], check=True)
    og = "/tmp/mcbench-bench.oracleGeneral"
    oracle(og, a.lines)
    files = [(tw, None), (tw, "1x"), (tw + ".zst", "1x"), (og, "1x")]
    print("| trace | timing | records/s per core (median of %d) |" % a.runs)
    print("| --- | --- | --- |")
    for path, speed in files:
        rates = [rate(path, a.core, speed) for _ in range(a.runs)]
        print("| %s | %s | %s |" % (os.path.basename(path), speed or "ignore",
                                    format(int(statistics.median(rates)), ",")))
    for path in (tw, tw + ".zst", og):
        os.unlink(path)


if __name__ == "__main__":
    sys.exit(main())
