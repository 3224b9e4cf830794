#!/usr/bin/env python3
"""Places keys with the system's libmemcached (Debian's libmemcached11,
1.1.4) through ctypes: the independent reader for `mcbench route`.

usage: libmemcached_route.py DISTRIBUTION HASH HOST:PORT:WEIGHT... < keys
Prints one server index per key line. Exit 3 when the library is missing.
"""
import ctypes
import ctypes.util
import sys

# Enum values from libmemcached-1.0/types/{behavior,hash,server_distribution}.h.
BEHAVIOR_HASH = 2
BEHAVIOR_DISTRIBUTION = 9
BEHAVIOR_KETAMA_WEIGHTED = 16
DISTRIBUTION = {"modula": 0, "ketama": 2, "ketama-spy": 4}
HASH = {"one_at_a_time": 0, "md5": 1, "crc": 2, "fnv1_64": 3, "fnv1a_64": 4,
        "fnv1_32": 5, "fnv1a_32": 6, "jenkins": 9}


def main():
    try:
        lib = ctypes.CDLL("libmemcached.so.11")
    except OSError as e:
        print(f"libmemcached.so.11 not found: {e}", file=sys.stderr)
        sys.exit(3)
    lib.memcached_create.restype = ctypes.c_void_p
    lib.memcached_create.argtypes = [ctypes.c_void_p]
    lib.memcached_behavior_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]
    lib.memcached_server_add_with_weight.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint16, ctypes.c_uint32]
    lib.memcached_generate_hash.restype = ctypes.c_uint32
    lib.memcached_generate_hash.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    dist, hash_name, servers = sys.argv[1], sys.argv[2], sys.argv[3:]
    memc = lib.memcached_create(None)
    # KETAMA_WEIGHTED alone is what an application sets (pylibmc's
    # ketama_weighted): it picks the ketama distribution and MD5. Setting
    # the distribution after it would turn weighting off again.
    if dist in ("ketama", "ketama-spy"):
        assert lib.memcached_behavior_set(memc, BEHAVIOR_KETAMA_WEIGHTED, 1) == 0
    if dist != "ketama":
        assert lib.memcached_behavior_set(memc, BEHAVIOR_DISTRIBUTION, DISTRIBUTION[dist]) == 0
    if dist == "modula":
        assert lib.memcached_behavior_set(memc, BEHAVIOR_HASH, HASH[hash_name]) == 0
    for s in servers:
        host, port, weight = s.rsplit(":", 2)
        rc = lib.memcached_server_add_with_weight(memc, host.encode(), int(port), int(weight))
        assert rc == 0, rc
    out = []
    for line in sys.stdin.buffer.read().split(b"\n"):
        if line:
            out.append(str(lib.memcached_generate_hash(memc, line, len(line))))
    sys.stdout.write("\n".join(out) + "\n")


main()
