#!/usr/bin/env bash
# bench/proxy.sh — `make bench-proxy` (issue 16 item 6): nginx proxy_cache,
# skiff proxy --stack linux and skiff proxy --stack skiff on xdp, packet and
# tap, each in front of an nginx upstream serving the 600-byte file; ab -k
# -c 64, ab -c 16 and wrk close -c 1000, cache hits and misses, one run,
# alternating (bench/http/proxy_bench.py, which reuses make bench's
# namespaces and measurements from bench/http/bench.py).
#
#   SKIFF=path/to/skiff bench/proxy.sh      (default build/skiff)
#   BENCH_QUICK=1 bench/proxy.sh            1 s runs, for trying it
#
# Needs root; take the lock: flock /tmp/skiff-nettest.lock bench/proxy.sh
# Every knob: bench/http/proxy_bench.py's docstring.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SKIFF=$(realpath -m "${SKIFF:-$here/../build/skiff}")
exec env PYTHONDONTWRITEBYTECODE=1 python3 "$here/http/proxy_bench.py" "$SKIFF"
