#!/usr/bin/env bash
# Counts a load generator's syscalls and CPU per request against a fresh
# memcached (-t 1, core 0), the generator on core 1, requests counted by
# memcached (cmd_get + cmd_set). perf stat's tracepoints add a cost per
# syscall: compare counts, and CPU only between commands of one sitting.
#
#   bench/syscalls.sh LABEL COMMAND...     (PORT in COMMAND is memcached's)
#   bench/syscalls.sh on  target/release/mcbench run -s 127.0.0.1:PORT --no-load \
#       -r 10000 -K 30 -V 200 -u 0.1 -T 1 -c 50 -t 4s -q 20000
#   bench/syscalls.sh floor target/floor PORT 50 1 4 20000 timer
#
# The key space is preloaded for mcbench (-r 10000 -K 30 -V 200) and for the
# floor client (bench/floor/floor.c, built by bench/compare.py). Needs perf,
# memcached, taskset and python3; writes /tmp/syscalls-LABEL.{perf,out}.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
label=$1; shift
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ops() {
  python3 - "$port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"stats\r\n")
d = b""
while not d.endswith(b"END\r\n"):
    d += s.recv(65536)
print(sum(int(f[2]) for f in (l.split() for l in d.decode().splitlines())
          if len(f) > 2 and f[1] in ("cmd_get", "cmd_set")))
PY
}
taskset -c 0 memcached -u root -t 1 -p "$port" -U 0 -c 4096 &
mc=$!
trap 'kill $mc 2>/dev/null; wait $mc 2>/dev/null || true' EXIT
sleep 0.5
"$root/target/release/mcbench" run -s "127.0.0.1:$port" --load-only -r 10000 -K 30 -V 200 -c 8 >/dev/null
[ -x "$root/target/floor" ] && "$root/target/floor" "$port" load >/dev/null
events=task-clock,context-switches,raw_syscalls:sys_enter
for call in sendto recvfrom recvmsg sendmsg read write epoll_pwait2 epoll_wait clock_nanosleep io_uring_enter; do
  events+=",syscalls:sys_enter_$call"
done
before=$(ops)
perf stat -x, -e "$events" -o "/tmp/syscalls-$label.perf" \
  taskset -c 1 "${@//PORT/$port}" >"/tmp/syscalls-$label.out" 2>&1
after=$(ops)
n=$((after - before))
echo "$label: $n requests"
awk -F, -v n="$n" '/^[0-9]/ && $1 > 0 { printf "  %-38s %12.0f  %8.3f per request\n", $3, $1, $1 / n }' \
  "/tmp/syscalls-$label.perf"
