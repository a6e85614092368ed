# mk/bench.mk — the HTTP benchmark and the cost report (issue 5).
#
#   make bench        nginx, skiff serve --stack linux and skiff serve --stack
#                     skiff (xdp, packet, tap) under ab/wrk in namespaces,
#                     alternating, 3 reps, medians -> bench/results/<date>/
#                     (results.md, runs.csv, chart.png).  About 10-15 min.
#   make bench-quick  the same with 1 rep of 1 s each (development; the
#                     numbers mean little).
#   make bench-cost   the "What it costs" table (cycles and ns, median and
#                     p99) -> $(COST_OUT): live figures from `skiff serve
#                     --trace` on xdp, packet, tap and --stack linux under
#                     ab -k and ab in namespaces, beside the micro-benchmarks
#                     bench_ring and bench_cost.  About 5 min.  Knobs:
#                     COST_KA_N COST_CLOSE_N COST_OVERHEAD_REPS COST_AB_N.
#   make bench-parse  the HTTP head parser alone: ns per parse (bench/bench_parse.c).
#   make bench-tls    the same harness over HTTPS (BENCH_TLS=1, TLS 1.3):
#                     nginx with OpenSSL against skiff serve --tls-cert on
#                     each engine (-openssl, -gnutls: --tls-engine) and both
#                     stacks, the same certificate and settings; full
#                     handshakes (ab without -k), resumed ones (resume-c1:
#                     openssl s_time -reuse) and keep-alive HTTPS req/s, with
#                     the server core's CPU per request and a handshake table
#                     against nginx (issue 35's goal).  BENCH_TLS_KEY=rsa for
#                     RSA 2048 instead of ECDSA P-256.  About 12 min.
#   make bench-tls-engines  its handshake rows alone: nginx, skiff on each
#                     engine, --stack linux and packet, ab-c1, ab-c16 and
#                     resume-c1, 3 reps; about 5 min (run it under flock
#                     /tmp/skiff-nettest.lock on a shared machine).
# Knobs: BENCH_REPS BENCH_DURATION BENCH_N BENCH_SERVERS BENCH_LOADS
# BENCH_PASSES BENCH_OUT BENCH_SERVER_CPU BENCH_CLIENT_CPU BENCH_OFFLOADS
# BENCH_V6_LOADS BENCH_V6_PASSES (the -v6 rows)
# (see bench/http/bench.py).  Needs root.
#   make bench-h2     HTTP/2 (issue 33): skiff serve against nginx (http2) on
#                     127.0.0.1, h2load at -c 1 -m 1, -c 16 -m 16 and -c 100
#                     -m 10 over TLS and h2c, 41 B and 6000 B bodies, req/s and
#                     the server's CPU per request, and a 60-asset page over
#                     HTTP/2 and HTTP/1.1 (bench/h2.sh, docs/bench-h2.md; its
#                     H2_BENCH_* knobs).  About 5 min; skiff's HTTP/2 cells are
#                     void until its HTTP engine speaks HTTP/2.
#   make bench-app    examples/kv (http/app.h): GET and PUT of a 1 KiB value,
#                     keep-alive and close, on --stack linux against skiff on
#                     packet and xdp (bench/http/app_bench.sh); also the last
#                     step of make bench.  About 1 min.
.PHONY: bench bench-quick bench-cost bench-parse bench-tls bench-app bench-tls-libs \
	bench-tls-engines bench-h2

BENCH_PY := PYTHONDONTWRITEBYTECODE=1 python3
COST_OUT ?= docs/cost.md

bench: deps all
	@$(BENCH_PY) bench/http/bench.py $(BUILD)/skiff
	@bench/http/app_bench.sh $(BUILD)/examples

bench-app: deps all
	@bench/http/app_bench.sh $(BUILD)/examples

bench-h2: deps all
	@bench/h2.sh $(BUILD)/skiff

bench-quick: deps all
	@BENCH_REPS=$${BENCH_REPS:-1} BENCH_DURATION=$${BENCH_DURATION:-1} \
	  BENCH_WARMUP=$${BENCH_WARMUP:-0} $(BENCH_PY) bench/http/bench.py $(BUILD)/skiff

BENCH_TLS_SERVERS := nginx linux-app-openssl linux-app-gnutls skiff-packet-openssl \
	skiff-packet-gnutls
bench-tls: deps all
	@BENCH_TLS=1 BENCH_PASSES=$${BENCH_PASSES:-41} \
	  BENCH_SERVERS="$${BENCH_SERVERS:-$(BENCH_TLS_SERVERS)}" \
	  BENCH_LOADS="$${BENCH_LOADS:-ab-c1 ab-c16 resume-c1 ab-k-c1 ab-k-c8 ab-k-c64}" \
	  $(BENCH_PY) bench/http/bench.py $(BUILD)/skiff

bench-tls-engines: deps all
	@BENCH_TLS=1 BENCH_PASSES=$${BENCH_PASSES:-41} \
	  BENCH_SERVERS="$${BENCH_SERVERS:-$(BENCH_TLS_SERVERS)}" \
	  BENCH_LOADS="$${BENCH_LOADS:-ab-c1 ab-c16 resume-c1}" \
	  BENCH_OUT="$${BENCH_OUT:-bench/results/tls-hs-$$(date +%Y-%m-%d-%H%M%S)}" \
	  $(BENCH_PY) bench/http/bench.py $(BUILD)/skiff

bench-cost: deps all $(BUILD)/bench/bench_cost $(BUILD)/bench/bench_ring $(BUILD)/bench/bench_tls
	@$(BENCH_PY) bench/http/cost.py --skiff $(BUILD)/skiff --cost $(BUILD)/bench/bench_cost \
	  --tls $(BUILD)/bench/bench_tls \
	  --ring $(BUILD)/bench/bench_ring --out $(COST_OUT)

# The TLS libraries Debian 12 packages (OpenSSL 3.0 and GnuTLS 3.7 through
# skiff's two engines, and wolfSSL 5.5 and GnuTLS alone), server side, in
# cycles, one core, alternating (bench/tls_libs.py; BENCH_TLS_REPS, default
# 5; about 2 min).
bench-tls-libs: deps $(BUILD)/bench/bench_tls $(BUILD)/bench/bench_tls_wolfssl $(BUILD)/bench/bench_tls_gnutls
	@$(BENCH_PY) bench/tls_libs.py $(BUILD)/bench --reps $${BENCH_TLS_REPS:-5}

# The HTTP head parser alone: ns per parse of ab's and a browser's request.
bench-parse: $(BUILD)/bench/bench_parse
	$(BUILD)/bench/bench_parse

# TCP at a distance (issue 19): skiff's TCP against Linux's (CUBIC, BBR)
# through skiff impair, a grid of one-way delay x loss, alternating, medians
# (bench/tcp_wan.sh: BENCH_TCP_GRID=quick (default, bounded) or full, and
# BENCH_TCP_DELAYS, _LOSSES, _MIB, _LOSSY_MIB, _REPS, _STACKS, _ROLES, _LOCK,
# _OUT).  bench-tcp-relay: the relay's own CPU, skiff impair against
# the old tests/tcp_impair.py.
.PHONY: bench-tcp bench-tcp-relay
bench-tcp: deps all
	@bench/tcp_wan.sh $(BUILD)/skiff grid

bench-tcp-relay: deps all
	@bench/tcp_wan.sh $(BUILD)/skiff relay-cpu

# A caching reverse proxy in front of nginx (issue 16 item 6, seed 002):
# nginx proxy_cache against skiff proxy on --stack linux and on skiff's stack
# (xdp, packet, tap), ab -k -c 64, ab -c 16, wrk close -c 1000, cache hits and
# misses, one run alternating -> bench/results/proxy-<date>/ (bench/proxy.sh,
# bench/http/proxy_bench.py).  About 3 min.  BENCH_PROXY_SKIFF=PATH measures
# another skiff binary; BENCH_QUICK=1 short runs (development).
.PHONY: bench-proxy
BENCH_PROXY_SKIFF ?= $(BUILD)/skiff
bench-proxy: deps all
	@SKIFF=$(BENCH_PROXY_SKIFF) bench/proxy.sh

# Real payloads (issue 31 item 4): bodies of 41 B to 16 MiB keep-alive and
# close, one 1 GiB download on one connection and 1 MiB over HTTPS; nginx
# (sendfile on, kTLS where the kernel has it), skiff --stack linux, skiff on
# packet: and tap:, all behind one veth, each row with the veth's default
# offloads and with them off; req/s, MiB/s, server CPU per byte (ns/B),
# alternating, medians of 3 -> bench/results/bytes-<date>/ (results.md,
# runs.csv; bench/http/bytes.py --help, docs/bench-bytes.md).  About 20 min,
# so not part of `make bench`.  bench-bytes-quick: 1 short run of each
# (about 3 min, a smoke test).  BENCH_BYTES_ARGS: more options for bytes.py.
.PHONY: bench-bytes bench-bytes-quick
bench-bytes: deps all
	@$(BENCH_PY) bench/http/bytes.py $(BENCH_BYTES_ARGS) $(BUILD)/skiff

bench-bytes-quick: deps all
	@$(BENCH_PY) bench/http/bytes.py --quick $(BENCH_BYTES_ARGS) $(BUILD)/skiff
