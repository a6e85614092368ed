#!/usr/bin/env bash
# tests/run-all.sh — what `make test` runs: every phase in order, each one
# reported PASS/FAIL, and a closing "summary: N passed, N failed" line.
# A phase that fails does not stop the others, so one run shows everything.
# Environment: FUZZ_SMOKE_TIME (seconds per fuzz target, default 5),
#              SKIFF_DEVS (devices for integration, default "tap packet xdp").
set -u
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
FUZZ_SMOKE_TIME=${FUZZ_SMOKE_TIME:-5}
DEVS=${SKIFF_DEVS:-tap packet xdp}
LOG=build/test-logs
mkdir -p "$LOG"
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

phase() { # phase NAME COMMAND...
	local name=$1; shift
	local t0=$SECONDS
	echo "=== $name"
	if "$@" >"$LOG/$name.log" 2>&1; then
		passed=$((passed + 1))
		echo "PASS $name ($((SECONDS - t0)) s)"
	else
		failed=$((failed + 1))
		failures+=("$name")
		echo "FAIL $name ($((SECONDS - t0)) s); its FAIL lines, then the last lines of $LOG/$name.log:"
		grep -E '^ *FAIL' "$LOG/$name.log" | head -n 20 | cut -c1-400 | sed 's/^/  ! /'
		tail -n 30 "$LOG/$name.log" | sed 's/^/    /'
		# Kept for the closing lines: CI shows the end of this output.
		fail_lines+=("$(grep -E '^ *FAIL' "$LOG/$name.log" | head -n 8 | cut -c1-300 | sed "s/^ */  $name: /")")
	fi
	# Unit-test runners and the integration script print their own totals: show them.
	grep -E '^\[  (PASSED|FAILED)  \]|^integration:|^ipv6:|^dev_smoke:|^http:|^ops:|^metrics:|^http_diff:|^tls:|^tls-app:|^vm:|^vm-smp:|^vm-tls:|^vm-proxy:|^site:|^linux_guest:|^linux-guest:|^switch:|^load:|^tcp:|^app:|^proxy:|^proxy_workers:|^smp:|^install:|^fuzz |^freestanding:|^deps:' "$LOG/$name.log" | sed 's/^/    /'
}

# The list itself: each package on it is needed by something (taking it off makes the check fail).
phase deps-list tests/deps_test.sh
phase build make -j"$JOBS" all
phase freestanding make check-freestanding
phase clang make -j"$JOBS" clang-check
phase unit make -j"$JOBS" unit
phase integration tests/integration.sh build/skiff $DEVS
phase ipv6 env IPV6_UK=build/skiff-uk.elf tests/ipv6.sh build/skiff $DEVS
phase dev-smoke make -j"$JOBS" dev-smoke
phase http tests/http.sh build/skiff
# Every HTTP check over IPv6, on every device (issue 18's acceptance).
phase http6 env HTTP_FAMILY=6 tests/http.sh build/skiff linux skiff:tap skiff:packet skiff:xdp
phase ops tests/ops.sh build/skiff
phase metrics tests/metrics.sh build/skiff
phase http-diff tests/http_diff.sh build/skiff
phase tls tests/tls.sh build/skiff
# HTTPS on the applications and certificates by name (loopback, kernel sockets).
phase tls-app tests/tls_app.sh build/skiff build/examples
# The same scripts over IPv6 (SKT_FAMILY=6, tests/lib.sh skt_family),
# narrowed to keep CI under 40 minutes (each runs whole over v6 by hand):
# ops where the client's address is written (the access and error logs)
# and the drain, on both stacks; metrics and skiff stat on skiff's; HTTPS
# on skiff's over tap; http-diff on skiff's (the kernel's and the
# unikernel's targets are IPv4 only, see the script).
phase ops6 env SKT_FAMILY=6 OPS_ONLY="log_combined log_json drain_wrk errlog" tests/ops.sh build/skiff
phase metrics6 env SKT_FAMILY=6 tests/metrics.sh build/skiff skiff:tap
phase http-diff6 env SKT_FAMILY=6 tests/http_diff.sh build/skiff skiff
phase tls6 env SKT_FAMILY=6 tests/tls.sh build/skiff skiff:tap
phase vm tests/vm.sh build/skiff build/skiff-uk.elf
# More than one vCPU (issue 17): --smp N, the APs' boot, their idle cost.
phase vm-smp tests/vm_smp.sh build/skiff build/skiff-uk.elf
# HTTPS in the unikernel (BearSSL).  Its engine's ASan pass is asan-unit
# (tls_bearssl_test, hosted); the guest itself cannot run the sanitizers.
phase vm-tls tests/vm_tls.sh build/skiff build/skiff-uk.elf build/examples/kv-uk.elf
# skiff proxy in the unikernel (build/skiff-proxy-uk.elf): ~10 s under TCG.
phase vm-proxy tests/vm_proxy.sh build/skiff build/skiff-proxy-uk.elf
phase site tests/site.sh build/skiff build/skiff-uk.elf
phase linux-guest make linux-guest-test
phase switch tests/switch.sh build/skiff
phase load tests/load.sh build/skiff
phase load6 env SKT_FAMILY=6 tests/load.sh build/skiff
phase tcp tests/tcp.sh build/skiff $DEVS
# The server-side TCP checks (echo under impairment, cycles, blind RSTs, SYN
# flood) against skiff echo --workers 2, at the smaller sizes, on the two
# kinds of steering the kernel does for a process (packet's fanout, tap's
# queues); smp.sh covers xdp's one socket a queue (CI stays near 40 minutes).
phase tcp-smp env TCP_WORKERS=2 TCP_FULL_CLEAN=$((20 << 20)) TCP_FULL_IMPAIRED=$((4 << 20)) \
	TCP_FULL_CYCLES=4000 tests/tcp.sh build/skiff packet tap
# Every TCP check over IPv6 on every device, at the smaller sizes (the full
# ones ran over v4 above; CI stays under 40 minutes).
phase tcp6 env TCP_FAMILY=6 TCP_FULL_CLEAN=$((20 << 20)) TCP_FULL_IMPAIRED=$((4 << 20)) \
	TCP_FULL_CYCLES=4000 tests/tcp.sh build/skiff $DEVS
# serve --workers 2 (docs/smp.md): the kernel's stack (SO_REUSEPORT) and each
# device's steering (packet fanout, multi-queue tap, one AF_XDP socket a queue).
smp_forms=linux
for d in $DEVS; do smp_forms="$smp_forms skiff:$d"; done
phase smp tests/smp.sh build/skiff $smp_forms
# Applications on http/app.h (examples/, built by `make all`): kv, echo,
# hello on the kernel's sockets, on skiff's stack over each device, and as
# unikernel images under skiff vm.
app_forms=linux
for d in $DEVS; do app_forms="$app_forms skiff:$d"; done
phase app tests/app.sh build/examples $app_forms uk
# skiff proxy (http/proxy.h) before a recording Python upstream and nginx,
# on the kernel's sockets (127.0.0.1) and on skiff's stack on a TAP.
phase proxy tests/proxy.sh build/skiff linux skiff:tap
# --workers 2 for the proxy and kv (docs/smp.md): linux, and kv on a TAP.
phase proxy-workers tests/proxy_workers.sh build/skiff linux skiff:tap
phase install tests/install.sh build
phase asan-build make -j"$JOBS" asan
phase asan-unit make BUILD=build/asan OPT=-O1 \
	SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" unit
phase asan-integration env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	tests/integration.sh build/asan/skiff $DEVS
phase asan-ipv6 env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 tests/ipv6.sh build/asan/skiff tap
# On the kernel's stack and on skiff's over tap: the device code of packet
# and xdp runs under the sanitizers in asan-integration (CI near 40 minutes).
phase asan-http env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 tests/http.sh build/asan/skiff linux skiff:tap
# HTTP over IPv6 under the sanitizers on one device (the v6 input, ND and
# the [v6] peers through the server; the loads are http.sh's own).
phase asan-http6 env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 HTTP_FAMILY=6 \
	tests/http.sh build/asan/skiff skiff:tap
# The access log and the drain under the sanitizers, on the kernel's stack
# (the code they exercise is the same on both; ops runs both above).
phase asan-ops env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 tests/ops.sh build/asan/skiff linux
# --metrics and skiff stat under the sanitizers, both stacks (the admin
# sockets are waited on differently on each: loop_watch, the runner's side fd).
phase asan-metrics env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 tests/metrics.sh build/asan/skiff
phase asan-tls env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 tests/tls.sh build/asan/skiff linux skiff:tap
phase asan-tls-app env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 tests/tls_app.sh build/asan/skiff \
	build/asan/examples
# The application engine under the sanitizers, both stacks (tap).
phase asan-app env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 APP_OPS_LINUX=3000 APP_OPS_SKIFF=2000 \
	tests/app.sh build/asan/examples linux skiff:tap
# The workers' threads, signals and summed counters under the sanitizers.
phase asan-smp env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 tests/smp.sh build/asan/skiff linux skiff:packet
# The proxy under the sanitizers, both stacks, 8 MiB bodies.
phase asan-proxy env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 PROXY_MIB=8 \
	tests/proxy.sh build/asan/skiff linux skiff:tap
phase asan-proxy-workers env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	tests/proxy_workers.sh build/asan/skiff linux
phase asan-switch env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 tests/switch.sh build/asan/skiff
# TCP under the sanitizers on one device with smaller transfers: the full
# sizes ran above; here the point is memory errors on every path.
phase asan-tcp env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 TCP_FULL_CLEAN=$((20 << 20)) \
	TCP_FULL_IMPAIRED=$((2 << 20)) TCP_FULL_CYCLES=6000 tests/tcp.sh build/asan/skiff tap
# TCP over IPv6 under the sanitizers, the same shape smaller still (3,000
# cycles: client.cycles needs every TIME_WAIT slot used once to see one
# reused; 200,000 blind RSTs).
phase asan-tcp6 env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 TCP_FAMILY=6 \
	TCP_FULL_CLEAN=$((8 << 20)) TCP_FULL_IMPAIRED=$((1 << 20)) TCP_FULL_CYCLES=3000 \
	TCP_RST_COUNT=200000 tests/tcp.sh build/asan/skiff tap
phase fuzz make -j"$JOBS" fuzz FUZZ_TIME="$FUZZ_SMOKE_TIME"

echo
if [ ${#failures[@]} -gt 0 ]; then
	echo "failed phases: ${failures[*]}"
	printf '%s\n' "${fail_lines[@]}" | grep -v '^$'
fi
echo "summary: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
