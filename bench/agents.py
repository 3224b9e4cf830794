#!/usr/bin/env python3
"""The agents' control plane: what streaming a run to a master costs.

One load, run two ways in turn on the same core: as a plain `mcbench run`,
and as an `mcbench agent` driven by a master in another network namespace.
The control plane's cost is the CPU of the agent's gRPC threads (Hello,
pings, Prepare, each interval's counters and V2-compressed histograms on
the Run stream, and the result; HTTP/2 and protobuf included), read from
their schedstat, per interval; the agent's whole CPU beyond the plain
run's is printed too, to show it is lost in the runs' noise. The veth between master and agent carries nothing else,
so its byte counters are the control plane's bytes on the wire.

Needs root (ip netns) and memcached. Usage:
    python3 bench/agents.py --runs 5 --seconds 20 --rate 2000
"""

import argparse, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCBENCH = os.environ.get("MCBENCH", os.path.join(ROOT, "target", "release", "mcbench"))
MASTER_NS, AGENT_NS = "mcbb-master", "mcbb-agent"
MASTER_IP, AGENT_IP = "10.214.0.1", "10.214.0.2"


def sh(*args):
    subprocess.run(args, check=True)


def netns_up():
    netns_down()
    sh("ip", "netns", "add", MASTER_NS)
    sh("ip", "netns", "add", AGENT_NS)
    for ns in (MASTER_NS, AGENT_NS):
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "-n", MASTER_NS, "link", "add", "vm", "type", "veth", "peer", "name", "va", "netns", AGENT_NS)
    sh("ip", "-n", MASTER_NS, "addr", "add", MASTER_IP + "/24", "dev", "vm")
    sh("ip", "-n", AGENT_NS, "addr", "add", AGENT_IP + "/24", "dev", "va")
    sh("ip", "-n", MASTER_NS, "link", "set", "vm", "up")
    sh("ip", "-n", AGENT_NS, "link", "set", "va", "up")


def netns_down():
    for ns in (MASTER_NS, AGENT_NS):
        subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


def in_ns(ns, core, *args):
    """A command inside `ns`, pinned to `core` (ip netns exec and taskset
    both exec, so the child's PID and rusage are the program's)."""
    return ["ip", "netns", "exec", ns, "taskset", "-c", str(core), *args]


def wait_cpu(proc):
    """Waits for `proc`; its user+sys CPU, s."""
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return ru.ru_utime + ru.ru_stime


def veth_bytes():
    def read(name):
        out = subprocess.run(["ip", "netns", "exec", MASTER_NS, "cat", f"/sys/class/net/vm/statistics/{name}"],
                             capture_output=True, text=True, check=True)
        return int(out.stdout)
    return read("rx_bytes") + read("tx_bytes")


def load(args):
    return ["-s", "127.0.0.1:11211", "--no-load", "-q", str(args.rate), "-c", "4",
            "-t", f"{args.seconds}s", "-i", "1s"]


def plain(args):
    p = subprocess.Popen(in_ns(AGENT_NS, 1, MCBENCH, "run", *load(args)), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    cpu = wait_cpu(p)
    assert p.returncode == 0, "plain run failed"
    return cpu


def agent(args, token):
    a = subprocess.Popen(in_ns(AGENT_NS, 1, MCBENCH, "agent", "--listen", f"{AGENT_IP}:5556",
                               "--token-file", token, "--insecure-plaintext"),
                         stderr=subprocess.PIPE, text=True)
    a.stderr.readline()  # "listening on ..."
    before = veth_bytes()
    m = subprocess.run(in_ns(MASTER_NS, 0, MCBENCH, "run", *load(args), "--agent", f"{AGENT_IP}:5556",
                             "--token-file", token), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wire = veth_bytes() - before
    grpc = grpc_threads_cpu(a.pid)
    a.terminate()
    cpu = wait_cpu(a)
    assert m.returncode == 0, "agent run failed"
    return cpu, wire, grpc


def grpc_threads_cpu(pid):
    """CPU of the agent's control-plane threads, s: the gRPC runtime's two
    worker threads, the first threads named mcbench-grpc (the engine runs
    on a blocking thread of the same name, started later). They do every
    call, the HTTP/2 and protobuf work of each interval and the result."""
    threads = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            if f.read().strip() != "mcbench-grpc":
                continue
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            threads.append((int(tid), int(f.read().split()[0])))
    workers = sorted(threads)[:2]
    return sum(ns for _, ns in workers) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rate", type=int, default=2000)
    args = ap.parse_args()
    netns_up()
    mc = subprocess.Popen(in_ns(AGENT_NS, 0, "memcached", "-u", "nobody", "-l", "127.0.0.1", "-p", "11211", "-t", "1"))
    time.sleep(0.3)
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".token") as tf:
            tf.write("bench-token-0123456789abcdef\n")
            tf.flush()
            rows = []
            for i in range(args.runs):
                p = plain(args)
                a, wire, grpc = agent(args, tf.name)
                rows.append((p, a, wire, grpc))
                print(f"run {i + 1}: plain {p * 1e3:.1f} ms, agent {a * 1e3:.1f} ms, "
                      f"control-plane threads {grpc * 1e3:.2f} ms, wire {wire} B", file=sys.stderr)
    finally:
        mc.terminate()
        mc.wait()
        netns_down()
    extra = statistics.median((a - p) / args.seconds for p, a, _, _ in rows)
    wire = statistics.median(w / args.seconds for _, _, w, _ in rows)
    grpc = statistics.median(g / args.seconds for _, _, _, g in rows)
    plain_ms = statistics.median(p for p, _, _, _ in rows) * 1e3 / args.seconds
    print(f"{args.runs} runs of {args.seconds} s at {args.rate} ops/s, 1 s intervals, medians:")
    print(f"  plain run CPU per second:        {plain_ms:8.2f} ms")
    print(f"  control-plane threads per interval:{grpc * 1e3:6.2f} ms ({grpc * 100:.3f} % of a core)")
    print(f"  agent's whole CPU beyond plain:  {extra * 1e3:8.2f} ms per interval (within the runs' noise)")
    print(f"  control-plane bytes per interval:{wire:8.0f} B (both ways, Ethernet frames)")


if __name__ == "__main__":
    main()
