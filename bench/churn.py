#!/usr/bin/env python3
"""Connection churn: mcbench --num-conns against twemperf (mcperf) built
from source, the same shape of run side by side.

Each run gets a fresh memcached (-t 1) pinned to core 0 and the tool pinned
to core 1. Connections are counted by the server (`total_connections`
delta) and requests by it too (`cmd_set`), so both tools are judged by the
same counter. Client CPU is user+sys from wait4's rusage. Prints, per row,
the median of --runs runs: connections per second (wall time of the whole
run), client CPU per connection, and mcbench's ratios to twemperf.

Usage: bench/churn.py --mcperf /path/to/twemperf/src/mcperf [--runs 5]
Build twemperf: fetch github.com/twitter/twemperf, then
  apt-get install autoconf automake libtool; autoreconf -fvi; ./configure; make
"""
import argparse, os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import MCBENCH, Memcached, stats  # noqa: E402

# (name, connections, conn rate (0 = one after another), calls each, extra
# mcbench flags)
ROWS = [
    ("one after another, 10 calls", 3000, "0", 10, []),
    ("one after another, --busy-poll", 3000, "0", 10, ["--busy-poll"]),
    ("5000 conn/s, 1 call", 10000, "5000", 1, []),
    ("10000 conn/s, 1 call", 10000, "10000", 1, []),
]


def commands(tool, port, conns, rate, calls, extra):
    if tool == "twemperf":
        return [ARGS.mcperf, "-s", "127.0.0.1", "-p", str(port), "--linger=0", "--timeout=5",
                f"--conn-rate={rate}", f"--num-conns={conns}", f"--num-calls={calls}",
                "--call-rate=0", "--sizes=d200", "--method=set"]
    return [MCBENCH, "run", "-s", f"127.0.0.1:{port}", "-c", "1", "--no-load", "-u", "1",
            "-V", "200", "--linger=0", "--timeout=5", f"--conn-rate={rate}",
            f"--num-conns={conns}", f"--num-calls={calls}", "--call-rate=0", *extra]


def run_once(tool, conns, rate, calls, extra):
    m = Memcached(max_conns=16384)
    try:
        before = stats(m.where)
        start = time.monotonic()
        p = subprocess.Popen(["taskset", "-c", "1", *commands(tool, m.port, conns, rate, calls, extra)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{tool} failed")
        after = stats(m.where)
        # Connections that made their calls, by the server's count of sets
        # (its total_connections may lag behind reset connections).
        sets = int(after["cmd_set"]) - int(before["cmd_set"])
        made = sets / calls
        return {"conns": made, "sets": sets, "conn_s": made / wall,
                "cpu_us_per_conn": (ru.ru_utime + ru.ru_stime) / max(made, 1) * 1e6}
    finally:
        m.stop()


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcperf", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ARGS = ap.parse_args()
    print(f"{'row':32} {'tool':9} {'conns':>6} {'sets':>7} {'conn/s':>9} {'CPU µs/conn':>12}")
    for name, conns, rate, calls, extra in ROWS:
        med = {}
        for tool in ["twemperf", "mcbench"]:
            # Alternate runs would be fairer to drift; tools are run back to
            # back per row, each run on a fresh server.
            runs = [run_once(tool, conns, rate, calls, extra) for _ in range(ARGS.runs)]
            med[tool] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            r = med[tool]
            print(f"{name:32} {tool:9} {r['conns']:6.0f} {r['sets']:7.0f} {r['conn_s']:9.0f} "
                  f"{r['cpu_us_per_conn']:12.1f}")
        t, b = med["twemperf"], med["mcbench"]
        print(f"{'':32} {'ratio':9} {'':6} {'':7} {b['conn_s'] / t['conn_s']:9.2f} "
              f"{b['cpu_us_per_conn'] / t['cpu_us_per_conn']:12.2f}")


if __name__ == "__main__":
    main()
