#!/usr/bin/env python3
"""Seed command lines: the real old tool against mcbench's personality.

For each example line of the seed documents (/work/shared/seeds: memaslap's
man page, twemperf's README and the repcached guide, the mutilate fork's and
memcache-perf's READMEs), and then one line per option of their options
tables, this runs the REAL tool and `mcbench TOOL` with the same arguments,
each against a fresh memcached it starts on a free loopback port
(`memcached -p PORT -U 0 -l 127.0.0.1 -t 2 -m 1024 -vv`, plus `-u root` as
root, and `-U PORT` for the lines that need UDP), and prints the server's
counters side by side:

  cmd_get, cmd_set, get_hits, get_misses, curr_items, total_items, conns
  (total_connections opened during the line, the harness's own stats
  connection left out), other commands when any (deletes, incr/decr, cas,
  touch), key and value lengths of the items left (`lru_crawler metadump
  all`: min/median/max; value = item size - key - the item overhead measured
  once at start, flags taken as 0), and the share of sets whose exptime is
  not 0 (from memcached's -vv log, `<FD set KEY FLAGS EXPTIME LEN`; n/a on
  the binary protocol, which -vv logs as hex).

Then a verdict per line:
  SAME       every counter within its tolerance (legend printed at the end)
  DIFFERENT  the counters that differ are listed with both values
  REFUSED    the real tool cannot run the line (both refused, or only it)
  MISSING    the real tool was not found (mcbench's side still runs)
  SKIPPED    the line needs what the harness cannot give (reason given)

Every run is bounded: durations are capped for BOTH tools alike (memaslap
`-t 2m` -> `-t 3s`, mutilate's default 5 s -> `-t 3`; option lines 2 s), and
each rewrite is printed; a run past its timeout is killed by its PID. Real
tools: memaslap/memcaslap on PATH (Debian's libmemcached-tools), and
target/peers/{twemperf-mcperf,mutilate,memcache-perf} built by
bench/peers/build.sh. Real memaslap writes ~/.memslap.cnf (its defaults) when
it is missing, and mcbench's memaslap reads it: both then run the same file.

  python3 bench/seeds.py                        # every line, ~9 minutes
  python3 bench/seeds.py --only 'memaslap-ex*'  # names, globs or tool names, comma-separated
  python3 bench/seeds.py --list                 # the lines, not run
  python3 bench/seeds.py --mcbench target/release/mcbench --json seeds.json

Run one at a time on a quiet machine: the two tools run one after the other,
never together, and rate-dependent counters compare within 10 %.
"""

import argparse
import fnmatch
import json
import os
import re
import shlex
import shutil
import socket
import bisect
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAP_EXAMPLE = 3  # seconds: an example line's duration cap
CAP_OPTION = 2   # seconds: an option line's

# The man page's sample configuration file; the two comment lines the man
# page wraps ("... accounts for the total / generated keys") are joined.
MEMASLAP_CONFIG = """\
#comments should start with '#'
#key
#start_len end_len proportion
#
#key length range from start_len to end_len
#start_len must be equal to or greater than 16
#end_len must be equal to or less than 250
#start_len must be equal to or greater than end_len
#memaslap will generate keys according to the key range
#proportion: indicates keys generated from one range accounts for the total generated keys
#
#example1: key range 16~100 accounts for 80%
#          key range 101~200 accounts for 10%
#          key range 201~250 accounts for 10%
#          total should be 1 (0.8+0.1+0.1 = 1)
#
#          16 100 0.8
#          101 200 0.1
#          201 249 0.1
#
#example2: all keys length are 128 bytes
#
#          128 128 1
key
128 128 1
#value
#start_len end_len proportion
#
#value length range from start_len to end_len
#start_len must be equal to or greater than 1
#end_len must be equal to or less than 1M
#start_len must be equal to or greater than end_len
#memaslap will generate values according to the value range
#proportion: indicates values generated from one range accounts for the total generated values
#
#example1: value range 1~1000 accounts for 80%
#          value range 1001~10000 accounts for 10%
#          value range 10001~100000 accounts for 10%
#          total should be 1 (0.8+0.1+0.1 = 1)
#
#          1 1000 0.8
#          1001 10000 0.1
#          10001 100000 0.1
#
#example2: all value length are 128 bytes
#
#          128 128 1
value
2048 2048 1
#cmd
#cmd_type cmd_proportion
#
#currently memaslap only testss get and set command.
#
#cmd_type
#set     0
#get     1
#
#example: set command accounts for 50%
#         get command accounts for 50%
#         total should be 1 (0.5+0.5 = 1)
#
#         cmd
#         0    0.5
#         1    0.5
cmd
0    0.1
1.0 0.9
"""

# The man page's "example1" ranges made live: several key and value ranges.
MEMASLAP_RANGES = """\
key
16 100 0.8
101 200 0.1
201 249 0.1
value
1 1000 0.8
1001 10000 0.1
10001 100000 0.1
cmd
0 0.2
1 0.8
"""

CFG = {"config": MEMASLAP_CONFIG}
ONE_AGENT = ("eight agents -> one on loopback: mutilate's -a takes no port "
             "and every agent of a machine would bind the same -p")


def S(name, tool, line, **kw):
    """One seed line: `line` as the seed writes it (server names, times)."""
    return dict(name=name, tool=tool, args=shlex.split(line), **kw)


def skip(name, tool, line, reason):
    return S(name, tool, line, skip=reason)


MUTILATE_AGENT_EXAMPLE = dict(
    agents=["-T 16 -A"], setup=["-s memcached_server --loadonly"],
    note=ONE_AGENT, timeout=40)

SEEDS = [
    # ---- memaslap: the man page's USAGE/EXAMPLES, then the repcached guide.
    S("memaslap-ex1", "memaslap", "-s 127.0.0.1:11211 -S 5s"),
    S("memaslap-ex2", "memaslap", "-s 127.0.0.1:11211 -t 2m -v 0.2 -e 0.05 -b"),
    S("memaslap-ex3", "memaslap",
      "-s 127.0.0.1:11211 -F config -t 2m -w 40k -S 20s -o 0.2", files=CFG),
    S("memaslap-ex4", "memaslap",
      "-s 127.0.0.1:11211 -F config -t 2m -T 4 -c 128 -d 20 -P 40k", files=CFG),
    S("memaslap-ex5", "memaslap",
      "-s 127.0.0.1:11211 -F config -t 2m -d 50 -a -n 40", files=CFG, udp=True),
    S("memaslap-ex6", "memaslap",
      "-s 127.0.0.1:11211,127.0.0.1:11212 -F config -t 2m", files=CFG),
    S("memaslap-ex7", "memaslap",
      "-s 127.0.0.1:11211,127.0.0.1:11212 -F config -t 2m -p 2", files=CFG),
    S("memaslap-guide", "memaslap",
      "--servers=127.0.0.1:21211 -T 8 -c 128 --cfg_cmd=/usr/local/bin/config "
      "--execute_number=100000", files=CFG, timeout=60,
      note="the guide runs it as `memslap`, with memaslap's flags"),
    # ---- twemperf's mcperf: its README, then the repcached guide.
    S("mcperf-ex1", "mcperf", "--linger=0 --timeout=5 --conn-rate=1000 "
      "--call-rate=1000 --num-calls=10 --num-conns=1000 --sizes=u1,16"),
    S("mcperf-ex2", "mcperf", "--linger=0 --call-rate=0 --num-calls=100 "
      "--conn-rate=0 --num-conns=100 --sizes=d1"),
    S("mcperf-guide", "mcperf", "-s 127.0.0.1 -p 11211 --linger=0 --timeout=5 "
      "--conn-rate=1000 --call-rate=1000 --num-calls=10000 --num-conns=100 "
      "--sizes=u1024,10240",
      rewrite={"--num-calls=10000": "--num-calls=1000"},
      note="--num-calls 10000 -> 1000 for both: 10 s at 1000 calls/s, 5.6 GB"),
    # ---- mutilate (the fork's README; the real tool is leverich/mutilate).
    S("mutilate-ex1", "mutilate", "-s localhost"),
    S("mutilate-ex2", "mutilate", "-s zephyr2-10g -T 24 -c 8"),
    S("mutilate-ex3-load", "mutilate", "-s memcached_server --loadonly"),
    S("mutilate-ex3-agents", "mutilate",
      "-s memcached_server --noload -B -T 16 -Q 1000 -D 4 -C 4 "
      "-a agent1 -a agent2 -a agent3 -a agent4 -a agent5 -a agent6 "
      "-a agent7 -a agent8 -c 4 -q 200000", **MUTILATE_AGENT_EXAMPLE),
    # ---- memcache-perf (binary `mcperf`; here `memcache-perf`).
    S("memcache-perf-ex1", "memcache-perf", "-s localhost"),
    S("memcache-perf-ex2", "memcache-perf", "-s zephyr2-10g -T 24 -c 8"),
    S("memcache-perf-ex3-load", "memcache-perf", "-s memcached_server --loadonly"),
    S("memcache-perf-ex3-agents", "memcache-perf",
      "-s memcached_server --noload -B -T 16 -Q 1000 -D 4 -C 4 "
      "-a agent1 -a agent2 -a agent3 -a agent4 -a agent5 -a agent6 "
      "-a agent7 -a agent8 -c 4 -q 200000", **MUTILATE_AGENT_EXAMPLE),
]

# ---- One line per option of the options tables (after the examples).
MS = "-s 127.0.0.1:11211 -t 2s "
SEEDS += [
    S("memaslap-opt-T", "memaslap", MS + "-T 2 -c 8"),
    S("memaslap-opt-c", "memaslap", MS + "-c 4"),
    S("memaslap-opt-n", "memaslap", MS + "-n 2"),
    S("memaslap-opt-x", "memaslap", "-s 127.0.0.1:11211 -x 20000"),
    S("memaslap-opt-t", "memaslap", "--servers=127.0.0.1:11211 --time=2s"),
    S("memaslap-opt-F", "memaslap", MS + "-F config", files=CFG),
    S("memaslap-opt-F-ranges", "memaslap", MS + "-F ranges",
      files={"ranges": MEMASLAP_RANGES}),
    S("memaslap-opt-w", "memaslap", MS + "-w 1k"),
    S("memaslap-opt-X", "memaslap", MS + "-X 100"),
    S("memaslap-opt-v", "memaslap", MS + "-v 0.1"),
    S("memaslap-opt-d", "memaslap", MS + "-d 10"),
    S("memaslap-opt-S", "memaslap", MS + "-S 1s"),
    S("memaslap-opt-e", "memaslap", MS + "--exp_verify=0.01 --verify=0.1"),
    S("memaslap-opt-o", "memaslap", MS + "-o 0.5"),
    S("memaslap-opt-R", "memaslap", MS + "-R"),
    S("memaslap-opt-U", "memaslap", MS + "-U", udp=True),
    S("memaslap-opt-a", "memaslap", MS + "--facebook --division=50", udp=True),
    S("memaslap-opt-B", "memaslap", MS + "-B"),
    S("memaslap-opt-P", "memaslap", MS + "-P 5k"),
    S("memaslap-opt-p", "memaslap",
      "--servers=127.0.0.1:11211,127.0.0.1:11212 --rep_write=1 -t 2s"),
    S("memaslap-opt-b", "memaslap", MS + "-v 0.5 -b"),
    skip("memaslap-opt-h", "memaslap", "-h", "help: no load to compare"),
    skip("memaslap-opt-V", "memaslap", "-V", "version: no load to compare"),
]

TW = "-s localhost -p 11211 --num-conns=10 --num-calls=1000 "
SEEDS += [S("mcperf-opt-" + n, "mcperf", TW + o) for n, o in [
    ("v", "--verbosity=7"), ("o", "--output={tmp}/mcperf.log"),
    ("H", "-H"), ("t", "--timeout=1"), ("l", "--linger=0"),
    ("b", "--send-buffer=65536"), ("B", "--recv-buffer=65536"), ("D", "-D"),
    ("e", "--expiry=60"), ("q", "--use-noreply"), ("P", "--prefix=abc:"),
    ("c", "--client=1/4"), ("r", "--conn-rate=100"), ("R", "--call-rate=5000"),
    ("R-e", "--call-rate=e0.0002"), ("z-u", "--sizes=u10,100"),
    ("z-e", "--sizes=e100"), ("z-d", "--sizes=d100"),
]] + [S("mcperf-opt-m-" + m, "mcperf", TW + "--method=" + m) for m in [
    "get", "gets", "delete", "cas", "set", "add", "replace", "append",
    "prepend", "incr", "decr"]]

MU = "-s localhost "  # the harness adds the -t cap


def mutilate_options(tool):
    """The options both mutilate tables share, as lines for `tool`."""
    return [S("%s-opt-%s" % (tool, n), tool, MU + o, **kw) for n, o, kw in [
        ("binary", "--binary", {}), ("q", "-q 5000", {}), ("t", "-t 1", {}),
        ("K", "-K 20", {}), ("K-fb", "-K fb_key", {}),
        ("V", "-V 1000", {}), ("V-fb", "-V fb_value", {}),
        ("V-normal", "-V normal:500,100", {}), ("r", "-r 1000", {}),
        ("u", "-u 0.5", {}), ("T", "-T 2", {}), ("affinity", "--affinity", {}),
        ("c", "-c 4", {}), ("d", "-d 4", {}),
        ("R", "-s localhost2 -T 2 -R", {}),
        ("i", "-q 5000 -i fb_ia", {}), ("S", "-q 5000 -S", {}),
        ("moderate", "-q 5000 --moderate", {}), ("noload", "--noload", {}),
        ("loadonly", "--loadonly", {}), ("B", "-B", {}),
        ("no_nodelay", "--no_nodelay", {}), ("w", "-w 1", {}),
        ("W", "-W 1", {}), ("save", "--save={tmp}/samples", {}),
        ("scan", "--scan 5000:10000:5000 -t 1", {"timeout": 30}),
        ("search", "--search 95:1000 -t 1", {"timeout": 60}),
        ("N", "-N 20000", {}), ("U-P", "-U user -P secret", {}),
        ("C", "-C 2", {}), ("Q", "-Q 2000", {}), ("D", "-D 2", {}),
        ("v", "-v", {}), ("quiet", "--quiet", {}),
        ("l", "-q 10000 -a agent1", dict(agents=["-T 1 -A -l 2"], timeout=30)),
    ]]


SEEDS += mutilate_options("mutilate") + [
    S("mutilate-opt-" + n, "mutilate", MU + o) for n, o in [
        ("getset", "--getset -u 0.1"), ("getsetorset", "--getsetorset"),
        ("successful", "--successful"), ("prefix", "--prefix=foo"),
        ("delete90", "--getset --delete90 -N 20000"), ("assoc", "--assoc=8"),
        ("m", "-m 100")]] + [
    skip("mutilate-opt-unix_socket", "mutilate", "--unix_socket",
         "needs memcached on a UNIX socket"),
    skip("mutilate-opt-redis", "mutilate", "--redis", "needs a redis server"),
    skip("mutilate-opt-read_file", "mutilate", "--read_file=keys",
         "needs a key file in the fork's format"),
    skip("mutilate-opt-twitter_trace", "mutilate", "--twitter_trace=1",
         "needs a twitter trace file"),
]
# memcache-perf's own options; the shared ones are mutilate's lines above.
SEEDS += [S("memcache-perf-opt-" + n, "memcache-perf", MU + o) for n, o in [
    ("profile", "--profile=3"), ("keyorder", "--keyorder=none"),
    ("keyorder-zipf", "--keyorder=zipf:1.0"), ("e", "-e"),
    ("g", "-g 50 -G 10"), ("keycache", "--keycache_capacity=1000 "
     "--keycache_reuse=10 --keycache_regen=5"), ("m", "-m 2"), ("M", "-M 10"),
    ("q", "-q 5000"), ("u", "-u 0.5")]]

# ---- Each tool's options the harness rewrites: (short, long) spellings.
OPTS = {
    "memaslap": {"server": ("-s", "--servers"), "time": ("-t", "--time"),
                 "file": ("-F", "--cfg_cmd"), "count": ("-x", "--execute_number"),
                 "rate": ("-P", "--tps")},
    "mcperf": {"host": ("-s", "--server"), "port": ("-p", "--port")},
    "mutilate": {"server": ("-s", "--server"), "time": ("-t", "--time"),
                 "agent": ("-a", "--agent"), "aport": ("-p", "--agent_port"),
                 "count": ("-N", "--queries"), "rate": ("-q", "--qps"),
                 "mrate": ("-Q", "--measure_qps")},
}
OPTS["memcache-perf"] = OPTS["mutilate"]
PEERS = os.path.join(ROOT, "target", "peers")
REAL = {  # where each real tool may be, first found wins
    "memaslap": ["memaslap", "memcaslap"],
    "mcperf": [os.path.join(PEERS, "twemperf-mcperf"), "twemperf-mcperf"],
    "mutilate": [os.path.join(PEERS, "mutilate"), "mutilate"],
    "memcache-perf": [os.path.join(PEERS, "memcache-perf"), "memcache-perf"],
}

# ---- Tolerances, per counter class (printed as the legend).
RULES = {
    "fixed": "set by the arguments (connections, preloaded -r records): "
             "equal within 2 %",
    "count": "a count-bounded line's counts (-x, -N, -n x -N, --loadonly): "
             "within 2 %, or 4 sqrt(n) where a random get/set mix splits them",
    "dist": "key/value lengths of the items held, min/median/max: each "
            "within 2 % of the lengths' range, or (random lengths) at most "
            "10 items beyond the other side's min/max and the median within "
            "4 standard errors of the other side's middle rank",
    "share": "a share: sets of requests, hits of gets, new items per set "
             "(time-bounded lines: in the measured phase's middle, the "
             "preload and the ends left out), non-zero exptimes of sets "
             "(-vv): within 2 points or 4 standard errors; not judged under "
             "30 requests",
    "rate": "an open loop's requests/s (-P, -q above 0, -Q with agents) in "
            "the measured phase's middle: within 10 %",
    "speed": "a closed loop's requests/s there: not set by the arguments, so "
             "only a factor of 2 counts (a tool that sleeps, rate-limits or "
             "skips; memcached -vv keeps the server the bottleneck)",
    "time": "the line's wall time (set by its cap or counts): differs when "
            "one side takes twice as long and 2 s more",
    "info": "a closed loop's totals over a capped time measure the client's "
            "and server's speed, not the arguments: shown, not judged",
}
FIXED_TOL, COUNT_SIGMAS, RATE_TOL, SHARE_TOL = 0.02, 4, 0.10, 0.02
MIN_SHARE_N = 30  # a share over fewer requests is not judged
RANK_SLACK = 10   # items one side may have beyond the other's min or max
SPEED_FACTOR = 2  # closed loops' requests/s: judged only past this ratio
COUNTS = ["cmd_get", "cmd_set", "get_hits", "get_misses", "curr_items",
          "total_items", "conns", "deletes", "incr_decr", "cas", "touches"]
OPTIONAL = {"deletes", "incr_decr", "cas", "touches"}  # shown when not 0
STEADY = ["ops_per_s", "set_share", "hit_ratio", "items_per_set"]
DISTS = ["key_len", "val_len"]
ORDER = COUNTS + STEADY + DISTS + ["exp_nonzero"]


# ------------------------------------------------------------ argument work
def split_opts(tool, args):
    """[(role, opt, value, form)]: role None for arguments left alone."""
    roles = {o: r for r, pair in OPTS[tool].items() for o in pair}
    out, i = [], 0
    while i < len(args):
        a = args[i]
        name, eq, val = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in roles and eq:
            out.append((roles[name], name, val, "eq"))
        elif name in roles and i + 1 < len(args):
            out.append((roles[name], name, args[i + 1], "sep"))
            i += 1
        else:
            out.append((None, a, None, "arg"))
        i += 1
    return out


def join_opts(parts):
    out = []
    for _, opt, val, form in parts:
        out += [opt] if form == "arg" else (
            [opt + "=" + val] if form == "eq" else [opt, val])
    return out


def server_names(seed):
    """The distinct servers a seed names, in order (one memcached each)."""
    names = []
    for args in [shlex.split(s) for s in seed.get("setup", [])] + [seed["args"]]:
        for role, _, val, _ in split_opts(seed["tool"], args):
            if role == "server":
                names += [v for v in val.split(",") if v not in names]
    return names or ["localhost"]


def duration_s(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", text.strip().lower())
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def open_loop(seed):
    """-P (memaslap), -q above 0, or -Q on an agent line (mutilate's master
    keeps -Q only for its agents' runs; without agents it is ignored)."""
    roles = split_opts(seed["tool"], seed["args"])
    agents = any(r == "agent" for r, *_ in roles)
    for role, _, val, _ in roles:
        if (role == "mrate" and agents) or (role == "rate" and val.strip("0kK") != ""):
            return True
    return False


def count_bounded(seed):
    parts = split_opts(seed["tool"], seed["args"])
    return (seed["tool"] == "mcperf" or "--loadonly" in seed["args"]
            or any(r == "count" for r, *_ in parts))


class Rewriter:
    """Rewrites a seed's arguments for one run: servers, caps, files."""

    def __init__(self, seed, ports, aport, tmp):
        self.seed, self.tool, self.tmp = seed, seed["tool"], tmp
        self.names = server_names(seed)
        self.ports, self.aport = ports, aport
        self.cap = CAP_EXAMPLE if "-ex" in seed["name"] else CAP_OPTION
        self.notes, self.duration = [], None  # the run's length, s, if timed

    def addr(self, name):
        return "127.0.0.1:%s" % self.ports[self.names.index(name)]

    def line(self, args, main=True):
        args = [self.seed.get("rewrite", {}).get(a, a) for a in args]
        args = [a.replace("{tmp}", self.tmp) for a in args]
        parts = [self.part(p) for p in split_opts(self.tool, args)]
        parts = [p for p in parts if p is not None]
        return join_opts(parts) + self.missing(parts, main)

    def part(self, p):
        role, opt, val, form = p
        if role == "server":
            val = ",".join(self.addr(v) for v in val.split(","))
        elif role == "host":
            val = "127.0.0.1"
        elif role == "port":
            val = str(self.ports[0])
        elif role == "time":
            val = self.capped(val)
        elif role == "file":
            val = os.path.join(self.tmp, os.path.basename(val))
        elif role == "agent":
            if getattr(self, "agent_seen", False):
                return None
            self.agent_seen, val = True, "127.0.0.1"
        elif role == "aport":
            val = str(self.aport)
        return (role, opt, val, form)

    def capped(self, val):
        secs = duration_s(val)
        self.duration = secs and min(secs, self.cap)
        if secs is None or secs <= self.cap:
            return val
        new = "%ds" % self.cap if self.tool == "memaslap" else str(self.cap)
        self.notes.append("time %s -> %s (cap)" % (val, new))
        return new

    def missing(self, parts, main):
        """Options the harness adds: host/port, a time cap, an agent port."""
        roles = {p[0] for p in parts}
        add = []
        if self.tool == "mcperf":
            add += [] if "host" in roles else ["-s", "127.0.0.1"]
            add += [] if "port" in roles else ["-p", str(self.ports[0])]
        if main and self.tool != "mcperf" and not roles & {"time", "count"} \
                and "--loadonly" not in [p[1] for p in parts]:
            add += ["-t", "%ds" % self.cap if self.tool == "memaslap" else str(self.cap)]
            self.duration = self.cap
            self.notes.append("no time given -> %s added (cap; default %s)" % (
                " ".join(add[-2:]), "600 s" if self.tool == "memaslap" else "5 s"))
        if "agent" in roles and "aport" not in roles:
            add += ["-p", str(self.aport)]
        return add

    def agent_line(self, text):
        return shlex.split(text) + ["-p", str(self.aport)]


# ------------------------------------------------------------ processes
def free_port(udp=False):
    kinds = [socket.SOCK_STREAM] + ([socket.SOCK_DGRAM] if udp else [])
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            for k in kinds:
                with socket.socket(socket.AF_INET, k) as t:
                    t.bind(("0.0.0.0", port))
            return port
        except OSError:
            continue


def stop(proc, grace=2.0):
    """Ends a process this harness started, by its PID."""
    if proc.poll() is None:
        proc.terminate() if grace else proc.kill()
        try:
            proc.wait(grace or None)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run(cmd, timeout, out_path, env):
    """Runs cmd to completion or its timeout; (status, seconds, message)."""
    t0 = time.monotonic()
    with open(out_path, "wb") as out:
        try:
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=env)
        except OSError as e:
            return "exit 127", 0.0, str(e)
        try:
            rc = p.wait(timeout)
            status = "ok" if rc == 0 else ("signal %d" % -rc if rc < 0 else "exit %d" % rc)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            status = "timeout"
    return status, time.monotonic() - t0, message(out_path)


def message(path):
    """The line of a tool's output that says why it stopped, if any."""
    with open(path, "rb") as f:
        lines = [l.strip() for l in f.read().decode(errors="replace").splitlines() if l.strip()]
    for l in lines:
        if re.search(r"error|invalid|unrecognized|unknown|refus|not supported|fail|usage|must", l, re.I):
            return l[:160]
    return lines[-1][:160] if lines else ""


def listening(port):
    """Whether something listens on TCP `port` (read from /proc, no connect)."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                for row in f.read().splitlines()[1:]:
                    cols = row.split()
                    if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


class Memcached:
    """A fresh memcached with -vv logged, and the harness's stats connection."""

    def __init__(self, tmp, udp=False):
        self.port = free_port(udp)
        self.log = os.path.join(tmp, "memcached-%d.log" % self.port)
        cmd = ["memcached", "-p", str(self.port), "-U", str(self.port if udp else 0),
               "-l", "127.0.0.1", "-t", "2", "-m", "1024", "-vv"]
        cmd += ["-u", "root"] if os.geteuid() == 0 else []
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
        self.sock = None
        try:
            self.sock = self.connect()
            self.base = self.stats()
        except Exception:
            self.close()
            raise

    def connect(self):
        deadline = time.monotonic() + 5
        while True:
            try:
                return socket.create_connection(("127.0.0.1", self.port), timeout=10)
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("memcached did not start: see " + self.log)
                time.sleep(0.02)

    def ask(self, command):
        self.sock.sendall(command.encode() + b"\r\n")
        buf = b""
        while not (buf.endswith(b"END\r\n") or buf.endswith(b"ERROR\r\n")
                   or buf.startswith(b"BUSY")):
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                break
            buf += chunk
        return buf

    def stats(self):
        out = {}
        for line in self.ask("stats").decode().splitlines():
            f = line.split()
            if len(f) == 3 and f[0] == "STAT" and re.fullmatch(r"\d+", f[2]):
                out[f[1]] = int(f[2])
        return out

    def metadump(self):
        """[(key length, item size)] of every item held."""
        for _ in range(50):
            buf = self.ask("lru_crawler metadump all")
            if not buf.startswith(b"BUSY"):
                break
            time.sleep(0.1)
        items = []
        for line in buf.split(b"\n"):
            f = dict(t.split(b"=", 1) for t in line.strip().split(b" ") if b"=" in t)
            if b"key" in f and b"size" in f:
                items.append((len(urllib.parse.unquote_to_bytes(f[b"key"])), int(f[b"size"])))
        return items

    def close(self):
        """Its counters are read: SIGKILL (SIGTERM takes memcached 1 s)."""
        if self.sock:
            self.sock.close()
            self.sock = None
        stop(self.proc, grace=0)


def item_overhead():
    """Item size less key and value, measured on a memcached of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        m = Memcached(tmp)
        try:
            m.sock.sendall(b"set k 0 0 10\r\n0123456789\r\n")
            m.sock.recv(100)
            (klen, size), = m.metadump()
            return size - klen - 10
        finally:
            m.close()


# ------------------------------------------------------------ one side
def counters(servers, overhead):
    """The servers' counters after a run, summed over the servers."""
    c = dict.fromkeys(COUNTS, 0)
    items, exp = [], [0, 0]
    for m in servers:
        s, b = m.stats(), m.base
        d = lambda k: s.get(k, 0) - b.get(k, 0)
        for k in ["cmd_get", "cmd_set", "get_hits", "get_misses", "total_items"]:
            c[k] += d(k)
        c["curr_items"] += s.get("curr_items", 0)
        c["conns"] += d("total_connections")
        c["deletes"] += d("delete_hits") + d("delete_misses")
        c["incr_decr"] += sum(d(k) for k in ["incr_hits", "incr_misses", "decr_hits", "decr_misses"])
        c["cas"] += d("cas_hits") + d("cas_misses") + d("cas_badval")
        c["touches"] += d("touch_hits") + d("touch_misses")
        items += m.metadump()
    c["_lens"] = {"key_len": sorted(k for k, _ in items),
                  "val_len": sorted(sz - k - overhead for k, sz in items)}
    c.update({k: summary(v) for k, v in c["_lens"].items()})
    c["ops"] = sum(c[k] for k in ["cmd_get", "cmd_set", "deletes", "incr_decr", "cas", "touches"])
    return c


class Poller(threading.Thread):
    """Samples the servers' counters every 0.1 s while a line runs."""

    KEYS = ("cmd_get", "cmd_set", "get_hits", "curr_items")

    def __init__(self, servers):
        super().__init__(daemon=True)
        self.servers, self.samples, self.done = servers, [], threading.Event()
        self.start()

    def run(self):
        while not self.done.is_set():
            self.samples.append(self.sample())
            self.done.wait(0.1)

    def sample(self):
        tot = dict.fromkeys(self.KEYS, 0)
        for m in self.servers:
            st = m.stats()
            for k in tot:
                tot[k] += st.get(k, 0)
        return time.monotonic(), tot

    def finish(self):
        self.done.set()
        self.join()
        self.samples.append(self.sample())
        return self.samples


def busiest(samples, gap=0.5):
    """(first, last) sample of the longest stretch in which requests flowed
    with no pause over `gap` s (a loaded machine stalls a moment): the
    measured phase, not a preload before a pause such as mutilate's -W."""
    ops = [v["cmd_get"] + v["cmd_set"] for _, v in samples]
    moved = [i for i in range(1, len(ops)) if ops[i] > ops[i - 1]]
    best, start = None, None
    for k, i in enumerate(moved):
        if start is None or samples[i - 1][0] - samples[moved[k - 1]][0] > gap:
            start = i - 1
        if best is None or samples[i][0] - samples[start][0] > samples[best[1]][0] - samples[best[0]][0]:
            best = (start, i)
    return best


def steady(samples, duration):
    """Rate and shares over the measured phase's middle: of the busiest
    stretch, the last `duration` seconds less a fifth at each end (a preload
    comes first), or its middle half when the length is not known."""
    span = busiest(samples)
    if not span:
        return dict.fromkeys(STEADY), {}
    a, b = span
    ta, tb = samples[a][0], samples[b][0]
    lo, hi = ta + (tb - ta) / 4, tb - (tb - ta) / 4
    if duration:
        lo, hi = max(ta, tb - 0.8 * duration), tb - 0.2 * duration
    mid = [i for i in range(a, b + 1) if lo <= samples[i][0] <= hi]
    i, j = (mid[0], mid[-1]) if len(mid) >= 3 else (a, b)
    d = {k: samples[j][1][k] - samples[i][1][k] for k in Poller.KEYS}
    n_ops, dt = d["cmd_get"] + d["cmd_set"], samples[j][0] - samples[i][0]
    values = {"ops_per_s": round(n_ops / dt) if dt else None,
              "set_share": ratio(d["cmd_set"], n_ops),
              "hit_ratio": ratio(d["get_hits"], d["cmd_get"]),
              "items_per_set": ratio(d["curr_items"], d["cmd_set"])}
    return values, {"set_share": n_ops, "hit_ratio": d["cmd_get"], "items_per_set": d["cmd_set"]}


def ratio(a, b):
    return a / b if b else None


def exptimes(logs):
    """(sets logged, share with exptime not 0) from memcached -vv logs."""
    n = nonzero = 0
    for path in logs:
        with open(path, "rb") as f:
            for line in f:
                p = line.rstrip(b"\r\n").split(b" ")
                if len(p) >= 6 and p[0].startswith(b"<") and p[1] in SETS:
                    n += 1
                    nonzero += p[4] != b"0"
    return n, (nonzero / n if n else None)


SETS = {b"set", b"add", b"replace", b"append", b"prepend", b"cas"}


def summary(values):
    """(min, median, max) of sorted values."""
    return (values[0], values[(len(values) - 1) // 2], values[-1]) if values else None


def side(seed, exe, tmp, ctx):
    """Runs the seed's line with one tool; its status and counters."""
    for name, text in seed.get("files", {}).items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    servers, agents = [], []
    try:
        servers = [Memcached(tmp, seed.get("udp", False)) for _ in server_names(seed)]
        rw = Rewriter(seed, [m.port for m in servers], free_port(), tmp)
        agents = [start_agent(exe, rw.agent_line(a), tmp, i, ctx)
                  for i, a in enumerate(seed.get("agents", []))]
        res, samples = run_steps(seed, exe, rw, servers, tmp, ctx)
        for a in agents:
            stop(a)
        return measure(seed, res, samples, rw, servers, ctx)
    finally:
        for a in agents:
            stop(a)
        for m in servers:
            m.close()


def run_steps(seed, exe, rw, servers, tmp, ctx):
    """The setup steps (e.g. --loadonly), then the line, sampled."""
    res = {"status": "ok", "seconds": 0.0, "message": ""}
    for i, step in enumerate(seed.get("setup", [])):
        st, _, msg = run(exe + rw.line(shlex.split(step), main=False), 60,
                         os.path.join(tmp, "setup%d.out" % i), ctx["env"])
        if st != "ok":
            res.update(status="setup " + st, message=msg)
    poller = Poller(servers)
    if res["status"] == "ok":
        st, sec, msg = run(exe + rw.line(seed["args"]), timeout_of(seed, rw),
                           os.path.join(tmp, "run.out"), ctx["env"])
        res.update(status=st, seconds=sec, message=msg)
    samples = poller.finish()
    with open(os.path.join(tmp, "samples.out"), "w") as f:  # for --keep
        f.writelines("%.2f %s\n" % (t, json.dumps(v)) for t, v in samples)
    return res, samples


def measure(seed, res, samples, rw, servers, ctx):
    """The servers' counters, the measured phase's shares, -vv's exptimes."""
    res["counters"] = counters(servers, ctx["overhead"])
    if not count_bounded(seed):
        values, res["n"] = steady(samples, rw.duration)
        res["counters"].update(values)
    for m in servers:
        m.close()
    n, share = exptimes([m.log for m in servers])
    res["counters"]["exp_nonzero"] = None if binary(seed) else share
    res.setdefault("n", {})["exp_nonzero"] = n
    return res


def binary(seed):
    """Binary protocol: memcached -vv logs it as hex, no exptime shares."""
    a = seed["args"]
    return "--binary" in a or (seed["tool"] == "memaslap" and "-B" in a)


def timeout_of(seed, rw):
    return seed.get("timeout", rw.cap + 20)


def start_agent(exe, args, tmp, i, ctx):
    port = int(args[args.index("-p") + 1])
    with open(os.path.join(tmp, "agent%d.out" % i), "wb") as out:
        p = subprocess.Popen(exe + args, stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=ctx["env"])
    deadline = time.monotonic() + 5
    while not listening(port) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return p


# ------------------------------------------------------------ comparing
def within(rule, a, b, n=0):
    if a == b or rule == "info":
        return True
    big = max(abs(a), abs(b))
    if rule == "fixed":
        return abs(a - b) <= FIXED_TOL * big
    if rule == "count":
        return abs(a - b) <= max(FIXED_TOL * big, COUNT_SIGMAS * big ** 0.5)
    if rule == "rate":
        return abs(a - b) <= RATE_TOL * big
    if rule == "speed":
        return big <= SPEED_FACTOR * min(a, b)
    p = min(max((a + b) / 2, 0.0), 1.0)
    se = (p * (1 - p) / n) ** 0.5 if n else 0
    return abs(a - b) <= max(SHARE_TOL, 4 * se)


def same_dist(a, b):
    """Key or value lengths (sorted lists): min, median and max each within
    2 % of the range, or, for random lengths, where the other side's sample
    puts them: at most RANK_SLACK items beyond the other's min or max, its
    median within 4 standard errors of the middle rank."""
    span = max(a[-1] - a[0], b[-1] - b[0])
    close = [abs(x - y) <= FIXED_TOL * span for x, y in zip(summary(a), summary(b))]
    if all(close):
        return True
    below = max(bisect.bisect_left(a, b[0]), bisect.bisect_left(b, a[0]))
    above = max(len(a) - bisect.bisect_right(a, b[-1]), len(b) - bisect.bisect_right(b, a[-1]))
    rank = bisect.bisect_left(a, summary(b)[1]) / len(a)
    se = (0.25 / len(a) + 0.25 / len(b)) ** 0.5
    return (close[0] or below <= RANK_SLACK) and (close[2] or above <= RANK_SLACK) \
        and (close[1] or abs(rank - 0.5) <= 4 * se + 1.0 / len(a))


def rule_of(seed, counter):
    if counter in seed.get("rules", {}):
        return seed["rules"][counter]
    if counter in DISTS:
        return "dist"
    if counter == "conns":
        return "fixed"
    if counter == "ops_per_s":
        return "rate" if open_loop(seed) else "speed"
    if counter in STEADY or counter == "exp_nonzero":
        return "share"
    if count_bounded(seed):
        return "count"
    if counter == "curr_items" and seed["tool"] in ("mutilate", "memcache-perf"):
        return "fixed"  # the -r records, preloaded; sets overwrite them
    return "info"


def differences(seed, real, mcb):
    """[(counter, real value, mcbench value, rule)] that differ."""
    out = []
    if kind(real["status"]) != kind(mcb["status"]):
        out.append(("exit", real["status"], mcb["status"], "status"))
    if not same_time(real["seconds"], mcb["seconds"]):
        out.append(("seconds", round(real["seconds"], 1), round(mcb["seconds"], 1), "time"))
    for k in ORDER:
        a, b, rule = real["counters"].get(k), mcb["counters"].get(k), rule_of(seed, k)
        n = min(real.get("n", {}).get(k, 0), mcb.get("n", {}).get(k, 0))
        if k in real.get("n", {}) and n < MIN_SHARE_N:
            continue  # a share of too few requests on one side to judge
        if a is None or b is None:
            same = a is b or rule == "info"
        elif rule == "dist":
            same = same_dist(real["counters"]["_lens"][k], mcb["counters"]["_lens"][k])
        else:
            same = within(rule, a, b, n)
        if not same:
            out.append((k, a, b, rule))
    return out


def same_time(a, b):
    """A line's length is set by its time cap or counts: twice as long, and
    2 s more, is no noise."""
    return max(a, b) <= 2 * min(a, b) or abs(a - b) <= 2


def kind(status):
    return status if status in ("ok", "timeout") else "failed"


def refused(res):
    c = res["counters"]
    return c["ops"] == 0 and (res["status"] != "ok" or c["conns"] == 0)


def verdict(seed, real, mcb):
    """(verdict, [differences], detail)."""
    if real is None:
        return "MISSING", [], "real %s not found" % seed["tool"]
    if refused(real):
        also = ("mcbench refused too: " + mcb["message"]) if refused(mcb) else \
            "mcbench ran %d requests" % mcb["counters"]["ops"]
        return "REFUSED", [], "real: %s (%s); %s" % (real["status"], real["message"], also)
    if refused(mcb):
        return "DIFFERENT", [("run", "ran", "refused", "status")], \
            "mcbench: %s (%s)" % (mcb["status"], mcb["message"])
    diffs = differences(seed, real, mcb)
    return ("DIFFERENT" if diffs else "SAME"), diffs, ""


# ------------------------------------------------------------ printing
def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.3f" % v
    if isinstance(v, tuple):
        return "/".join(str(x) for x in v)
    return str(v)


def print_sides(seed, real, mcb, diffs):
    bad = {d[0] for d in diffs}
    rows = [("exit", real and "%s %.1fs" % (real["status"], real["seconds"]),
             "%s %.1fs" % (mcb["status"], mcb["seconds"]), "")]
    for k in ORDER:
        a = real and real["counters"].get(k)
        b = mcb["counters"].get(k)
        if (k in OPTIONAL and not a and not b) or (a is None and b is None):
            continue
        rows.append((k, a, b, rule_of(seed, k)))
    print("    %-12s %-22s %-22s %s" % ("counter", "real", "mcbench", "rule"))
    for k, a, b, rule in rows:
        mark = "  <-- differs" if k in bad or (k == "exit" and "seconds" in bad) else ""
        print("    %-12s %-22s %-22s %s%s" % (k, fmt(a), fmt(b), rule, mark))


def describe(seed):
    """The rewrites, as they apply to both tools (symbolic ports)."""
    rw = Rewriter(seed, ["PORT%d" % (i + 1) for i in range(len(server_names(seed)))],
                  "APORT", "TMP")
    line = rw.line(seed["args"])
    setup = [rw.line(shlex.split(s), main=False) for s in seed.get("setup", [])]
    agents = [rw.agent_line(a) for a in seed.get("agents", [])]
    notes = list(dict.fromkeys(rw.notes))
    notes += ["%s -> %s" % kv for kv in seed.get("rewrite", {}).items()]
    return line, setup, agents, notes


def print_header(i, total, seed):
    print("\n[%d/%d] %s: %s %s" % (i, total, seed["name"], seed["tool"],
                                   " ".join(shlex.quote(a) for a in seed["args"])))
    line, setup, agents, notes = describe(seed)
    for a in agents:
        print("    agent: %s" % " ".join(a))
    for s in setup:
        print("    first: %s" % " ".join(s))
    print("    runs:  %s" % " ".join(shlex.quote(a) for a in line))
    for n in notes:
        print("    rewritten (both tools): %s" % n)
    if seed.get("note"):
        print("    note: %s" % seed["note"])


def print_table(rows):
    print("\n" + "=" * 100)
    print("%-3s %-28s %-9s %s" % ("#", "line", "verdict", "args; differences (real vs mcbench)"))
    for i, r in enumerate(rows, 1):
        print("%-3d %-28s %-9s %s %s" % (i, r["name"], r["verdict"], r["tool"], r["args"]))
        for d in r["differences"]:
            print("%44s %s: real %s, mcbench %s (%s)" % ("", d["counter"], d["real"],
                                                       d["mcbench"], d["rule"]))
        if r["detail"]:
            print("%44s %s" % ("", r["detail"]))
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    print("\nverdicts: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    print("rules:")
    for name, text in RULES.items():
        print("  %-6s %s" % (name, text))


# ------------------------------------------------------------ driving
def find_real(tool):
    for c in REAL[tool]:
        path = c if os.path.isabs(c) and os.access(c, os.X_OK) else shutil.which(c)
        if path:
            return path
    return None


def find_mcbench(given):
    for c in [given] if given else [os.path.join(ROOT, "target", d, "mcbench")
                                    for d in ("test-release", "release")]:
        if c and os.access(c, os.X_OK):
            return os.path.abspath(c)
    sys.exit("mcbench not found (give --mcbench PATH)")


def one_line(i, total, seed, ctx):
    print_header(i, total, seed)
    row = {"name": seed["name"], "tool": seed["tool"], "args": " ".join(seed["args"]),
           "runs": " ".join(describe(seed)[0]), "differences": [], "detail": ""}
    if seed.get("skip"):
        row.update(verdict="SKIPPED", detail=seed["skip"])
        print("    verdict: SKIPPED (%s)" % seed["skip"])
        return row
    real_exe = find_real(seed["tool"])
    real = in_tmp(seed, [real_exe], ctx, "real") if real_exe else None
    mcb = in_tmp(seed, [ctx["mcbench"], seed["tool"]], ctx, "mcbench")
    v, diffs, detail = verdict(seed, real, mcb)
    print_sides(seed, real, mcb, diffs)
    print("    verdict: %s%s" % (v, (" (%s)" % detail) if detail else ""))
    for res in (real, mcb):
        if res:
            res["counters"].pop("_lens", None)  # not for the JSON
    row.update(verdict=v, detail=detail, real_tool=real_exe,
               differences=[dict(counter=d[0], real=fmt(d[1]), mcbench=fmt(d[2]), rule=d[3])
                            for d in diffs],
               real=real, mcbench=mcb)
    return row


def guarded(i, total, seed, ctx):
    """one_line, with a harness failure reported as that line's ERROR."""
    try:
        return one_line(i, total, seed, ctx)
    except Exception as e:  # a harness bug must not lose the other lines
        print("    verdict: ERROR (harness: %s: %s)" % (type(e).__name__, e))
        return {"name": seed["name"], "tool": seed["tool"], "args": " ".join(seed["args"]),
                "verdict": "ERROR", "differences": [], "detail": "harness: %s" % e}


def in_tmp(seed, exe, ctx, who):
    with tempfile.TemporaryDirectory(prefix="seeds-") as tmp:
        try:
            return side(seed, exe, tmp, ctx)
        finally:
            keep(tmp, ctx, seed["name"], who)


def keep(tmp, ctx, name, who):
    """With --keep DIR: the tools' outputs (not memcached's logs) to DIR/NAME/WHO."""
    if not ctx["keep"]:
        return
    dest = os.path.join(ctx["keep"], name, who)
    os.makedirs(dest, exist_ok=True)
    for f in os.listdir(tmp):
        if f.endswith(".out"):
            shutil.copy(os.path.join(tmp, f), dest)


def selected(only):
    if not only:
        return SEEDS
    pats = [p.strip() for p in only.split(",") if p.strip()]
    return [s for s in SEEDS if any(fnmatch.fnmatch(s["name"], p) or s["tool"] == p
                                    or s["name"].startswith(p + "-") for p in pats)]


def context(args, tmp):
    token = os.path.join(tmp, "agent-token")
    with open(token, "w") as f:
        f.write("seeds-harness-token-%d\n" % os.getpid())
    os.chmod(token, 0o600)
    env = dict(os.environ, MCBENCH_TOKEN_FILE=token)
    return {"env": env, "mcbench": snapshot(find_mcbench(args.mcbench), tmp),
            "overhead": item_overhead(), "keep": args.keep}


def snapshot(path, tmp):
    """A copy of mcbench, so that a rebuild mid-run cannot mix two builds."""
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(path)))
    print("mcbench: %s (built %s), run from a copy" % (path, stamp))
    copy = os.path.join(tmp, "mcbench")
    shutil.copy2(path, copy)
    return copy


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="seed names, globs or tool names, comma-separated")
    ap.add_argument("--mcbench", help="the mcbench binary (default target/test-release, else target/release)")
    ap.add_argument("--json", help="write the summary table (and each side's counters) to FILE")
    ap.add_argument("--keep", metavar="DIR", help="keep each run's tool output in DIR/LINE/{real,mcbench}")
    ap.add_argument("--list", action="store_true", help="print the seed lines and exit")
    args = ap.parse_args()
    seeds = selected(args.only)
    if args.list:
        for s in seeds:
            print("%-28s %s %s" % (s["name"], s["tool"], " ".join(s["args"])))
        return
    with tempfile.TemporaryDirectory(prefix="seeds-ctx-") as tmp:
        ctx = context(args, tmp)
        print("real tools: %s" % ", ".join(
            "%s=%s" % (t, find_real(t) or "MISSING") for t in REAL))
        print("memcached item overhead: %d bytes; caps: example lines %d s, option lines %d s"
              % (ctx["overhead"], CAP_EXAMPLE, CAP_OPTION))
        t0 = time.monotonic()
        rows = [guarded(i, len(seeds), s, ctx) for i, s in enumerate(seeds, 1)]
    print_table(rows)
    print("total time %.0f s" % (time.monotonic() - t0))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rules": RULES, "lines": rows}, f, indent=1, default=str,
                      sort_keys=True)


if __name__ == "__main__":
    main()
