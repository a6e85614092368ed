#!/usr/bin/env bash
# tests/metrics.sh BIN [TARGET...] — seeing into a running `skiff serve`:
# --metrics (Prometheus) and `skiff stat` (the control socket), on each
# TARGET (default both), in the topologies of tests/ops.sh:
#   linux      --stack linux; server and clients in namespaces srv and cli
#   skiff:tap  --stack skiff --dev tap:sk0; one namespace
#
#   metrics.format   GET /metrics on 127.0.0.1:9100 in the server's namespace
#                    passes `promtool check metrics` (Prometheus' own rules)
#                    and tests/metrics_check.py's reading of the format
#                    (HELP/TYPE before samples, _total on counters,
#                    cumulative histogram buckets, +Inf = _count)
#   metrics.grow     two scrapes 1 s apart while ab -k -c 64 runs: requests
#                    (and on skiff's stack TCP segments and device frames)
#                    grow between them; after ab, http.requests counts at
#                    least every request ab completed
#   metrics.trace    with --trace: the request-path histograms are there and
#                    the http_request one has samples
#   metrics.http     404 for another path, 405 for POST, HEAD has no body
#   metrics.config_trace  `skiff serve --config FILE --trace --stats` (the
#                    sites runtime on http/app.c; the file: one site, `listen
#                    *:80; route / { files www; }`): after ab -k -c 4 -n 2000
#                    and a curl, /metrics has the http_request histogram,
#                    and at exit the counters and the trace lines follow:
#                    tsc_ghz, a line per stage; http_request samples >= ab's
#                    completed requests (each keep-alive answer is one),
#                    conn, timer_arm, timer_cancel > 0; on skiff's stack the
#                    loop's stages (rx_sync ring_rx ring_tx tcp_in tcp_out)
#                    > 0 and syscalls_per_request with requests >= ab's; on
#                    the kernel's those are 0 (skiff's stack has them only)
#   metrics.remote   --metrics off loopback is refused (exit 2, a message),
#                    and so is --metrics-allow-remote alone
#   stat.conns       (skiff:tap) 6 keep-alive connections held open by a
#                    python client: `skiff stat PID` lists each one ESTAB
#                    with its peer address and port and rtt/rto/cwnd, and
#                    the counters; (linux) stat answers and points at ss
#   stat.socket      the control socket is mode 0600, gone after exit;
#                    `skiff stat --help` exits 0, a PID nobody serves 1
# SKT_FAMILY=6 (run-all.sh phase metrics6): the HTTP clients over IPv6
# (tests/lib.sh skt_family: 2001:2::1/64 dialing [2001:2::2]) while the
# scrapes stay on 127.0.0.1 (--metrics is IPv4 loopback); stat.conns then
# wants each held connection's peer as [2001:2::1]:PORT.  Checks print as
# TARGET.v6/NAME.
# About 15 s per target.  Prints PASS/FAIL per check, ends with
# "metrics: N passed, N failed".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=metrics
export PYTHONDONTWRITEBYTECODE=1

usage() { echo "usage: $0 path/to/skiff [linux] [skiff:tap]" >&2; exit 2; }
BIN=${1:-}
[ -n "$BIN" ] || usage
shift
skt_targets "linux skiff:tap" "$@"
skt_check_bin "$BIN" || exit 2
BIN=$(readlink -f "$BIN")
if ! skt_need setup curl ab promtool python3; then
	summary
	exit 1
fi

skt_family "$SKT_FAMILY" || { echo "$0: SKT_FAMILY is 4 or 6, not '$SKT_FAMILY'" >&2; exit 2; }
SRV_IP=$SKT_SRV
# skiff stat's peer column: ADDR:PORT, [ADDR]:PORT over v6.
CLI_IP=$SKT_CLI
[ "$SKT_FAMILY" = 6 ] && CLI_IP="[$SKT_CLI]"
URL=http://$SKT_HOST/
MURL=http://127.0.0.1:9100/metrics
WORK=$(mktemp -d /tmp/skiff-metrics.XXXXXX)
MC=$HERE/metrics_check.py
# shellcheck disable=SC2034 # set and read by tests/lib.sh skt_serve_*
{
SRV_PID=
NS_C= NS_S= IF_C=
SERVE=()
}

skt_work_traps "METRICS_KEEP_LOGS" "logs"

C() { timeout "${T:-60}" ip netns exec "$NS_C" "$@"; }
S() { timeout "${T:-60}" ip netns exec "$NS_S" "$@"; }

# The target's topology and stack arguments (tests/lib.sh skt_serve_target).
setup_target() { skt_serve_target "$SKT_SKIFF_IP"; }

# start_server NAME ARGS...: wait for the listening line and a first answer.
start_server() {
	local name=$1
	shift
	skt_serve_start "$name" --port 80 "$@"
}

# stop_server NAME: SIGINT; 0 if it exited 0 within 5 s.
stop_server() { skt_serve_exit "$1.exit" INT 5; }

scrape() { S curl -s --max-time 5 -o "$1" -w '%{http_code}' "$MURL"; }
val() { python3 "$MC" value "$1" "$2" 2>/dev/null || echo -1; }

check_metrics() {
	local m1=$WORK/m1.txt m2=$WORK/m2.txt m3=$WORK/m3.txt ab=$WORK/ab.out abpid out code
	start_server metrics --metrics 127.0.0.1:9100 --trace || return
	T=60 C ab -q -k -c 64 -t 4 -n 100000000 "$URL" >"$ab" 2>&1 &
	abpid=$!
	sleep 1.2
	code=$(scrape "$m1")
	sleep 1
	scrape "$m2" >/dev/null
	wait "$abpid"
	scrape "$m3" >/dev/null

	if [ "$code" != 200 ]; then
		fail metrics.format "GET /metrics: HTTP $code"
	elif ! out=$(promtool check metrics <"$m1" 2>&1); then
		fail metrics.format "promtool: $out"
	elif ! out=$(python3 "$MC" parse "$m1" 2>&1); then
		fail metrics.format "metrics_check: $out"
	else
		pass "metrics.format (promtool check metrics: clean; $out)"
	fi

	local r1 r2 r3 done names=(skiff_http_requests_total) n bad=
	[ "$TGT" = linux ] || names+=(skiff_tcp_seg_in_total skiff_dev_rx_frames_total)
	# Over v6 the load must be what came in over v6.
	[ "$TGT" != linux ] && [ "$SKT_FAMILY" = 6 ] && names+=(skiff_ip6_rx_total)
	for n in "${names[@]}"; do
		r1=$(val "$m1" "$n") r2=$(val "$m2" "$n")
		[ "$r1" -gt 0 ] && [ "$r2" -gt "$r1" ] || bad+=" $n: $r1 -> $r2"
	done
	r1=$(val "$m1" skiff_http_requests_total) r2=$(val "$m2" skiff_http_requests_total)
	r3=$(val "$m3" skiff_http_requests_total)
	done=$(awk '/^Complete requests:/ {print $3}' "$ab")
	if [ -n "$bad" ]; then
		fail metrics.grow "did not grow during ab:$bad"
	elif [ -z "$done" ] || [ "$r3" -lt "$done" ]; then
		fail metrics.grow "after ab: http.requests $r3 < ab's $done completed"
	else
		pass "metrics.grow (${names[*]} grew; requests $r1 -> $r2 in 1 s under ab -k -c 64; $r3 >= ab's $done)"
	fi

	n=$(val "$m3" skiff_trace_http_request_cycles_count)
	if [ "$n" -gt 0 ] && grep -q '^skiff_trace_http_request_cycles_bucket{le="+Inf"} ' "$m3"; then
		pass "metrics.trace (skiff_trace_http_request_cycles: $n samples)"
	else
		fail metrics.trace "http_request histogram: count $n"
	fi

	local c404 c405 hl
	c404=$(S curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9100/nope)
	c405=$(S curl -s -o /dev/null -w '%{http_code}' -X POST "$MURL")
	hl=$(S curl -s -I "$MURL" | tr -d '\r' | awk -F': ' 'tolower($1) == "content-type" {print $2}')
	if [ "$c404" = 404 ] && [ "$c405" = 405 ] && [[ $hl == "text/plain; version=0.0.4"* ]]; then
		pass "metrics.http (404, 405, HEAD: $hl)"
	else
		fail metrics.http "other path $c404, POST $c405, HEAD content-type '$hl'"
	fi
	stop_server metrics
}

# The stages of base/hist.h, in print order.
TRACE_STAGES="rx_sync ring_rx ring_tx tcp_in tcp_out http_request conn timer_arm timer_cancel park_wake"

check_config_trace() {
	local d=$WORK/ctrace out ab=$WORK/ctrace-ab.out m=$WORK/ctrace-metrics.txt nab st n bad= want
	mkdir -p "$d/www"
	echo "<p>the sites runtime, traced</p>" >"$d/www/index.html"
	printf 'site t {\n    listen *:80;\n    route / { files www; }\n}\n' >"$d/t.conf"
	skt_serve_launch ctrace --config "$d/t.conf" --trace --stats --metrics 127.0.0.1:9100
	out=$SRV_LOG
	# The ready line of a file: "skiff serve: FILE: 1 sites on ...".
	if ! skt_wait_for 10 grep -q "^skiff serve: $d/t.conf: 1 sites on" "$out" ||
		! skt_serve_answer 5 "$URL"; then
		fail metrics.config_trace "did not serve: $(skt_serve_tail)"
		skt_serve_stop KILL 1
		return
	fi
	T=60 C ab -q -k -c 4 -n 2000 "$URL" >"$ab" 2>&1
	C curl -s -o /dev/null "$URL"
	scrape "$m" >/dev/null
	skt_serve_exit metrics.config_trace INT 5 || return
	nab=$(awk '/^Complete requests:/ {print $3}' "$ab")
	if [ -z "$nab" ] || [ "$nab" -lt 2000 ]; then
		fail metrics.config_trace "ab: $(tail -n 3 "$ab" | tr '\n' ' ')"
		return
	fi
	n=$(val "$m" skiff_trace_http_request_cycles_count)
	[ "$n" -gt 0 ] || bad+=" /metrics: skiff_trace_http_request_cycles_count $n;"
	grep -q '^trace tsc_ghz=[0-9.]* ns_per_cycle=[0-9.]* empty_region_cycles=[0-9]*$' "$out" ||
		bad+=" no tsc_ghz line;"
	# --stats's counters come first (their names are not this check's business).
	[ "$(grep -c '^[a-z][a-z0-9_.]* [0-9][0-9]*$' "$out")" -gt 20 ] || bad+=" no --stats counters;"
	for st in $TRACE_STAGES; do
		grep -q "^trace $st samples=[0-9]* median=[0-9]* p99=[0-9]* max=[0-9]* mean=[0-9.]* cycles median_ns=[0-9.]* p99_ns=[0-9.]*\$" "$out" ||
			bad+=" no $st line;"
	done
	samples() { sed -n "s/^trace $1 samples=\([0-9]*\) .*/\1/p" "$out"; }
	n=$(samples http_request)
	[ "${n:-0}" -ge "$nab" ] || bad+=" http_request samples ${n:-none} < ab's $nab;"
	for st in conn timer_arm timer_cancel; do
		n=$(samples $st)
		[ "${n:-0}" -gt 0 ] || bad+=" $st samples ${n:-none};"
	done
	for st in rx_sync ring_rx ring_tx tcp_in tcp_out; do
		n=$(samples $st)
		if [ "$TGT" = linux ]; then
			[ "${n:-1}" -eq 0 ] || bad+=" $st samples ${n:-none} on the kernel's stack;"
		else
			[ "${n:-0}" -gt 0 ] || bad+=" $st samples ${n:-none};"
		fi
	done
	if [ "$TGT" != linux ]; then
		want=$(sed -n 's/^trace syscalls_per_request=[0-9.]* rx=[0-9.]* tx=[0-9.]* requests=\([0-9]*\)$/\1/p' "$out")
		[ "${want:-0}" -ge "$nab" ] || bad+=" syscalls_per_request: requests ${want:-none} < $nab;"
	fi
	if [ -n "$bad" ]; then
		fail metrics.config_trace "$bad $(grep -m 3 '^trace ' "$out" | tr '\n' '|')"
	else
		pass "metrics.config_trace (--config --trace --stats: $(samples http_request) http_request samples for ab's $nab, median $(sed -n 's/^trace http_request .* median_ns=\([0-9.]*\) .*/\1/p' "$out") ns; conn $(samples conn), tcp_in $(samples tcp_in))"
	fi
}

check_remote() {
	local out rc
	out=$(S "$BIN" serve "${SERVE[@]}" --port 81 --metrics $SKT_SKIFF_IP:9100 2>&1)
	rc=$?
	if [ $rc -ne 2 ] || [[ $out != *"not on loopback"* ]]; then
		fail metrics.remote "off loopback: exit $rc: $out"
		return
	fi
	out=$(S "$BIN" serve "${SERVE[@]}" --port 81 --metrics-allow-remote 2>&1)
	rc=$?
	if [ $rc -ne 2 ] || [[ $out != *"goes with metrics"* ]]; then
		fail metrics.remote "allow-remote alone: exit $rc: $out"
		return
	fi
	pass "metrics.remote (exit 2: $(echo "$out" | head -n 1))"
}

check_stat() {
	local hold=$WORK/hold.out st=$WORK/stat.out fifo=$WORK/hold.in ports sock mode out
	start_server stat || return
	sock=$(sed -n 's/.* control=\([^ ]*\).*/\1/p' "$SRV_LOG")
	mode=$(stat -c %a "$sock" 2>/dev/null)
	rm -f "$fifo"
	mkfifo "$fifo"
	C python3 "$MC" hold $SRV_IP 80 6 <"$fifo" >"$hold" 2>&1 &
	local hpid=$!
	exec 7>"$fifo"
	local i
	# Up to 15 s: under ASan on a loaded machine the six connections took
	# longer than 5 s once (ci-fresh, asan-metrics).
	for ((i = 0; i < 300; i++)); do
		grep -q '^ports ' "$hold" && break
		sleep 0.05
	done
	ports=$(sed -n 's/^ports //p' "$hold" | tr ' ' ',')
	S "$BIN" stat "$SRV_PID" >"$st" 2>&1
	local rc=$?
	exec 7>&-
	wait "$hpid"
	if [ $rc -ne 0 ]; then
		fail stat.conns "skiff stat $SRV_PID: exit $rc: $(head -n 3 "$st" | tr '\n' ' ')"
	elif [ -z "$ports" ]; then
		fail stat.conns "the client held no connections: $(tr '\n' ' ' <"$hold")"
	elif [ "$TGT" = linux ]; then
		if grep -q "ss -tin" "$st" && grep -q '^http.requests ' "$st"; then
			pass "stat.conns (kernel's stack: points at ss -tin, and the counters)"
		else
			fail stat.conns "$(head -n 5 "$st" | tr '\n' ' ')"
		fi
	elif out=$(python3 "$MC" stat "$st" "$CLI_IP" "$ports" 2>&1); then
		pass "stat.conns ($out: $(grep -c '^ESTAB' "$st") ESTAB lines, ports $ports)"
	else
		fail stat.conns "$out; stat said: $(head -n 12 "$st" | tr '\n' '|')"
	fi
	stop_server stat || return
	if [ "$mode" = 600 ] && [ ! -e "$sock" ]; then
		pass "stat.socket ($sock mode $mode, removed at exit)"
	else
		fail stat.socket "'$sock' mode '$mode', exists after exit: $([ -e "$sock" ] && echo yes || echo no)"
	fi
}

check_stat_cli() {
	local rc
	"$BIN" stat --help >"$WORK/stat-help" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q '^usage: skiff stat PID|SOCKET' "$WORK/stat-help"; then
		fail stat.cli "stat --help: exit $rc: $(head -n 2 "$WORK/stat-help")"
		return
	fi
	"$BIN" stat 999999999 >/dev/null 2>&1
	rc=$?
	if [ $rc -ne 1 ]; then
		fail stat.cli "stat of a PID nobody serves: exit $rc (want 1)"
		return
	fi
	pass "stat.cli (--help 0, nobody there 1)"
}

run_target() {
	TGT=$1
	SKT_SCOPE=$TGT
	[ "$SKT_FAMILY" = 6 ] && SKT_SCOPE=$TGT.v6
	local t0=$SECONDS
	if ! setup_target; then
		fail setup "cannot create the topology"
		skt_cleanup
		return
	fi
	check_metrics
	check_config_trace
	check_remote
	check_stat
	skt_cleanup
	echo "--- $TGT: $((SECONDS - t0)) s"
}

check_stat_cli
for t in "${TARGETS[@]}"; do
	run_target "$t"
done
SKT_SCOPE=
summary
