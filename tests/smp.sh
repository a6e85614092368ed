#!/usr/bin/env bash
# tests/smp.sh BIN [TARGET...] — `skiff serve --workers 2` (docs/smp.md) on
# each TARGET (default: all four):
#   linux         --stack linux: two threads, an SO_REUSEPORT listener each
#   skiff:packet  two AF_PACKET sockets in one PACKET_FANOUT_CBPF group
#   skiff:tap     two queues of a multi-queue TAP (created multi_queue)
#   skiff:xdp     two AF_XDP sockets, on queues 0 and 1 of a veth made with
#                 2 rx and 2 tx queues
# Topologies as tests/http.sh (tests/lib.sh; 198.18.0.0/15 inside
# namespaces this script creates, always deleted).
#
# Per target:
#   serves       curl, then ab -k -n 20000 -c 64 and ab -n 4000 -c 16 (a
#                new connection per request) and wrk -c 64 -d 3: 0 failed;
#   spread       from --stats at exit: every worker's http.requests grew and
#                each accepted at least a quarter of the connections;
#   any_worker   (skiff) ping answered, ARP resolved: whichever worker the
#                kernel hands a frame, it answers (iface glean, docs/smp.md);
#   idle_cpu     the 2-worker server uses < 1% of a core over 5 s idle
#                (/proc/PID/stat utime+stime);
#   stat         `skiff stat PID` answers with the summed counters;
#   access_log   (linux, packet) one well-formed line per request: no line
#                cut or interleaved by the other worker;
#   sighup       (linux) --root reloaded by every worker: new connections
#                (spread over both) all see the new file;
#   steer        (packet, tap) 200 connections from source ports chosen
#                150 for worker 0, 50 for worker 1: each worker's
#                http.conns_accepted is exactly what a Python copy of
#                wire/flow_hash.h predicts (the devices' BPF steering
#                programs agree with the C hash);
#   gw           (packet, tap) --gw and off-link clients (a second client
#                address, off skiff's subnet): 20 connections per worker
#                all served, counts as predicted, no --gw warning, and
#                worker 1 took the gateway's MAC from the workers'
#                neighbour board (arp.board_hits), since ARP replies go
#                to worker 0;
#   tap_nocap    (tap) without CAP_BPF: one warning, and served anyway;
#   sigterm      exit 0 with the sums and per-worker lines.
# Prints PASS/FAIL per check, ends with "smp: N passed, N failed".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=smp

usage() { echo "usage: $0 path/to/skiff [linux] [skiff:packet] [skiff:tap] [skiff:xdp]" >&2; exit 2; }
BIN=${1:-}
[ -n "$BIN" ] || usage
shift
skt_targets "linux skiff:packet skiff:tap skiff:xdp" "$@"
skt_check_bin "$BIN" || exit 2
BIN=$(readlink -f "$BIN")
if ! skt_need setup curl ab wrk ping; then
	summary
	exit 1
fi

SRV_IP=198.18.0.2
URL=http://$SRV_IP/
WORK=$(mktemp -d /tmp/skiff-smp.XXXXXX)
SRV_PID='' TGT='' NS_C='' NS_S='' IF_C='' SERVE=()

skt_work_traps "SMP_KEEP_LOGS" "server logs"

C() { timeout "${T:-60}" ip netns exec "$NS_C" "$@"; }

# The target's topology (tests/lib.sh skt_serve_target; tap multi-queue,
# the xdp veth with 2 queues) and many short connections from one client.
setup_target() {
	SKT_TAP_MQ='' SKT_VETH_QUEUES=''
	case $TGT in
	skiff:tap) SKT_TAP_MQ=1 ;;
	skiff:xdp) SKT_VETH_QUEUES=2 ;;
	esac
	SKT_FAMILY=4 skt_serve_target "$SRV_IP" || return 1 # IPv4 only here
	if [ "$TGT" = linux ]; then
		ip netns exec "$NS_S" sh -c 'echo 4096 > /proc/sys/net/core/somaxconn' 2>/dev/null
	fi
	skt_client_sysctls
}

# start_server NAME ARGS...: serve with 2 workers, wait for the listening
# line (it must say workers=2) and the first answer.
start_server() {
	local name=$1
	shift
	skt_serve_launch "$name" --port 80 --workers "${WORKERS:-2}" --stats "$@"
	skt_serve_listening 10
	if ! grep -q "^skiff serve: listening.* workers=${EXPECT:-2}" "$SRV_LOG" 2>/dev/null; then
		fail "$name.start" "no 'listening ... workers=${EXPECT:-2}' line: $(skt_serve_tail)"
		return 1
	fi
	if skt_serve_answer 5 ${START_PORT:+--local-port "$START_PORT"} ${START_SRC:+--interface "$START_SRC"} "$URL"; then
		pass "$name.start"
		return 0
	fi
	fail "$name.start" "listening, but no answer to curl within 5 s: $(skt_serve_tail)"
	return 1
}

# stop_server NAME: SIGTERM, exit 0, sums and per-worker lines printed.
stop_server() {
	local name=$1
	skt_serve_exit "$name.sigterm" TERM 10 || return
	if ! grep -q '^http.requests ' "$SRV_LOG" || ! grep -q '^worker1.http.requests ' "$SRV_LOG"; then
		fail "$name.sigterm" "no summed and per-worker counters with --stats"
	else
		pass "$name.sigterm"
	fi
}

# drop_server: a server whose start-up failed, ended so that it cannot
# take frames meant for the next one.
drop_server() { skt_serve_stop KILL 5; }

# stat_of NAME: the value of counter NAME in the server's --stats output.
stat_of() { awk -v n="$1" '$1 == n {print $2; exit}' "$SRV_LOG"; }

check_ab() { # check_ab NAME N ARGS...
	local name=$1 n=$2 out=$WORK/$1.out
	shift 2
	T=120 C ab -q -r "$@" "$URL" >"$out" 2>&1
	local done_ fails non2xx
	done_=$(awk '/^Complete requests:/ {print $3}' "$out")
	fails=$(awk '/^Failed requests:/ {print $3}' "$out")
	non2xx=$(awk '/^Non-2xx responses:/ {print $3}' "$out")
	if [ "${done_:-0}" != "$n" ] || [ "${fails:-x}" != 0 ] || [ -n "$non2xx" ]; then
		fail "$name" "complete=${done_:-?} failed=${fails:-?} non2xx=${non2xx:-0}: $(tail -n 2 "$out" | tr '\n' ' ')"
	else
		pass "$name ($(awk '/^Requests per second:/ {print $4}' "$out") req/s)"
	fi
}

check_wrk() {
	local out=$WORK/wrk.out line
	T=30 C wrk -t 2 -c 64 -d 3 "$URL" >"$out" 2>&1
	line=$(grep 'Socket errors:' "$out")
	if ! grep -q 'Requests/sec' "$out"; then
		fail wrk.c64 "wrk did not finish: $(tail -n 2 "$out" | tr '\n' ' ')"
	elif [ -n "$line" ] || grep -q 'Non-2xx' "$out"; then
		fail wrk.c64 "$line $(grep Non-2xx "$out")"
	else
		pass "wrk.c64 ($(awk '/Requests\/sec/ {print $2}' "$out") req/s)"
	fi
}

# Idle: each worker parks on its own; two together under 1% of a core.
check_idle_cpu() {
	if skt_idle_ticks 5; then
		pass "idle_cpu ($IDLE_TICKS ticks of $((IDLE_HZ * 5)) in 5 s, 2 workers)"
	else
		fail idle_cpu "$IDLE_TICKS ticks in 5 s (limit under $((IDLE_HZ * 5 / 100)))"
	fi
}

check_stat() {
	local out=$WORK/stat.out
	if ! timeout 10 ip netns exec "$NS_S" "$BIN" stat "$SRV_PID" >"$out" 2>&1; then
		fail stat "skiff stat $SRV_PID failed: $(head -n 3 "$out" | tr '\n' ' ')"
	elif ! grep -Eq '^http\.requests [1-9]' "$out"; then
		fail stat "no http.requests in: $(head -n 3 "$out" | tr '\n' ' ')"
	else
		pass "stat ($(grep -E '^http\.requests ' "$out"))"
	fi
}

# The counters at exit: both workers served, and the connections spread.
check_spread() {
	local r0 r1 c0 c1 total
	r0=$(stat_of worker0.http.requests) r1=$(stat_of worker1.http.requests)
	c0=$(stat_of worker0.http.conns_accepted) c1=$(stat_of worker1.http.conns_accepted)
	total=$(stat_of http.conns_accepted)
	if [ -z "$r0" ] || [ -z "$r1" ] || [ -z "$c0" ] || [ -z "$c1" ]; then
		fail spread "per-worker counters missing from --stats"
	elif [ "$r0" -eq 0 ] || [ "$r1" -eq 0 ]; then
		fail spread "a worker served nothing: requests $r0 / $r1"
	elif [ $((c0 + c1)) -ne "$total" ]; then
		fail spread "per-worker connections $c0 + $c1 are not the sum $total"
	elif [ $((c0 * 4)) -lt "$total" ] || [ $((c1 * 4)) -lt "$total" ]; then
		fail spread "a worker got under a quarter of $total connections: $c0 / $c1"
	else
		pass "spread (requests $r0 / $r1, connections $c0 / $c1 of $total)"
	fi
}

# Every access-log line whole: as many lines as requests, each one a
# complete combined-format line for GET /.
check_access_log() {
	local log=$1 lines good req
	req=$(stat_of http.requests)
	lines=$(wc -l <"$log")
	good=$(grep -Ec '^[0-9.:a-f]+ - - \[[^]]+\] "GET / HTTP/1\.[01]" 200 41 "[^"]*" "[^"]*"$' "$log")
	if [ "$lines" -ne "$req" ] || [ "$good" -ne "$lines" ]; then
		fail access_log "$lines lines, $good well-formed, $req requests: $(grep -Ev '^[0-9.:a-f]+ - - \[[^]]+\] "GET / HTTP/1\.[01]" 200 41 "[^"]*" "[^"]*"$' "$log" | head -n 2 | tr '\n' ' ')"
	else
		pass "access_log ($lines whole lines from 2 workers)"
	fi
}

check_any_worker() {
	local out=$WORK/ping.out
	if C ping -c 5 -i 0.2 -W 1 "$SRV_IP" >"$out" 2>&1; then
		pass "any_worker.ping ($(grep -o '[0-9]* received' "$out"))"
	else
		fail any_worker.ping "$(tail -n 2 "$out" | tr '\n' ' ')"
	fi
	if ip -n "$NS_C" neigh show "$SRV_IP" dev "$IF_C" | grep -Eq 'REACHABLE|STALE|DELAY|PERMANENT'; then
		pass any_worker.arp
	else
		fail any_worker.arp "no neighbour entry for $SRV_IP: $(ip -n "$NS_C" neigh show dev "$IF_C" | tr '\n' ' ')"
	fi
}

check_sighup() {
	local r=$WORK/www i bad=0 body
	mkdir -p "$r"
	echo old >"$r/v.txt"
	start_server hup --root "$r" || return
	echo new >"$r/v.txt"
	kill -HUP "$SRV_PID"
	sleep 2
	# New connections, spread over both workers by their ports.
	for ((i = 0; i < 20; i++)); do
		body=$(C curl -s --max-time 2 "${URL}v.txt")
		[ "$body" = new ] || bad=$((bad + 1))
	done
	local n
	n=$(grep -c 'SIGHUP: root reloaded' "$SRV_LOG")
	if [ "$bad" -ne 0 ]; then
		fail sighup "$bad of 20 new connections still got the old file"
	elif [ "$n" -ne 1 ]; then
		fail sighup "'root reloaded' said $n times (want once, by worker 0)"
	else
		pass "sighup (20 of 20 connections see the new file)"
	fi
	stop_server hup
}

# xdp: more workers than the veth has queues: warned, and one per queue.
check_xdp_fallback() {
	if WORKERS=3 EXPECT=2 start_server fallback; then
		if grep -q 'warning: xdp:vs0 has 2 rx queues: using 2 workers, not 3' "$SRV_LOG"; then
			pass xdp_fallback
		else
			fail xdp_fallback "no warning: $(head -n 2 "$SRV_LOG" | tr '\n' ' ')"
		fi
		stop_server fallback
	fi
}

# conns_from NAME SRC N0 N1: from address SRC, open connections (a GET each)
# from source ports chosen so that a Python copy of wire/flow_hash.h sends
# N0 to worker 0 and N1 to worker 1 (and the start-up curl's port 1500 to
# the worker it names); prints "want W0 W1 start_worker K".
conns_from() {
	T=60 C python3 - "$2" "$SRV_IP" 80 "$3" "$4" 1500 >"$WORK/$1.out" 2>&1 <<'PY'
import socket, sys
cli, srv, dport = sys.argv[1], sys.argv[2], int(sys.argv[3])
goal, start = [int(sys.argv[4]), int(sys.argv[5])], int(sys.argv[6])
def word(a):
    return int.from_bytes(socket.inet_aton(a), "big")
def worker(sport, nw=2):
    # wire/flow_hash.h: XOR of the address words and the ports, times
    # 0x9E3779B1 mod 2^32, xor its top half down; modulo the workers.
    x = word(cli) ^ word(srv) ^ sport ^ dport
    x = (x * 0x9E3779B1) & 0xffffffff
    x ^= x >> 16
    return x % nw
got = [0, 0]
p = 20000
while got != goal:
    w = worker(p)
    if got[w] < goal[w]:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.settimeout(5)
        s.bind((cli, p))
        s.connect((srv, dport))
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        while s.recv(4096):
            pass
        s.close()
        got[w] += 1
    p += 1
got[worker(start)] += 1
print("want", got[0], got[1], "start_worker", worker(start))
PY
}

# check_counts NAME: each worker's http.conns_accepted is exactly what
# conns_from predicted.  A retried start-up curl (same port, so the same
# worker) adds to its worker.
check_counts() {
	local name=$1 e0 e1 sw c0 c1 tries
	read -r _ e0 e1 _ sw < <(grep '^want ' "$WORK/$name.out")
	c0=$(stat_of worker0.http.conns_accepted) c1=$(stat_of worker1.http.conns_accepted)
	if [ -z "${e0:-}" ]; then
		fail "$name" "client failed: $(tail -n 2 "$WORK/$name.out" | tr '\n' ' ')"
		return 1
	fi
	tries=$((${c0:-0} + ${c1:-0} - e0 - e1))
	if [ "$sw" = 0 ]; then e0=$((e0 + tries)); else e1=$((e1 + tries)); fi
	if [ "$tries" -lt 0 ] || [ "$tries" -gt 3 ] || [ "${c0:-x}" != "$e0" ] || [ "${c1:-x}" != "$e1" ]; then
		fail "$name" "accepted ${c0:-?} / ${c1:-?}, the hash predicts $e0 / $e1 (start-up curls $((tries + 1)))"
		return 1
	fi
	pass "$name ($c0 / $c1 connections, exactly as flow_hash predicts)"
}

# steer (packet, tap): the device picks the worker by skiff's own flow hash
# (the BPF programs of src/dev/steer_bpf.c): 150 connections chosen for
# worker 0 and 50 for worker 1 land exactly there, which the kernel's own
# (randomly seeded) hash would not do.
check_steer() {
	START_PORT=1500 start_server steer || { drop_server; return; }
	if grep -q 'steering program' "$SRV_LOG"; then
		fail steer "steering program not attached: $(grep -m1 'steering program' "$SRV_LOG")"
		stop_server steer
		return
	fi
	conns_from steer "$SKT_LINUX_IP" 150 50
	stop_server steer
	check_counts steer
}

# gw (packet, tap): off-link clients through --gw, 2 workers.  The client
# speaks from 198.19.0.1 (a second address on its side, off skiff's /24),
# so skiff answers through the gateway 198.18.0.1, whose ARP reply the
# device steers to worker 0 (and no frame teaches worker 1 the gateway by
# gleaning): worker 1 answers only because it takes the gateway's entry
# from the workers' neighbour board (net/nbr_board.h).
check_gw() {
	local far=198.19.0.1 hits
	ip -n "$NS_C" addr add "$far/24" dev "$IF_C" 2>/dev/null
	# ARP from the client names 198.18.0.1, which skiff answers.
	ip netns exec "$NS_C" sysctl -qw "net.ipv4.conf.$IF_C.arp_announce=2" net.ipv4.conf.all.arp_announce=2
	local saved=("${SERVE[@]}")
	SERVE+=(--gw "$SKT_LINUX_IP")
	START_PORT=1500 START_SRC=$far start_server gw
	local ok=$?
	SERVE=("${saved[@]}")
	if [ "$ok" -eq 0 ]; then
		conns_from gw "$far" 20 20
		stop_server gw
	else
		drop_server
	fi
	ip -n "$NS_C" addr del "$far/24" dev "$IF_C" 2>/dev/null
	ip netns exec "$NS_C" sysctl -qw "net.ipv4.conf.$IF_C.arp_announce=0" net.ipv4.conf.all.arp_announce=0
	[ "$ok" -eq 0 ] || return
	if grep -q 'warning' "$SRV_LOG"; then
		fail gw.no_warning "$(grep -m1 warning "$SRV_LOG")"
	else
		pass gw.no_warning
	fi
	check_counts gw || return
	hits=$(stat_of worker1.arp.board_hits)
	if [ "${hits:-0}" -ge 1 ]; then
		pass "gw.board (worker 1 took the gateway from the board: arp.board_hits $hits)"
	else
		fail gw.board "worker1.arp.board_hits ${hits:-missing}"
	fi
}

# tap_nocap (tap): without CAP_BPF (and CAP_SYS_ADMIN) the steering
# program cannot load; skiff warns once, says why, and serves with the
# kernel's steering (install.sh's service runs so).
check_tap_nocap() {
	SERVE_WRAP="setpriv --bounding-set -bpf,-sys_admin --inh-caps -bpf,-sys_admin" start_server nocap || { drop_server; return; }
	local n
	n=$(grep -c 'warning: cannot load the steering program: .*(needs CAP_BPF); the kernel steers' "$SRV_LOG")
	T=30 C ab -q -n 400 -c 8 "$URL" >"$WORK/nocap.out" 2>&1
	stop_server nocap
	if [ "$n" -ne 1 ]; then
		fail tap_nocap "want the CAP_BPF warning once, got $n: $(head -n 2 "$SRV_LOG" | tr '\n' ' ')"
	elif ! grep -q '^Failed requests: *0' "$WORK/nocap.out" || ! grep -q '^Complete requests: *400' "$WORK/nocap.out"; then
		fail tap_nocap "ab: $(grep -E '^(Complete|Failed)' "$WORK/nocap.out" | tr '\n' ' ')"
	else
		pass "tap_nocap (warned once, 400 requests served with the kernel's steering)"
	fi
}

# auto: one worker per CPU this process may use.
check_auto() {
	local n
	n=$(nproc)
	[ "$n" -gt 64 ] && n=64
	WORKERS=auto EXPECT=$n start_server auto && stop_server auto
}

run_target() {
	SKT_SCOPE=$TGT
	if ! setup_target; then
		fail setup "topology for $TGT"
		skt_cleanup
		return
	fi
	local alog=
	case $TGT in linux | skiff:packet) alog=$WORK/${TGT/:/-}-access.log ;; esac
	case $TGT in skiff:packet | skiff:tap) check_steer; check_gw ;; esac
	[ "$TGT" = skiff:tap ] && check_tap_nocap
	if start_server main ${alog:+--access-log "$alog"}; then
		[ "$TGT" != linux ] && check_any_worker
		check_ab ab.keepalive.c64 20000 -k -n 20000 -c 64
		check_ab ab.close.c16 4000 -n 4000 -c 16
		check_wrk
		check_stat
		check_idle_cpu
		stop_server main
		check_spread
		[ -n "$alog" ] && check_access_log "$alog"
	fi
	[ "$TGT" = linux ] && check_sighup
	[ "$TGT" = linux ] && check_auto
	[ "$TGT" = skiff:xdp ] && check_xdp_fallback
	skt_cleanup
}

for TGT in "${TARGETS[@]}"; do
	run_target
done
SKT_SCOPE=
summary
