#!/usr/bin/env bash
# tests/run-all.sh — what `make test` runs: every phase, each reported
# PASS/FAIL with its time, and a closing "summary: N passed, N failed" line.
# A phase that fails does not stop the others, so one run shows everything.
#
# Phases run side by side.  Each test script builds its own namespaces
# ("skt-<its pid>-ROLE", tests/lib.sh) and takes free loopback ports, so two
# scripts never share a device, an address or a port; what they share is
# the two cores.  The scheduler below therefore counts CPU, not phases:
# each phase has a weight in half cores, from its CPU time over its wall
# time as run-all prints them (1: it mostly waits on timers, peers and
# round trips, as a TCG guest that idles or a relay with a delay does; 2:
# about a core, as a load generator and its server; 4: a parallel compile),
# at most TEST_SLOTS of weight run at once, and a phase starts beside
# others only when the cores were idle TEST_IDLE percent a unit of its
# weight over the last TEST_WINDOW seconds, or in the place of one that
# just ended: the weights say what a phase may cost, /proc/stat what the
# running ones cost now.  A phase marked solo runs with
# nothing beside it: its checks measure speed against a peer on the same
# cores, or compile with every core.  Phases start longest first (est=,
# seconds measured on the 2-core machine, plus the estimates of the phases
# that need it) so the long ones do not end the run alone.  needs= orders a phase after the phases whose output it uses;
# excl= keeps two phases that use one fixed resource apart.  A phase marked
# bg (a compile whose output no timed check reads: clang's warnings, the
# fuzzers' build) runs in the background under nice 19 from the moment its
# needs are done: it takes the cycles the other phases leave idle (the
# kernel gives a nice-0 process about 98% of a core against it), counts
# for no weight, and its CPU shows as idle to the admission test below, so
# it delays no phase; what is left of it when the others end runs at full
# speed.  (Without it the weight-4 compiles waited for the end, one after
# another, while the phases before them left a fifth of the cores idle.)
#
#   tests/run-all.sh                 every phase (make test)
#   tests/run-all.sh --list          the phases, one a line: name, weight, needs, estimate
#   PHASES="http tls" tests/run-all.sh   those phases and what they need (build, ...)
#
# Environment: PHASES (names, space-separated: only these, plus their needs),
#   TEST_SLOTS (weight run at once, half cores, default 6; 1 runs one phase
#   at a time, in the order listed), TEST_IDLE (percent, default 15),
#   TEST_WINDOW (seconds, default 4), FUZZ_SMOKE_TIME (seconds per fuzz target,
#   default 3), SKIFF_DEVS (devices, default "tap packet xdp"), JOBS (make -j
#   for the build phases, default 2).
set -u
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
TEST_SLOTS=${TEST_SLOTS:-6}
TEST_IDLE=${TEST_IDLE:-15}
TEST_WINDOW=${TEST_WINDOW:-4}
FUZZ_SMOKE_TIME=${FUZZ_SMOKE_TIME:-3}
DEVS=${SKIFF_DEVS:-tap packet xdp}
LOG=build/test-logs
ASAN_ENV=(env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1)
SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

usage() {
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
	exit "${1:-2}"
}
LIST=0
case ${1:-} in
-h | --help) usage 0 ;;
--list) LIST=1 ;;
"") ;;
*) echo "run-all.sh: unknown argument '$1'" >&2; usage ;;
esac

# ---- the phase table ---------------------------------------------------
# P NAME [w=N] [est=S] [needs=A,B] [excl=G] [solo|bg] -- COMMAND...
NAMES=() declare -A W EST NEEDS EXCL SOLO BG CMD
P() {
	local name=$1 a
	shift
	W[$name]=1 EST[$name]=60 NEEDS[$name]= EXCL[$name]= SOLO[$name]=0 BG[$name]=0
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		a=$1
		shift
		case $a in
		w=*) W[$name]=${a#w=} ;;
		est=*) EST[$name]=${a#est=} ;;
		needs=*) NEEDS[$name]=${a#needs=} ;;
		excl=*) EXCL[$name]=${a#excl=} ;;
		solo) SOLO[$name]=1 ;;
		bg) BG[$name]=1 ;;
		*) echo "run-all.sh: phase $name: unknown attribute '$a'" >&2; exit 2 ;;
		esac
	done
	shift
	CMD[$name]=$(printf '%q ' "$@")
	NAMES+=("$name")
}

forms() { # forms FIRST: FIRST then skiff:DEV for each device
	local f=$1 d
	for d in $DEVS; do f="$f skiff:$d"; done
	printf '%s' "$f"
}

FORMS=$(forms linux) # linux skiff:tap skiff:packet skiff:xdp

# The list itself: each package on it is needed by something (taking it off makes the check fail).
P deps-list est=5 -- tests/deps_test.sh
# The builds use every core (make -j): nothing runs beside them.  The
# unit tests' binaries too (check-unit-build, mk/check.mk): built here,
# where both cores compile anyway, the unit phase only runs them and fits
# beside the others instead of waiting, a compile of weight 3, for the end.
P build solo est=30 -- make -j"$JOBS" all check-unit-build
P freestanding w=2 est=3 -- make check-freestanding
# make check's steps beyond the build and the unit tests (mk/check.mk): no
# include up a layer, the command-line page matches the options table, no
# dead link in the docs, every code example in docs/ and the public headers
# built and run, `make app` with several files and one form.  (Its fuzz-replay is left to the fuzz phase, whose
# libFuzzer runs every committed input of fuzz/seeds/ before it mutates.)
P check-steps w=2 est=30 needs=build -- make -j"$JOBS" check-layers check-cli-doc check-doc-links \
	check-doc-examples check-app-build
# clang's warnings come from its front end, not from the optimizer, so the
# hosted build and the unit tests compile at -O0 (half the CPU of -O2); the
# unikernel keeps its own -O2 (UK_CFLAGS: its inline asm is checked as
# shipped).  In the background: nothing reads its output.
P clang bg est=60 needs=build -- make -j"$JOBS" clang-check OPT=-O0
P unit est=45 needs=build -- make unit
# skiff check on the corpus of good and bad configuration files (tests/conf/).
P check needs=build est=5 -- tests/check.sh build/skiff
P asan-build w=3 needs=build est=45 -- make -j"$JOBS" asan
P integration est=60 needs=build -- tests/integration.sh build/skiff $DEVS
P ipv6 est=90 needs=build -- env IPV6_UK=build/skiff-uk.elf tests/ipv6.sh build/skiff $DEVS
P dev-smoke est=20 needs=build -- make -j"$JOBS" dev-smoke
P http w=2 needs=build est=130 -- tests/http.sh build/skiff
# Every HTTP check over IPv6, on every device (issue 18's acceptance).
P http6 w=2 needs=build est=145 -- env HTTP_FAMILY=6 tests/http.sh build/skiff $FORMS
P ops est=80 needs=build -- tests/ops.sh build/skiff
P metrics est=60 needs=build -- tests/metrics.sh build/skiff
# Static file semantics against nginx, both stacks and the unikernel (TCG).
P http-diff w=2 needs=build est=10 -- tests/http_diff.sh build/skiff
P tls w=2 est=110 needs=build -- tests/tls.sh build/skiff
# The same against the GnuTLS engine (--tls-engine gnutls, docs/tls.md).
P tls-gnutls w=2 est=110 needs=build -- env TLS_ENGINE=gnutls tests/tls.sh build/skiff
# The same on the wolfSSL engine (the unikernel's TLS 1.3, hosted here).
P tls-wolfssl w=2 est=100 needs=build -- env TLS_ENGINE=wolfssl tests/tls.sh build/skiff
# tls.sh on the xdp device (the form the tls phase leaves out), on the
# default engine: the TLS layer is the same over every device.
if [[ " $DEVS " == *" xdp "* ]]; then P tls-xdp w=2 est=25 needs=build -- tests/tls.sh build/skiff skiff:xdp; fi
# --stack linux's file bodies by sendfile(2), --sendfile off, a file cut mid-send (loopback).
P sendfile w=2 est=20 needs=build -- tests/sendfile.sh build/skiff
# HTTPS on the applications and certificates by name (loopback, kernel sockets).
P tls-app est=40 needs=build -- tests/tls_app.sh build/skiff build/examples
P tls-app-gnutls est=40 needs=build -- env TLS_ENGINE=gnutls tests/tls_app.sh build/skiff build/examples
P tls-app-wolfssl est=40 needs=build -- env TLS_ENGINE=wolfssl tests/tls_app.sh build/skiff build/examples
# The same scripts over IPv6 (SKT_FAMILY=6, tests/lib.sh skt_family),
# narrowed (each runs whole over v6 by hand): ops where the client's
# address is written (the access and error logs) and the drain, on both
# stacks; metrics and skiff stat on skiff's; HTTPS on skiff's over tap;
# http-diff on skiff's (the kernel's and the unikernel's targets are IPv4
# only, see the script).
P ops6 est=40 needs=build -- env SKT_FAMILY=6 OPS_ONLY="log_combined log_json drain_wrk errlog" tests/ops.sh build/skiff
P metrics6 est=30 needs=build -- env SKT_FAMILY=6 tests/metrics.sh build/skiff skiff:tap
P http-diff6 est=40 needs=build -- env SKT_FAMILY=6 tests/http_diff.sh build/skiff skiff
P tls6 est=30 needs=build -- env SKT_FAMILY=6 tests/tls.sh build/skiff skiff:tap
# The unikernel under QEMU TCG: a guest keeps a host core busy.
P vm needs=build est=20 -- tests/vm.sh build/skiff build/skiff-uk.elf
# More than one vCPU (issue 17): --smp N, the APs' boot, their idle cost.
P vm-smp needs=build est=25 -- tests/vm_smp.sh build/skiff build/skiff-uk.elf
# HTTPS in the unikernel (BearSSL).  Its engine's ASan pass is asan-unit
# (tls_bearssl_test, hosted); the guest itself cannot run the sanitizers.
P vm-tls needs=build est=90 -- tests/vm_tls.sh build/skiff build/skiff-uk.elf build/examples/kv-uk.elf
# TLS 1.3 in the unikernel: build/skiff-uk-tls13.elf (wolfSSL, make
# uk-tls13, built here: `make all` leaves it out); then its HTTPS on both
# vCPUs of --smp 2 over a multi-queue TAP (vm_smp.sh's smp-tap-tls13).
P vm-tls13 needs=build excl=uk-tls13 est=120 -- sh -c 'make --no-print-directory uk-tls13 >build/uk-tls13.log 2>&1 || { tail -n 20 build/uk-tls13.log; exit 1; }; r=0; tests/vm_tls13.sh build/skiff build/skiff-uk-tls13.elf || r=1; VM_SMP_ONLY=tls13 VM_LOG_DIR=build/test-logs/vm-tls13-smp tests/vm_smp.sh build/skiff build/skiff-uk.elf build/skiff-uk-tls13.elf || r=1; exit $r'
# HTTP/2 in the unikernel (issue 33): h2c, BearSSL's and wolfSSL's ALPN h2,
# an application image; builds uk-tls13 as vm-tls13 does (excl: not both
# at once in one build folder).
P vm-h2 needs=build excl=uk-tls13 est=30 -- sh -c 'make --no-print-directory uk-tls13 >build/uk-tls13-h2.log 2>&1 || { tail -n 20 build/uk-tls13-h2.log; exit 1; }; tests/vm_h2.sh build/skiff build/skiff-uk.elf build/skiff-uk-tls13.elf build/examples/kv-uk.elf'
# The same two on QEMU's microvm machine (skiff vm --machine microvm,
# docs/microvm.md): virtio-mmio from the kernel command line, no PCI/ACPI.
P vm-microvm needs=build est=70 -- env VM_MACHINE=microvm VM_LOG_DIR=build/test-logs/vm-microvm \
	tests/vm.sh build/skiff build/skiff-uk.elf
P vm-tls-microvm needs=build est=70 -- env VM_MACHINE=microvm VM_LOG_DIR=build/test-logs/vm-tls-microvm \
	tests/vm_tls.sh build/skiff build/skiff-uk.elf build/examples/kv-uk.elf
# The wolfSSL image's ECDSA guest on microvm (vm_tls13.sh up to its
# counters; testssl, --smp, RSA and SNI stay on pc); builds uk-tls13 as
# vm-tls13 does.
P vm-tls13-microvm needs=build excl=uk-tls13 est=30 -- sh -c 'make --no-print-directory uk-tls13 >build/uk-tls13-microvm.log 2>&1 || { tail -n 20 build/uk-tls13-microvm.log; exit 1; }; VM_MACHINE=microvm VM_LOG_DIR=build/test-logs/vm-tls13-microvm tests/vm_tls13.sh build/skiff build/skiff-uk-tls13.elf'
# skiff proxy in the unikernel (build/skiff-proxy-uk.elf).
P vm-proxy est=60 needs=build -- tests/vm_proxy.sh build/skiff build/skiff-proxy-uk.elf
# skiff vm --config: examples/sites.conf's sites in the unikernel (issue 32).
P vm-sites est=60 needs=build -- tests/vm_sites.sh build/skiff build/skiff-uk.elf
# The C library of an application image (Debian's musl, issue 34): libc
# calls in the guest and hosted, checked against Python; heap-stress on
# --smp 2 with and without the heap lock (two more guests: est +20 s).
P vm-libc est=60 needs=build -- tests/vm_libc.sh build/skiff build/examples build/skiff-uk.elf
P site needs=build est=40 -- tests/site.sh build/skiff build/skiff-uk.elf
P linux-guest w=2 est=90 needs=build -- make linux-guest-test
P switch w=2 est=90 needs=build -- tests/switch.sh build/skiff
P load w=2 est=60 needs=build -- tests/load.sh build/skiff
P load6 w=2 est=60 needs=build -- env SKT_FAMILY=6 tests/load.sh build/skiff
# tap: and packet: with the kernel's default offloads on the Linux side
# (issue 31): checksums left unfinished, TSO frames both ways, cut and sent.
P offload w=2 needs=build est=30 -- tests/offload.sh build/skiff
# HTTP/2's HPACK against python3-hpack, both ways (mk/h2.mk; no root, no network).
P hpack-interop needs=build est=20 -- make hpack-interop
# HTTP/2's engine (src/h2/conn.h) on 127.0.0.1 against python3-h2, curl and
# h2load (mk/h2.mk; an ephemeral port, no root).
P h2-interop needs=build est=25 -- make h2-interop
# HTTP/2 through the real server (http/app.c): serve --root, an application,
# the proxy, --http2 off, against curl, nghttp, h2load and python3-h2
# (mk/h2.mk; ephemeral 127.0.0.1 ports, no root).
P h2-serve needs=build est=20 -- make h2-serve
# A browser over HTTP/2: headless Chromium loads a page of 60 assets from
# skiff serve over TLS (ALPN h2), in a network namespace of its own.
P h2-chromium needs=build est=15 -- tests/h2_chromium.sh build/skiff
# Hostile HTTP/2 clients in raw frames against the real server (serve --root
# and --config): each defence ends the attacker, others are served, memory
# stays bounded, the counter moves (mk/h2.mk; ephemeral 127.0.0.1 ports).
P h2-hostile needs=build est=30 -- make h2-hostile
# The same engine's HTTP/2 over skiff's own TCP/IP stack on tap (a namespace of
# tests/lib.sh): h2c, TLS with ALPN h2, h2load.
P h2-serve-tap w=2 needs=build est=40 -- tests/h2_serve_tap.sh build/skiff
# Bulk transfers through an impairing relay: CPU-bound.
P tcp needs=build est=190 -- tests/tcp.sh build/skiff $DEVS
# issue 37: the same checks with BBR (--tcp-cc bbr, paced), on tap.
P tcp-bbr needs=build est=150 -- env TCP_CC=bbr tests/tcp.sh build/skiff tap
# And on the other devices, at small sizes (the checks are the same; what BBR
# changes is the sender's pacing and window, client.pacing checks the former).
# The blind RSTs stay at tcp.sh's 1,000,000: rst_counters wants one of them
# to land in the window: 1,000,000 random sequence numbers put 36-37 there
# (packet, xdp), 200,000 about 7, and a ci-fresh run at 43c6e93 had none
# on packet (the phase failed on that alone).
P tcp-bbr-dev needs=build est=200 -- env TCP_CC=bbr TCP_FULL_CLEAN=$((8 << 20)) \
	TCP_FULL_IMPAIRED=$((1 << 20)) TCP_FULL_CYCLES=4000 TCP_SMALL_CLEAN=$((8 << 20)) \
	TCP_SMALL_IMPAIRED=$((1 << 20)) TCP_SMALL_CYCLES=4000 \
	tests/tcp.sh build/skiff ${DEVS//tap/}
# The server-side TCP checks (echo under impairment, cycles, blind RSTs, SYN
# flood) against skiff echo --workers 2, at the smaller sizes, on the two
# kinds of steering the kernel does for a process (packet's fanout, tap's
# queues); smp.sh covers xdp's one socket a queue.
P tcp-smp est=120 needs=build -- env TCP_WORKERS=2 TCP_FULL_CLEAN=$((20 << 20)) \
	TCP_FULL_IMPAIRED=$((4 << 20)) TCP_FULL_CYCLES=4000 tests/tcp.sh build/skiff packet tap
# Every TCP check over IPv6 on every device, at the smaller sizes.
P tcp6 needs=build est=130 -- env TCP_FAMILY=6 TCP_FULL_CLEAN=$((20 << 20)) \
	TCP_FULL_IMPAIRED=$((4 << 20)) TCP_FULL_CYCLES=4000 tests/tcp.sh build/skiff $DEVS
# serve --workers 2 (docs/smp.md): the kernel's stack (SO_REUSEPORT) and each
# device's steering (packet fanout, multi-queue tap, one AF_XDP socket a
# queue).
P smp w=2 est=120 needs=build -- tests/smp.sh build/skiff $FORMS
# Applications on http/app.h (examples/, built by `make all`): kv, echo,
# hello on the kernel's sockets, on skiff's stack over each device, and as
# unikernel images under skiff vm.  The guest's fixed ports (tests/app.sh
# UK_PORT) keep it apart from asan-app.
P app w=2 needs=build excl=app-ports est=90 -- tests/app.sh build/examples $FORMS uk
# skiff proxy (http/proxy.h) before a recording Python upstream and nginx,
# on the kernel's sockets (127.0.0.1) and on skiff's stack on a TAP.
P proxy est=90 needs=build -- tests/proxy.sh build/skiff linux skiff:tap
# skiff serve --config (issue 32): examples/sites.conf as written and every
# directive, on both stacks; nginx with the same sites answering alike.
P sites est=70 needs=build -- tests/sites.sh build/skiff linux skiff:tap
# --workers 2 for the proxy and kv (docs/smp.md): linux, and kv on a TAP.
P proxy-workers w=2 est=60 needs=build -- tests/proxy_workers.sh build/skiff linux skiff:tap
P install est=30 needs=build -- tests/install.sh build
# The OCI image (make oci) and deploy/kubernetes/ played on podman, hostNetwork on 127.0.0.1:
# 3 replicas behind skiff proxy under wrk, one killed, then a rolling update (tests/deploy.sh).
P deploy w=2 est=75 needs=build -- tests/deploy.sh build
P asan-unit w=2 est=60 needs=asan-build -- make BUILD=build/asan OPT=-O1 SAN="$SAN_FLAGS" unit
# Its mutants are a process each (about 85 ms of CPU under ASan with leak
# checking): the first 150 of hpack-interop's 600 (bytes changed, cut and
# inserted, 31 of them accepted by both decoders and the rest refused by
# both), so ASan sees the decoder's refusals and its accepted odd blocks;
# the plain phase runs all 600 against python3-hpack.
P asan-hpack-interop est=30 needs=asan-build -- "${ASAN_ENV[@]}" HPACK_MUTANTS=150 make BUILD=build/asan OPT=-O1 SAN="$SAN_FLAGS" hpack-interop
P asan-h2-interop est=40 needs=asan-build -- "${ASAN_ENV[@]}" make BUILD=build/asan OPT=-O1 SAN="$SAN_FLAGS" h2-interop
P asan-h2-serve est=40 needs=asan-build -- "${ASAN_ENV[@]}" make BUILD=build/asan OPT=-O1 SAN="$SAN_FLAGS" h2-serve
P asan-h2-hostile est=40 needs=asan-build -- "${ASAN_ENV[@]}" make BUILD=build/asan OPT=-O1 SAN="$SAN_FLAGS" h2-hostile
P asan-integration est=60 needs=asan-build -- "${ASAN_ENV[@]}" tests/integration.sh build/asan/skiff $DEVS
P asan-ipv6 est=40 needs=asan-build -- "${ASAN_ENV[@]}" tests/ipv6.sh build/asan/skiff tap
# On the kernel's stack and on skiff's over tap: the device code of packet
# and xdp runs under the sanitizers in asan-integration.
P asan-http w=2 est=90 needs=asan-build -- "${ASAN_ENV[@]}" tests/http.sh build/asan/skiff linux skiff:tap
# HTTP over IPv6 under the sanitizers on one device (the v6 input, ND and
# the [v6] peers through the server; the loads are http.sh's own).
P asan-http6 w=2 est=60 needs=asan-build -- "${ASAN_ENV[@]}" HTTP_FAMILY=6 tests/http.sh build/asan/skiff skiff:tap
# The access log and the drain under the sanitizers, on the kernel's stack
# (the code they exercise is the same on both; ops runs both above).
P asan-ops est=40 needs=asan-build -- "${ASAN_ENV[@]}" tests/ops.sh build/asan/skiff linux
# --metrics and skiff stat under the sanitizers, both stacks (the admin
# sockets are waited on differently on each: loop_watch, the runner's side fd).
P asan-metrics est=60 needs=asan-build -- "${ASAN_ENV[@]}" tests/metrics.sh build/asan/skiff
P asan-sites est=80 needs=asan-build -- "${ASAN_ENV[@]}" tests/sites.sh build/asan/skiff linux skiff:tap
# The ASan TLS phases leave testssl out (TLS_TESTSSL=0): its probes test the
# library's answers, which tls and tls-gnutls check with testssl; the
# hostile input through our glue (tls_probe.py hostile) still runs here.
P asan-tls w=2 est=110 needs=asan-build -- "${ASAN_ENV[@]}" TLS_TESTSSL=0 tests/tls.sh build/asan/skiff linux skiff:tap
P asan-tls-gnutls w=2 est=80 needs=asan-build -- "${ASAN_ENV[@]}" TLS_ENGINE=gnutls TLS_TESTSSL=0 tests/tls.sh build/asan/skiff linux
# wolfSSL's engine under the sanitizers; testssl's probes left to tls-wolfssl.
P asan-tls-wolfssl w=2 est=30 needs=asan-build -- "${ASAN_ENV[@]}" TLS_ENGINE=wolfssl TLS_TESTSSL=0 tests/tls.sh build/asan/skiff linux
P asan-tls-app est=40 needs=asan-build -- "${ASAN_ENV[@]}" tests/tls_app.sh build/asan/skiff build/asan/examples
# wolfSSL's: a connection on a name's context keeps the ticket key's context across SIGHUP.
P asan-tls-app-wolfssl est=40 needs=asan-build -- "${ASAN_ENV[@]}" TLS_ENGINE=wolfssl tests/tls_app.sh build/asan/skiff build/asan/examples
P asan-tls-app-gnutls est=35 needs=asan-build -- "${ASAN_ENV[@]}" TLS_ENGINE=gnutls tests/tls_app.sh build/asan/skiff build/asan/examples
# The application engine under the sanitizers, both stacks (tap).
P asan-app w=2 est=60 needs=asan-build excl=app-ports -- "${ASAN_ENV[@]}" APP_OPS_LINUX=3000 APP_OPS_SKIFF=2000 \
	tests/app.sh build/asan/examples linux skiff:tap
# The workers' threads, signals and summed counters under the sanitizers.
P asan-smp w=2 est=60 needs=asan-build -- "${ASAN_ENV[@]}" tests/smp.sh build/asan/skiff linux skiff:packet
# The proxy under the sanitizers, both stacks, 8 MiB bodies.
P asan-proxy w=2 est=60 needs=asan-build -- "${ASAN_ENV[@]}" PROXY_MIB=8 tests/proxy.sh build/asan/skiff linux skiff:tap
P asan-proxy-workers est=40 needs=asan-build -- "${ASAN_ENV[@]}" tests/proxy_workers.sh build/asan/skiff linux
P asan-switch w=2 est=60 needs=asan-build -- "${ASAN_ENV[@]}" tests/switch.sh build/asan/skiff
# TCP under the sanitizers on one device with smaller transfers: the full
# sizes ran above; here the point is memory errors on every path.
P asan-tcp w=2 est=120 needs=asan-build -- "${ASAN_ENV[@]}" TCP_FULL_CLEAN=$((20 << 20)) \
	TCP_FULL_IMPAIRED=$((2 << 20)) TCP_FULL_CYCLES=6000 tests/tcp.sh build/asan/skiff tap
# TCP over IPv6 under the sanitizers, the same shape smaller still (3,000
# cycles: client.cycles needs every TIME_WAIT slot used once to see one
# reused; 200,000 blind RSTs).
P asan-tcp6 w=2 est=90 needs=asan-build -- "${ASAN_ENV[@]}" TCP_FAMILY=6 \
	TCP_FULL_CLEAN=$((8 << 20)) TCP_FULL_IMPAIRED=$((1 << 20)) TCP_FULL_CYCLES=3000 \
	TCP_RST_COUNT=200000 tests/tcp.sh build/asan/skiff tap
# libFuzzer on every target for FUZZ_SMOKE_TIME seconds, two at a time,
# once the targets are built (in the background: a compile for the cycles
# the other phases leave).  Each target first runs every committed input of
# fuzz/seeds/, as make check's fuzz-replay does, then mutates.
P fuzz-build bg est=60 needs=build -- make -j"$JOBS" fuzz-build
P fuzz w=4 needs=fuzz-build est=60 -- make -j"$JOBS" fuzz FUZZ_TIME="$FUZZ_SMOKE_TIME"

if [ $LIST -eq 1 ]; then
	for n in "${NAMES[@]}"; do
		printf '%-20s w=%s%s%s est=%ss%s%s\n' "$n" "${W[$n]}" "$([ "${SOLO[$n]}" = 1 ] && echo ' solo')" \
			"$([ "${BG[$n]}" = 1 ] && echo ' bg')" \
			"${EST[$n]}" "${NEEDS[$n]:+ needs=${NEEDS[$n]}}" "${EXCL[$n]:+ excl=${EXCL[$n]}}"
	done
	exit 0
fi

# One phase at a time (TEST_SLOTS=1) means the background ones too, in their place.
if [ "$TEST_SLOTS" -le 1 ]; then for n in "${NAMES[@]}"; do BG[$n]=0; done; fi

# ---- which phases ------------------------------------------------------
declare -A WANT
want() { # want NAME: NAME and, first, what it needs
	local n=$1 d
	[ -n "${W[$n]+x}" ] || { echo "run-all.sh: no phase '$n' (tests/run-all.sh --list)" >&2; exit 2; }
	[ -n "${WANT[$n]+x}" ] && return
	WANT[$n]=1
	for d in ${NEEDS[$n]//,/ }; do want "$d"; done
}
if [ -n "${PHASES:-}" ]; then
	for n in $PHASES; do want "$n"; done
else
	for n in "${NAMES[@]}"; do WANT[$n]=1; done
fi

mkdir -p "$LOG"
T0=$SECONDS

# python3 itself, not a version manager's shim.  Where python3 first on
# PATH is pyenv's shim (a bash script that runs `pyenv exec`, which works
# out the version from files and runs more scripts: this machine's PATH and
# CI's), each call costs about 0.5 s of CPU on the 2-core machine, ten
# times /usr/bin/python3's whole run of `python3 -c pass`, and the phases
# start python3 some hundreds of times.  So every phase gets, first on
# PATH, a link to the interpreter that shim picks here (its
# sys.executable): the same Python, version and modules, without the shim.
# (Nothing of it runs as another user: only skiff does, in install.sh.)
if [[ $(command -v python3) == */shims/python3 ]] &&
	py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
	mkdir -p build/python-bin && ln -sfn "$py" build/python-bin/python3 &&
		PATH=$PWD/build/python-bin:$PATH && export PATH
fi
passed=0 failed=0 failures=() fail_lines=()

# Before any phase: every command, header, library and module the phases use
# is installed, and tools/deps.sh's list names all of them (tools/depscan.py
# reads the scripts and sources to know).  One gap stops everything here,
# naming the command and its package, instead of failing phases one by one.
echo "=== deps"
if ! tools/deps.sh --check; then
	echo "FAIL deps: stopped before the first phase (install with tools/deps.sh, or add the package to its list)"
	echo "summary: 0 passed, 1 failed"
	exit 1
fi
echo "PASS deps"

# The totals the test scripts and unit runners print about themselves.
TOTALS='^\[  (PASSED|FAILED)  \]|^integration:|^ipv6:|^dev_smoke:|^http:|^ops:|^metrics:|^http_diff:|^tls:|^tls-app:|^vm:|^vm-smp:|^vm-tls:|^vm-tls13:|^vm-proxy:|^vm-sites:|^vm-libc:|^site:|^linux_guest:|^linux-guest:|^switch:|^load:|^tcp:|^app:|^proxy:|^sites:|^proxy_workers:|^smp:|^install:|^deploy:|^fuzz |^freestanding:|^check:|^unit |^fuzz-replay|^deps:|^hpack-interop: [0-9]|^h2-interop: [0-9]|^h2-serve: [0-9]|^h2-serve-tap: [0-9]|^vm-h2:|^h2-chromium:|^h2-hostile: [0-9]'

# report NAME RC SECONDS: the phase's verdict, its FAIL lines, its totals.
# phase_cpu NAME: the CPU seconds its processes used (user + system).
phase_cpu() {
	tail -n 1 "$LOG/$1.cpu" 2>/dev/null | awk '{
		t = 0
		for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
		printf "%d", t + 0.5 }'
}

report() {
	local name=$1 rc=$2 dt=$3 at=$((SECONDS - T0)) cpu
	cpu=$(phase_cpu "$name")
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "PASS $name ($dt s, cpu ${cpu:-?} s, at $at s)"
	else
		failed=$((failed + 1))
		failures+=("$name")
		echo "FAIL $name ($dt s, cpu ${cpu:-?} s, at $at s); its FAIL lines, then the last lines of $LOG/$name.log:"
		grep -E '^ *FAIL' "$LOG/$name.log" | head -n 20 | cut -c1-400 | sed 's/^/  ! /'
		tail -n 30 "$LOG/$name.log" | sed 's/^/    /'
		# Kept for the closing lines: CI shows the end of this output.
		fail_lines+=("$(grep -E '^ *FAIL' "$LOG/$name.log" | head -n 8 | cut -c1-300 | sed "s/^ */  $name: /")")
	fi
	grep -E "$TOTALS" "$LOG/$name.log" | sed 's/^/    /'
}

# ---- the scheduler -----------------------------------------------------
# A phase's priority: its own estimate plus those of every phase that
# needs it, so asan-build (which 17 phases wait for) starts before a long
# phase that nothing waits for.
declare -A PRIO
prio() {
	local n=$1 m p=${EST[$1]}
	for m in "${NAMES[@]}"; do
		[[ ",${NEEDS[$m]}," == *",$n,"* ]] && { prio "$m"; p=$((p + PRIO[$m])); }
	done
	PRIO[$n]=$p
}
for n in "${NAMES[@]}"; do prio "$n"; done

declare -A STATE PID_OF START    # STATE: wait | run | done
declare -A RC
for n in "${NAMES[@]}"; do [ -n "${WANT[$n]+x}" ] && STATE[$n]=wait; done
used=0 running=0 solo_on=0 bg_running=0

ready() { # ready NAME: its needs are done (passed or not: a failed build fails its users loudly)
	local d
	for d in ${NEEDS[$1]//,/ }; do
		[ -z "${STATE[$d]+x}" ] && continue
		[ "${STATE[$d]}" = done ] || return 1
	done
	return 0
}
excl_busy() { # excl_busy NAME: another phase of its excl= group runs
	local g=${EXCL[$1]} m
	[ -n "$g" ] || return 1
	for m in "${!PID_OF[@]}"; do [ "${EXCL[$m]}" = "$g" ] && return 0; done
	return 1
}
start() {
	local n=$1
	STATE[$n]=run
	START[$n]=$SECONDS
	echo "=== $n (at $((SECONDS - T0)) s)"
	# shellcheck disable=SC2086  # CMD holds a printf %q-quoted word list
	# The phase's CPU (its children's, as bash's `times` counts them) beside
	# its wall time: what its weight should be.
	local nice=
	[ "${BG[$n]}" = 1 ] && nice="nice -n 19"
	(
		eval "$nice ${CMD[$n]}" >"$LOG/$n.log" 2>&1 </dev/null
		rc=$?
		times >"$LOG/$n.cpu"
		exit $rc
	) &
	PID_OF[$n]=$!
	if [ "${BG[$n]}" = 1 ]; then
		bg_running=$((bg_running + 1))
		return
	fi
	used=$((used + W[$n]))
	running=$((running + 1))
	[ "${SOLO[$n]}" = 1 ] && solo_on=1
}
# Start what fits: the ready phases longest first (TEST_SLOTS=1: in order).
fill() {
	local n best best_est
	[ $solo_on -eq 1 ] && return
	# The background phases: every one that is ready, weights aside.
	for n in "${NAMES[@]}"; do
		[ "${BG[$n]}" = 1 ] && [ "${STATE[$n]:-}" = wait ] && ready "$n" && ! excl_busy "$n" && start "$n"
	done
	while :; do
		best=
		best_est=-1
		for n in "${NAMES[@]}"; do
			[ "${STATE[$n]:-}" = wait ] || continue
			[ "${BG[$n]}" = 1 ] && continue
			ready "$n" || continue
			excl_busy "$n" && continue
			if [ "${SOLO[$n]}" = 1 ]; then
				[ $running -eq 0 ] || continue
			elif [ $running -gt 0 ] && [ $((used + W[$n])) -gt "$TEST_SLOTS" ]; then
				continue
			elif [ $running -gt 0 ] && [ "${W[$n]}" -gt "$FREED" ] && ! cpu_free "${W[$n]}"; then
				continue
			fi
			if [ "$TEST_SLOTS" -le 1 ]; then best=$n; break; fi
			# A solo phase goes first when it can: the others wait for it anyway.
			if [ "${SOLO[$n]}" = 1 ]; then best=$n; break; fi
			if [ "${PRIO[$n]}" -gt $best_est ]; then best=$n best_est=${PRIO[$n]}; fi
		done
		[ -n "$best" ] || return
		# A solo phase that is ready waits for the running ones to end;
		# nothing new starts beside them meanwhile.
		start "$best"
		LAST_START=$SECONDS
		# A phase that ended this second made room for its weight: a
		# phase that fits in it takes its place without a new sample.
		FREED=$((FREED > W[$best] ? FREED - W[$best] : 0))
		# Beside others, one start a look: the next waits for a fresh
		# sample of the CPU with this one running.
		[ $running -gt 1 ] && return
	done
}

# The CPU's idle share over the last few seconds, from /proc/stat: the
# weights say what a phase may cost, this says what the running ones do
# cost now.  A phase that waits on peers and timers leaves the cores idle,
# and then a third or fourth phase fits; a CPU-bound one does not.  Time
# at nice > 0 (the bg phases) counts as idle: they yield it to any phase.
IDLE_PCT=100 LAST_START=-100 CPU_HIST=() FREED=0
cpu_sample() {
	local _c user nice sys idle iow irq sirq steal t
	read -r _c user nice sys idle iow irq sirq steal _ </proc/stat
	t=$((user + nice + sys + idle + iow + irq + sirq + steal))
	CPU_HIST+=("$t $((idle + iow + nice))")
	# The share over the last TEST_WINDOW samples (a second apart).
	while [ ${#CPU_HIST[@]} -gt $((TEST_WINDOW + 1)) ]; do CPU_HIST=("${CPU_HIST[@]:1}"); done
	local first=(${CPU_HIST[0]}) last=(${CPU_HIST[-1]})
	if [ $((last[0] - first[0])) -gt 0 ]; then
		IDLE_PCT=$(( (last[1] - first[1]) * 100 / (last[0] - first[0]) ))
	fi
}
# cpu_free W: a phase of weight W may start beside the running ones: the
# last start has had TEST_WINDOW seconds to show its cost, and the cores
# were idle at least TEST_IDLE percent for each unit of W (up to 3).
cpu_free() {
	[ $((SECONDS - LAST_START)) -ge "$TEST_WINDOW" ] || return 1
	# (At most three units' worth: a compile of weight 4 would otherwise
	# wait for the cores to be wholly idle, that is, for the end.)
	[ "$IDLE_PCT" -ge $((TEST_IDLE * ($1 < 3 ? $1 : 3))) ]
}
pending() { local n; for n in "${!STATE[@]}"; do [ "${STATE[$n]}" = done ] || return 0; done; return 1; }

while pending; do
	fill
	FREED=0
	if [ $running -eq 0 ] && [ $bg_running -eq 0 ]; then
		echo "run-all.sh: phases left that cannot start (a need is missing?)" >&2
		break
	fi
	sleep 1
	cpu_sample
	for n in "${!PID_OF[@]}"; do
		kill -0 "${PID_OF[$n]}" 2>/dev/null && continue
		wait "${PID_OF[$n]}"
		rc=$?
		unset 'PID_OF[$n]'
		STATE[$n]=done
		RC[$n]=$rc
		report "$n" "$rc" $((SECONDS - START[$n]))
		if [ "${BG[$n]}" = 1 ]; then
			bg_running=$((bg_running - 1))
			continue
		fi
		used=$((used - W[$n]))
		running=$((running - 1))
		FREED=$((FREED + W[$n]))
		[ "${SOLO[$n]}" = 1 ] && solo_on=0
	done
done

echo
if [ ${#failures[@]} -gt 0 ]; then
	echo "failed phases: ${failures[*]}"
	printf '%s\n' "${fail_lines[@]}" | grep -v '^$'
fi
echo "make test: $((SECONDS - T0)) s of wall time, TEST_SLOTS=$TEST_SLOTS TEST_IDLE=$TEST_IDLE"
echo "summary: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
