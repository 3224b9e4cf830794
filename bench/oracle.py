#!/usr/bin/env python3
"""The truth oracle for latency: mcbench against a server whose service
times are known, each printed percentile against the truth: for an open
loop the simulated truth of the run's own schedule, for a closed loop
(`-d N`, N > 1) each request's time held at the server.

The server is bench/oracle/delay_line.c (built here into target/oracle/),
pinned to core 0; mcbench runs pinned to core 1, one worker, depth 1, and
saves every request (`--save`). The truth is a simulation of a perfect
client: the saved intended send times, in order, go FIFO into the run's C
connections; a request starts at max(intended, the first connection free)
and takes the service time the server drew for it plus the server's own
lateness in writing it (both from the server's log, in the order requests
came). With `stall`, the stall is recomputed at the simulated times. The
simulation has no network and no client: its latencies are what a client
that adds nothing would have measured.

A closed loop (`-d 16 -c 16`, no rate) has no schedule to simulate: each
request's truth is how long the server held it (its drawn time, or longer
behind the connection's previous reply) plus how late the server wrote
it, from the server's log. Its policies are the default read policy
(`default`: at this depth a pause before reads, answers timed by their
kernel receive stamps) and reading at once (`--read-delay 0`).

Usage: bench/oracle.py [--runs 3] [--seconds 5] [--rate 2000] [-c 8] [-d 1]
                       [--cases fixed,normal,pareto,stall]
                       [--policies late,at-once,coalesce,busy-poll | default,read-at-once]
Prints, per case and policy, the medians over the runs of measured/simulated
per percentile and of the share of requests that waited for a connection
(open loop only).
Needs gcc, taskset and a release build (cargo build --release), or $MCBENCH.
"""
import argparse, csv, heapq, json, os, signal, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCBENCH = os.environ.get("MCBENCH", os.path.join(ROOT, "target", "release", "mcbench"))
SERVER = os.path.join(ROOT, "target", "oracle", "delay_line")

CASES = {
    "fixed": "fixed:2000",
    "normal": "normal:2000:500",
    "pareto": "pareto:1000:2.5",
    "stall": "stall:2000",
}
POLICIES = {
    "late": [],
    "at-once": ["--read-answers", "at-once"],
    "coalesce": ["--coalesce", "200us"],
    "busy-poll": ["--busy-poll"],
}
CLOSED_POLICIES = {
    "default": [],
    "read-at-once": ["--read-delay", "0"],
}
STALL_PERIOD_NS, STALL_NS = 1_000_000_000, 100_000_000
# The JSON's keys and the percentiles they stand for.
PERCENTILES = {"p50": 50, "p90": 90, "p99": 99, "p999": 99.9}


def build_server():
    os.makedirs(os.path.dirname(SERVER), exist_ok=True)
    src = os.path.join(ROOT, "bench", "oracle", "delay_line.c")
    subprocess.run(["cc", "-O2", "-o", SERVER, src, "-lm"], check=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return
        except OSError:
            time.sleep(0.01)
    sys.exit(f"delay_line did not listen on {port}")


def released(due, origin):
    """With stalls: when a reply due at `due` goes out."""
    into = (due - origin) % STALL_PERIOD_NS
    return due + (STALL_NS - into) if due >= origin and into < STALL_NS else due


def simulate(intended, service, conns, stall):
    """Latencies (ns) and waits of a perfect FIFO client with `conns`
    depth-1 connections: `intended` sorted, `service[i]` the i-th
    request's (drawn, late) at the server."""
    free = [0] * conns
    latencies, waits = [], 0
    origin = intended[0] if intended else 0
    for t, (drawn, late, _held) in zip(intended, service):
        first_free = heapq.heappop(free)
        start = max(t, first_free)
        waits += first_free > t
        due = start + drawn
        end = (released(due, origin) if stall else due) + late
        heapq.heappush(free, end)
        latencies.append(end - t)
    return latencies, waits


def percentile(sorted_values, p):
    """The value at or below which p % of them lie (HdrHistogram's rule)."""
    k = max(0, min(len(sorted_values) - 1, int(p / 100.0 * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


def one_run(case, policy, args, workdir):
    port = free_port()
    log = os.path.join(workdir, "server.log")
    server = subprocess.Popen(["taskset", "-c", "0", SERVER, str(port), CASES[case], log])
    try:
        wait_listening(port)
        save = os.path.join(workdir, "samples.tsv")
        out = os.path.join(workdir, "r.json")
        load = ["-d", str(args.d)] + CLOSED_POLICIES[policy] if closed(args) \
            else ["-q", str(args.rate)] + POLICIES[policy]
        cmd = ["taskset", "-c", "1", MCBENCH, "run", "-s", f"127.0.0.1:{port}", "--no-load",
               "--mix", "get=1", "-c", str(args.c), "-T", "1",
               "-t", f"{args.seconds}s", "--save", save, "--json", out] + load
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
    with open(out) as f:
        result = json.load(f)
    with open(save, newline="") as f:
        intended = sorted(int(r["intended_ns"]) for r in csv.DictReader(f, delimiter="\t"))
    with open(log) as f:
        service = [tuple(int(x) for x in line.split()) for line in f]
    # Every request the server read was answered and saved: the k-th in
    # intended order is paired with the k-th the server read (exact for
    # `fixed`; within one epoll batch's reordering for the others).
    total = result["total"]
    n = len(intended)
    if n != len(service) or total["errors"] != 0:
        sys.exit(f"{case}/{policy}: {n} saved, {len(service)} read by the server, "
                 f"{total['errors']} errors: the pairing would not hold")
    if closed(args):
        sim, waits = sorted(held + late for _, late, held in service), 0
    else:
        sim, waits = simulate(intended, service, args.c, case == "stall")
        sim.sort()
    ratios = {p: total["latency_us"][p] * 1000 / max(1, percentile(sim, q))
              for p, q in PERCENTILES.items()}
    got_waits = result["client"]["waits"] / max(1, total["count"])
    return ratios, waits / n, got_waits, n


def closed(args):
    """A closed loop: pipelined connections, no rate."""
    return args.d > 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("-c", type=int, default=8)
    ap.add_argument("-d", type=int, default=1, help="depth; above 1, a closed loop")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--policies")
    args = ap.parse_args()
    args.policies = args.policies or ",".join(CLOSED_POLICIES if closed(args) else POLICIES)
    build_server()
    cases, policies = args.cases.split(","), args.policies.split(",")
    load = f"closed loop, depth {args.d}" if closed(args) else f"rate {args.rate}/s"
    print(f"{load}, {args.c} connections, {args.seconds} s, median of {args.runs} runs;"
          " measured/simulated")
    print(f"{'case':8} {'policy':10} " + " ".join(f"{p:>7}" for p in PERCENTILES)
          + f" {'waits':>14} {'n':>7}")
    for case in cases:
        rows = {p: [] for p in policies}
        for _ in range(args.runs):
            for policy in policies:  # alternating, so a noisy stretch hits all
                with tempfile.TemporaryDirectory() as d:
                    rows[policy].append(one_run(case, policy, args, d))
        for policy in policies:
            runs = rows[policy]
            med = {p: statistics.median(r[0][p] for r in runs) for p in PERCENTILES}
            sim_w = statistics.median(r[1] for r in runs)
            got_w = statistics.median(r[2] for r in runs)
            n = statistics.median(r[3] for r in runs)
            print(f"{case:8} {policy:10} " + " ".join(f"{med[p]:7.2f}" for p in PERCENTILES)
                  + f" {got_w:6.1%}/{sim_w:6.1%} {n:7.0f}")


if __name__ == "__main__":
    main()
