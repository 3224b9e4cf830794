#!/usr/bin/env python3
"""Side-by-side benchmark: mcbench against its peers: memcaslap (Debian's
memaslap), memtier_benchmark, mutilate and twemperf's mcperf.

Each run gets a fresh memcached (-t 1) pinned to core 0 and the load
generator pinned to core 1, preloaded with the key space. Client CPU is the
tool's user+sys from the OS (wait4 rusage); ops are counted by the server
(cmd_get + cmd_set delta), so every tool is judged by the same counter.
Prints the median of --runs runs per row and the ratios.

Usage: bench/compare.py [--runs 3] [--seconds 5] [--only w1,w2,w3,w4,protocols,floors]
Needs: memcached, memcaslap (apt-get install memcached libmemcached-tools),
gcc (every tool starts through bench/launch/launch.c, so that its peak RSS
is its own, not the forking Python's), and a release build (cargo build
--release). The `floors` rows also build bench/floor/floor.c (apt-get
install liburing-dev). The peers are found as $MEMTIER, $MUTILATE and
$TWEMPERF, else in target/peers/ (bench/peers/build.sh builds them from
source trees), else on PATH.
"""
import argparse, json, os, resource, socket, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCBENCH = os.path.join(ROOT, "target", "release", "mcbench")
FLOOR = os.path.join(ROOT, "target", "floor")
LAUNCH = os.path.join(ROOT, "target", "launch")
PEERS = os.path.join(ROOT, "target", "peers")
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


_CERT = None


def test_cert():
    """A self-signed certificate for localhost and 127.0.0.1 (made once):
    (cert, key) paths."""
    global _CERT
    if _CERT is None:
        d = tempfile.mkdtemp()
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "2", "-subj", "/CN=localhost", "-addext",
                        "subjectAltName=DNS:localhost,IP:127.0.0.1", "-addext",
                        "basicConstraints=critical,CA:FALSE", "-keyout", key, "-out", cert],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _CERT = (cert, key)
    return _CERT


class Memcached:
    """transport: "tcp", "udp" (also listens on UDP, same port number),
    "unix" (a socket path only: memcached -s turns the network off) or
    "tls" (-Z on `client_port`; `stats` and preloads on a plain port)."""

    def __init__(self, max_conns=1024, transport="tcp"):
        self.port = free_port()
        self.client_port = self.port
        self.where = self.port
        self.tls = transport == "tls"
        user = ["-u", "root"] if os.geteuid() == 0 else []
        listen = ["-U", str(self.port) if transport == "udp" else "0",
                  "-l", "127.0.0.1", "-p", str(self.port)]
        if transport == "unix":
            self.dir = tempfile.TemporaryDirectory()
            self.where = os.path.join(self.dir.name, "mc.sock")
            listen = ["-s", self.where]
        if self.tls:
            self.client_port = free_port()
            cert, key = test_cert()
            listen = ["-U", "0", "-l", f"127.0.0.1:{self.client_port},notls:127.0.0.1:{self.port}",
                      "-p", str(self.port), "-Z", "-o", f"ssl_chain_cert={cert},ssl_key={key}"]
        self.proc = subprocess.Popen(["taskset", "-c", "0", "memcached", *user, "-t", "1", *listen,
                                      "-m", "256", "-c", str(max_conns)])
        self.addr = {"tcp": f"127.0.0.1:{self.port}", "udp": f"udp:127.0.0.1:{self.port}",
                     "unix": f"unix:{self.where}", "tls": f"localhost:{self.client_port}"}[transport]
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

    def connections(self):
        """Connections the server accepted (less the one asking)."""
        return int(stats(self.where)["total_connections"]) - 1

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def timed(cmd):
    """Runs cmd pinned to core 1 through the launcher; returns (user_s,
    sys_s, stdout, peak_rss_kb), the launcher's figures for the tool alone."""
    p = subprocess.run(["taskset", "-c", "1", LAUNCH, *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    last = p.stderr.decode(errors="replace").strip().splitlines()[-1:]
    if p.returncode != 0 or not last or not last[0].startswith("launch: "):
        raise SystemExit(f"failed: {' '.join(cmd)}\n{p.stderr.decode(errors='replace')[-2000:]}")
    user_us, sys_us, rss_kb, _ = (int(x) for x in last[0].split()[1:])
    return user_us / 1e6, sys_us / 1e6, p.stdout, rss_kb


def peer(name, env, binary):
    """A peer's binary: $ENV, else target/peers/BINARY, else BINARY on PATH."""
    if os.environ.get(env):
        return os.environ[env]
    built = os.path.join(PEERS, binary)
    return built if os.path.exists(built) else binary


def build_launcher():
    src = os.path.join(ROOT, "bench", "launch", "launch.c")
    subprocess.run(["gcc", "-O2", "-Wall", "-o", LAUNCH, src], check=True)


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
    `mcbench+reconnect` adds `--reconnect`. `+scraped` and `+idle=N` are
    the bench's own (class Scraper), not flags."""
    name, *flags = tool.split("+")
    args = []
    for flag in flags:
        if flag == "scraped" or flag.startswith("idle="):
            continue
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
    if tool == "memtier:tls":
        return Memcached(max_conns=conns + 100, transport="tls"), "ascii"
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


# memtier's keys are PREFIX + a number up to KEYS: 26-30 bytes, as near
# KEY_SIZE as its key scheme allows.
MEMTIER_PREFIX = "m" * (KEY_SIZE - len(str(KEYS)))


def memtier_cmd(port, conns, depth):
    return [peer("memtier", "MEMTIER", "memtier_benchmark"), "-s", "127.0.0.1", "-p", str(port),
            "-P", "memcache_text", "-t", "1", "-c", str(conns), "--pipeline", str(depth),
            "--key-prefix", MEMTIER_PREFIX, "--key-minimum", "1", "--key-maximum", str(KEYS),
            "-d", str(VALUE_SIZE), "--hide-histogram"]


def mutilate_cmd(port, conns):
    return [peer("mutilate", "MUTILATE", "mutilate"), "-s", f"127.0.0.1:{port}", "-T", "1",
            "-c", str(conns), "-K", str(KEY_SIZE), "-V", str(VALUE_SIZE), "-r", str(KEYS)]


def twemperf_cmd(port, conns, method, calls, rate):
    """twemperf sends one method; its keys are PREFIX + the call's number."""
    return [peer("twemperf", "TWEMPERF", "twemperf-mcperf"), "-s", "127.0.0.1", "-p", str(port),
            "-m", method, "-n", str(conns), "-r", "0" if rate == "0" else "1000",
            # Evenly spaced calls per connection: at c6120fc its exponential
            # call rate (`-R e400`) spins at 100 % CPU and never ends.
            "-N", str(calls), "-R", "0" if rate == "0" else f"{float(rate) / conns:g}",
            "-z", f"d{VALUE_SIZE}", "-t", "5"]


def preload(tool, m, protocol, conns, seconds, rate):
    """Every key the tool will ask for, stored in the tool's own key format."""
    if tool.startswith("floor"):
        subprocess.run([FLOOR, str(m.port), "load"], check=True)
    elif tool.startswith("memtier"):
        subprocess.run(memtier_cmd(m.port, 1, 16) + ["--ratio", "1:0", "--key-pattern", "P:P",
                                                     "-n", "allkeys"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    elif tool.startswith("mutilate"):
        subprocess.run(mutilate_cmd(m.port, 1) + ["--loadonly"], check=True)
    elif tool.startswith("twemperf"):
        calls = twemperf_calls(rate, conns, seconds)
        subprocess.run(twemperf_cmd(m.port, conns, "set", calls, "0"), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    else:
        subprocess.run([MCBENCH, "run", "-s", m.load_addr, "--protocol", protocol, "--load-only",
                        "-r", str(KEYS), "-K", str(KEY_SIZE), "-V", str(VALUE_SIZE), "-c", "8"],
                       check=True, stdout=subprocess.DEVNULL)


def preload_any_command(m):
    """The key space in both formats an arbitrary command line may read
    (bench/syscalls.py, bench/gaps.py): mcbench's and, when it is built,
    the floor client's."""
    preload("mcbench", m, "ascii", 8, 0, "0")
    if os.access(FLOOR, os.X_OK):
        preload("floor", m, "ascii", 8, 0, "0")


def twemperf_calls(rate, conns, seconds):
    return int(float(rate) * seconds / conns) if rate != "0" else 20000


def peer_cmd(tool, workload, m, conns, seconds):
    """The command line of a peer (or the floor) for a row's workload."""
    depth, rate = workload.get("depth", 1), rate_of(workload)
    if tool == "memcaslap":
        cfg = tempfile.NamedTemporaryFile("w", suffix=".cnf", delete=False)
        cfg.write(f"key\n{KEY_SIZE} {KEY_SIZE} 1\nvalue\n{VALUE_SIZE} {VALUE_SIZE} 1\ncmd\n0 0.1\n1 0.9\n")
        cfg.close()
        cmd = ["memcaslap", "-s", f"127.0.0.1:{m.port}", "-T", "1", "-c", str(conns),
               "-F", cfg.name, "-t", f"{seconds}s"]
        return cmd + (["-d", str(workload["multiget"])] if workload.get("multiget") else [])
    if tool.startswith("floor"):
        # floor:IO[:READ_DELAY_US]
        return [FLOOR, str(m.port), str(conns), str(depth), str(seconds), rate, *tool.split(":")[1:]]
    if tool.startswith("memtier"):
        cmd = memtier_cmd(m.client_port, conns, depth) + ["--ratio", "1:9", "--key-pattern", "R:R",
                                                          "--test-time", str(seconds)]
        if m.tls:
            cmd += ["--tls", "--cacert", test_cert()[0]]
        if workload.get("memtier"):
            cmd += workload["memtier"]
        if rate != "0":
            # Per connection; memtier's own is a burst per connection every
            # few ms, not an open loop (issue 16).
            cmd += ["--rate-limiting", str(round(float(rate) / conns))]
        if workload.get("multiget"):
            # Its keys per mget are capped by the get count left in the ratio.
            cmd += ["--multi-key-get", str(workload["multiget"]), "--ratio", f"0:{workload['multiget']}"]
        return cmd
    if tool.startswith("mutilate"):
        cmd = mutilate_cmd(m.port, conns) + ["--noload", "-u", "0.1", "-d", str(depth), "-t", str(seconds)]
        # "exponential:1", not its default "exponential": at d65c6ef that
        # default reaches strtok_r(NULL) with a null save pointer, which
        # current glibc turns into a crash; the 1 is rescaled to -q.
        cmd += ["-q", rate, "-i", "exponential:1"] if rate != "0" else []
        return cmd + (["-B"] if tool == "mutilate+B" else [])
    if tool.startswith("twemperf"):
        return twemperf_cmd(m.port, conns, "get", twemperf_calls(rate, conns, seconds), rate)
    raise SystemExit(f"unknown tool {tool}")


class Scraper:
    """`mcbench+scraped`: --metrics-listen on a free loopback port, read
    every second as Prometheus would; `+idle=N` also holds N connections
    to it that never send, reopened each second as the endpoint closes
    them (its bound is 8 at once, 2 s each). Its work is mcbench's own
    CPU (the endpoint's threads), so the row's ns/op carries it."""

    def __init__(self, tool):
        flags = tool.split("+")[1:]
        self.on = "scraped" in flags
        self.idle = next((int(f[5:]) for f in flags if f.startswith("idle=")), 0)
        self.port = free_port() if self.on else None
        self.scrapes = 0
        self.stop = threading.Event()
        self.threads = []

    def flags(self):
        return ["--metrics-listen", f"127.0.0.1:{self.port}"] if self.on else []

    def __enter__(self):
        if self.on:
            self.threads = [threading.Thread(target=self.scrape, daemon=True)]
            if self.idle:
                self.threads.append(threading.Thread(target=self.hold_idle, daemon=True))
            for t in self.threads:
                t.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        for t in self.threads:
            t.join()

    def scrape(self):
        while not self.stop.wait(1.0):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as c:
                    c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
                    while c.recv(65536):
                        pass
                self.scrapes += 1
            except OSError:
                pass

    def hold_idle(self):
        held = []
        while not self.stop.wait(1.0):
            held = [c for c in held if c.fileno() >= 0]
            while len(held) < self.idle and not self.stop.is_set():
                try:
                    held.append(socket.create_connection(("127.0.0.1", self.port), timeout=1))
                except OSError:
                    break
            # Drop the ones the endpoint closed, to open them again.
            for c in held:
                c.setblocking(False)
                try:
                    if c.recv(1) == b"":
                        c.close()
                except BlockingIOError:
                    pass
                except OSError:
                    c.close()
        for c in held:
            c.close()


def run_once(tool, workload, seconds):
    conns = workload.get("conns", 50)
    m, protocol = server_for(tool, conns)
    scraper = Scraper(tool)
    try:
        preload(tool, m, protocol, conns, seconds, rate_of(workload))
        before = m.ops()
        conns_before = m.connections() if hasattr(m, "connections") else 0
        if tool.startswith("mcbench"):
            # `mcbench-base` is an earlier build ($MCBENCH_BASE), for before/after rows.
            binary = os.environ["MCBENCH_BASE"] if tool.startswith("mcbench-base") else MCBENCH
            cmd = [binary, "run", "-s", m.addr, "--protocol", protocol, "--no-load", "-r", str(KEYS),
                   "-K", str(KEY_SIZE), "-V", str(VALUE_SIZE), "-u", "0.1", "-T", "1",
                   "-c", str(conns), "-d", str(workload.get("depth", 1)), "-t", f"{seconds}s",
                   "--json", "-", *workload.get("extra", []), *tool_flags(tool)[1], *scraper.flags()]
            if workload.get("multiget"):
                cmd += ["--mix", "get=1", "--multiget", str(workload["multiget"])]
            if getattr(m, "tls", False):
                cmd += ["--tls", "--tls-ca", test_cert()[0], *workload.get("mcbench", [])]
        else:
            cmd = peer_cmd(tool, workload, m, conns, seconds)
        started = time.monotonic()
        with scraper:
            user, sys_, out, rss_kb = timed(cmd)
        # twemperf runs until its calls are done, not for `seconds`.
        elapsed = time.monotonic() - started if tool.startswith("twemperf") else seconds
        ops = m.ops() - before
        stats_after = stats(m.where) if hasattr(m, "where") else {}
        # Connections the server accepted per client CPU second (the TLS
        # churn rows: a handshake each).
        conns_made = m.connections() - conns_before if hasattr(m, "connections") else 0
        row = {"ops_s": ops / elapsed, "ns_op": (user + sys_) * 1e9 / ops,
               "conns_per_cpu_s": conns_made / (user + sys_),
               "user_ns_op": user * 1e9 / ops, "sys_ns_op": sys_ * 1e9 / ops, "rss_mib": rss_kb / 1024,
               "hit_ratio": hit_ratio(stats_after)}
        if tool.startswith("mcbench"):
            j = json.loads(out)
            row["lag_p99_us"] = j["client"]["send_lag_us"]["p99"]
            row["p99_us"] = j["total"]["latency_us"]["p99"]
            # The dispersion of the gaps between sends as they went out
            # (from transmit stamps where the kernel stamps): Poisson's is 1.
            cv = j["client"].get("send_gap_cv")
            row["gap_cv"] = cv if cv is not None else float("nan")
            if scraper.on:
                row["scrapes"] = scraper.scrapes
        return row
    finally:
        m.stop()


def hit_ratio(st):
    """The server's get hit ratio over its life (preload sets have no gets)."""
    hits, misses = int(st.get("get_hits", 0)), int(st.get("get_misses", 0))
    return hits / (hits + misses) if hits + misses else float("nan")


WORKLOADS = {
    "w1": ("closed loop, 50 conns, depth 1", {}, ["mcbench", "memtier", "mutilate", "memcaslap"]),
    "w2": ("open loop 20,000 ops/s, 50 conns", {"extra": ["-q", "20000"]},
           ["mcbench", "memtier", "mutilate", "mutilate+B", "twemperf"]),
    # Reads delayed over TCP are timed by kernel stamps (README: --read-delay).
    "w3": ("closed loop, 50 conns, depth 16", {"depth": 16},
           ["mcbench", "mcbench+refill-batch=8", "mcbench+read-delay=50us", "mcbench+read-delay=100us",
            "mcbench+read-delay=50us+refill-batch=8", "memtier", "mutilate"]),
    "w5": ("closed loop, 50 conns, 10-key multigets (ns and ops per key)", {"multiget": 10},
           ["mcbench", "memtier", "memcaslap"]),
    "w6": ("open loop 60,000 ops/s, 50 conns", {"extra": ["-q", "60000"]}, ["mcbench", "memtier", "mutilate"]),
    "w4": ("10,000 connections, open loop 10,000 ops/s", {"conns": 10000, "extra": ["-q", "10000"]}, ["mcbench"]),
    # Connection churn (twemperf's --num-conns): one connection after
    # another, 10 calls each, for the row's seconds (bench/churn.py has
    # the comparison with twemperf itself).
    "churn": ("one connection after another, 10 calls each", {
        "conns": 1, "extra": ["--num-conns", "10000000", "--conn-rate", "0", "--num-calls", "10",
                              "--call-rate", "0"]}, ["mcbench"]),
    # w1 and w3 over TLS (memcached -Z, TLS 1.3), and TLS churn: every
    # connection makes one request, then a new one opens (memtier's
    # --reconnect-interval 1, which makes a full handshake each time;
    # mcbench with and without resumption). Handshakes are counted by the
    # server (total_connections), per client CPU second.
    "w1-tls": ("closed loop, 50 conns, depth 1, over TLS", {}, ["mcbench:ascii:tls", "memtier:tls"]),
    "w3-tls": ("closed loop, 50 conns, depth 16, over TLS", {"depth": 16},
               ["mcbench:ascii:tls", "mcbench:ascii:tls+read-delay=100us", "memtier:tls"]),
    "churn-tls": ("a new TLS connection per request (mcbench one after another, memtier 50 at once)", {
        "extra": ["--num-conns", "10000000", "--conn-rate", "0", "--num-calls", "1"],
        "memtier": ["--reconnect-interval", "1"]},
        ["mcbench:ascii:tls", "mcbench:ascii:tls+tls-resume=off", "memtier:tls"]),
    # w1's workload in each protocol and transport (RESP against redis-server).
    "protocols": ("closed loop, 50 conns, depth 1, per protocol", {},
                  ["mcbench:ascii:tcp", "mcbench:meta:tcp", "mcbench:binary:tcp", "mcbench:resp:tcp",
                   "mcbench:ascii:udp", "mcbench:ascii:unix"]),
    # UDP, 8 datagrams per refill: sendmmsg (this build) against one send
    # per datagram (MCBENCH_BASE: a build before 9603315 that has
    # --refill-batch, 6a00f1d or later).
    "udp-batch": ("UDP, 50 conns, depth 16, refilled 8 at a time", {"depth": 16, "extra": ["--refill-batch", "8"]},
                  ["mcbench:ascii:udp", "mcbench-base:ascii:udp"]),
    # w3 with answers read in batches (README: --read-delay).
    "w3-read-delay": ("closed loop, 50 conns, depth 16, reads delayed", {"depth": 16},
                      ["mcbench", "mcbench+read-delay=50us", "mcbench+read-delay=100us",
                       "floor:epoll", "floor:epoll:50"]),
    # w1-w3 against the parse-free floor client with each I/O back end.
    # The kernel's stamps (latency parts, send lag from transmit stamps)
    # against the same build without them, and the floor client.
    # (A closed loop at depth 1 takes none unless asked: this row is why.)
    "stamps-w1": ("closed loop, 50 conns, depth 1: kernel stamps on and off", {},
                  ["mcbench", "mcbench+kernel-stamps=on"]),
    "stamps-w2": ("open loop 20,000 ops/s, 50 conns: kernel stamps on and off", {"extra": ["-q", "20000"]},
                  ["mcbench", "mcbench+kernel-stamps=off", "floor:timer"]),
    "stamps-w3": ("closed loop, 50 conns, depth 16: kernel stamps on and off", {"depth": 16},
                  ["mcbench+read-delay=0s", "mcbench+read-delay=0s+kernel-stamps=off", "mcbench"]),
    # A sample of writes stamped (issue 55, item 1): every write, a random
    # one in 8, none.
    "sample-w2": ("open loop 20,000 ops/s, 50 conns: kernel stamps all, 1 in 8, off",
                  {"extra": ["-q", "20000"]},
                  ["mcbench+kernel-stamps=all", "mcbench+kernel-stamps=1/8", "mcbench+kernel-stamps=off",
                   "floor:timer"]),
    "sample-w1": ("closed loop, 50 conns, depth 1: kernel stamps all, 1 in 8, off", {},
                  ["mcbench+kernel-stamps=all", "mcbench+kernel-stamps=1/8", "mcbench+kernel-stamps=off"]),
    "sample-w3": ("closed loop, 50 conns, depth 16, reading at once: kernel stamps all, 1 in 8, off",
                  {"depth": 16},
                  ["mcbench+read-delay=0s+kernel-stamps=all", "mcbench+read-delay=0s+kernel-stamps=1/8",
                   "mcbench+read-delay=0s+kernel-stamps=off"]),
    # --metrics-listen (issue 54): off, scraped every second, and scraped
    # beside 1,000 connections that never send.
    "metrics-w1": ("closed loop, 50 conns, depth 1: --metrics-listen off, scraped, flooded", {},
                   ["mcbench", "mcbench+scraped", "mcbench+scraped+idle=1000"]),
    "metrics-w2": ("open loop 20,000 ops/s, 50 conns: --metrics-listen off, scraped, flooded",
                   {"extra": ["-q", "20000"]},
                   ["mcbench", "mcbench+scraped", "mcbench+scraped+idle=1000"]),
    "floor-w1": ("closed loop, 50 conns, depth 1, against the floor", {},
                 ["mcbench", "floor:epoll", "floor:uring"]),
    "floor-w2": ("open loop 20,000 ops/s, 50 conns, against the floor", {"extra": ["-q", "20000"]},
                 ["mcbench", "floor:epoll", "floor:timer", "floor:uring"]),
    "floor-w3": ("closed loop, 50 conns, depth 16, against the floor", {"depth": 16},
                 ["mcbench", "floor:epoll", "floor:uring"]),
    # w6's schedule (Poisson at 60,000 ops/s), judged against a floor that
    # keeps the same schedule rather than memtier's bursts (issue 55).
    "floor-w6": ("open loop 60,000 ops/s, 50 conns, against the floor", {"extra": ["-q", "60000"]},
                 ["mcbench", "floor:timer", "floor:epoll"]),
}

# Read policy by connections and depth (issue 37, item 3: the depth
# default): reads at once against pauses of 50 and 100 µs, and the
# default. `--only reads` runs them all.
READS_SHAPES = [(50, 1), (50, 2), (50, 4), (50, 8), (50, 16), (8, 8), (4, 16), (1, 16), (1, 64)]
for _conns, _depth in READS_SHAPES:
    WORKLOADS[f"reads-c{_conns}-d{_depth}"] = (
        f"closed loop, {_conns} conns, depth {_depth}: read policy", {"conns": _conns, "depth": _depth},
        ["mcbench+read-delay=0s", "mcbench+read-delay=50us", "mcbench+read-delay=100us", "mcbench"])


def median_row(rows):
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--only", default="w1,w2,w3,w4,w5,w6,protocols")
    ap.add_argument("--tools", help="comma-separated tools for every row instead of the row's own "
                    "(e.g. mcbench,mcbench-base with MCBENCH_BASE=path/to/an/earlier/mcbench)")
    ap.add_argument("--json", help="append each row's runs and medians to this file (JSON lines)")
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (20000, max(20000, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))
    groups = {"floors": ["floor-w1", "floor-w2", "floor-w3", "floor-w6"],
              "samples": ["sample-w2", "sample-w1", "sample-w3"],
              "reads": [f"reads-c{c}-d{d}" for c, d in READS_SHAPES]}
    names = [n for token in args.only.split(",") for n in groups.get(token, [token])]
    build_launcher()
    if any(t.startswith("floor") for n in names for t in WORKLOADS[n][2]):
        build_floor()
    for name in names:
        title, wl, tools = WORKLOADS[name]
        if args.tools:
            tools = args.tools.split(",")
        print(f"\n## {name}: {title} ({args.runs} runs x {args.seconds} s, medians)")
        print(f"{'tool':<36}{'ops/s':>10}{'ns/op':>9}{'user':>8}{'sys':>8}{'RSS MiB':>9}{'hits':>6}"
              f"{'p99 us':>9}{'lag p99':>9}{'gap CV':>8}{'conns/cpu-s':>12}{'ns/op / mcbench':>16}")
        # Runs alternate between tools so that a noisy stretch of the host
        # hits both alike.
        rows = {tool: [] for tool in tools}
        for _ in range(args.runs):
            for tool in tools:
                rows[tool].append(run_once(tool, wl, args.seconds))
        medians = {tool: median_row(rows[tool]) for tool in tools}
        base = medians.get("mcbench") or medians.get(tools[0])
        for tool, med in medians.items():
            ratio = f"{med['ns_op'] / base['ns_op']:>16.2f}" if base else ""
            print(f"{tool:<36}{med['ops_s']:>10.0f}{med['ns_op']:>9.0f}{med['user_ns_op']:>8.0f}"
                  f"{med['sys_ns_op']:>8.0f}{med['rss_mib']:>9.1f}{med['hit_ratio']:>6.2f}"
                  f"{med.get('p99_us', float('nan')):>9.1f}{med.get('lag_p99_us', float('nan')):>9.1f}"
                  f"{med.get('gap_cv', float('nan')):>8.2f}{med['conns_per_cpu_s']:>12.0f}{ratio}")
        if args.json:
            with open(args.json, "a") as out:
                # NaN (a hit ratio without gets) is no JSON: null instead.
                clean = json.loads(json.dumps({"row": name, "runs": rows, "medians": medians}),
                                   parse_constant=lambda _: None)
                out.write(json.dumps(clean) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
