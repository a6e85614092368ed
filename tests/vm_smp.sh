#!/usr/bin/env bash
# tests/vm_smp.sh — the unikernel with more than one vCPU (issue 17):
# `skiff vm --smp N` under multi-threaded TCG.
#
#   tests/vm_smp.sh [build/skiff] [build/skiff-uk.elf] [build/skiff-uk-tls13.elf]
#
# Checks, each reported PASS/FAIL, ending with "vm-smp: N passed, N failed":
#   smp-args    --smp 0, 17, x, 2x and '' exit 2 with the message; --smp 2's
#               QEMU line has -smp 2 and -accel tcg,thread=multi; --smp 1's
#               line is the one `skiff vm` gave before --smp (-smp 1, -accel tcg)
#   smp-boot    --smp 2 (user networking): the guest finds 2 CPUs in the
#               MADT, prints "cpu 1 up" and "cpus: 2 up", is ready, and
#               exit-after ends it with exit 0
#   smp-boot4   the same with --smp 4: "cpus: 4 up"
#   smp-user    the same guest on user networking (one queue): it says the
#               device has one queue pair and the other vCPU stays idle, and
#               serves "/" through -p PORT:80 on 127.0.0.1 from vCPU 0
#   smp-idle    that guest idle (both vCPUs halted, the AP with no timer
#               armed): QEMU's CPU time over 5 s stays under 3% of a core
#   smp-ctrl-c  then SIGINT to skiff vm (Ctrl-C): it sends "exit 0 stats" to
#               the shutdown port it added (65533); the guest drains, prints
#               its counters (the request counted) and exits 0
#   smp-tap-*   --smp 2 on a multi-queue TAP (`ip tuntap ... multi_queue`, vq0 =
#               198.18.0.1/24 in a namespace of its own, skt-<pid>-vmsmp; guest
#               198.18.0.2, --mem 512M max-conns=256): boot (2 queue pairs,
#               1 worker); ping (5 echoes, ICMP and ARP from whichever vCPU
#               the host's hash picks); ab (`ab -c 64 -n 2000` and `ab -k -c 64
#               -n 4000`, 0 failed); idle after the load under 5% of a core;
#               spread ("exit 0" to shutdown-port 9, then each vCPU's
#               http.requests from the stats: every one served at least a
#               quarter of all requests, and its dev.rx_frames grew)
#   smp-tap-drain  a fresh guest on that TAP (drain-timeout=20): 6 idle
#               keep-alive connections and 10 requests in flight (half a
#               head each), spread over both vCPUs by the host's hash; "exit 5
#               stats" to the shutdown port; then the rest of every head:
#               each in-flight request gets its 200 with Connection: close
#               and EOF, each idle one is closed; the guest prints the
#               summary ("shutdown: draining 16 connections ...: A on cpu
#               0, B on cpu 1", A and B at least 1, each vCPU's own "cpu K:
#               drained in" line, "drained in"), both vCPUs' counters show
#               they accepted and served, and it exits 5 well before the
#               drain-timeout
#   smp-tap-drain-timeout  the same guest with drain-timeout=3 and 8 half
#               heads that never end: every vCPU's "cpu K: drain-timeout
#               after", the summary "drain-timeout after", exit 0 between
#               3 and 15 s after the datagram, every client closed
#   smp-tap-tls12  HTTPS on both vCPUs (issue 35): a fresh guest on that TAP
#               with an ECDSA P-256 certificate (made now); openssl s_client
#               -tls1_2 makes one session (-sess_out), 16 more s_client
#               connections offer it (-sess_in): all 16 "Reused"; ab -f
#               TLS1.2 -n 64 -c 4 (a full handshake each), 0 failed; curl
#               --tlsv1.2 200; "exit 0", then from each vCPU's counters
#               (tls.*, cpu1.tls.*): both completed full handshakes, both
#               resumed (the one session was made on one vCPU: a resumption
#               across vCPUs, BearSSL's session cache shared), at most 3
#               handshakes failed (those ab drops once done).  The image before HTTPS ran on every vCPU fails it
#               (the flows the host hashes to vCPU 1 found no listener).
#   smp-tap-tls12-metrics  that guest's metrics=9100: 16 scrapes on new
#               connections, each 200, served by both vCPUs (http.requests
#               and cpu1.http.requests, the guest's only plain requests, sum
#               to 16), the page promtool-clean with cpu1's tls counters
#   smp-tap-tls12-alog  that guest's access-log=console: one whole line per
#               request served (HTTPS and metrics, on both vCPUs), each
#               vCPU's access_log.records at least 1, summing to them
#   smp-tap-config  `skiff vm --config` on --smp 2 over that TAP: a.test on
#               80 and 443, b.test on 443 (its own certificate, by SNI);
#               16 new connections to each, and 16 to a route whose header
#               lines overflow the header area (500): every answer right,
#               each vCPU served HTTPS and HTTP and matched SNI names (tls.*
#               and cpu1.* counters), and each logged the overflow in its
#               own error log ("skiff-uk: error:", "skiff-uk: cpu 1:
#               error:"), exit 0
#   smp-tap-tls13  the same on the TLS 1.3 image (third argument, wolfSSL,
#               -tls1_3, ab -f TLS1.3, curl --tlsv1.3): the ticket that
#               resumes on both vCPUs was sealed on one (one ticket key)
# VM_SMP_ONLY=tls runs only these (and the metrics checks), tls13 only
# the TLS 1.3 ones.
# Every QEMU run is bounded by `timeout` and stopped by pid on exit.  User
# networking keeps traffic inside QEMU and 127.0.0.1; the TAP part uses
# 198.18.0.0/24 inside its namespace, nothing in the root one.
# Run it under flock /tmp/skiff-nettest.lock (tests/run-all.sh does).
set -u
cd "$(dirname "$0")/.." || exit 2
SKIFF=${1:-build/skiff}
IMG=${2:-build/skiff-uk.elf}
IMG13=${3:-} # the TLS 1.3 image (make uk-tls13): smp-tap-tls13 too
# VM_SMP_ONLY=tls: the HTTPS checks alone; tls13: smp-tap-tls13 alone
# (phase vm-tls13 runs it so, with the image it built)
ONLY=${VM_SMP_ONLY:-}
LOG=${VM_LOG_DIR:-build/test-logs/vm-smp}
mkdir -p "$LOG"
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=vm-smp
PIDS=()
cleanup() {
	skt_kill_tree "${PIDS[@]}"
	skt_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for f in "$SKIFF" "$IMG" ${IMG13:+"$IMG13"}; do
	[ -r "$f" ] || { fail setup "missing $f (make all uk)"; summary; exit 1; }
done
skt_need setup qemu-system-x86_64 || { summary; exit 1; }

if [ -z "$ONLY" ]; then
# --- the option ---------------------------------------------------------------
bad=""
for v in 0 17 x 2x ""; do
	"$SKIFF" vm --smp "$v" --image "$IMG" --dry-run >/dev/null 2>"$LOG/args.err"
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -q -- "--smp wants a number of vCPUs 1..16, not '$v'" "$LOG/args.err"; then
		bad="$bad '$v'(exit $rc)"
	fi
done
line2=$("$SKIFF" vm --smp 2 --accel tcg --image "$IMG" --dry-run 2>/dev/null)
line1=$("$SKIFF" vm --smp 1 --accel tcg --image "$IMG" --dry-run 2>/dev/null)
line0=$("$SKIFF" vm --accel tcg --image "$IMG" --dry-run 2>/dev/null)
if [ -n "$bad" ]; then
	fail smp-args "not refused with exit 2 and the message:$bad"
elif [[ "$line2" != *" -smp 2 "* || "$line2" != *" -accel tcg,thread=multi "* ]]; then
	fail smp-args "--smp 2 gave: $line2"
elif [[ "$line1" != "$line0" || "$line1" != *" -smp 1 "* || "$line1" != *" -accel tcg "* ]]; then
	fail smp-args "--smp 1 changed the QEMU line: $line1"
else
	pass "smp-args (bad values exit 2; --smp 2: -smp 2 -accel tcg,thread=multi; --smp 1 unchanged)"
fi

# --- boot: every CPU up ---------------------------------------------------------
boot() { # NAME N
	local name=$1 n=$2 i
	timeout 90 "$SKIFF" vm --smp "$n" --accel tcg --image "$IMG" -- exit-after=3 \
		</dev/null >"$LOG/$name.log" 2>&1
	local rc=$? miss=""
	for ((i = 1; i < n; i++)); do
		grep -aq "skiff-uk: cpu $i up" "$LOG/$name.log" || miss="$miss $i"
	done
	if [ "$rc" -eq 0 ] && [ -z "$miss" ] && grep -aq "skiff-uk: cpus: $n in the MADT" "$LOG/$name.log" &&
		grep -aq "skiff-uk: cpus: $n up" "$LOG/$name.log" && grep -aq "skiff-uk: ready" "$LOG/$name.log" &&
		grep -aq "skiff-uk: exit 0" "$LOG/$name.log"; then
		pass "$name ($n CPUs up: $(grep -a 'skiff-uk: cpu [0-9]* up' "$LOG/$name.log" | sed 's/skiff-uk: //' | paste -sd, -))"
	else
		fail "$name" "exit $rc, CPUs not up:${miss:- none}; see $LOG/$name.log"
	fi
}
boot smp-boot 2
boot smp-boot4 4

# idle NAME VM-PID LIMIT-IN-HUNDREDTHS-OF-A-PERCENT WHAT: QEMU's CPU over 5 s.
idle() {
	local name=$1 vm=$2 limit=$3 what=$4 q c0 c1 hz pct100 shown
	q=$(skt_descendant "$vm" qemu-system-x86)
	if [ -z "$q" ] || [ ! -r "/proc/$q/stat" ]; then
		fail "$name" "no QEMU process under skiff vm"
		return
	fi
	hz=$(getconf CLK_TCK)
	c0=$(awk '{print $14 + $15}' "/proc/$q/stat"); sleep 5; c1=$(awk '{print $14 + $15}' "/proc/$q/stat")
	pct100=$(( (c1 - c0) * 10000 / (5 * hz) ))
	shown=$(awk -v p="$pct100" 'BEGIN{printf "%.2f", p / 100}')
	if [ "$pct100" -lt "$limit" ]; then
		pass "$name ($what: QEMU pid $q used ${shown}% of a core over 5 s)"
	else
		fail "$name" "QEMU used ${shown}% of a core over 5 s ($what)"
	fi
}

# --- user networking: one queue, vCPU 0 serves; idle costs nothing ------------
HP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout 90 "$SKIFF" vm --smp 2 --accel tcg --image "$IMG" -p "$HP:80" -- exit-after=40 \
	</dev/null >"$LOG/idle.log" 2>&1 &
VM=$!
PIDS+=("$VM")
for ((i = 0; i < 300; i++)); do
	grep -aq "skiff-uk: ready" "$LOG/idle.log" && break
	sleep 0.1
done
body=$(timeout 20 curl -s --max-time 10 "http://127.0.0.1:$HP/" 2>/dev/null)
if grep -aq "1 queue pairs for 2 vCPUs (the device has one: the other vCPUs stay idle)" "$LOG/idle.log" &&
	[ "$body" = "Hello, world! This is skiff serving you." ]; then
	pass "smp-user (one queue pair: vCPU 0 serves, vCPU 1 idles)"
else
	fail smp-user "no one-queue message or no 41-byte body ('$body'); see $LOG/idle.log"
fi
sleep 1 # past the request's last work
if grep -aq "skiff-uk: cpus: 2 up" "$LOG/idle.log"; then
	idle smp-idle "$VM" 300 "2 vCPUs halted"
else
	fail smp-idle "not 2 CPUs up; see $LOG/idle.log"
fi
# Ctrl-C: SIGINT (through timeout) to skiff vm, which sends "exit 0 stats"
# to the shutdown port it added (65533): the guest drains and exits 0.
kill -INT "$VM"
skt_wait_exit "$VM" 40
rc=${SKT_RC:-timeout}
if [ "$rc" = 0 ] && grep -aq "shutdown-port=65533" "$LOG/idle.log" &&
	grep -aq "^skiff-uk: shutdown: draining [0-9]* connections" "$LOG/idle.log" &&
	grep -aq "^skiff-uk: drained in" "$LOG/idle.log" && grep -aq "^http.requests 1" "$LOG/idle.log" &&
	grep -aq "^skiff-uk: exit 0" "$LOG/idle.log"; then
	pass "smp-ctrl-c (SIGINT to skiff vm --smp 2: $(grep -a '^skiff-uk: drained in' "$LOG/idle.log" | tr -d '\r'), counters, exit 0)"
else
	fail smp-ctrl-c "exit $rc; $(grep -a 'drain' "$LOG/idle.log" | tr '\r\n' '  '); see $LOG/idle.log"
fi
skt_kill_tree "$VM"
wait "$VM" 2>/dev/null
PIDS=()

fi # VM_SMP_ONLY

# guest_stat NAME LOG: a counter the guest printed at exit ("exit N stats"), or x.
guest_stat() { tr -d '\r' <"$2" | awk -v n="$1" '$1 == n {v = $2} END {print (v == "" ? "x" : v)}'; }

# --- a multi-queue TAP: one queue pair and one stack per vCPU -------------------
G=198.18.0.2
tap_setup() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root (network namespace, TAP)"; return 1; }
	[ -c /dev/net/tun ] || { echo "no /dev/net/tun"; return 1; }
	skt_cleanup_stale
	NS=$(skt_ns_name vmsmp)
	skt_ns_add "$NS" || return 1
	ip -n "$NS" tuntap add dev vq0 mode tap multi_queue || return 1
	ip -n "$NS" addr add 198.18.0.1/24 dev vq0 || return 1
	ip -n "$NS" link set vq0 up
}
NS=""
if ! skt_need smp-tap ab curl ping || ! tap_setup >"$LOG/tap-setup.log" 2>&1; then
	fail smp-tap "cannot set up the multi-queue TAP: $(tail -1 "$LOG/tap-setup.log" 2>/dev/null)"
	NS=""
elif [ -z "$ONLY" ]; then
	ip netns exec "$NS" timeout 150 "$SKIFF" vm --smp 2 --mem 512M --accel tcg --image "$IMG" \
		--net tap:vq0 -- ip=$G/24 gw=198.18.0.1 max-conns=256 shutdown-port=9 exit-after=140 stats \
		</dev/null >"$LOG/tap.log" 2>&1 &
	VM=$!
	PIDS+=("$VM")
	# The worker's line comes after "ready": vCPU 0 prints ready, then
	# builds vCPU 1's stack (its arena, loop, engines), slow under a loaded
	# TCG; waiting only for ready raced it (ci at 5c0168b).
	skt_wait_log "$LOG/tap.log" "skiff-uk: [0-9]* workers on vCPUs" 90
	if grep -aq "2 queue pairs for 2 vCPUs" "$LOG/tap.log" &&
		grep -aq "skiff-uk: 1 workers on vCPUs 1..1" "$LOG/tap.log"; then
		pass "smp-tap-boot (2 queue pairs, a worker on vCPU 1)"
	else
		fail smp-tap-boot "no 2 queue pairs and worker; see $LOG/tap.log"
	fi
	if ip netns exec "$NS" ping -c 5 -i 0.2 -W 2 "$G" >"$LOG/ping.log" 2>&1; then
		pass "smp-tap-ping ($(grep -o '[0-9]* received' "$LOG/ping.log"))"
	else
		fail smp-tap-ping "$(grep -a 'packet loss' "$LOG/ping.log")"
	fi
	ab_ok=1
	for args in "-c 64 -n 2000" "-k -c 64 -n 4000"; do
		# shellcheck disable=SC2086  # the words of $args
		ip netns exec "$NS" timeout 90 ab -q $args "http://$G/" >"$LOG/ab.log" 2>&1
		n=${args##* }
		done_=$(awk '/^Complete requests:/ {print $3}' "$LOG/ab.log")
		failed=$(awk '/^Failed requests:/ {print $3}' "$LOG/ab.log")
		rps=$(awk '/^Requests per second:/ {print $4}' "$LOG/ab.log")
		if [ "${done_:-0}" = "$n" ] && [ "${failed:-1}" = 0 ]; then
			pass "smp-tap-ab (ab $args: $done_ complete, 0 failed, $rps req/s under TCG)"
		else
			fail smp-tap-ab "ab $args: complete ${done_:-?}, failed ${failed:-?}"
			ab_ok=0
		fi
	done
	sleep 2 # the closes' last segments
	idle smp-tap-idle "$VM" 500 "2 vCPUs parked after the load, connections in TIME_WAIT"
	ip netns exec "$NS" python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", (sys.argv[1], 9))' "$G"
	skt_wait_exit "$VM" 30
	rc=${SKT_RC:-timeout}
	r0=$(tr -d '\r' <"$LOG/tap.log" | awk '$1 == "http.requests" {print $2}')
	r1=$(tr -d '\r' <"$LOG/tap.log" | awk '$1 == "cpu1.http.requests" {print $2}')
	f0=$(tr -d '\r' <"$LOG/tap.log" | awk '$1 == "dev.rx_frames" {print $2}')
	f1=$(tr -d '\r' <"$LOG/tap.log" | awk '$1 == "cpu1.dev.rx_frames" {print $2}')
	# A count that did not parse fails the check (never an arithmetic error).
	[[ "${r0:-x}" =~ ^[0-9]+$ && "${r1:-x}" =~ ^[0-9]+$ ]] || { r0=0; r1=0; }
	[[ "${f0:-x}" =~ ^[0-9]+$ && "${f1:-x}" =~ ^[0-9]+$ ]] || { f0=0; f1=0; }
	total=$(( r0 + r1 ))
	if [ "$rc" = 0 ] && [ "$ab_ok" = 1 ] && [ "$total" -gt 0 ] && [ $(( r0 * 4 )) -ge "$total" ] &&
		[ $(( r1 * 4 )) -ge "$total" ] && [ "$f0" -gt 0 ] && [ "$f1" -gt 0 ]; then
		pass "smp-tap-spread (vCPU 0 served $r0 requests ($f0 frames), vCPU 1 $r1 ($f1 frames); exit 0)"
	else
		fail smp-tap-spread "exit $rc; requests vCPU 0 ${r0:-?}, vCPU 1 ${r1:-?}; frames ${f0:-?}, ${f1:-?}; see $LOG/tap.log"
	fi
	skt_kill_tree "$VM"
	PIDS=()

	# --- the drain: each vCPU drains its own connections -----------------
	# tap_guest NAME DRAIN-S: a fresh guest on vq0; VM its pid, 1 if not ready.
	tap_guest() {
		local name=$1 ds=$2 i
		ip netns exec "$NS" timeout 120 "$SKIFF" vm --smp 2 --mem 512M --accel tcg --image "$IMG" \
			--net tap:vq0 -- ip=$G/24 gw=198.18.0.1 max-conns=256 shutdown-port=9 \
			drain-timeout="$ds" exit-after=100 </dev/null >"$LOG/$name.log" 2>&1 &
		VM=$!
		PIDS+=("$VM")
		for ((i = 0; i < 300; i++)); do
			grep -aq "skiff-uk: 1 workers on vCPUs 1..1" "$LOG/$name.log" && return 0
			kill -0 "$VM" 2>/dev/null || return 1
			sleep 0.1
		done
		return 1
	}
	# drain_split LOG: "A B", the per-vCPU counts of the summary's first line.
	drain_split() {
		tr -d '\r' <"$1" | sed -n 's/^skiff-uk: shutdown: draining [0-9]* connections (drain-timeout [0-9]* s): \([0-9]*\) on cpu 0, \([0-9]*\) on cpu 1$/\1 \2/p' | head -1
	}
	crc=1 rc=timeout
	if tap_guest drain 20; then
		t0=$(date +%s%N)
		ip netns exec "$NS" timeout 60 python3 tests/vm_ops_client.py manydrain "$G" 80 9 6 10 \
			>"$LOG/drain-client.log" 2>&1
		crc=$?
		skt_wait_exit "$VM" 40
		rc=${SKT_RC:-timeout}
		ms=$((($(date +%s%N) - t0) / 1000000))
	fi
	read -r c0 c1 <<<"$(drain_split "$LOG/drain.log")"
	a0=$(guest_stat http.conns_accepted "$LOG/drain.log") a1=$(guest_stat cpu1.http.conns_accepted "$LOG/drain.log")
	q0=$(guest_stat http.requests "$LOG/drain.log") q1=$(guest_stat cpu1.http.requests "$LOG/drain.log")
	[[ "${c0:-x}" =~ ^[0-9]+$ && "${c1:-x}" =~ ^[0-9]+$ ]] || { c0=0; c1=0; }
	[[ "$a0$a1$q0$q1" =~ ^[0-9]+$ && "$a0" != x && "$a1" != x && "$q0" != x && "$q1" != x ]] || { a0=0; a1=0; q0=0; q1=0; }
	if [ "$crc" = 0 ] && [ "$rc" = 5 ] && [ "$c0" -ge 1 ] && [ "$c1" -ge 1 ] && [ $((c0 + c1)) = 16 ] &&
		[ "$a0" -ge 1 ] && [ "$a1" -ge 1 ] && [ $((a0 + a1)) = 16 ] && [ $((q0 + q1)) = 16 ] &&
		grep -aq '^skiff-uk: cpu 0: drained in' "$LOG/drain.log" &&
		grep -aq '^skiff-uk: cpu 1: drained in' "$LOG/drain.log" &&
		grep -aq '^skiff-uk: drained in' "$LOG/drain.log" && [ "$ms" -lt 15000 ]; then
		pass "smp-tap-drain ($(tr -d '\n' <"$LOG/drain-client.log"); held $c0 on cpu 0, $c1 on cpu 1 (accepted $a0 + $a1, served $q0 + $q1); $(grep -a '^skiff-uk: drained in' "$LOG/drain.log" | tr -d '\r'); exit 5 in $ms ms)"
	else
		fail smp-tap-drain "client rc $crc: $(tr '\n' ' ' <"$LOG/drain-client.log"); guest rc $rc; held ${c0:-?}+${c1:-?}, accepted $a0+$a1, served $q0+$q1; $(grep -a 'drain' "$LOG/drain.log" | tr '\r\n' '  '); see $LOG/drain.log"
	fi
	skt_kill_tree "$VM"
	PIDS=()

	crc=1 rc=timeout ms=0
	if tap_guest drain-timeout 3; then
		t0=$(date +%s%N)
		ip netns exec "$NS" timeout 60 python3 tests/vm_ops_client.py manyhold "$G" 80 9 8 \
			>"$LOG/drain-timeout-client.log" 2>&1
		crc=$?
		skt_wait_exit "$VM" 40
		rc=${SKT_RC:-timeout}
		ms=$((($(date +%s%N) - t0) / 1000000))
	fi
	read -r c0 c1 <<<"$(drain_split "$LOG/drain-timeout.log")"
	[[ "${c0:-x}" =~ ^[0-9]+$ && "${c1:-x}" =~ ^[0-9]+$ ]] || { c0=0; c1=0; }
	if [ "$crc" = 0 ] && [ "$rc" = 0 ] && [ "$c0" -ge 1 ] && [ "$c1" -ge 1 ] && [ $((c0 + c1)) = 8 ] &&
		grep -aq '^skiff-uk: cpu 0: drain-timeout after' "$LOG/drain-timeout.log" &&
		grep -aq '^skiff-uk: cpu 1: drain-timeout after' "$LOG/drain-timeout.log" &&
		grep -aq '^skiff-uk: drain-timeout after [0-9]* ms: closing 8 connections' "$LOG/drain-timeout.log" &&
		[ "$ms" -ge 2900 ] && [ "$ms" -lt 15000 ]; then
		pass "smp-tap-drain-timeout ($(tr -d '\n' <"$LOG/drain-timeout-client.log"); held $c0 on cpu 0, $c1 on cpu 1; $(grep -a '^skiff-uk: drain-timeout' "$LOG/drain-timeout.log" | tr -d '\r'); exit 0 in $ms ms)"
	else
		fail smp-tap-drain-timeout "client rc $crc: $(tr '\n' ' ' <"$LOG/drain-timeout-client.log"); guest rc $rc after $ms ms; held ${c0:-?}+${c1:-?}; $(grep -a 'drain' "$LOG/drain-timeout.log" | tr '\r\n' '  '); see $LOG/drain-timeout.log"
	fi
	skt_kill_tree "$VM"
	PIDS=()
fi

# --- HTTPS on every vCPU (issue 35) -----------------------------------------------
# tap_tls NAME IMAGE 1.2|1.3: a guest with a certificate on vq0; full
# handshakes from ab and curl, one session resumed on 16 new connections
# (the host's hash sends them to both vCPUs); then "exit 0" and each vCPU's
# counters from the stats.
tap_tls() {
	local name=$1 img=$2 ver=$3 i flag n=64 reused=0 s1 s2 cv
	flag=-tls1_2 cv=--tlsv1.2
	[ "$ver" = 1.3 ] && flag=-tls1_3 cv=--tlsv1.3
	ip netns exec "$NS" timeout 400 "$SKIFF" vm --smp 2 --mem 512M --accel tcg --image "$img" \
		--net tap:vq0 --tls-cert "$CERTS/ec.crt" --tls-key "$CERTS/ec.key" -- ip=$G/24 \
		gw=198.18.0.1 max-conns=256 shutdown-port=9 exit-after=380 stats metrics=9100 access-log=console </dev/null >"$LOG/$name.log" 2>&1 &
	VM=$!
	PIDS+=("$VM")
	for ((i = 0; i < 600; i++)); do
		grep -aq "skiff-uk: 1 workers on vCPUs 1..1" "$LOG/$name.log" && break
		kill -0 "$VM" 2>/dev/null || break
		sleep 0.1
	done
	local get='GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
	# -ign_eof: s_client reads to the server's close, so a TLS 1.3 ticket
	# (sent with the handshake) is in the session it writes.
	s1=$(printf "%b" "$get" | ip netns exec "$NS" timeout 60 openssl s_client -connect "$G:443" $flag \
		-CAfile "$CERTS/ec.crt" -ign_eof -sess_out "$CERTS/$name.sess" 2>&1 | grep -aE '^(New|Reused),')
	for ((i = 0; i < 16; i++)); do
		s2=$(printf "%b" "$get" | ip netns exec "$NS" timeout 60 openssl s_client -connect "$G:443" $flag \
			-CAfile "$CERTS/ec.crt" -ign_eof -sess_in "$CERTS/$name.sess" 2>&1 | grep -aE '^(New|Reused),')
		[[ $s2 == "Reused, TLSv$ver"* ]] && reused=$((reused + 1))
	done
	ip netns exec "$NS" timeout 300 ab -q -f "TLS$ver" -n "$n" -c 4 "https://$G/" >"$LOG/$name-ab.log" 2>&1
	local done_ failed code
	done_=$(awk '/^Complete requests:/ {print $3}' "$LOG/$name-ab.log")
	failed=$(awk '/^Failed requests:/ {print $3}' "$LOG/$name-ab.log")
	code=$(ip netns exec "$NS" timeout 60 curl -s -o /dev/null -w '%{http_code}' $cv --cacert "$CERTS/ec.crt" \
		--resolve "localhost:443:$G" https://localhost/)
	# The metrics page, 16 scrapes on new connections (each vCPU misses
	# them all 1 time in 2^15) (both vCPUs have the
	# listener): each 200, with every vCPU's counters.
	local scodes="" sc
	for ((i = 0; i < 16; i++)); do
		sc=$(ip netns exec "$NS" timeout 30 curl -s --max-time 20 -o "$LOG/$name-metrics.txt" \
			-w '%{http_code}' "http://$G:9100/metrics")
		scodes="$scodes$sc "
	done
	ip netns exec "$NS" python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", (sys.argv[1], 9))' "$G"
	skt_wait_exit "$VM" 60
	local rc=${SKT_RC:-timeout}
	skt_kill_tree "$VM"
	PIDS=()
	local h0 h1 r0 r1 f0 f1
	h0=$(guest_stat tls.handshakes "$LOG/$name.log") h1=$(guest_stat cpu1.tls.handshakes "$LOG/$name.log")
	r0=$(guest_stat tls.resumed "$LOG/$name.log") r1=$(guest_stat cpu1.tls.resumed "$LOG/$name.log")
	f0=$(guest_stat tls.handshake_failed "$LOG/$name.log") f1=$(guest_stat cpu1.tls.handshake_failed "$LOG/$name.log")
	# A count that did not parse fails the check (never an arithmetic error).
	[[ "$h0.$h1.$r0.$r1.$f0.$f1" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
		{ h0=0 h1=0 r0=0 r1=0 f0=1 f1=1; }
	# Each vCPU completed full handshakes and resumed the one session,
	# made on one of them: a resumption across vCPUs.  Failed handshakes:
	# at most ab's concurrency less one (ab opens connections past -n and
	# drops those mid-handshake once the last answer is in; seen 0 to 2).
	if [ "$rc" = 0 ] && [[ $s1 == "New, TLSv$ver"* ]] && [ "$reused" = 16 ] && [ "${done_:-0}" = "$n" ] &&
		[ "${failed:-1}" = 0 ] && [ "$code" = 200 ] && [ $((h0 - r0)) -ge 1 ] && [ $((h1 - r1)) -ge 1 ] &&
		[ "$r0" -ge 1 ] && [ "$r1" -ge 1 ] && [ $((r0 + r1)) -ge 16 ] && [ $((f0 + f1)) -le 3 ]; then
		pass "$name (TLS $ver: ab -f TLS$ver -n $n -c 4 0 failed, curl $cv 200; handshakes vCPU 0 $h0 ($r0 resumed, $f0 failed), vCPU 1 $h1 ($r1 resumed, $f1 failed); one session resumed $reused of 16 on both vCPUs; exit 0; TCG)"
	else
		fail "$name" "exit $rc; s_client '$s1', reused $reused of 16; ab complete ${done_:-?} failed ${failed:-?}; curl $code; handshakes $h0+$h1 resumed $r0+$r1 failed $f0+$f1; see $LOG/$name.log"
	fi
	# The metrics listener on both vCPUs: its scrapes are the guest's only
	# plain HTTP requests (http.*; HTTPS's are https.*).
	local m0 m1 mout
	m0=$(guest_stat http.requests "$LOG/$name.log") m1=$(guest_stat cpu1.http.requests "$LOG/$name.log")
	[[ "$m0.$m1" =~ ^[0-9]+\.[0-9]+$ ]] || { m0=0 m1=0; }
	if [ "$scodes" != "$(printf '200 %.0s' {1..16})" ]; then
		fail "$name-metrics" "scrapes answered '$scodes'"
	elif ! mout=$(promtool check metrics <"$LOG/$name-metrics.txt" 2>&1); then
		fail "$name-metrics" "promtool: $mout"
	elif ! grep -q '^skiff_cpu1_tls_handshakes' "$LOG/$name-metrics.txt"; then
		fail "$name-metrics" "no cpu1 TLS counters on the page; see $LOG/$name-metrics.txt"
	elif [ "$m0" -lt 1 ] || [ "$m1" -lt 1 ] || [ $((m0 + m1)) != 16 ]; then
		fail "$name-metrics" "scrapes served: vCPU 0 $m0, vCPU 1 $m1 (16 asked)"
	else
		pass "$name-metrics (metrics=9100: 16 scrapes 200, vCPU 0 served $m0, vCPU 1 $m1; promtool clean; the page has every vCPU's counters)"
	fi
	# The access log on both vCPUs (access-log=console): a line per request
	# served, whichever vCPU served it, each whole (curl's over HTTPS is
	# HTTP/2, ALPN h2 by default: "GET / HTTP/2.0").
	local lines a0 a1 q
	lines=$(tr -d '\r' <"$LOG/$name.log" | grep -acE '^[0-9.]+ - - \[[^]]+\] "GET /(metrics)? HTTP/(1\.[01]|2\.0)" 200 [0-9]+ ')
	a0=$(guest_stat access_log.records "$LOG/$name.log") a1=$(guest_stat cpu1.access_log.records "$LOG/$name.log")
	q=$(( $(guest_stat https.requests "$LOG/$name.log" | tr -c '0-9\n' 0) + $(guest_stat cpu1.https.requests "$LOG/$name.log" | tr -c '0-9\n' 0) + m0 + m1 ))
	[[ "$a0.$a1" =~ ^[0-9]+\.[0-9]+$ ]] || { a0=0 a1=0; }
	if [ "$a0" -ge 1 ] && [ "$a1" -ge 1 ] && [ $((a0 + a1)) = "$q" ] && [ "$lines" = "$q" ]; then
		pass "$name-alog (access-log=console: $lines lines for $q requests; vCPU 0 logged $a0, vCPU 1 $a1)"
	else
		fail "$name-alog" "$lines whole lines, records vCPU 0 $a0 + vCPU 1 $a1, requests $q; see $LOG/$name.log"
	fi
}
# tap_config: `skiff vm --config` on --smp 2 (a configuration on every
# vCPU): two sites on one TLS listener (SNI) and a plain one; 16 new
# connections to each, then each vCPU's counters.
tap_config() {
	local d=$LOG/config i body bad="" k
	mkdir -p "$d/certs"
	for k in a b; do
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
			-subj "/CN=$k.test" -addext "subjectAltName=DNS:$k.test" -keyout "$d/certs/$k.key" \
			-out "$d/certs/$k.crt" 2>>"$LOG/openssl.log" || { fail smp-tap-config "openssl req failed"; return; }
	done
	# /bighdr: two 700-byte header lines, over the default header area: a
	# 500 and an error-log line from the vCPU that answered.
	local big
	big=$(head -c 700 /dev/zero | tr '\0' b)
	printf 'site a.test {\n    listen %s:80;\n    listen %s:443 tls;\n    tls certs/a.crt certs/a.key;\n    route / {\n        return 200 site-a;\n    }\n    route = /bighdr { return 200 big; header X-Big1 %s; header X-Big2 %s; }\n}\nsite b.test {\n    listen %s:443 tls;\n    tls certs/b.crt certs/b.key;\n    route / {\n        return 200 site-b;\n    }\n}\n' \
		"$G" "$G" "$big" "$big" "$G" >"$d/sites.conf"
	ip netns exec "$NS" timeout 300 "$SKIFF" vm --smp 2 --mem 512M --accel tcg --image "$IMG" \
		--net tap:vq0 --config "$d/sites.conf" -- ip=$G/24 gw=198.18.0.1 shutdown-port=9 \
		exit-after=280 stats </dev/null >"$LOG/config.log" 2>&1 &
	VM=$!
	PIDS+=("$VM")
	for ((i = 0; i < 600; i++)); do
		grep -aq "skiff-uk: 1 workers on vCPUs 1..1" "$LOG/config.log" && break
		kill -0 "$VM" 2>/dev/null || break
		sleep 0.1
	done
	for ((i = 0; i < 16; i++)); do
		for k in a b; do
			body=$(ip netns exec "$NS" timeout 30 curl -s --max-time 20 --cacert "$d/certs/$k.crt" \
				--resolve "$k.test:443:$G" "https://$k.test/")
			[ "$body" = "site-$k" ] || bad="$bad https-$k:'$body'"
		done
		body=$(ip netns exec "$NS" timeout 30 curl -s --max-time 20 -H 'Host: a.test' "http://$G/")
		[ "$body" = site-a ] || bad="$bad http:'$body'"
		body=$(ip netns exec "$NS" timeout 30 curl -s --max-time 20 -o /dev/null -w '%{http_code}' \
			-H 'Host: a.test' "http://$G/bighdr")
		[ "$body" = 500 ] || bad="$bad bighdr:'$body'"
	done
	ip netns exec "$NS" python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", (sys.argv[1], 9))' "$G"
	skt_wait_exit "$VM" 60
	local rc=${SKT_RC:-timeout} s0 s1 p0 p1 n0 n1 e0 e1
	skt_kill_tree "$VM"
	PIDS=()
	s0=$(guest_stat https.requests "$LOG/config.log") s1=$(guest_stat cpu1.https.requests "$LOG/config.log")
	p0=$(guest_stat http.requests "$LOG/config.log") p1=$(guest_stat cpu1.http.requests "$LOG/config.log")
	n0=$(guest_stat tls.sni_matched "$LOG/config.log") n1=$(guest_stat cpu1.tls.sni_matched "$LOG/config.log")
	[[ "$s0.$s1.$p0.$p1.$n0.$n1" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
		{ s0=0 s1=0 p0=0 p1=0 n0=0 n1=0; }
	# the error log's lines, each vCPU's own (the header overflow's)
	e0=$(tr -d '\r' <"$LOG/config.log" | grep -ac '^skiff-uk: error: .*header')
	e1=$(tr -d '\r' <"$LOG/config.log" | grep -ac '^skiff-uk: cpu 1: error: .*header')
	if [ "$rc" = 0 ] && [ -z "$bad" ] && [ "$s0" -ge 1 ] && [ "$s1" -ge 1 ] && [ $((s0 + s1)) = 32 ] &&
		[ "$p0" -ge 1 ] && [ "$p1" -ge 1 ] && [ $((p0 + p1)) = 32 ] && [ "$n0" -ge 1 ] && [ "$n1" -ge 1 ] &&
		[ "$e0" -ge 1 ] && [ "$e1" -ge 1 ]; then
		pass "smp-tap-config (--config, 2 sites by SNI on 443 and one on 80: 64 answers right; HTTPS vCPU 0 $s0, vCPU 1 $s1; HTTP $p0, $p1; SNI matched $n0, $n1; error-log lines $e0, $e1; exit 0)"
	else
		fail smp-tap-config "exit $rc;${bad:- bodies right}; https $s0+$s1, http $p0+$p1, sni $n0+$n1, error-log lines $e0+$e1; see $LOG/config.log"
	fi
}
if [ -n "$NS" ] && skt_need smp-tap-tls openssl promtool; then
	CERTS=$LOG/certs
	mkdir -p "$CERTS"
	if openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$CERTS/ec.key" \
		-out "$CERTS/ec.crt" -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
		2>"$LOG/openssl.log"; then
		[ "$ONLY" = tls13 ] || tap_tls smp-tap-tls12 "$IMG" 1.2
		[ "$ONLY" = tls13 ] || tap_config
		if [ -n "$IMG13" ]; then
			tap_tls smp-tap-tls13 "$IMG13" 1.3
		fi
	else
		fail smp-tap-tls "openssl req failed: $(tail -1 "$LOG/openssl.log")"
	fi
fi

summary
