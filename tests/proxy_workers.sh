#!/usr/bin/env bash
# tests/proxy_workers.sh SKIFF [TARGET...] — --workers 2 for the hosted
# applications (host/sites_host.c, docs/smp.md): `skiff proxy` and the kv
# example (build/examples/kv beside SKIFF: `make examples`, or the asan
# build's).  TARGETs (default all):
#   linux         --stack linux on 127.0.0.1, ports picked free (no
#                 namespace): the proxy before nginx and before
#                 tests/proxy_upstream.py, and kv
#   skiff:tap     the same on --stack skiff, two queues of a multi-queue TAP
#                 in a namespace, nginx and the Python upstream on its kernel
#                 side, 198.18.0.1 (tests/lib.sh; root; under flock
#                 /tmp/skiff-nettest.lock): the upstream connections are
#                 skiff's own TCP, each worker's steered back to it
#   skiff:packet  the same on packet: on a veth pair (likewise)
# Checks:
#   proxy.ab        ab -k -n 20000 -c 64, then ab -n 4000 -c 16, through a
#                   2-worker proxy to nginx: 0 failed, 0 non-2xx; nginx's
#                   access log has exactly the requests the proxy says it
#                   forwarded (the sum of proxy.upstream.*.requests), which
#                   is every request ab made; no upstream connect failure,
#                   timeout, bad answer or death (proxy.up_* all 0)
#   proxy.spread    each worker accepted at least a quarter of the client
#                   connections and forwarded requests
#   proxy.cache     --cache 64M (32M a worker), ab -k -n 20000 -c 64 and
#                   ab -n 4000 -c 16 on two cacheable keys: the upstream saw
#                   each key at least once and at most once per worker, and
#                   each worker's cache.misses is at most one per key
#   proxy.idle      a 2-worker proxy uses under 1% of a core over 5 s idle
#   proxy.rst       (skiff) no RST sent or received by the proxy's TCP
#   kv              PUT 64 keys on 64 connections, GET each back on fresh
#                   ones (whichever worker: one store), ab -k -n 20000 -c 64:
#                   0 failed, each worker at least a quarter of the
#                   connections; SIGTERM: exit 0, summed and per-worker
#                   counters
# Prints PASS/FAIL per check; ends with "proxy_workers: N passed, N failed".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=proxy_workers

usage() { echo "usage: $0 build/skiff [linux] [skiff:tap] [skiff:packet]" >&2; exit 2; }
BIN=${1:-}
[ -n "$BIN" ] || usage
shift
skt_check_bin "$BIN" || exit 2
BIN=$(readlink -f "$BIN")
KV=${KV_BIN:-$(dirname "$BIN")/examples/kv}
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(linux skiff:tap skiff:packet)
for t in "${TARGETS[@]}"; do
	case $t in linux | skiff:tap | skiff:packet) ;; *) echo "$0: unknown target '$t'" >&2; usage ;; esac
done
if ! skt_need setup python3 curl ab nginx; then
	summary
	exit 1
fi
if [ ! -x "$KV" ]; then
	fail setup "no $KV (make examples)"
	summary
	exit 1
fi

WORK=$(mktemp -d /tmp/skiff-pxw.XXXXXX)
on_exit() {
	skt_cleanup
	if [ "$SKT_FAILED" -eq 0 ]; then rm -rf "$WORK"; else echo "proxy_workers: logs kept in $WORK"; fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Clients run in IN_NS, servers in SRV_NS (both empty on linux).
IN_NS=()
SRV_NS=()
C() { timeout "${T:-120}" "${IN_NS[@]}" "$@"; }

# launch LOG CMD...: start CMD (its output to LOG), wait for "listening".
launch() {
	local log=$1 i
	shift
	"${SRV_NS[@]}" "$@" >"$log" 2>&1 &
	PID=$!
	SKT_PIDS+=("$PID")
	for ((i = 0; i < 200; i++)); do
		grep -q ": listening on .* workers=2" "$log" 2>/dev/null && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "$TGT.start" "no 'listening ... workers=2': $(tail -n 3 "$log" | tr '\n' ' ')"
	return 1
}

# stop LOG NAME: SIGTERM, exit 0, sums and worker1's lines printed.
stop() {
	local log=$1 name=$2
	kill -TERM "$PID" 2>/dev/null
	if ! skt_wait_exit "$PID" 10; then
		kill -KILL "$PID" 2>/dev/null
		fail "$TGT.$name.exit" "still running 10 s after SIGTERM"
		return 1
	fi
	if [ "$SKT_RC" -ne 0 ]; then
		fail "$TGT.$name.exit" "exit status $SKT_RC: $(tail -n 3 "$log" | tr '\n' ' ')"
		return 1
	fi
	if ! grep -q '^http.requests ' "$log" || ! grep -q '^worker1.http.requests ' "$log"; then
		fail "$TGT.$name.exit" "no summed and per-worker counters with --stats"
		return 1
	fi
	pass "$TGT.$name.exit"
}

st() { awk -v k="$2" '$1 == k {s += $2; n++} END {print n ? s : "none"}' "$1"; }
# Sum of every counter whose name matches the regex.
st_re() { awk -v k="$2" '$1 ~ k {s += $2} END {print s + 0}' "$1"; }

# ab_ok OUT ARGS...: ab with 0 failed and no non-2xx.
ab_ok() {
	local out=$1
	shift
	C ab -q "$@" >"$out" 2>&1 && grep -q "^Failed requests: *0$" "$out" && ! grep -q "^Non-2xx" "$out"
}

# spread LOG NAME: each worker took >= 1/4 of the connections and served.
spread() {
	local log=$1 name=$2 c0 c1 r0 r1 tot
	c0=$(st "$log" worker0.http.conns_accepted) c1=$(st "$log" worker1.http.conns_accepted)
	r0=$(st "$log" worker0.http.requests) r1=$(st "$log" worker1.http.requests)
	tot=$((c0 + c1))
	if [ "$tot" -gt 0 ] && [ $((c0 * 4)) -ge "$tot" ] && [ $((c1 * 4)) -ge "$tot" ] &&
		[ "$r0" -gt 0 ] && [ "$r1" -gt 0 ]; then
		pass "$TGT.$name.spread" "connections $c0 + $c1, requests $r0 + $r1"
	else
		fail "$TGT.$name.spread" "connections $c0 + $c1, requests $r0 + $r1"
	fi
}

proxy_checks() {
	local ngx=$WORK/nginx-${TGT/:/-} port_n px log n_up n_fwd n_req bad i
	mkdir -p "$ngx" "$WORK/www"
	echo hello >"$WORK/www/index.html"
	port_n=$(skt_free_port)
	python3 "$HERE/http_diff.py" nginx-conf "$ngx" "$WORK/www" "$port_n"
	sed -i "s|access_log off;|access_log $ngx/access.log;|; s|worker_connections 256|worker_connections 1024|" \
		"$ngx/nginx.conf"
	sed -i "s/listen 127.0.0.1:/listen $UP_HOST:/" "$ngx/nginx.conf"
	"${IN_NS[@]}" nginx -p "$ngx" -c "$ngx/nginx.conf" -e "$ngx/error.log" >"$ngx/out.log" 2>&1 &
	SKT_PIDS+=($!)
	px=${PX_PORT:-$(skt_free_port)}
	log=$WORK/${TGT/:/-}-proxy-ab.log
	skt_wait_for 5 skt_listens "$port_n" "${IN_NS[@]}"
	launch "$log" "$BIN" proxy "${PX_STACK[@]}" --port "$px" --workers 2 --stats \
		--upstream "$UP_HOST:$port_n" || return 1
	for ((i = 0; i < 50; i++)); do
		C curl -s -o /dev/null --max-time 1 "http://$PX_HOST:$px/index.html" && break
		sleep 0.1
	done
	if ab_ok "$WORK/ab-k.out" -k -n 20000 -c 64 "http://$PX_HOST:$px/index.html" &&
		ab_ok "$WORK/ab.out" -n 4000 -c 16 "http://$PX_HOST:$px/index.html"; then
		pass "$TGT.proxy.ab" "ab -k -c 64: $(grep -E '^Requests per second' "$WORK/ab-k.out" | tr -s ' '); ab -c 16: $(grep -E '^Requests per second' "$WORK/ab.out" | tr -s ' ')"
	else
		fail "$TGT.proxy.ab" "$(grep -hE '^(Failed|Non-2xx|Complete)' "$WORK/ab-k.out" "$WORK/ab.out" | tr '\n' ' ')"
	fi
	stop "$log" proxy
	n_up=$(wc -l <"$ngx/access.log") # nginx's only client is this proxy
	n_fwd=$(st_re "$log" '^proxy\.upstream\..*\.requests$')
	n_req=$(st "$log" proxy.requests)
	bad=$(st_re "$log" '^proxy\.(up_connect_fail|up_timeout_connect|up_timeout_first_byte|up_bad_response|up_died|resp_50[234])$')
	# The probes before ab went through too: nginx saw exactly what the
	# proxy forwarded, and that is every request the proxy took.
	if [ "$n_up" -eq "$n_fwd" ] && [ "$n_fwd" -eq "$n_req" ] && [ "$n_req" -ge 24000 ] &&
		[ "$bad" -eq 0 ]; then
		pass "$TGT.proxy.upstream" "nginx saw $n_up = forwarded $n_fwd = proxy.requests $n_req; no upstream error"
	else
		fail "$TGT.proxy.upstream" "nginx saw $n_up, forwarded $n_fwd, proxy.requests $n_req, upstream errors $bad"
	fi
	spread "$log" proxy

	# The cache, per worker.
	local port_u upid k1 k2 s1 s2 m0 m1
	port_u=$(skt_free_port)
	"${IN_NS[@]}" python3 "$HERE/proxy_upstream.py" "$port_u" U --addr "$UP_HOST" >"$WORK/up.log" 2>&1 &
	upid=$!
	SKT_PIDS+=("$upid")
	# Up before the proxy: a probe that reached a proxy whose upstream was
	# not listening yet would be a miss the upstream never saw (a loaded
	# machine has taken over 5 s to start python).
	if ! skt_wait_for 30 grep -q "^upstream U on" "$WORK/up.log" ||
		! C curl -sf -o /dev/null --max-time 5 "http://$UP_HOST:$port_u/_stats"; then
		fail "$TGT.proxy.cache" "upstream did not start: $(tail -n 3 "$WORK/up.log" | tr '\n' ' ')"
		return 1
	fi
	k1="/cache/w1?max-age=600" k2="/cache/w2?max-age=600"
	px=${PX_PORT:-$(skt_free_port)}
	log=$WORK/${TGT/:/-}-proxy-cache.log
	launch "$log" "$BIN" proxy "${PX_STACK[@]}" --port "$px" --workers 2 --stats \
		--cache 64M --upstream "$UP_HOST:$port_u" || return 1
	# Up: probed with a request for key 1 (one of its misses).
	for ((i = 0; i < 50; i++)); do
		C curl -s -o /dev/null --max-time 1 "http://$PX_HOST:$px$k1" && break
		sleep 0.1
	done
	if ab_ok "$WORK/abc-k.out" -k -n 20000 -c 64 "http://$PX_HOST:$px$k1" &&
		ab_ok "$WORK/abc.out" -n 4000 -c 16 "http://$PX_HOST:$px$k2"; then
		pass "$TGT.proxy.cache.ab"
	else
		fail "$TGT.proxy.cache.ab" "$(grep -hE '^(Failed|Non-2xx|Complete)' "$WORK/abc-k.out" "$WORK/abc.out" | tr '\n' ' ')"
	fi
	C curl -s "http://$UP_HOST:$port_u/_stats" >"$WORK/up-stats.json"
	stop "$log" cache
	read -r s1 s2 < <(python3 -c '
import json, sys
log = json.load(open(sys.argv[1]))["log"]
print(sum(e["target"] == sys.argv[2] for e in log), sum(e["target"] == sys.argv[3] for e in log))
' "$WORK/up-stats.json" "$k1" "$k2")
	m0=$(st "$log" worker0.cache.misses) m1=$(st "$log" worker1.cache.misses)
	if [ "$s1" -ge 1 ] && [ "$s1" -le 2 ] && [ "$s2" -ge 1 ] && [ "$s2" -le 2 ] &&
		[ "$m0" -le 2 ] && [ "$m1" -le 2 ] && [ $((m0 + m1)) -eq $((s1 + s2)) ]; then
		pass "$TGT.proxy.cache" "upstream saw key1 $s1, key2 $s2 times; misses worker0 $m0, worker1 $m1"
	else
		fail "$TGT.proxy.cache" "upstream saw key1 $s1, key2 $s2 times; misses worker0 $m0, worker1 $m1; upstream errors: $(grep -E '^proxy\.(up_|resp_5)' "$log" | tr '\n' ' ')"
	fi
	spread "$log" cache

	# Idle: two parked workers cost nothing.
	px=${PX_PORT:-$(skt_free_port)}
	log=$WORK/${TGT/:/-}-proxy-idle.log
	launch "$log" "$BIN" proxy "${PX_STACK[@]}" --port "$px" --workers 2 --stats \
		--upstream "$UP_HOST:$port_u" || return 1
	sleep 1
	local t0 t1 hz
	hz=$(getconf CLK_TCK)
	t0=$(awk '{print $14 + $15}' "/proc/$PID/stat")
	sleep 5
	t1=$(awk '{print $14 + $15}' "/proc/$PID/stat")
	# Under 1% of a core over 5 s: fewer than 0.05 s of CPU.
	if [ $(((t1 - t0) * 100 * 100)) -lt $((5 * hz * 100)) ]; then
		pass "$TGT.proxy.idle" "$((t1 - t0)) ticks of $hz/s in 5 s"
	else
		fail "$TGT.proxy.idle" "$((t1 - t0)) ticks of $hz/s in 5 s"
	fi
	stop "$log" idle

	# skiff's stack: no connection reset either way, upstream or client.
	if [ "$TGT" != linux ]; then
		local rst
		rst=$(st_re "$WORK/${TGT/:/-}-proxy-ab.log" '^tcp\.rst_(in|out)$')
		if [ "$rst" -eq 0 ]; then pass "$TGT.proxy.rst" "tcp.rst_in + tcp.rst_out = 0"; else fail "$TGT.proxy.rst" "$rst RSTs in or out"; fi
	fi
}

# kv_checks URL_HOST ARGS...: kv with 2 workers.
kv_checks() {
	local host=$1 port log i bad=0
	shift
	port=${KV_PORT:-$(skt_free_port)}
	log=$WORK/${TGT/:/-}-kv.log
	launch "$log" "$KV" "$@" --port "$port" --workers 2 --stats || return 1
	for ((i = 0; i < 50; i++)); do
		C curl -s -o /dev/null --max-time 1 "http://$host:$port/kv/" && break
		sleep 0.1
	done
	# One store: what one connection stored, any other reads back.
	for ((i = 0; i < 64; i++)); do
		C curl -s -o /dev/null --max-time 5 -X PUT --data "value-$i" "http://$host:$port/kv/key$i" || bad=1
	done
	for ((i = 0; i < 64; i++)); do
		[ "$(C curl -s --max-time 5 "http://$host:$port/kv/key$i")" = "value-$i" ] || bad=$((bad + 1))
	done
	if [ "$bad" -eq 0 ]; then pass "$TGT.kv.store" "64 keys put and read back on 128 connections"; else fail "$TGT.kv.store" "$bad keys wrong"; fi
	if ab_ok "$WORK/kv-ab.out" -k -n 20000 -c 64 "http://$host:$port/kv/key7"; then
		pass "$TGT.kv.ab" "$(grep -E '^Requests per second' "$WORK/kv-ab.out" | tr -s ' ')"
	else
		fail "$TGT.kv.ab" "$(grep -hE '^(Failed|Non-2xx|Complete)' "$WORK/kv-ab.out" | tr '\n' ' ')"
	fi
	stop "$log" kv
	spread "$log" kv
}

for TGT in "${TARGETS[@]}"; do
	t0=$SECONDS
	case $TGT in
	linux)
		IN_NS=() SRV_NS=() PX_PORT=
		PX_STACK=(--stack linux --ip 127.0.0.1) PX_HOST=127.0.0.1 UP_HOST=127.0.0.1
		proxy_checks
		kv_checks 127.0.0.1 --stack linux --ip 127.0.0.1
		;;
	*)
		skt_cleanup_stale
		SKT_TAP_MQ=''
		case $TGT in
		skiff:tap) SKT_TAP_MQ=1 skt_topo_tap pxw sk0 ;;
		skiff:packet) skt_topo_veth off "" ;;
		esac || { fail "$TGT.setup" "topology"; continue; }
		# skiff in SKT_NS_S on its device, the clients (Linux) in SKT_NS_L
		# (on tap both are one namespace: the TAP's kernel side).
		IN_NS=(ip netns exec "$SKT_NS_L")
		SRV_NS=(ip netns exec "$SKT_NS_S")
		ip netns exec "$SKT_NS_L" sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse'
		PX_STACK=(--stack skiff --dev "${TGT#skiff:}:$SKT_IF_S" --ip "$SKT_SKIFF_IP/24")
		PX_HOST=$SKT_SKIFF_IP UP_HOST=$SKT_LINUX_IP PX_PORT=80
		proxy_checks
		KV_PORT=80 kv_checks "$SKT_SKIFF_IP" --stack skiff --dev "${TGT#skiff:}:$SKT_IF_S" \
			--ip "$SKT_SKIFF_IP/24"
		skt_cleanup
		IN_NS=() SRV_NS=()
		;;
	esac
	echo "proxy_workers: $TGT took $((SECONDS - t0)) s"
done
summary
