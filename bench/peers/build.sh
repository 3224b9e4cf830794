#!/usr/bin/env bash
# Builds a peer load generator from a source tree you point it at, into
# target/peers/BINARY, for bench/compare.py's peer rows.
#
#   bench/peers/build.sh memtier  /path/to/memtier_benchmark   # at 2f74d61
#   bench/peers/build.sh mutilate /path/to/mutilate            # at d65c6ef
#   bench/peers/build.sh twemperf /path/to/twemperf            # at c6120fc
#   bench/peers/build.sh memcache-perf /path/to/memcache-perf  # at e39a8a7
#
# The machines reach no source host: fetch each public repository at its
# pinned commit yourself and export it (`git archive COMMIT | tar -x`).
# The tree is built in a copy under target/peers/src, never in place.
# Debian packages it needs: build-essential autoconf automake libtool
# pkg-config libevent-dev libssl-dev zlib1g-dev scons gengetopt libzmq3-dev.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 memtier|mutilate|twemperf|memcache-perf SOURCE_DIR" >&2; exit 2; }
tool=$1
src=$(cd "$2" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/target/peers"
work="$out/src/$tool"
mkdir -p "$out/src"
rm -rf "$work"
cp -a "$src" "$work"
cd "$work"
jobs=$(nproc)
case "$tool" in
  memtier)
    autoreconf -ivf >/dev/null
    ./configure --quiet
    make -s -j"$jobs"
    cp memtier_benchmark "$out/"
    ;;
  mutilate)
    # Its SConstruct is Python 2: `print "..."` statements become calls.
    sed -i -E 's/^(\s*)print (.*[^,])$/\1print(\2)/; s/^(\s*)print (.*),$/\1print(\2, end=" ")/; s/^(else: )print (.*)$/\1print(\2)/' SConstruct
    # Its distribution parser calls strtok_r(NULL) with a NULL save pointer
    # for a bare name ("exponential", the -i default); today's glibc
    # crashes there, so every -q run segfaulted. Hand it "" instead.
    sed -i 's/strtok_r(a_ptr, ",", &saveptr)/strtok_r(a_ptr ? a_ptr : (char *) "", ",", \&saveptr)/' Generator.cc
    scons -Q -j"$jobs" >/dev/null
    cp mutilate "$out/"
    ;;
  twemperf)
    autoreconf -fvi >/dev/null 2>&1
    ./configure --quiet
    make -s -j"$jobs"
    cp src/mcperf "$out/twemperf-mcperf"
    ;;
  memcache-perf)
    # Its binary is also called mcperf (twemperf's name): kept apart.
    make -s -j"$jobs" mcperf >/dev/null
    cp mcperf "$out/memcache-perf"
    ;;
  *)
    echo "unknown peer '$tool' (memtier, mutilate, twemperf or memcache-perf)" >&2
    exit 2
    ;;
esac
echo "built $out/$(ls -t "$out" | grep -v '^src$' | head -1)"
