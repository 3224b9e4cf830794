#!/usr/bin/env python3
"""Side-by-side benchmark: mcbench against memcaslap (Debian's memaslap).

Each run gets a fresh memcached (-t 1) pinned to core 0 and the load
generator pinned to core 1, preloaded with the key space. Client CPU is the
tool's user+sys from the OS (wait4 rusage); ops are counted by the server
(cmd_get + cmd_set delta), so every tool is judged by the same counter.
Prints the median of --runs runs per row and the ratios.

Usage: bench/compare.py [--runs 3] [--seconds 5] [--only w1,w2,w3,w4,protocols,floors]
Needs: memcached, memcaslap (apt-get install memcached libmemcached-tools),
and a release build (cargo build --release). The `floors` rows also build
bench/floor/floor.c (apt-get install gcc liburing-dev).
"""
import argparse, json, os, resource, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCBENCH = os.path.join(ROOT, "target", "release", "mcbench")
FLOOR = os.path.join(ROOT, "target", "floor")
KEYS, KEY_SIZE, VALUE_SIZE = 10000, 30, 200


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connect(where):
    """A stream to a TCP port number or a unix socket path."""
    if isinstance(where, str):
        s = socket.socket(socket.AF_UNIX)
        s.connect(where)
        return s
    return socket.create_connection(("127.0.0.1", where))


def stats(where):
    with connect(where) as s:
        s.sendall(b"stats\r\n")
        data = b""
        while not data.endswith(b"END\r\n"):
            data += s.recv(65536)
    return {l.split()[1]: l.split()[2] for l in data.decode().splitlines() if l.startswith("STAT")}


class Memcached:
    """transport: "tcp", "udp" (also listens on UDP, same port number) or
    "unix" (a socket path only: memcached -s turns the network off)."""

    def __init__(self, max_conns=1024, transport="tcp"):
        self.port = free_port()
        self.where = self.port
        user = ["-u", "root"] if os.geteuid() == 0 else []
        listen = ["-U", str(self.port) if transport == "udp" else "0",
                  "-l", "127.0.0.1", "-p", str(self.port)]
        if transport == "unix":
            self.dir = tempfile.TemporaryDirectory()
            self.where = os.path.join(self.dir.name, "mc.sock")
            listen = ["-s", self.where]
        self.proc = subprocess.Popen(["taskset", "-c", "0", "memcached", *user, "-t", "1", *listen,
                                      "-m", "256", "-c", str(max_conns)])
        self.addr = {"tcp": f"127.0.0.1:{self.port}", "udp": f"udp:127.0.0.1:{self.port}",
                     "unix": f"unix:{self.where}"}[transport]
        # Preloading goes over a stream.
        self.load_addr = f"unix:{self.where}" if transport == "unix" else f"127.0.0.1:{self.port}"
        for _ in range(250):
            try:
                connect(self.where).close()
                return
            except OSError:
                time.sleep(0.02)
        raise SystemExit("memcached did not start")

    def ops(self):
        s = stats(self.where)
        return int(s["cmd_get"]) + int(s["cmd_set"])

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def timed(cmd):
    """Runs cmd pinned to core 1; returns (user_s, sys_s, stdout, peak_rss_kb)."""
    p = subprocess.Popen(["taskset", "-c", "1", *cmd], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return ru.ru_utime, ru.ru_stime, out, ru.ru_maxrss


class Redis:
    """redis-server for the RESP row; ops are its commands processed."""

    def __init__(self):
        self.port = free_port()
        self.proc = subprocess.Popen(["taskset", "-c", "0", "redis-server", "--port", str(self.port),
                                      "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                                     stdout=subprocess.DEVNULL)
        self.addr = self.load_addr = f"127.0.0.1:{self.port}"
        for _ in range(250):
            try:
                socket.create_connection(("127.0.0.1", self.port)).close()
                return
            except OSError:
                time.sleep(0.02)
        raise SystemExit("redis-server did not start")

    def ops(self):
        with socket.create_connection(("127.0.0.1", self.port)) as s:
            s.sendall(b"INFO stats\r\n")
            data = b""
            while b"total_commands_processed:" not in data or not data.endswith(b"\r\n"):
                data += s.recv(65536)
        line = next(l for l in data.decode().splitlines() if l.startswith("total_commands_processed:"))
        return int(line.split(":")[1]) - 1  # not this INFO

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def tool_flags(tool):
    """`mcbench+read-delay=100us` is mcbench with `--read-delay 100us`;
    `mcbench+reconnect` adds `--reconnect`."""
    name, *flags = tool.split("+")
    args = []
    for flag in flags:
        key, has_value, value = flag.partition("=")
        args += [f"--{key}"] + ([value] if has_value else [])
    return name, args


def rate_of(workload):
    """The open-loop rate a row asks for (its `-q`), or 0 for a closed loop."""
    extra = workload.get("extra", [])
    return extra[extra.index("-q") + 1] if "-q" in extra else "0"


def server_for(tool, conns):
    """mcbench:PROTOCOL:TRANSPORT rows get the server they need."""
    tool = tool_flags(tool)[0]
    parts = tool.split(":") if tool.startswith("mcbench") else [tool]
    protocol = parts[1] if len(parts) > 1 else "ascii"
    transport = parts[2] if len(parts) > 2 else "tcp"
    if protocol == "resp":
        return Redis(), protocol
    return Memcached(max_conns=conns + 100, transport=transport), protocol


def build_floor():
    """The parse-free reference client (bench/floor/floor.c)."""
    src = os.path.join(ROOT, "bench", "floor", "floor.c")
    subprocess.run(["gcc", "-O2", "-Wall", "-o", FLOOR, src, "-luring", "-lm"], check=True)


def run_once(tool, workload, seconds):
    conns = workload.get("conns", 50)
    m, protocol = server_for(tool, conns)
    try:
        if tool.startswith("floor"):
            subprocess.run([FLOOR, str(m.port), "load"], check=True)
        else:
            subprocess.run([MCBENCH, "run", "-s", m.load_addr, "--protocol", protocol, "--load-only",
                            "-r", str(KEYS), "-K", str(KEY_SIZE), "-V", str(VALUE_SIZE), "-c", "8"],
                           check=True, stdout=subprocess.DEVNULL)
        before = m.ops()
        if tool == "memcaslap":
            cfg = tempfile.NamedTemporaryFile("w", suffix=".cnf", delete=False)
            cfg.write(f"key\n{KEY_SIZE} {KEY_SIZE} 1\nvalue\n{VALUE_SIZE} {VALUE_SIZE} 1\ncmd\n0 0.1\n1 0.9\n")
            cfg.close()
            cmd = ["memcaslap", "-s", f"127.0.0.1:{m.port}", "-T", "1", "-c", str(conns),
                   "-F", cfg.name, "-t", f"{seconds}s"]
            if workload.get("multiget"):
                cmd += ["-d", str(workload["multiget"])]
        elif tool.startswith("floor"):
            # floor:IO[:READ_DELAY_US]
            cmd = [FLOOR, str(m.port), str(conns), str(workload.get("depth", 1)), str(seconds), rate_of(workload),
                   *tool.split(":")[1:]]
        else:
            # `mcbench-base` is an earlier build ($MCBENCH_BASE), for before/after rows.
            binary = os.environ["MCBENCH_BASE"] if tool.startswith("mcbench-base") else MCBENCH
            cmd = [binary, "run", "-s", m.addr, "--protocol", protocol, "--no-load", "-r", str(KEYS),
                   "-K", str(KEY_SIZE), "-V", str(VALUE_SIZE), "-u", "0.1", "-T", "1",
                   "-c", str(conns), "-d", str(workload.get("depth", 1)), "-t", f"{seconds}s",
                   "--json", "-", *workload.get("extra", []), *tool_flags(tool)[1]]
        user, sys_, out, rss_kb = timed(cmd)
        ops = m.ops() - before
        row = {"ops_s": ops / seconds, "ns_op": (user + sys_) * 1e9 / ops,
               "user_ns_op": user * 1e9 / ops, "sys_ns_op": sys_ * 1e9 / ops, "rss_mib": rss_kb / 1024}
        if tool.startswith("mcbench"):
            j = json.loads(out)
            row["lag_p99_us"] = j["client"]["send_lag_us"]["p99"]
            row["p99_us"] = j["total"]["latency_us"]["p99"]
            # wait4's ru_maxrss starts from the forking Python's RSS; the
            # tool's own figure is exact.
            row["rss_mib"] = j["client"]["peak_rss_bytes"] / 2**20
        return row
    finally:
        m.stop()


WORKLOADS = {
    "w1": ("closed loop, 50 conns, depth 1", {}, ["mcbench", "memcaslap"]),
    "w2": ("open loop 20,000 ops/s, 50 conns", {"extra": ["-q", "20000"]}, ["mcbench"]),
    "w3": ("closed loop, 50 conns, depth 16", {"depth": 16}, ["mcbench"]),
    "w4": ("10,000 connections, open loop 10,000 ops/s", {"conns": 10000, "extra": ["-q", "10000"]}, ["mcbench"]),
    # w1's workload in each protocol and transport (RESP against redis-server).
    "protocols": ("closed loop, 50 conns, depth 1, per protocol", {},
                  ["mcbench:ascii:tcp", "mcbench:meta:tcp", "mcbench:binary:tcp", "mcbench:resp:tcp",
                   "mcbench:ascii:udp", "mcbench:ascii:unix"]),
    # w3 with answers read in batches (README: --read-delay).
    "w3-read-delay": ("closed loop, 50 conns, depth 16, reads delayed", {"depth": 16},
                      ["mcbench", "mcbench+read-delay=50us", "mcbench+read-delay=100us",
                       "floor:epoll", "floor:epoll:50"]),
    # w1-w3 against the parse-free floor client with each I/O back end.
    "floor-w1": ("closed loop, 50 conns, depth 1, against the floor", {},
                 ["mcbench", "floor:epoll", "floor:uring"]),
    "floor-w2": ("open loop 20,000 ops/s, 50 conns, against the floor", {"extra": ["-q", "20000"]},
                 ["mcbench", "floor:epoll", "floor:timer", "floor:uring"]),
    "floor-w3": ("closed loop, 50 conns, depth 16, against the floor", {"depth": 16},
                 ["mcbench", "floor:epoll", "floor:uring"]),
}


def median_row(rows):
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--only", default="w1,w2,w3,w4,protocols")
    ap.add_argument("--tools", help="comma-separated tools for every row instead of the row's own "
                    "(e.g. mcbench,mcbench-base with MCBENCH_BASE=path/to/an/earlier/mcbench)")
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (20000, max(20000, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))
    names = args.only.replace("floors", "floor-w1,floor-w2,floor-w3").split(",")
    if any(t.startswith("floor") for n in names for t in WORKLOADS[n][2]):
        build_floor()
    for name in names:
        title, wl, tools = WORKLOADS[name]
        if args.tools:
            tools = args.tools.split(",")
        print(f"\n## {name}: {title} ({args.runs} runs x {args.seconds} s, medians)")
        print(f"{'tool':<26}{'ops/s':>10}{'ns/op':>9}{'user':>8}{'sys':>8}{'RSS MiB':>9}{'p99 us':>9}{'lag p99':>9}")
        # Runs alternate between tools so that a noisy stretch of the host
        # hits both alike.
        rows = {tool: [] for tool in tools}
        for _ in range(args.runs):
            for tool in tools:
                rows[tool].append(run_once(tool, wl, args.seconds))
        medians = {}
        for tool in tools:
            med = medians[tool] = median_row(rows[tool])
            extra = f"{med.get('p99_us', float('nan')):>9.1f}{med.get('lag_p99_us', float('nan')):>9.1f}"
            print(f"{tool:<26}{med['ops_s']:>10.0f}{med['ns_op']:>9.0f}{med['user_ns_op']:>8.0f}"
                  f"{med['sys_ns_op']:>8.0f}{med['rss_mib']:>9.1f}{extra}")
        if set(medians) == {"mcbench", "memcaslap"}:
            a, b = medians["mcbench"], medians["memcaslap"]
            print(f"ratio mcbench/memcaslap: ops/s {a['ops_s']/b['ops_s']:.2f}, ns/op {a['ns_op']/b['ns_op']:.2f}, "
                  f"user ns/op {a['user_ns_op']/b['user_ns_op']:.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
