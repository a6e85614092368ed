#!/usr/bin/env bash
# tests/vm.sh — the unikernel under QEMU TCG with user networking and TAP.
#
#   tests/vm.sh [build/skiff] [build/skiff-uk.elf]
#
# Checks, each reported PASS/FAIL, ending with "vm: N passed, N failed":
#   boot      `skiff vm` boots the image; the serial "ready" line appears
#   udp-sizes datagrams of 1..1472 bytes sent from the host to
#             127.0.0.1:PORT (hostfwd -> guest port 7) come back intact
#   udp-load  tests/udp_echo.py: 2000 random sizes, 16 in flight, all intact
#   http-*    the same guest serves HTTP (src/http/app.c on skiff's TCP)
#             through -p PORT:80 on 127.0.0.1: curl (1.1 and 1.0) gets
#             exactly the 41-byte body and a Date within 2 min of the host's;
#             tests/http_client.py keepalive (http.client reuse, HEAD,
#             Connection: close, 1.0 keep-alive, pipelining); `ab -k -n 5000
#             -c 8` and `ab -n 1000 -c 4` (issue 6's acceptance counts) with 0
#             failed; the whole bad-request corpus gets its statuses and a close
#   metrics   metrics=9100 on the same guest through -p PORT:9100: GET
#             /metrics passes `promtool check metrics` and
#             tests/metrics_check.py, and http.requests grows by the
#             requests made between two scrapes
#   idle      parked (sti; hlt) the QEMU process uses little CPU, with TCP
#             listening and the connections above in TIME_WAIT
#   shutdown  the UDP message "exit 0" to the guest's shutdown-port stops
#             it; `skiff vm` exits 0 and the guest printed its counters
#             (HTTP's among them)
#   exit-code "exit 3" makes `skiff vm` exit 3
#   timer     exit-after=2: the LAPIC timer wakes the parked guest; exit 0
#   fault-*   fault=ud / fault=pf: the handler prints vector, error code and
#             registers, and the exit code is 64 + vector
#   tap-*     the same with a TAP backend (issue 6): in a namespace of its own
#             (tests/lib.sh: skt-<pid>-vmtap, removed on exit; stale ones of
#             dead runs too) a TAP vt0 = 198.18.0.1/24, `skiff vm --net tap:vt0` run inside it
#             with accel auto, guest 198.18.0.2: time from QEMU start to the
#             first served request; curl 1.1/1.0 get the 41-byte body; `ab -k
#             -n 5000 -c 8` and `ab -n 1000 -c 4` with 0 failed; ping; UDP
#             echo (tests/udp_echo.py); "exit 0" to the shutdown-port: exit 0
#   ops.console-log  access-log=console: three curl requests come out as
#             combined lines on the serial console, each with its User-Agent
#   ops.drain-timeout  drain-timeout=2 and a client holding half a request
#             head: "exit 0" to the shutdown port drains, and the guest exits
#             0 after the drain-timeout (not before), saying so
#   ops.udp-log  access-log=udp:10.0.2.2:PORT access-log-format=json: the
#             records arrive at a python socket on 127.0.0.1:PORT (QEMU's
#             user network maps 10.0.2.2 to the host's loopback), one JSON
#             object per line, one per request, counted as sent
#   ops.drain  "exit 5" while a request is in flight (half its head sent) and
#             a keep-alive connection idles: the request is answered (200,
#             Connection: close, EOF), the idle one closed, the guest drains
#             ("drained in") and exits 5
#   (VM_ONLY=ops tests/vm.sh runs only these four)
#   bad-arg   an unknown guest argument: exit 1
#   ctrl-c    SIGINT to skiff vm (no shutdown-port= given): the guest drains,
#             prints its counters (http.requests counted) and exits 0
#   same-message.*  a bad value (max-conns=0, a multicast mac, a gw outside
#             ip's subnet): `skiff serve` (exit 2) and the guest at boot
#             (exit 1) refuse it with the same message (src/conf/opts.c)
# Every QEMU run is bounded by `timeout` and is stopped by pid on exit.
# Traffic goes to 127.0.0.1 only: QEMU's user network keeps 10.0.2.x inside;
# the TAP part uses 198.18.0.0/24 inside its namespace, nothing in the root one.
set -u
cd "$(dirname "$0")/.." || exit 2
SKIFF=${1:-build/skiff}
# VM_MACHINE=microvm: every guest on QEMU's microvm machine (virtio-mmio,
# no PCI or ACPI; docs/microvm.md), the vm-microvm phases; default pc.
MACHINE=(--machine "${VM_MACHINE:-pc}")
IMG=${2:-build/skiff-uk.elf}
LOG=${VM_LOG_DIR:-build/test-logs/vm}
mkdir -p "$LOG"
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=vm
PIDS=()

# The QEMU process under a `timeout ... skiff vm` started in the background.
qemu_pid() {
	skt_descendant "$1" qemu-system-x86
}
TAP_NS=""
cleanup() {
	skt_kill_tree "${PIDS[@]}" # deepest first: QEMU, then skiff vm, then timeout
	skt_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for f in "$SKIFF" "$IMG"; do
	[ -r "$f" ] || { fail setup "missing $f (make all uk)"; summary; exit 1; }
done
# Needed by everything below; curl and ab are checked where they are used.
skt_need setup qemu-system-x86_64 python3 || { summary; exit 1; }

free_udp_port() {
	python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
free_tcp_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# skt_wait_log FILE PATTERN SECONDS

# records_in FILE N: FILE has at least N lines.
records_in() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }

# vm_run NAME TIMEOUT ARGS... : skiff vm in the foreground; sets RC.
vm_run() {
	local name=$1 t=$2
	shift 2
	timeout "$t" "$SKIFF" vm "${MACHINE[@]}" --accel tcg --image "$IMG" "$@" </dev/null >"$LOG/$name.log" 2>&1
	RC=$?
}

# --- in production: the access log and the drain (the ops checks) ----------
vm_ops() {
	local hp cp lp t0 ms n out
	hp=$(free_tcp_port) cp=$(free_udp_port)
	: >"$LOG/ops-console.log"
	timeout 90 "$SKIFF" vm "${MACHINE[@]}" --accel tcg --image "$IMG" -p "$hp:80" -p "$cp:9/udp" -- \
		shutdown-port=9 access-log=console drain-timeout=2 exit-after=80 stats \
		</dev/null >"$LOG/ops-console.log" 2>&1 &
	VM=$!
	PIDS+=("$VM")
	if skt_wait_log "$LOG/ops-console.log" "skiff-uk: ready" 30; then
		for n in 1 2 3; do
			curl -s -o /dev/null --max-time 10 -A "vm-ops-$n" "http://127.0.0.1:$hp/"
		done
		t0=$(date +%s%N)
		python3 tests/vm_ops_client.py hold "$hp" "$cp" >"$LOG/ops-hold.log" 2>&1 &
	fi
	wait "$VM"
	RC=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	wait
	n=$(grep -caE '^10\.0\.2\.2 - - \[[0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9:]{8} \+0000\] "GET / HTTP/1\.1" 200 41 "-" "vm-ops-[123]"' "$LOG/ops-console.log")
	if [ "$n" = 3 ] && tr -d '\r' <"$LOG/ops-console.log" | grep -q '^access_log.records 3$'; then
		pass "ops.console-log (3 combined lines on the serial console)"
	else
		fail ops.console-log "$n lines; see $LOG/ops-console.log"
	fi
	if [ "$RC" = 0 ] && grep -aq '^skiff-uk: shutdown: draining 1 connections (drain-timeout 2 s)' "$LOG/ops-console.log" &&
		grep -aq '^skiff-uk: drain-timeout after' "$LOG/ops-console.log" && [ "$ms" -ge 1900 ] && [ "$ms" -le 15000 ]; then
		pass "ops.drain-timeout (exit 0 $ms ms after 'exit 0' with a half head held; $(grep -a '^skiff-uk: drain-timeout' "$LOG/ops-console.log" | tr -d '\r'))"
	else
		fail ops.drain-timeout "rc $RC after $ms ms; $(grep -a 'drain' "$LOG/ops-console.log" | tr '\n' ' ')"
	fi

	hp=$(free_tcp_port) cp=$(free_udp_port) lp=$(free_udp_port)
	while [ "$lp" = "$cp" ]; do lp=$(free_udp_port); done
	out=$LOG/ops-udp.records
	rm -f "$out" "$out.stop" "$LOG/ops-curl.log"
	python3 tests/vm_ops_client.py sink "$lp" "$out" 120 >"$LOG/ops-sink.log" 2>&1 &
	local sink=$!
	# A record sent before the sink is bound is lost (port unreachable),
	# and python's start can take seconds on a loaded machine.
	skt_wait_log "$LOG/ops-sink.log" "bound;" 30 || fail ops.udp-log "the sink did not bind 127.0.0.1:$lp in 30 s"
	: >"$LOG/ops-udp.log"
	timeout 90 "$SKIFF" vm "${MACHINE[@]}" --accel tcg --image "$IMG" -p "$hp:80" -p "$cp:9/udp" -- \
		shutdown-port=9 "access-log=udp:10.0.2.2:$lp" access-log-format=json drain-timeout=10 \
		exit-after=80 stats </dev/null >"$LOG/ops-udp.log" 2>&1 &
	VM=$!
	PIDS+=("$VM")
	local drc=1
	if skt_wait_log "$LOG/ops-udp.log" "skiff-uk: ready" 30; then
		for n in 1 2 3 4 5; do
			curl -s -o /dev/null --max-time 20 -w "%{http_code} " -A "vm-ops-udp-$n" "http://127.0.0.1:$hp/" >>"$LOG/ops-curl.log"
		done
		timeout 60 python3 tests/vm_ops_client.py drain "$hp" "$cp" >"$LOG/ops-drain.log" 2>&1
		drc=$?
	fi
	wait "$VM"
	RC=$?
	# The sink has the 7 records (one a line) the guest sent before its
	# exit, or 2 s passed: then stop it.
	skt_wait_for 2 records_in "$out" 7
	touch "$out.stop"
	wait "$sink"
	if out=$(python3 tests/vm_ops_client.py json "$out" vm-ops-idle vm-ops-inflight \
		vm-ops-udp-1 vm-ops-udp-2 vm-ops-udp-3 vm-ops-udp-4 vm-ops-udp-5 2>&1); then
		if tr -d '\r' <"$LOG/ops-udp.log" | grep -q '^access_log.records 7$' &&
			tr -d '\r' <"$LOG/ops-udp.log" | grep -q '^access_log.dropped 0$'; then
			pass "ops.udp-log ($out; $(tr -d '\n' <"$LOG/ops-sink.log"), $(grep -a '^access_log.writes ' "$LOG/ops-udp.log"))"
		else
			fail ops.udp-log "$out, but the counters: $(grep -a '^access_log' "$LOG/ops-udp.log" | tr '\n' ' ')"
		fi
	else
		fail ops.udp-log "$out; curl: $(cat "$LOG/ops-curl.log" 2>/dev/null); sink: $(tr -d '\n' <"$LOG/ops-sink.log"); counters: $(grep -a '^access_log' "$LOG/ops-udp.log" | tr -d '\r' | tr '\n' ' ')"
	fi
	if [ "$drc" = 0 ] && [ "$RC" = 5 ] && grep -aq '^skiff-uk: drained in' "$LOG/ops-udp.log"; then
		pass "ops.drain ($(tr -d '\n' <"$LOG/ops-drain.log"); $(grep -a '^skiff-uk: drained' "$LOG/ops-udp.log" | tr -d '\r'), then exit 5 as asked)"
	else
		fail ops.drain "client rc $drc: $(tr '\n' ' ' <"$LOG/ops-drain.log"); guest rc $RC; $(grep -a 'drain' "$LOG/ops-udp.log" | tr '\n' ' ')"
	fi
}
if [ "${VM_ONLY:-}" = ops ]; then
	skt_need setup curl || { summary; exit 1; }
	vm_ops
	summary
	exit
fi

# --- the echo guest ---------------------------------------------------------
ECHO_PORT=$(free_udp_port)
CTL_PORT=$(free_udp_port)
while [ "$CTL_PORT" = "$ECHO_PORT" ]; do CTL_PORT=$(free_udp_port); done
HTTP_PORT=$(free_tcp_port)
METRICS_PORT=$(free_tcp_port)
while [ "$METRICS_PORT" = "$HTTP_PORT" ]; do METRICS_PORT=$(free_tcp_port); done
: >"$LOG/echo.log"
t0=$(date +%s.%N)
timeout 240 "$SKIFF" vm "${MACHINE[@]}" --accel tcg --image "$IMG" -p "$ECHO_PORT:7/udp" -p "$CTL_PORT:9/udp" \
	-p "$HTTP_PORT:80" -p "$METRICS_PORT:9100" -- shutdown-port=9 exit-after=220 stats metrics=9100 \
	</dev/null >"$LOG/echo.log" 2>&1 &
VM=$!
PIDS+=("$VM")
if skt_wait_log "$LOG/echo.log" "skiff-uk: ready" 20; then
	t1=$(date +%s.%N)
	pass "boot ($(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}') s to ready; $(grep -ao 'boot_ms=[0-9]*' "$LOG/echo.log"))"
else
	fail boot "no ready line in 20 s; see $LOG/echo.log"
fi

if python3 - "$ECHO_PORT" <<'PY' >"$LOG/udp-sizes.log" 2>&1; then
import os, socket, sys
port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
bad = 0
for n in (1, 2, 17, 18, 64, 100, 512, 1000, 1024, 1400, 1471, 1472):
    d = os.urandom(n)
    s.sendto(d, ("127.0.0.1", port))
    try:
        r, _ = s.recvfrom(4096)
    except socket.timeout:
        print(f"size {n}: no reply"); bad += 1; continue
    if r != d:
        print(f"size {n}: reply differs ({len(r)} bytes)"); bad += 1
print("bad", bad)
sys.exit(1 if bad else 0)
PY
	pass "udp-sizes (1..1472 bytes echoed intact)"
else
	fail udp-sizes "$(tail -3 "$LOG/udp-sizes.log" | tr '\n' ' ')"
fi

if timeout 120 python3 tests/udp_echo.py --dst 127.0.0.1 --port "$ECHO_PORT" --count 2000 \
	--window 16 --timeout 5 >"$LOG/udp-load.log" 2>&1; then
	pass "udp-load ($(tail -1 "$LOG/udp-load.log"))"
else
	fail udp-load "$(tail -1 "$LOG/udp-load.log")"
fi

# --- HTTP on the same guest --------------------------------------------------
URL="http://127.0.0.1:$HTTP_PORT/"
if grep -aq "skiff vm: $URL" "$LOG/echo.log"; then
	pass "http-url (skiff vm printed $URL)"
else
	fail http-url "no '$URL' line from skiff vm; see $LOG/echo.log"
fi

# curl: status, exact body, and a Date close to the host's clock (RTC+TSC).
http_get() { # VERSION-FLAG NAME
	local out="$LOG/curl-$2"
	if ! timeout 30 curl -sS --max-time 20 "$1" -D "$out.head" -o "$out.body" "$URL" 2>"$out.err"; then
		fail "http-curl-$2" "curl failed: $(head -1 "$out.err")"
		return
	fi
	local status size date skew
	status=$(head -1 "$out.head" | tr -d '\r')
	size=$(wc -c <"$out.body")
	date=$(grep -ai '^date:' "$out.head" | cut -d' ' -f2- | tr -d '\r')
	skew=$(( $(date -u +%s) - $(date -u -d "$date" +%s 2>/dev/null || echo 0) ))
	if [[ "$status" == "HTTP/1.1 200 OK" ]] && [ "$size" -eq 41 ] &&
		grep -q '^Hello, world! This is skiff serving you\.$' "$out.body" && [ "${skew#-}" -le 120 ]; then
		pass "http-curl-$2 (200, 41-byte body, Date '$date')"
	else
		fail "http-curl-$2" "status '$status', $size bytes, Date '$date' (skew $skew s)"
	fi
}
http_get --http1.1 1.1
http_get --http1.0 1.0

if timeout 60 python3 tests/http_client.py keepalive 127.0.0.1 "$HTTP_PORT" >"$LOG/http-keepalive.log" 2>&1; then
	pass "http-keepalive ($(tail -1 "$LOG/http-keepalive.log"))"
else
	fail http-keepalive "$(tail -3 "$LOG/http-keepalive.log" | tr '\n' ' ')"
fi

# ab: every request completes, none fails (TCG: small counts, bounded).
http_ab() { # NAME N C [-k]
	local name=$1 n=$2 c=$3
	shift 3
	if ! command -v ab >/dev/null; then
		fail "$name" "ab missing (apache2-utils; tools/deps.sh)"
		return
	fi
	timeout 120 ab -q -s 20 "$@" -n "$n" -c "$c" "$URL" >"$LOG/$name.log" 2>&1
	local rc=$? completed failed rps
	completed=$(awk '/^Complete requests:/ {print $3}' "$LOG/$name.log")
	failed=$(awk '/^Failed requests:/ {print $3}' "$LOG/$name.log")
	rps=$(awk '/^Requests per second:/ {print $4}' "$LOG/$name.log")
	if [ "$rc" -eq 0 ] && [ "${completed:-0}" -eq "$n" ] && [ "${failed:-1}" -eq 0 ] &&
		! grep -q '^Non-2xx' "$LOG/$name.log"; then
		pass "$name ($n requests, 0 failed, $rps req/s under TCG)"
	else
		fail "$name" "rc $rc, complete ${completed:-?}, failed ${failed:-?}; see $LOG/$name.log"
	fi
}
http_ab http-ab-keepalive 5000 8 -k
http_ab http-ab-close 1000 4

if timeout 200 python3 tests/http_client.py corpus 127.0.0.1 "$HTTP_PORT" tests/http_bad_requests.txt \
	>"$LOG/http-bad.log" 2>&1; then
	pass "http-bad-requests ($(tail -1 "$LOG/http-bad.log"))"
else
	fail http-bad-requests "$(tail -4 "$LOG/http-bad.log" | tr '\n' ' ')"
fi

# metrics=9100: a listener of the guest's own whose one route is the
# metrics page (uk/uk_sites.c), the same exposition as `skiff serve
# --metrics`; 3 requests between two scrapes (the scrapes count too: the
# metrics listener is a plain one, summed into http.*).
scrape_vm() { timeout 30 curl -s --max-time 20 -o "$1" -w '%{http_code}' "http://127.0.0.1:$METRICS_PORT/metrics"; }
m_code=$(scrape_vm "$LOG/metrics1.txt")
for _ in 1 2 3; do timeout 30 curl -s --max-time 20 -o /dev/null "$URL"; done
scrape_vm "$LOG/metrics2.txt" >/dev/null
m_req1=$(python3 tests/metrics_check.py value "$LOG/metrics1.txt" skiff_http_requests_total 2>/dev/null || echo 0)
m_req2=$(python3 tests/metrics_check.py value "$LOG/metrics2.txt" skiff_http_requests_total 2>/dev/null || echo 0)
if [ "$m_code" != 200 ]; then
	fail metrics "GET /metrics on $METRICS_PORT: HTTP '$m_code'"
elif ! command -v promtool >/dev/null; then
	fail metrics "promtool missing (prometheus; tools/deps.sh)"
elif ! m_out=$(promtool check metrics <"$LOG/metrics1.txt" 2>&1); then
	fail metrics "promtool: $m_out"
elif ! m_out=$(python3 tests/metrics_check.py parse "$LOG/metrics1.txt" 2>&1); then
	fail metrics "metrics_check: $m_out"
elif [ "$m_req2" -lt $((m_req1 + 3)) ]; then
	fail metrics "http.requests $m_req1 -> $m_req2 around 3 requests"
else
	pass "metrics (promtool clean; $m_out; requests $m_req1 -> $m_req2)"
fi

# Idle: the guest parks in hlt, so QEMU's CPU time grows far slower than
# wall time (a spinning guest would use ~100% of a core).
QEMU=$(qemu_pid "$VM")
if [ -n "$QEMU" ] && [ -r "/proc/$QEMU/stat" ]; then
	ticks() { awk '{print $14 + $15}' "/proc/$QEMU/stat"; }
	hz=$(getconf CLK_TCK)
	c0=$(ticks); sleep 3; c1=$(ticks)
	pct=$(( (c1 - c0) * 100 / (3 * hz) ))
	if [ "$pct" -lt 30 ]; then pass "idle (QEMU pid $QEMU used ${pct}% of a CPU over 3 s)"
	else fail idle "QEMU used ${pct}% of a CPU while the guest should be halted"; fi
else
	fail idle "no QEMU process under skiff vm"
fi

python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", ("127.0.0.1", int(sys.argv[1])))' "$CTL_PORT"
wait "$VM"
RC=$?
if [ "$RC" -eq 0 ] && grep -aq "^dev.rx_frames" "$LOG/echo.log" && grep -aq "^http.resp_2xx [1-9]" "$LOG/echo.log" &&
	grep -aq "skiff-uk: exit 0" "$LOG/echo.log"; then
	pass "shutdown (exit 0 through isa-debug-exit, counters printed: $(grep -a '^http.requests ' "$LOG/echo.log"))"
else
	fail shutdown "skiff vm exited $RC; see $LOG/echo.log"
fi

# --- TAP backend inside a namespace (issue 6) --------------------------------
# A namespace of our own (skt-<pid>-vmtap) holds the TAP vt0, whose kernel side is
# 198.18.0.1/24; `skiff vm --net tap:vt0` runs inside it (QEMU opens the
# existing TAP there, script=no) with the guest at 198.18.0.2.  Every client
# runs in the namespace too: nothing touches the root namespace.
TAP_GUEST=198.18.0.2
tap_vm() { # run a command inside the namespace
	ip netns exec "$TAP_NS" "$@"
}
tap_setup() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root (network namespace, TAP)"; return 1; }
	[ -c /dev/net/tun ] || { echo "no /dev/net/tun"; return 1; }
	# A killed earlier run's namespaces go first (by pid, then the netns).
	skt_cleanup_stale
	skt_topo_tap vmtap vt0 || { echo "cannot build the TAP namespace (tests/lib.sh skt_topo_tap)"; return 1; }
	TAP_NS=$SKT_NS_L
	# Offloads stay as Linux sets them (QEMU negotiates them with the TAP
	# from the guest's virtio features): the configuration users get.
	# ARP retries every 20 ms, so the first request goes out as soon as the
	# guest answers (the default 1 s would dominate the boot-to-served time).
	tap_vm sh -c 'echo 20 > /proc/sys/net/ipv4/neigh/vt0/retrans_time_ms'
	return 0
}
# Not in $(...): the namespace must reach skt_cleanup.
if tap_setup >"$LOG/tap-setup.log" 2>&1; then
	: >"$LOG/tap.log"
	t0=$(date +%s.%N)
	tap_vm timeout 90 "$SKIFF" vm "${MACHINE[@]}" --image "$IMG" --net tap:vt0 -- ip=$TAP_GUEST/24 gw=198.18.0.1 \
		shutdown-port=9 exit-after=80 stats </dev/null >"$LOG/tap.log" 2>&1 &
	VM=$!
	PIDS+=("$VM")
	# Time from QEMU start to the first served request: curl until a 200.
	served="" ready=""
	for ((i = 0; i < 400; i++)); do
		[ -z "$ready" ] && grep -aq "skiff-uk: ready" "$LOG/tap.log" && ready=$(date +%s.%N)
		code=$(tap_vm curl -s --connect-timeout 0.3 --max-time 2 -o /dev/null -w '%{http_code}' \
			"http://$TAP_GUEST/" 2>/dev/null)
		if [ "$code" = 200 ]; then served=$(date +%s.%N); break; fi
		kill -0 "$VM" 2>/dev/null || break
		sleep 0.02
	done
	accel=$(grep -aom1 'accel=[a-z]*' "$LOG/tap.log")
	if [ -n "$served" ] && grep -aq "skiff-uk: ready ip=$TAP_GUEST/24" "$LOG/tap.log"; then
		pass "tap-boot (${accel:-accel=?}: $(awk -v a="$t0" -v b="$served" 'BEGIN{printf "%.2f", b-a}') s from QEMU start to the first served request, ready line seen at $(awk -v a="$t0" -v b="${ready:-$served}" 'BEGIN{printf "%.2f", b-a}') s; $(grep -aom1 'boot_ms=[0-9]*' "$LOG/tap.log"))"
	else
		fail tap-boot "no HTTP 200 from $TAP_GUEST within the time; see $LOG/tap.log"
	fi

	URL="http://$TAP_GUEST/"
	tap_get() { # VERSION-FLAG NAME
		local out="$LOG/tap-curl-$2" status size
		if ! tap_vm timeout 30 curl -sS --max-time 20 "$1" -D "$out.head" -o "$out.body" "$URL" 2>"$out.err"; then
			fail "tap-curl-$2" "curl failed: $(head -1 "$out.err")"
			return
		fi
		status=$(head -1 "$out.head" | tr -d '\r')
		size=$(wc -c <"$out.body")
		if [[ "$status" == "HTTP/1.1 200 OK" ]] && [ "$size" -eq 41 ] &&
			grep -q '^Hello, world! This is skiff serving you\.$' "$out.body"; then
			pass "tap-curl-$2 (200, 41-byte body)"
		else
			fail "tap-curl-$2" "status '$status', $size bytes"
		fi
	}
	tap_get --http1.1 1.1
	tap_get --http1.0 1.0

	# ab inside the namespace: http_ab's checks, with the command prefixed.
	tap_ab() { # NAME N C [-k]
		local name=$1 n=$2 c=$3 rc completed failed rps
		shift 3
		tap_vm timeout 120 ab -q -s 20 "$@" -n "$n" -c "$c" "$URL" >"$LOG/$name.log" 2>&1
		rc=$?
		completed=$(awk '/^Complete requests:/ {print $3}' "$LOG/$name.log")
		failed=$(awk '/^Failed requests:/ {print $3}' "$LOG/$name.log")
		rps=$(awk '/^Requests per second:/ {print $4}' "$LOG/$name.log")
		if [ "$rc" -eq 0 ] && [ "${completed:-0}" -eq "$n" ] && [ "${failed:-1}" -eq 0 ] &&
			! grep -q '^Non-2xx' "$LOG/$name.log"; then
			pass "$name ($n requests, 0 failed, $rps req/s)"
		else
			fail "$name" "rc $rc, complete ${completed:-?}, failed ${failed:-?}; see $LOG/$name.log"
		fi
	}
	if command -v ab >/dev/null; then
		tap_ab tap-ab-keepalive 5000 8 -k
		tap_ab tap-ab-close 1000 4
	else
		fail tap-ab "ab missing (apache2-utils; tools/deps.sh)"
	fi

	if tap_vm timeout 20 ping -c 5 -i 0.2 -W 2 -s 1400 "$TAP_GUEST" >"$LOG/tap-ping.log" 2>&1 &&
		grep -q ' 0% packet loss' "$LOG/tap-ping.log"; then
		pass "tap-ping ($(grep -o 'rtt.*' "$LOG/tap-ping.log"))"
	else
		fail tap-ping "$(grep 'packet loss' "$LOG/tap-ping.log" || tail -1 "$LOG/tap-ping.log")"
	fi

	if tap_vm timeout 60 python3 tests/udp_echo.py --dst "$TAP_GUEST" --port 7 --count 2000 \
		--window 16 --timeout 5 >"$LOG/tap-udp.log" 2>&1; then
		pass "tap-udp ($(tail -1 "$LOG/tap-udp.log"))"
	else
		fail tap-udp "$(tail -1 "$LOG/tap-udp.log")"
	fi

	tap_vm python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", (sys.argv[1], 9))' "$TAP_GUEST"
	for ((i = 0; i < 200; i++)); do kill -0 "$VM" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$VM" 2>/dev/null; then
		fail tap-shutdown "the guest still runs 10 s after 'exit 0'; see $LOG/tap.log"
	else
		wait "$VM"
		RC=$?
		if [ "$RC" -eq 0 ] && grep -aq "^http.resp_2xx [1-9]" "$LOG/tap.log" && grep -aq "skiff-uk: exit 0" "$LOG/tap.log"; then
			pass "tap-shutdown (exit 0, counters printed: $(grep -a '^http.requests ' "$LOG/tap.log"))"
		else
			fail tap-shutdown "skiff vm exited $RC; see $LOG/tap.log"
		fi
	fi
	skt_ns_del "$TAP_NS"
	TAP_NS=""
else
	fail tap "setup: $(tail -1 "$LOG/tap-setup.log")"
fi

# --- exit code passthrough --------------------------------------------------
CTL_PORT=$(free_udp_port)
: >"$LOG/exit-code.log"
timeout 60 "$SKIFF" vm "${MACHINE[@]}" --accel tcg --image "$IMG" -p "$CTL_PORT:9/udp" -- shutdown-port=9 exit-after=50 \
	</dev/null >"$LOG/exit-code.log" 2>&1 &
VM=$!
PIDS+=("$VM")
if skt_wait_log "$LOG/exit-code.log" "skiff-uk: ready" 20; then
	python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 3", ("127.0.0.1", int(sys.argv[1])))' "$CTL_PORT"
fi
wait "$VM"
RC=$?
if [ "$RC" -eq 3 ]; then pass "exit-code (guest 3 -> skiff vm 3)"; else fail exit-code "expected 3, got $RC"; fi

# --- timer ------------------------------------------------------------------
vm_run timer 60 -- exit-after=2 stats
if [ "$RC" -eq 0 ] && grep -aq "^loop.wakeups_timer [1-9]" "$LOG/timer.log"; then
	pass "timer (exit-after=2: woken by the LAPIC timer, exit 0)"
else
	fail timer "rc $RC; see $LOG/timer.log"
fi

# --- exceptions -------------------------------------------------------------
for f in ud:6 pf:14; do
	kind=${f%%:*} vec=${f##*:}
	vm_run "fault-$kind" 60 -- "fault=$kind"
	if [ "$RC" -eq $((64 + vec)) ] && grep -aq "EXCEPTION vector $vec " "$LOG/fault-$kind.log" &&
		grep -aq "rip [0-9a-f]\{16\}" "$LOG/fault-$kind.log" && grep -aq "r15 [0-9a-f]\{16\}" "$LOG/fault-$kind.log"; then
		pass "fault-$kind (vector $vec, registers printed, exit $RC)"
	else
		fail "fault-$kind" "exit $RC (want $((64 + vec))); see $LOG/fault-$kind.log"
	fi
done

vm_run bad-arg 60 -- no-such-key=1
if [ "$RC" -eq 1 ] && grep -aq "^skiff-uk: unknown option 'no-such-key'" "$LOG/bad-arg.log"; then
	pass "bad-arg (unknown guest argument: exit 1)"
else
	fail bad-arg "exit $RC; see $LOG/bad-arg.log"
fi

# --- one set of options: a bad value, one message ----------------------------
# `skiff serve` and the guest read their options with the same table
# (src/conf/opts.c): the same bad value must be refused by both, with the
# same message, exit 2 hosted and a stop at boot (exit 1) in the guest.
# serve fails on these before it opens anything (tap:none is never opened).
same_message() { # NAME GUEST_WORD SERVE_ARGS...
	local name=$1 word=$2 hosted hrc gmsg
	shift 2
	hosted=$(timeout 10 "$SKIFF" serve "$@" 2>&1 >/dev/null)
	hrc=$?
	hosted=$(printf '%s\n' "$hosted" | sed -n 's/^skiff serve: //p' | head -n 1)
	vm_run "same-$name" 60 -- "$word"
	gmsg=$(tr -d '\r' <"$LOG/same-$name.log" | sed -n "s/^skiff-uk: \($name: .*\)/\1/p" | head -n 1)
	if [ "$hrc" -eq 2 ] && [ "$RC" -eq 1 ] && [ -n "$hosted" ] && [ "$hosted" = "$gmsg" ]; then
		pass "same-message.$name (serve exit 2, guest exit 1: $hosted)"
	else
		fail "same-message.$name" "serve exit $hrc '$hosted'; guest exit $RC '$gmsg'; see $LOG/same-$name.log"
	fi
}
same_message max-conns max-conns=0 --max-conns 0
same_message mac mac=01:00:5e:00:00:01 --mac=01:00:5e:00:00:01
same_message gw gw=10.0.3.1 --stack skiff --dev tap:none --ip 10.0.2.15/24 --gw 10.0.3.1

# --- Ctrl-C: skiff vm asks the guest to stop, as its shutdown port does ------
# No shutdown-port= word and no -p for it: skiff vm adds both (65533 from a
# free UDP port of 127.0.0.1).  SIGINT to skiff vm alone (as a terminal's
# Ctrl-C reaches it; QEMU is in a group of its own): the guest drains,
# prints its counters with the request counted, and skiff vm exits 0.
CC_PORT=$(free_tcp_port)
timeout --foreground 90 "$SKIFF" vm "${MACHINE[@]}" --accel tcg --image "$IMG" -p "$CC_PORT:80" -- exit-after=80 \
	</dev/null >"$LOG/ctrl-c.log" 2>&1 &
CC=$!
PIDS+=("$CC")
cc_body=
for _ in $(seq 1 300); do
	cc_body=$(curl -s --max-time 2 "http://127.0.0.1:$CC_PORT/" 2>/dev/null) && [ -n "$cc_body" ] && break
	sleep 0.1
done
kill -INT "$CC"
cc_t0=$(date +%s)
wait "$CC"
cc_rc=$?
cc_s=$(($(date +%s) - cc_t0))
if [ -n "$cc_body" ] && [ "$cc_rc" = 0 ] && grep -aq "^skiff-uk: drained in" "$LOG/ctrl-c.log" &&
	grep -aq "^http.requests [1-9]" "$LOG/ctrl-c.log" && grep -aq "^skiff-uk: exit 0" "$LOG/ctrl-c.log" &&
	[ "$cc_s" -lt 30 ]; then
	pass "ctrl-c (drained, counters printed, exit 0 in ${cc_s} s)"
else
	fail ctrl-c "body '${cc_body:0:20}', exit $cc_rc after ${cc_s} s; see $LOG/ctrl-c.log"
fi

vm_ops

summary
