#!/usr/bin/env python3
"""The gaps between requests as the server's side of loopback sees them:
an oracle outside every load generator for whether its sends are still
Poisson (coefficient of variation of the gaps 1) and how they bunch.

Each run gets a fresh memcached (-t 1, core 0; bench/compare.py's) and
its key space preloaded; tcpdump (core 0) captures every TCP segment to
memcached's port that carries a request (PSH set), stamped by the kernel
in ns as it crosses the loopback device; the command runs on core 1.
Gaps are taken between consecutive captured requests, after the first
--skip seconds and before the last 0.2 s; each run prints their CV and
their Kolmogorov-Smirnov distance to the exponential of the same mean (a
few stalls of the host inflate the CV but barely move the distance; for
Poisson sends at 65k gaps it is under 0.006 in 95 % of runs). Commands
alternate per run.

Usage: bench/gaps.py [--runs 3] [--skip 0.5] LABEL COMMAND [LABEL COMMAND ...]
  (COMMAND is one string; PORT in it is memcached's port), e.g.
  bench/gaps.py --runs 3 \\
    floor 'target/floor PORT 50 1 4 20000 timer' \\
    mcbench 'target/release/mcbench run -s 127.0.0.1:PORT --no-load -r 10000 -K 30 -V 200 -u 0.1 -T 1 -c 50 -t 4s -q 20000'
Needs tcpdump (apt-get install tcpdump), memcached and taskset; the floor
client is built by bench/compare.py --only floors.
"""
import argparse, math, os, shlex, statistics, struct, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Memcached, preload_any_command  # noqa: E402

# Read by hand: the standard library has no pcap reader, and only the
# capture times are needed.
# pcap: a 24-byte file header, then per packet a 16-byte record header
# (seconds, fraction, captured length, length); magic a1b23c4d: ns.
NANO_MAGIC = 0xA1B23C4D


def pcap_times(path):
    """Capture times of every packet in a pcap file, ns."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data)[0]
    if magic != NANO_MAGIC:
        raise SystemExit(f"{path}: not a nanosecond pcap (magic {magic:#x})")
    times, at = [], 24
    while at + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack_from("<IIII", data, at)
        times.append(sec * 1_000_000_000 + frac)
        at += 16 + caplen
    return times


def exp_distance(gaps, mean):
    """Kolmogorov-Smirnov distance between the gaps and the exponential
    of their mean: 0 for Poisson sends. Unlike the CV, a few long gaps (a
    host's stall) barely move it; bunched sends (too many short gaps and
    long ones) do."""
    d, n = 0.0, len(gaps)
    for i, g in enumerate(sorted(gaps)):
        model = 1.0 - math.exp(-g / mean)
        d = max(d, abs((i + 1) / n - model), abs(i / n - model))
    return d


def gap_stats(times, skip_ns, tail_ns=200_000_000):
    """(gaps, mean µs, CV, KS distance to the exponential) of the gaps
    between consecutive times inside the window."""
    lo, hi = times[0] + skip_ns, times[-1] - tail_ns
    kept = [t for t in times if lo <= t <= hi]
    gaps = [b - a for a, b in zip(kept, kept[1:])]
    if len(gaps) < 2:
        return len(gaps), 0.0, float("nan"), float("nan")
    mean = statistics.fmean(gaps)
    return len(gaps), mean / 1000, statistics.pstdev(gaps) / mean, exp_distance(gaps, mean)


def run_once(label, command, skip_s):
    m = Memcached()
    pcap = tempfile.NamedTemporaryFile(suffix=".pcap", delete=False).name
    try:
        preload_any_command(m)
        dump = subprocess.Popen(
            ["taskset", "-c", "0", "tcpdump", "-i", "lo", "-nn", "-B", "65536", "-s", "80",
             "--time-stamp-precision=nano", "-w", pcap,
             f"tcp dst port {m.port} and (tcp[tcpflags] & tcp-push != 0)"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        said = dump.stderr.readline()  # "listening on lo ...": capturing from here
        if dump.poll() is not None:
            raise SystemExit(f"tcpdump did not start: {said.strip()}")
        before = m.ops()
        cmd = [a.replace("PORT", str(m.port)) for a in shlex.split(command)]
        subprocess.run(["taskset", "-c", "1", *cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        time.sleep(0.1)
        dump.terminate()
        dump.wait()
        ops = m.ops() - before
    finally:
        m.stop()
    times = pcap_times(pcap)
    os.unlink(pcap)
    if len(times) < 3:
        raise SystemExit(f"{label}: {len(times)} requests captured")
    n, mean_us, cv, ks = gap_stats(times, int(skip_s * 1e9))
    return {"requests": ops, "segments": len(times), "gaps": n, "mean_us": mean_us, "cv": cv, "ks": ks}


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip", type=float, default=0.5)
    ap.add_argument("pairs", nargs="+")
    args = ap.parse_args()
    if len(args.pairs) % 2:
        sys.exit("give LABEL COMMAND pairs")
    tools = list(zip(args.pairs[::2], args.pairs[1::2]))
    results = {label: [] for label, _ in tools}
    for i in range(args.runs):
        for label, command in tools:
            r = run_once(label, command, args.skip)
            results[label].append(r)
            print(f"run {i + 1} {label:12} requests {r['requests']:7} segments {r['segments']:7} "
                  f"gaps {r['gaps']:7} mean {r['mean_us']:6.1f} µs  CV {r['cv']:.3f}  "
                  f"KS {r['ks']:.4f}", flush=True)
    for label, runs in results.items():
        for key in ["cv", "ks"]:
            values = [r[key] for r in runs]
            each = ", ".join(f"{v:.3f}" for v in values)
            print(f"{label:12} median {key.upper():2} {statistics.median(values):.3f} (runs: {each})")


if __name__ == "__main__":
    main()
