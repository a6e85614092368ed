#!/usr/bin/env bash
# tests/load.sh [SKIFF] — `skiff load` against real servers on Linux.
#
# Topology (tests/lib.sh skt_topo_veth): namespaces skt-<pid>-cli and
# skt-<pid>-srv joined by a veth pair (created inside the namespaces;
# nothing in the root namespace), offloads off on both ends (skiff on xdp
# needs complete checksums).  cli end vc0 is 198.18.0.1 (Linux) and, for
# the xdp case, skiff takes vc0 with 198.18.0.3; srv end vs0 is 198.18.0.2.
# Servers: `skiff serve --stack linux` and nginx (Debian's binary, its own
# -p/-c temp config).
#
# Checks: argument errors (exit 2), failures reported by kind with exit 1
# (refused port, 404), then keep-alive, close and duration runs with 0
# failed requests and the exact count, nginx both ways (its keepalive limit
# exercises "Connection: close" mid-run), agreement with ab, and skiff's
# own stack on AF_XDP as the client, then `--workers 2` on the kernel's
# stack and on skiff's (packet: and tap:, test_workers).  A missing tool (ab, nginx) is a
# FAIL, not a skip.  Every load is bounded (-n, -d, --timeout, `timeout`).
# SKT_FAMILY=6 (run-all.sh phase load6): the same over IPv6 (tests/lib.sh
# skt_family): vc0 also has 2001:2::1/64, vs0 2001:2::2/64, skiff serve
# listens on [::] (no --ip), nginx on [2001:2::2]:8080, every URL is
# http://[2001:2::2]/, and skiff's own stack on xdp:vc0 adds --ip6
# 2001:2::3/64.  Checks print as v6/NAME.
# "PASS/FAIL name" lines, then "load: N passed, N failed"; exit 1 on a
# failure.
set -u
BIN=$(realpath "${1:-build/skiff}")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=load
skt_check_bin "$BIN" || exit 2

WORK=$(mktemp -d /tmp/skiff-load-test.XXXXXX)
NS_C=
NS_S=
skt_family "$SKT_FAMILY" || { echo "$0: SKT_FAMILY is 4 or 6, not '$SKT_FAMILY'" >&2; exit 2; }
# SRV_IP: the server in URLs (and nginx's listen); SERVE_IP: serve's --ip
# (IPv4 only: without it serve takes [::], both families); XDP_IP: skiff's
# own stack as the client.
SRV_IP=$SKT_HOST SERVE_IP=(--ip "$SKT_SKIFF_IP") XDP_IP=(--ip 198.18.0.3/24)
if [ "$SKT_FAMILY" = 6 ]; then
	SERVE_IP=() XDP_IP+=(--ip6 2001:2::3/64)
	SKT_SCOPE=v6
fi
NGINX_PID=

cleanup() {
	[ -n "$NGINX_PID" ] && kill -TERM "$NGINX_PID" 2>/dev/null
	skt_cleanup
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

C() { ip netns exec "$NS_C" "$@"; }
S() { ip netns exec "$NS_S" "$@"; }

setup() {
	skt_cleanup_stale
	skt_topo_veth off "$SKT_SKIFF_IP/24" || return 1
	skt_family_up linux || return 1
	NS_C=$SKT_NS_L NS_S=$SKT_NS_S
	S sh -c 'echo 4096 > /proc/sys/net/core/somaxconn; echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse'
	C sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse; echo "1024 65000" > /proc/sys/net/ipv4/ip_local_port_range'
	return 0
}

# field LOG NAME: a value from the summary line.
field() { sed -nE "s/^skiff load: summary .*[ ]$2=([0-9.]+).*/\1/p" "$1" | tail -1; }

# run_load NAME EXPECT_RC ARGS...: skiff load in the cli namespace; output
# in $WORK/NAME.log; returns 0 if the exit status was EXPECT_RC.
run_load() {
	local name=$1 want=$2 rc
	shift 2
	C timeout 60 "$BIN" load "$@" >"$WORK/$name.log" 2>&1
	rc=$?
	LOG=$WORK/$name.log
	if [ "$rc" -ne "$want" ]; then
		fail "$name" "exit $rc, wanted $want: $(grep -E 'requests|FAILED|skiff load:' "$LOG" | head -n 3 | tr '\n' ' ')"
		return 1
	fi
	return 0
}

# expect_ok NAME OKCOUNT ARGS...: 0 failed and (if OKCOUNT > 0) exactly
# OKCOUNT good responses, or at least -OKCOUNT when negative.
expect_ok() {
	local name=$1 want=$2 ok fl
	shift 2
	run_load "$name" 0 "$@" || return 1
	ok=$(field "$LOG" ok) fl=$(field "$LOG" failed)
	if [ "${fl:-x}" != 0 ]; then
		fail "$name" "failed=$fl"
	elif [ "$want" -gt 0 ] && [ "$ok" != "$want" ]; then
		fail "$name" "ok=$ok, wanted $want"
	elif [ "$want" -lt 0 ] && [ "$ok" -lt $((-want)) ]; then
		fail "$name" "ok=$ok, wanted at least $((-want))"
	else
		pass "$name ($(field "$LOG" rps) req/s, p99 $(field "$LOG" p99_us) us)"
	fi
}

start_serve() { # ARGS...
	S "$BIN" serve --stack linux "${SERVE_IP[@]}" --port 80 "$@" >"$WORK/serve.log" 2>&1 &
	SRV_PID=$!
	SKT_PIDS+=("$SRV_PID")
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q '^skiff serve: listening' "$WORK/serve.log" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

test_args() {
	local bad=0 a
	for a in "" "http://198.18.0.2/" "-c 1" "-c 1 ftp://x/" "-c 1 http://host.name/" \
		"-c 0 http://198.18.0.2/" "-c 1 -n 1 -d 1 http://198.18.0.2/" \
		"-c 1 --bogus http://198.18.0.2/" "-c 1 --dev tap:x http://198.18.0.2/" \
		"-c 1 --ips 2 --dev tap:x --ip 198.18.0.9/24 http://198.18.0.2/" \
		"-c 1 --hold http://198.18.0.2/" "-c 1 http://198.18.0.2/ extra" \
		"-c 4 --workers 2 --ips 2 --dev switch:x/0 --ip 198.18.0.9/24 http://198.18.0.2/" \
		"-c 4 --workers 2 --dev xdp:lo --ip 198.18.0.9/24 http://198.18.0.2/" \
		"-c 4 --workers 2 --dev tap:x --ip 198.18.0.9/24 --ip6 2001:2::9/64 http://198.18.0.2/"; do
		# shellcheck disable=SC2086
		"$BIN" load $a >/dev/null 2>&1
		[ $? -eq 2 ] || { bad=1; echo "  (load $a: not exit 2)" >&2; }
	done
	"$BIN" load --help | grep -q '^usage: skiff load' || bad=1
	[ $bad = 0 ] && pass args || fail args "a bad argument did not exit 2 (above)"
}

test_errors() {
	# Nobody on port 81: every attempt is a connect error, exit 1.
	if run_load refused 1 -c 2 -n 6 --timeout 5 http://$SRV_IP:81/; then
		[ "$(field "$LOG" connect)" = 6 ] && pass refused ||
			fail refused "connect errors $(field "$LOG" connect), wanted 6"
	fi
	# A 404 is a failed request too ("bad status").
	if run_load status404 1 -c 2 -n 10 -k http://$SRV_IP/nope; then
		[ "$(field "$LOG" status)" = 10 ] && pass status404 ||
			fail status404 "status errors $(field "$LOG" status), wanted 10"
	fi
}

test_skiff_serve() {
	expect_ok linux.keepalive 50000 -c 32 -n 50000 -k http://$SRV_IP/
	expect_ok linux.close 5000 -c 16 -n 5000 http://$SRV_IP/
	expect_ok linux.duration -100 -c 8 -d 2 -k http://$SRV_IP/
	expect_ok linux.c1000 20000 -c 1000 -n 20000 -k http://$SRV_IP/
	# --workers 2 on the kernel's stack: two threads, each half.
	if expect_ok linux.workers 20000 -c 16 -n 20000 -k --workers 2 http://$SRV_IP/; then
		if grep -q '^  worker 0  10000 ok, 0 failed' "$LOG" &&
			grep -q '^  worker 1  10000 ok, 0 failed' "$LOG"; then
			pass linux.workers.spread
		else
			fail linux.workers.spread "$(grep '^  worker' "$LOG" | tr '\n' ' ')"
		fi
	fi
}

# skiff load and ab on the same server and the same run shape: skiff's
# rate must not be far below ab's (both share two cores with the server,
# so "within noise" is a generous band).  Each runs twice, alternating
# (ab, skiff, ab, skiff), and the better run of each is compared: one
# run of either can land beside another phase's burst (make test runs
# phases side by side), which once halved one of them.
ab_rate() {
	C timeout 60 ab -q -k -c 16 -n 40000 "http://$SRV_IP/" 2>/dev/null |
		sed -nE 's/^Requests per second: +([0-9.]+).*/\1/p'
}
test_ab() {
	skt_need ab ab || return
	local ab_rps ab2 sk_rps sk2
	ab_rps=$(ab_rate)
	expect_ok ab.skiff 40000 -c 16 -n 40000 -k http://$SRV_IP/ || return
	sk_rps=$(field "$LOG" rps)
	ab2=$(ab_rate)
	expect_ok ab.skiff2 40000 -c 16 -n 40000 -k http://$SRV_IP/ || return
	sk2=$(field "$LOG" rps)
	ab_rps=$(awk -v a="${ab_rps:-0}" -v b="${ab2:-0}" 'BEGIN { m = a > b ? a : b; if (m > 0) print m }')
	sk_rps=$(awk -v a="${sk_rps:-0}" -v b="${sk2:-0}" 'BEGIN { print (a > b ? a : b) }')
	if [ -z "$ab_rps" ]; then
		fail ab.agree "ab gave no rate"
	elif awk -v a="$ab_rps" -v s="$sk_rps" 'BEGIN { exit !(s >= 0.5 * a && s <= 4 * a) }'; then
		pass "ab.agree (ab $ab_rps req/s, skiff load $sk_rps req/s)"
	else
		fail ab.agree "ab $ab_rps req/s vs skiff load $sk_rps req/s"
	fi
}

test_nginx() {
	local ng
	ng=$(command -v nginx || echo /usr/sbin/nginx)
	[ -x "$ng" ] || { fail nginx "'nginx' not found (tools/deps.sh installs it)"; return; }
	mkdir -p "$WORK/ng/html" "$WORK/ng/logs"
	head -c 600 /dev/zero | tr '\0' X >"$WORK/ng/html/index.html"
	cat >"$WORK/ng/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
error_log $WORK/ng/logs/error.log;
pid $WORK/ng/nginx.pid;
events { worker_connections 4096; }
http {
	access_log off;
	keepalive_requests 1000;
	client_body_temp_path $WORK/ng/tmp;
	proxy_temp_path $WORK/ng/tmp;
	fastcgi_temp_path $WORK/ng/tmp;
	uwsgi_temp_path $WORK/ng/tmp;
	scgi_temp_path $WORK/ng/tmp;
	server {
		listen $SRV_IP:8080;
		location / { root $WORK/ng/html; }
	}
}
EOF
	S "$ng" -p "$WORK/ng" -c "$WORK/ng/nginx.conf" >"$WORK/ng/out.log" 2>&1 &
	NGINX_PID=$!
	local i
	for ((i = 0; i < 50; i++)); do
		C bash -c "exec 3<>/dev/tcp/$SKT_SRV/8080" 2>/dev/null && break
		sleep 0.1
	done
	# 1000 requests per connection, then nginx says Connection: close.
	expect_ok nginx.keepalive 30000 -c 16 -n 30000 -k http://$SRV_IP:8080/
	local bytes
	bytes=$(field "$LOG" bytes)
	# 600-byte bodies: the transfer must cover them.
	[ "${bytes:-0}" -ge $((30000 * 600)) ] && pass nginx.bytes || fail nginx.bytes "bytes=$bytes"
	expect_ok nginx.close 3000 -c 8 -n 3000 http://$SRV_IP:8080/
	kill -TERM "$NGINX_PID" 2>/dev/null
	wait "$NGINX_PID" 2>/dev/null
	NGINX_PID=
}

# skiff's own TCP/IP as the client, on AF_XDP, against Linux serving.
test_xdp() {
	expect_ok xdp.keepalive 20000 -c 16 -n 20000 -k --timeout 10 \
		--dev xdp:vc0 "${XDP_IP[@]}" http://$SRV_IP/
	expect_ok xdp.close 2000 -c 8 -n 2000 --timeout 10 \
		--dev xdp:vc0 "${XDP_IP[@]}" http://$SRV_IP/
}

# Linux's TCP OutRsts in namespace $1 (/proc/net/snmp is per namespace).
out_rsts() {
	ip netns exec "$1" awk '$1 == "Tcp:" { if (seen) { for (i = 2; i <= NF; i++) if (h[i] == "OutRsts") print $i; exit } for (i = 2; i <= NF; i++) h[i] = $i; seen = 1 }' /proc/net/snmp
}

# Linux's TCP RetransSegs in namespace $1.
retrans_segs() {
	ip netns exec "$1" awk '$1 == "Tcp:" { if (seen) { for (i = 2; i <= NF; i++) if (h[i] == "RetransSegs") print $i; exit } for (i = 2; i <= NF; i++) h[i] = $i; seen = 1 }' /proc/net/snmp
}

# workers_check NAME N NS_SRV ARGS...: `skiff load --workers 2 --stats`
# on skiff's stack, N requests: all ok, each worker some, the workers'
# sum N, no RST into skiff's TCP, none from Linux's server (its
# namespace's OutRsts unchanged), and none from skiff's unless Linux
# retransmitted: a FIN Linux resent after a late ACK (a loaded machine)
# can reach skiff after the connection closed, and a segment for no
# connection is answered with a RST (RFC 9293 3.10.7.1), as Linux's own
# client would; so at most one per Linux retransmission, each for no
# socket (tcp_drop_no_socket).  Seen under ci-fresh's parallel phases
# (2026-12-05: rst_out 1, tcp_drop_no_socket 1).
workers_check() {
	local name=$1 n=$2 ns=$3 r0 r1 ok w0 w1 rin rout x0 x1 nosock
	shift 3
	r0=$(out_rsts "$ns")
	x0=$(retrans_segs "$ns")
	expect_ok "$name" "$n" -n "$n" --workers 2 --stats --timeout 10 "$@" || return
	r1=$(out_rsts "$ns")
	x1=$(retrans_segs "$ns")
	w0=$(sed -nE 's/^  worker 0  ([0-9]+) ok, 0 failed.*/\1/p' "$LOG")
	w1=$(sed -nE 's/^  worker 1  ([0-9]+) ok, 0 failed.*/\1/p' "$LOG")
	rin=$(sed -nE 's/^tcp_rst_in ([0-9]+)$/\1/p' "$LOG")
	rout=$(sed -nE 's/^tcp_rst_out ([0-9]+)$/\1/p' "$LOG")
	if [ "${w0:-0}" -gt 0 ] && [ "${w1:-0}" -gt 0 ] && [ $((w0 + w1)) = "$n" ]; then
		pass "$name.spread (worker 0 $w0, worker 1 $w1)"
	else
		fail "$name.spread" "worker 0 '${w0:-}' worker 1 '${w1:-}', wanted both > 0 summing to $n"
	fi
	nosock=$(sed -nE 's/^tcp_drop_no_socket ([0-9]+)$/\1/p' "$LOG")
	if [ "${rin:-x}" = 0 ] && [ "${rout:-x}" = 0 ] && [ -n "$r0" ] && [ "$r0" = "$r1" ]; then
		pass "$name.rst (skiff rst_in 0 rst_out 0, Linux OutRsts +0)"
	elif [ "${rin:-x}" = 0 ] && [[ ${rout:-x} =~ ^[0-9]+$ ]] && [ -n "$r0" ] && [ "$r0" = "$r1" ] &&
		[ -n "$x0" ] && [ -n "$x1" ] && [ "$rout" -le $((x1 - x0)) ] && [ "$rout" = "${nosock:-x}" ]; then
		pass "$name.rst (skiff rst_in 0, rst_out $rout for no socket after Linux's $((x1 - x0)) retransmissions, Linux OutRsts +0)"
	else
		# Which of skiff's TCP drops answered with them (tcp_drop_*: a
		# segment for no socket, data after the application closed, ...).
		fail "$name.rst" "skiff rst_in '${rin:-}' rst_out '${rout:-}', Linux OutRsts $r0 -> $r1, RetransSegs $x0 -> $x1; $(grep -E '^tcp_drop_[a-z_]+ [1-9]' "$LOG" | tr '\n' ' ')"
	fi
}

# skiff load --workers 2 on skiff's stack: queue k of 2 of one device,
# one address, each worker's source ports steered back to it (issue 17,
# docs/smp.md).  packet: on vc0 (a cBPF fanout program) against serve on
# vs0; tap: a multi-queue TAP sk0 in the cli namespace (the steering eBPF
# program), 198.18.1.1 on its kernel side with a second skiff serve
# --stack linux there.  IPv4 only (workers refuse ip6).  Each run has an
# address of its own: a finished run's connections may still be closing
# on the server (its FINs would reach the next run's stack, which has no
# socket for them and answers RST).
test_workers() {
	workers_check workers.packet.keepalive 20000 "$NS_S" -c 16 -k \
		--dev packet:vc0 --ip 198.18.0.4/24 http://$SRV_IP/
	workers_check workers.packet.close 2000 "$NS_S" -c 8 \
		--dev packet:vc0 --ip 198.18.0.5/24 http://$SRV_IP/
	if ! SKT_TAP_MQ=1 skt_tap "$NS_C" sk0 198.18.1.1/24; then
		fail workers.tap "cannot make the TAP"
		return
	fi
	C "$BIN" serve --stack linux --ip 198.18.1.1 --port 80 >"$WORK/serve_tap.log" 2>&1 &
	local tpid=$! i
	SKT_PIDS+=("$tpid")
	for ((i = 0; i < 100; i++)); do
		grep -q '^skiff serve: listening' "$WORK/serve_tap.log" 2>/dev/null && break
		sleep 0.05
	done
	workers_check workers.tap.keepalive 20000 "$NS_C" -c 16 -k \
		--dev tap:sk0 --ip 198.18.1.3/24 http://198.18.1.1/
	workers_check workers.tap.close 2000 "$NS_C" -c 8 \
		--dev tap:sk0 --ip 198.18.1.4/24 http://198.18.1.1/
	kill -TERM "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
}

test_args
if ! setup; then
	fail setup "cannot build the namespaces"
else
	if start_serve --max-conns 4096; then
		test_errors
		test_skiff_serve
		test_ab
		test_xdp
		[ "$SKT_FAMILY" = 4 ] && test_workers
	else
		fail serve "skiff serve did not start: $(tail -n 2 "$WORK/serve.log")"
	fi
	test_nginx
fi
summary
