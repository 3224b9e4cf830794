#!/usr/bin/env python3
"""Counts a load generator's syscalls and CPU per request against a fresh
memcached (-t 1, core 0; bench/compare.py's), the generator on core 1,
requests counted by memcached (cmd_get + cmd_set). perf stat's tracepoints
add a cost per syscall: compare counts, and CPU only between commands of
one sitting.

Usage: bench/syscalls.py LABEL COMMAND...   (PORT in COMMAND is memcached's)
  bench/syscalls.py on target/release/mcbench run -s 127.0.0.1:PORT --no-load \\
      -r 10000 -K 30 -V 200 -u 0.1 -T 1 -c 50 -t 4s -q 20000
  bench/syscalls.py floor target/floor PORT 50 1 4 20000 timer
The key space is preloaded for mcbench and, when built (bench/compare.py
builds it), for the floor client. Needs perf, memcached and taskset;
writes /tmp/syscalls-LABEL.{perf,out}.
"""
import os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Memcached, preload_any_command  # noqa: E402

CALLS = ["sendto", "recvfrom", "recvmsg", "sendmsg", "read", "write", "epoll_pwait2", "epoll_wait",
         "clock_nanosleep", "io_uring_enter"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    label, cmd = sys.argv[1], sys.argv[2:]
    m = Memcached()
    try:
        preload_any_command(m)
        events = ",".join(["task-clock", "context-switches", "raw_syscalls:sys_enter"]
                          + [f"syscalls:sys_enter_{c}" for c in CALLS])
        before = m.ops()
        with open(f"/tmp/syscalls-{label}.out", "w") as out:
            subprocess.run(["perf", "stat", "-x,", "-e", events, "-o", f"/tmp/syscalls-{label}.perf",
                            "taskset", "-c", "1", *[a.replace("PORT", str(m.port)) for a in cmd]],
                           stdout=out, stderr=subprocess.STDOUT, check=True)
        n = m.ops() - before
    finally:
        m.stop()
    print(f"{label}: {n} requests")
    with open(f"/tmp/syscalls-{label}.perf") as f:
        for line in f:
            fields = line.split(",")
            if fields[0][:1].isdigit() and float(fields[0]) > 0:
                print(f"  {fields[2]:<38}{float(fields[0]):>12.0f}  {float(fields[0]) / n:8.3f} per request")


if __name__ == "__main__":
    main()
