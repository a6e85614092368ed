#!/usr/bin/env bash
# tests/proxy.sh SKIFF [TARGET...] — `skiff proxy` (http/proxy.h,
# docs/proxy.md) in front of a Python upstream that records what reaches
# it (tests/proxy_upstream.py) and in front of nginx, on each TARGET
# (default both):
#   linux      --stack linux; proxy, upstreams and clients on 127.0.0.1,
#              ports picked free (no namespace)
#   skiff:tap  --stack skiff --dev tap:sk0 as 198.18.0.2 in a namespace
#              (tests/lib.sh skt_topo_tap; needs root, run it under flock
#              /tmp/skiff-nettest.lock); the upstreams listen on the TAP's
#              kernel side, 198.18.0.1, so the upstream connections are
#              skiff's own TCP on the same device
# Checks (tests/proxy_check.py does the HTTP):
#   forward     hop-by-hop fields (and those Connection names) never reach
#               the upstream or the client; X-Forwarded-For appended,
#               X-Forwarded-Proto, Via both ways, Host kept; HEAD, 304, a 100
#   pool        50 requests on 50 client connections: 1..2 upstream connections
#   big         PROXY_MIB (default 32) MiB up by Content-Length and chunked,
#               down by length, chunked and close, sha256 checked both ends
#   slowclient  a client that reads nothing of a 256 MiB answer: the proxy's
#               RSS grows < 64 MiB and another client is answered at once
#   concurrent  20 requests beside one whose upstream stalls
#   stall       --first-byte-timeout 10: 504 in ~10 s
#   die         an upstream that dies mid-body: the client's body is cut
#   ambiguous   Content-Length with Transfer-Encoding, two lengths: 502
#   down        no upstream listening: 502 with its reason
#   retry       a failing upstream (closes before a byte) and a good one:
#               every GET 200 (retried), the failing one marked down after
#               --fail-max 2; a POST meeting it gets 502 (never retried)
#   recover     an upstream down (refused), then started: tried again after
#               --fail-timeout 1
#   corpus      tests/http_bad_requests.txt through the proxy, each with a
#               request behind it: the corpus's status and a close, and the
#               upstream sees NO request; pipelined chunked / length bodies
#               give exactly the requests answered
#   getbody     a body on GET, HEAD, DELETE, OPTIONS, TRACE (by length and
#               chunked, and for a key the cache holds) holding a whole second
#               request, before an upstream that ignores such bodies
#               (proxy_upstream.py --ignore-get-body, as http.server does):
#               400, nothing forwarded, /smuggled never reaches the upstream;
#               Connection: close after every refusal; Content-Length: 0
#               forwarded; a POST with the same bytes forwards them as its
#               body; proxy.body_on_get_refused in --stats
#   ab          ab -k -c 64 -n 5000: 0 failed, 0 non-2xx
#   cache       --cache 64M: a fresh answer served from the cache (X-Cache:
#               HIT, the upstream asked once), max-age=0 + ETag revalidated
#               (REVALIDATED, the upstream sees If-None-Match), no-store never
#               stored, a request's no-cache goes upstream, a POST purges,
#               100 concurrent misses make ONE upstream request; the
#               cache.* counters in --stats
#   purge       PURGE with --cache: from an allowed client (loopback by
#               default on linux; --purge-allow 198.18.0.1/32 on skiff) both
#               Vary variants go (200), a key never stored 404; with a
#               --purge-allow that leaves the client out, 403 and the entry
#               stays; the upstream never sees a PURGE; cache.purges and
#               proxy.purge_denied in --stats
#   upstreams   an upstream by name (localhost, on linux) and one over IPv6
#               (linux: [::1]; skiff: [2001:2::1] on the TAP's kernel side,
#               the proxy with --ip6 2001:2::2/64): answered, Host kept; a
#               name that does not resolve exits 2 (skiff target: inside
#               the namespace, which has no route out)
#   https       --tls-cert/--tls-key: HTTPS in front (python ssl, verified),
#               the upstream sees X-Forwarded-Proto https, and http from the
#               plain port beside it
#   nginx       nginx as the upstream: a 1 MiB file by sha256, ab -k -c 16
#   exit        SIGTERM: exit 0, --stats counters
#   drain       --access-log, wrk -c 16 keep-alive through a SIGTERM: exit 0
#               with "drained in", 0 read errors, 0 timeouts, 0 non-2xx (the
#               refused reconnects, connect/write errors, are counted apart),
#               and one access-log line per answer wrk got
# Prints PASS/FAIL per check; ends with "proxy: N passed, N failed".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=proxy
export PYTHONDONTWRITEBYTECODE=1

usage() { echo "usage: $0 build/skiff [linux] [skiff:tap]" >&2; exit 2; }
BIN=${1:-}
[ -n "$BIN" ] || usage
shift
skt_check_bin "$BIN" || exit 2
BIN=$(readlink -f "$BIN")
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(linux skiff:tap)
for t in "${TARGETS[@]}"; do
	case $t in linux | skiff:tap) ;; *) echo "$0: unknown target '$t'" >&2; usage ;; esac
done
if ! skt_need setup python3 curl ab nginx openssl; then
	summary
	exit 1
fi

WORK=$(mktemp -d /tmp/skiff-proxy.XXXXXX)
PC=$HERE/proxy_check.py
UP=$HERE/proxy_upstream.py
MIB=${PROXY_MIB:-32}
IN_NS=()
on_exit() {
	skt_cleanup
	if [ "$SKT_FAILED" -eq 0 ] && [ -z "${PROXY_KEEP_LOGS:-}" ]; then
		rm -rf "$WORK"
	else
		echo "proxy: logs kept in $WORK"
	fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM


C() { timeout "${T:-180}" "${IN_NS[@]}" "$@"; }

# start_up NAME PORT [ARGS]: a Python upstream on UP_IP:PORT.
start_up() {
	local name=$1 port=$2 i
	shift 2
	"${IN_NS[@]}" python3 "$UP" "$port" "$name" --addr "$UP_IP" "$@" >"$WORK/up-$name.log" 2>&1 &
	SKT_PIDS+=($!)
	eval "UPPID_$name=$!"
	for ((i = 0; i < 50; i++)); do
		grep -q "^upstream $name on" "$WORK/up-$name.log" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "$TGT.setup" "upstream $name did not start: $(tail -n 2 "$WORK/up-$name.log")"
	return 1
}

# start_proxy NAME ARGS...: a proxy on PX_IP:PX_PORT (PX_PORT picked anew).
start_proxy() {
	local name=$1 i
	shift
	if [ "$TGT" = linux ]; then
		PX_PORT=$(skt_free_port)
		STACK=(--stack linux --ip 127.0.0.1 --port "$PX_PORT")
	else
		PX_PORT=80
		STACK=(--stack skiff --dev "tap:$SKT_IF_S" --ip "$SKT_SKIFF_IP/24" --port 80)
	fi
	PX_LOG=$WORK/$TGT-proxy-$name.log
	"${IN_NS[@]}" "$BIN" proxy "${STACK[@]}" --stats "$@" >"$PX_LOG" 2>&1 &
	PX_PID=$!
	SKT_PIDS+=("$PX_PID")
	for ((i = 0; i < 100; i++)); do
		grep -q "^proxy: listening" "$PX_LOG" 2>/dev/null && break
		kill -0 "$PX_PID" 2>/dev/null || break
		sleep 0.05
	done
	for ((i = 0; i < 50; i++)); do
		C curl -s -o /dev/null --max-time 2 "http://$PX_IP:$PX_PORT/probe" && return 0
		sleep 0.1
	done
	fail "$TGT.$name.start" "no answer: $(tail -n 3 "$PX_LOG" | tr '\n' ' ')"
	return 1
}

stop_proxy() {
	kill -TERM "$PX_PID" 2>/dev/null
	if ! skt_wait_exit "$PX_PID" 5; then
		kill -KILL "$PX_PID" 2>/dev/null
		fail "$TGT.exit" "the proxy still ran 5 s after SIGTERM"
		return 1
	fi
	[ "$SKT_RC" -eq 0 ] || fail "$TGT.exit" "exit status $SKT_RC: $(tail -n 3 "$PX_LOG" | tr '\n' ' ')"
}

stat_of() { awk -v k="$1" '$1 == k {print $2}' "$PX_LOG"; }

# check NAME CHECK ARGS...: proxy_check.py against the proxy and upstream A.
check() {
	local name=$1 out
	shift
	out=$WORK/$TGT-$name.out
	if C python3 "$PC" "$1" "$PX_IP" "$PX_PORT" "$UP_IP" "$PORT_A" "${@:2}" >"$out" 2>&1; then
		pass "$TGT.$name" "$(tail -n 1 "$out")"
	else
		fail "$TGT.$name" "$(grep -m 3 '^why' "$out" | tr '\n' ' ') $(tail -n 1 "$out")"
	fi
}

# --access-log and the drain: wrk keep-alive through a SIGTERM.
check_drain() {
	local lua=$WORK/close.lua out=$WORK/$TGT-drain.wrk alog=$WORK/$TGT-access.log e reqs logged
	# Each wrk thread (8 connections) stops once all of them got their
	# "Connection: close": none has a request in flight, and wrk does not
	# spin on reconnects that the closed listener refuses.
	cat >"$lua" <<'LUA'
local closes = 0
function response(status, headers, body)
	if headers["Connection"] == "close" then
		closes = closes + 1
		if closes >= 8 then wrk.thread:stop() end
	end
end
LUA
	start_proxy drain --upstream "$UP_IP:$PORT_A" --access-log "$alog" --drain-timeout 10 || return 1
	T=30 C wrk -t 2 -c 16 -d 8 -s "$lua" "http://$PX_IP:$PX_PORT/drain" >"$out" 2>&1 &
	local wrk_pid=$!
	sleep 2
	kill -TERM "$PX_PID" 2>/dev/null
	skt_wait_exit "$PX_PID" 12 || kill -KILL "$PX_PID" 2>/dev/null
	local rc=$SKT_RC
	wait "$wrk_pid"
	e=$(grep 'Socket errors:' "$out" | sed -E 's/.*connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+).*/\1 \2 \3 \4/')
	read -r -a e <<<"${e:-0 0 0 0}"
	reqs=$(awk '/requests in/ {print $1}' "$out")
	logged=$(grep -c '"GET /drain HTTP/1.1" 200 [0-9]* "-" "-"$' "$alog")
	if [ "$rc" != 0 ] || ! grep -q '^proxy: drained in' "$PX_LOG"; then
		fail "$TGT.drain" "exit $rc: $(grep -E '^proxy: (SIGTERM|drain|SIGINT)' "$PX_LOG" | tr '\n' ' ')"
	elif ! grep -q 'Requests/sec' "$out" || [ "${reqs:-0}" -lt 100 ]; then
		fail "$TGT.drain" "wrk: $(tail -n 3 "$out" | tr '\n' ' ')"
	elif [ "${e[1]}" != 0 ] || [ "${e[3]}" != 0 ] || grep -q 'Non-2xx' "$out"; then
		fail "$TGT.drain" "failed requests: $(grep -E 'Socket errors|Non-2xx' "$out" | tr '\n' ' ')"
	elif [ "$logged" != "$reqs" ]; then
		fail "$TGT.drain.log" "wrk got $reqs answers, the access log has $logged: $(tail -n 2 "$alog" | tr '\n' ' ')"
	else
		pass "$TGT.drain" "$reqs requests through a SIGTERM, $(sed -n 's/^proxy: //p' "$PX_LOG" | grep drained); 0 read errors, 0 timeouts, ${e[0]} connect + ${e[2]} write errors (refused reconnects)"
		pass "$TGT.drain.log" "$logged lines, one per answer: $(grep -m 1 '/drain' "$alog")"
	fi
}

run_target() {
	skt_cleanup_stale
	if [ "$TGT" = linux ]; then
		IN_NS=()
		UP_IP=127.0.0.1 PX_IP=127.0.0.1
		PORT_A=$(skt_free_port) PORT_B=$(skt_free_port) PORT_C=$(skt_free_port) PORT_N=$(skt_free_port)
		PORT_D=$(skt_free_port)
	else
		skt_topo_tap tap sk0 || { fail "$TGT.setup" "topology"; return 1; }
		IN_NS=(ip netns exec "$SKT_NS_S")
		UP_IP=$SKT_LINUX_IP PX_IP=$SKT_SKIFF_IP
		PORT_A=8081 PORT_B=8082 PORT_C=8083 PORT_N=8084 PORT_D=8085
	fi
	start_up A "$PORT_A" || return 1
	start_up B "$PORT_B" --reset-all || return 1
	start_up D "$PORT_D" --ignore-get-body || return 1

	# One proxy for the checks that must not mark A down.  Its first-byte
	# timeout is 10 s: at 5 s, on a loaded 2-core host (ci-fresh beside
	# three builds), the python upstream once took longer than that to
	# answer slowclient's and concurrent's plain requests (504s).
	start_proxy main --upstream "$UP_IP:$PORT_A" --max-body 256M --first-byte-timeout 10 \
		--fail-max 1000 || return 1
	check forward forward
	check pool pool
	check big big "$MIB"
	check slowclient slowclient "$PX_PID"
	check concurrent concurrent
	check stall expect /stall 504 "Gateway Timeout"
	check die die
	check ambiguous.cl_te expect /ambig 502 "framed"
	check ambiguous.cl_cl expect /ambig2 502 "framed"
	check corpus corpus "$HERE/http_bad_requests.txt"
	local out=$WORK/$TGT-ab.out
	if C ab -k -c 64 -n 5000 "http://$PX_IP:$PX_PORT/hello" >"$out" 2>&1 &&
		grep -q "^Failed requests: *0$" "$out" && ! grep -q "^Non-2xx" "$out"; then
		pass "$TGT.ab" "$(grep -E '^Requests per second' "$out" | tr -s ' ')"
	else
		fail "$TGT.ab" "$(grep -E '^(Failed|Non-2xx|Complete)' "$out" | tr '\n' ' ') $(tail -n 2 "$out" | tr '\n' ' ')"
	fi
	stop_proxy
	if [ "$(stat_of proxy.up_bad_response)" -ge 2 ] 2>/dev/null && [ "$(stat_of proxy.resp_504)" -ge 1 ] 2>/dev/null; then
		pass "$TGT.exit" "forwarded=$(stat_of proxy.forwarded) reused=$(stat_of proxy.up_reused) connects=$(stat_of proxy.up_connects) 502=$(stat_of proxy.resp_502) 504=$(stat_of proxy.resp_504)"
	else
		fail "$TGT.exit" "counters: $(grep '^proxy\.' "$PX_LOG" | tr '\n' ' ' | cut -c1-300)"
	fi

	# A body on GET & co. before an upstream that reads it as a request
	# (D): refused, nothing smuggled through (with the cache on: a stored
	# answer is not served to such a request either).
	start_proxy getbody --upstream "$UP_IP:$PORT_D" --cache 16M || return 1
	out=$WORK/$TGT-getbody.out
	if C python3 "$PC" getbody "$PX_IP" "$PX_PORT" "$UP_IP" "$PORT_D" >"$out" 2>&1; then
		pass "$TGT.getbody" "$(tail -n 1 "$out")"
	else
		fail "$TGT.getbody" "$(grep -m 3 '^why' "$out" | tr '\n' ' ') $(tail -n 1 "$out")"
	fi
	stop_proxy
	local refused
	refused=$(sed -n 's/^getbody: refused \([0-9]*\) .*/\1/p' "$out")
	if [ -n "$refused" ] && [ "$(stat_of proxy.body_on_get_refused)" = "$refused" ]; then
		pass "$TGT.getbody.stats" "proxy.body_on_get_refused=$refused"
	else
		fail "$TGT.getbody.stats" "proxy.body_on_get_refused=$(stat_of proxy.body_on_get_refused), the check refused ${refused:-?}"
	fi

	check_drain

	# The cache (--cache): HIT, REVALIDATED, no-store, purge, coalescing.
	start_proxy cache --upstream "$UP_IP:$PORT_A" --cache 64M || return 1
	check cache cache
	stop_proxy
	if [ "$(stat_of cache.coalesced)" -ge 99 ] 2>/dev/null && [ "$(stat_of cache.revalidated)" -ge 2 ] 2>/dev/null; then
		pass "$TGT.cache.stats" "hits=$(stat_of cache.hits) misses=$(stat_of cache.misses) revalidated=$(stat_of cache.revalidated) coalesced=$(stat_of cache.coalesced) stored=$(stat_of cache.stored)"
	else
		fail "$TGT.cache.stats" "$(grep '^cache\.' "$PX_LOG" | tr '\n' ' ')"
	fi

	# PURGE: allowed from this client, then from an address list without it.
	local allow=() deny=198.18.255.0/24,2001:2:0:ff::/64
	[ "$TGT" = linux ] || allow=(--purge-allow "$UP_IP/32")
	start_proxy purge --upstream "$UP_IP:$PORT_A" --cache 16M "${allow[@]}" || return 1
	check purge.allowed purge allowed
	stop_proxy
	local purges
	purges=$(stat_of cache.purges)
	start_proxy purge-deny --upstream "$UP_IP:$PORT_A" --cache 16M --purge-allow "$deny" || return 1
	check purge.denied purge denied
	stop_proxy
	if [ "$purges" = 2 ] && [ "$(stat_of proxy.purge_denied)" = 1 ] && [ "$(stat_of cache.purges)" = 0 ]; then
		pass "$TGT.purge.stats" "cache.purges=$purges (allowed), proxy.purge_denied=1 (denied)"
	else
		fail "$TGT.purge.stats" "cache.purges=$purges then $(stat_of cache.purges), purge_denied=$(stat_of proxy.purge_denied)"
	fi

	# Upstreams by name and over IPv6 (the Host the upstream sees stays the
	# client's).
	local up6 port6 six=() saved=$UP_IP got6 host6 i
	if [ "$TGT" = linux ]; then
		up6=::1 port6=$(skt_free_port)
	else
		skt_v6_on "$SKT_NS_L" "$SKT_IF_L" "$SKT_LINUX_IP6/64" || fail "$TGT.upstreams" "IPv6 on $SKT_IF_L"
		up6=$SKT_LINUX_IP6 port6=8086 six=(--ip6 "$SKT_SKIFF_IP6/64")
	fi
	UP_IP=$up6
	start_up V6 "$port6"
	UP_IP=$saved
	start_proxy v6 --upstream "[$up6]:$port6" "${six[@]}" || return 1
	# skiff's own address is usable after its DAD (until then a connect
	# has no source: 502)
	for ((i = 0; i < 50; i++)); do
		[ "$TGT" = linux ] || grep -q "ip6 $SKT_SKIFF_IP6 usable" "$PX_LOG" && break
		sleep 0.1
	done
	got6=$(C curl -s --max-time 10 -H "Host: v6.example" "http://$PX_IP:$PX_PORT/over-v6")
	# The upstream's log, through the proxy (inside the namespace IPv6 is
	# off on lo, so a local connection to 2001:2::1 has no way)
	host6=$(C curl -s --max-time 5 "http://$PX_IP:$PX_PORT/_stats" |
		python3 -c 'import json,sys; print([v for k, v in json.load(sys.stdin)["log"][-1]["headers"] if k.lower() == "host"])')
	if [ "$got6" = "V6 /over-v6" ] && [ "$host6" = "['v6.example']" ]; then
		pass "$TGT.upstreams.v6" "[$up6]:$port6 answered, Host kept ($host6)"
	else
		fail "$TGT.upstreams.v6" "answer '$got6', Host at the upstream $host6"
	fi
	stop_proxy
	if [ "$TGT" = linux ]; then
		start_proxy name --upstream "localhost:$PORT_A" || return 1
		local gotn
		gotn=$(C curl -s --max-time 5 "http://$PX_IP:$PX_PORT/by-name")
		stop_proxy
		if [ "$gotn" = "A /by-name" ] && [ "$(stat_of "proxy.upstream.127.0.0.1:$PORT_A.requests")" -ge 1 ] 2>/dev/null; then
			pass "$TGT.upstreams.name" "localhost:$PORT_A resolved to 127.0.0.1 at start"
		else
			fail "$TGT.upstreams.name" "answer '$gotn'; $(grep '^proxy.upstream' "$PX_LOG" | head -n 3 | tr '\n' ' ')"
		fi
	else
		# Inside the namespace (no route out): the resolver fails at once.
		local rc=0 msg
		msg=$(C "$BIN" proxy --stack linux --port 1 --upstream "no-such-upstream.invalid:80" 2>&1) || rc=$?
		if [ "$rc" = 2 ] && [[ $msg == *"cannot resolve 'no-such-upstream.invalid'"* ]]; then
			pass "$TGT.upstreams.unresolved" "exit 2: $(echo "$msg" | head -n 1)"
		else
			fail "$TGT.upstreams.unresolved" "exit $rc: $msg"
		fi
	fi

	# HTTPS in front (--tls-cert): verified by python's ssl, X-Forwarded-Proto
	# https upstream, http for the plain port beside it.  The key is made
	# here, now.
	local tls_port=443
	[ "$TGT" = linux ] && tls_port=$(skt_free_port)
	if openssl req -x509 -nodes -days 2 -subj "/CN=skiff-proxy" -addext "subjectAltName=IP:$PX_IP" \
		-newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$WORK/$TGT-px.key" \
		-out "$WORK/$TGT-px.pem" >"$WORK/$TGT-openssl.log" 2>&1; then
		start_proxy https --upstream "$UP_IP:$PORT_A" --tls-cert "$WORK/$TGT-px.pem" \
			--tls-key "$WORK/$TGT-px.key" --tls-port "$tls_port" || return 1
		check https https "$tls_port" "$WORK/$TGT-px.pem"
		stop_proxy
	else
		fail "$TGT.https" "openssl req: $(tail -n 2 "$WORK/$TGT-openssl.log")"
	fi

	# Nothing listening: 502, its reason in the body.
	start_proxy down --upstream "$UP_IP:$PORT_C" --connect-timeout 2 || return 1
	check down expect /x 502 "could be reached"
	stop_proxy

	# A failing upstream (B) before a good one (A).
	start_proxy post --upstream "$UP_IP:$PORT_B,$UP_IP:$PORT_A" --fail-max 2 --fail-timeout 60 || return 1
	check post post "$UP_IP" "$PORT_B"
	stop_proxy
	start_proxy retry --upstream "$UP_IP:$PORT_B,$UP_IP:$PORT_A" --fail-max 2 --fail-timeout 60 || return 1
	check retry retry "$UP_IP" "$PORT_B" 20
	stop_proxy

	# Recovery: C refuses, is marked down, comes up, is tried again.
	start_proxy recover --upstream "$UP_IP:$PORT_C,$UP_IP:$PORT_A" --fail-max 1 --fail-timeout 1 || return 1
	C curl -s -o /dev/null --max-time 5 "http://$PX_IP:$PX_PORT/first"
	start_up C "$PORT_C" || return 1
	sleep 1.5
	local i
	for i in 1 2 3 4; do C curl -s -o /dev/null --max-time 5 "http://$PX_IP:$PX_PORT/again$i"; done
	local seen
	seen=$(C curl -s --max-time 5 "http://$UP_IP:$PORT_C/_stats" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["log"]))')
	if [ "${seen:-0}" -ge 1 ]; then
		pass "$TGT.recover" "the recovered upstream took $seen of 4 requests after its fail-timeout"
	else
		fail "$TGT.recover" "the recovered upstream saw ${seen:-nothing}"
	fi
	stop_proxy

	# nginx as the upstream.
	local ngx=$WORK/nginx-$TGT
	mkdir -p "$ngx" "$WORK/www"
	head -c $((1 << 20)) /dev/urandom >"$WORK/www/file.bin"
	echo hello >"$WORK/www/index.html"
	python3 "$HERE/http_diff.py" nginx-conf "$ngx" "$WORK/www" "$PORT_N"
	sed -i "s/listen 127.0.0.1:/listen $UP_IP:/" "$ngx/nginx.conf"
	"${IN_NS[@]}" nginx -p "$ngx" -c "$ngx/nginx.conf" -e "$ngx/error.log" >"$ngx/out.log" 2>&1 &
	SKT_PIDS+=($!)
	skt_wait_for 5 skt_listens "$PORT_N" "${IN_NS[@]}"
	start_proxy nginx --upstream "$UP_IP:$PORT_N" || return 1
	local want got
	want=$(sha256sum <"$WORK/www/file.bin" | cut -d' ' -f1)
	got=$(C curl -s --max-time 20 "http://$PX_IP:$PX_PORT/file.bin" | sha256sum | cut -d' ' -f1)
	out=$WORK/$TGT-ab-nginx.out
	if [ "$got" = "$want" ] && C ab -k -c 16 -n 2000 "http://$PX_IP:$PX_PORT/index.html" >"$out" 2>&1 &&
		grep -q "^Failed requests: *0$" "$out" && ! grep -q "^Non-2xx" "$out"; then
		pass "$TGT.nginx" "1 MiB sha256 equal; ab -k -c 16: $(grep -E '^Requests per second' "$out" | tr -s ' ')"
	else
		fail "$TGT.nginx" "sha256 $got want $want; $(grep -E '^(Failed|Non-2xx)' "$out" | tr '\n' ' ')"
	fi
	stop_proxy
}

for TGT in "${TARGETS[@]}"; do
	t0=$SECONDS
	run_target
	skt_cleanup
	echo "proxy: $TGT took $((SECONDS - t0)) s"
done
summary
