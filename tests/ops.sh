#!/usr/bin/env bash
# tests/ops.sh BIN [TARGET...] — `skiff serve` in production: the access
# log and the graceful drain, on each TARGET (default both):
#   linux      --stack linux; server and clients in namespaces srv and cli
#              joined by a veth (tests/lib.sh skt_topo_veth), as tests/http.sh
#   skiff:tap  --stack skiff --dev tap:sk0; one namespace (skt_topo_tap)
#
# Access log (--access-log):
#   log.combined  to a file: hostile request lines and User-Agents
#                 (tests/ops_client.py HOSTILE) come out escaped, every line
#                 is one well-formed record, records = responses counted,
#                 written in batches (writes <= records / 50), 0 dropped
#   log.json      to standard output, JSON lines: each parses, the hostile
#                 ones decode back to the bytes sent
#   log.slow_sink to a FIFO whose reader never reads: ab -k still completes
#                 with 0 failed requests (the loop never blocks on the log),
#                 the records that did not fit are counted as dropped, and
#                 the exit is not held up for more than the bounded wait
# Drain (SIGTERM):
#   drain.wrk     wrk -c 32 keep-alive, SIGTERM mid-run: skiff exits 0
#                 within --drain-timeout with "drained"; wrk has no read
#                 errors, no timeouts, no non-2xx; in the client's namespace
#                 no established connection was reset (Tcp EstabResets), and
#                 its connect/write errors are all refused reconnects after
#                 the listener closed (<= Tcp AttemptFails); an idle
#                 keep-alive client is closed cleanly (EOF after its
#                 response)
#   drain.timeout a client that holds half a request head: skiff waits for
#                 it, and exits 0 after --drain-timeout 2 (not before, not
#                 much after)
# Reload (SIGHUP; --root and --tls-cert/--tls-key):
#   reload        tests/ops_client.py reload: keep-alive HTTP and HTTPS
#                 connections opened before the SIGHUP go on being answered
#                 (the HTTPS one on the certificate of its handshake), new
#                 ones get the new body and certificate (SHA-256 of what
#                 the client was shown against the files); a garbage
#                 certificate with the root gone, then a key that does not
#                 match: each reported, the certificate and tree kept
#   reload.wrk    wrk keep-alive on HTTP and wrk with Connection: close on
#                 HTTPS (a handshake per request) through 4 reloads that
#                 swap body and certificate: 0 errors, 0 non-2xx, 4
#                 reloads reported
# Error log (--log-level, --error-log):
#   errlog        --log-level info --error-log FILE: 30 plain-HTTP connections
#                 to the TLS port within a second give at most 10 "handshake
#                 failed" lines, and a "suppressed" line that accounts for
#                 the rest, written by the server's timer (before the exit);
#                 a failed reload is an error line there; at the default
#                 level (warn) the same clients leave no line on stderr;
#                 a bad --log-level is a usage error (exit 2), an
#                 --error-log that cannot be opened exits 1
# SKT_FAMILY=6 (run-all.sh phase ops6): all of it over IPv6 (tests/lib.sh
# skt_family: the clients on 2001:2::1/64 dial [2001:2::2]); the access
# log's and the error log's client address must then be 2001:2::1 (bare, as
# nginx writes $remote_addr) and [2001:2::1]:PORT.  Checks print as
# TARGET.v6/NAME.
# About 40 s per target.  Prints PASS/FAIL per check, ends with
# "ops: N passed, N failed".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=ops
export PYTHONDONTWRITEBYTECODE=1

usage() { echo "usage: $0 path/to/skiff [linux] [skiff:tap]" >&2; exit 2; }
BIN=${1:-}
[ -n "$BIN" ] || usage
shift
skt_targets "linux skiff:tap" "$@"
skt_check_bin "$BIN" || exit 2
BIN=$(readlink -f "$BIN")
if ! skt_need setup curl ab wrk python3 openssl; then
	summary
	exit 1
fi

skt_family "$SKT_FAMILY" || { echo "$0: SKT_FAMILY is 4 or 6, not '$SKT_FAMILY'" >&2; exit 2; }
SRV_IP=$SKT_SRV H=$SKT_HOST
URL=http://$H/
WORK=$(mktemp -d /tmp/skiff-ops.XXXXXX)
OC=$HERE/ops_client.py
# shellcheck disable=SC2034 # set and read by tests/lib.sh skt_serve_*
{
SRV_PID= STOP_MS=
NS_C= NS_S= IF_C=
SERVE=()
}

skt_work_traps "OPS_KEEP_LOGS" "logs"

C() { timeout "${T:-60}" ip netns exec "$NS_C" "$@"; }

# The target's topology and stack arguments (tests/lib.sh
# skt_serve_target); the client reuses TIME_WAIT ports.
setup_target() {
	skt_serve_target "$SKT_SKIFF_IP" || return 1
	ip netns exec "$NS_C" sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse'
}

# start_server NAME ARGS...: stdout and stderr to $SRV_LOG; wait for the
# listening line and a first answer.
start_server() {
	local name=$1
	shift
	skt_serve_start "$name" --port 80 --stats "$@"
}

# stop_server NAME SECS: SIGTERM; 0 if it exited 0 within SECS (SKT_RC,
# STOP_MS: how long it took).
stop_server() { skt_serve_exit "$1.exit" TERM "$2"; }

# The client as the error log writes it (ADDR:PORT, [ADDR]:PORT over v6), a regex.
PEER_RE=${SKT_CLI//./\\.}
[ "$SKT_FAMILY" = 6 ] && PEER_RE="\\[$SKT_CLI\\]"

stat_of() { awk -v k="$1" '$1 == k {print $2}' "$SRV_LOG"; }

check_ab() { # check_ab NAME ARGS...: 0 failed, all complete
	local name=$1 out=$WORK/$1.ab n
	shift
	T=120 C ab -q -r "$@" "$URL" >"$out" 2>&1
	n=$(awk '/^Failed requests:/ {print $3}' "$out")
	if [ "${n:-x}" != 0 ] || ! grep -q '^Complete requests:' "$out"; then
		fail "$name" "ab: $(grep -E '^(Complete|Failed) requests:' "$out" | tr '\n' ' ') $(tail -n 1 "$out")"
		return 1
	fi
	AB_RPS=$(awk '/^Requests per second:/ {print $4}' "$out")
	return 0
}

# ---- the access log ----

check_log_combined() {
	local log=$WORK/${TGT/:/-}-access.log out rec writes
	rm -f "$log"
	start_server log --access-log "$log" || return
	C python3 "$OC" hostile $SRV_IP 80 >"$WORK/hostile.out" 2>&1 ||
		fail log.combined.hostile "$(tr '\n' ' ' <"$WORK/hostile.out")"
	C curl -s -o /dev/null -A 'curl "with" \quotes' -e 'http://ref/' "$URL"
	check_ab log.combined.ab -k -n 20000 -c 64
	stop_server log 5 || return
	if out=$(python3 "$OC" check combined "$log" "$SRV_LOG" "$SKT_CLI" 2>&1); then
		pass "log.combined ($out)"
	else
		fail log.combined "$out"
	fi
	rec=$(stat_of access_log.records) writes=$(stat_of access_log.writes)
	if [ "${rec:-0}" -gt 20000 ] && [ "$(stat_of access_log.dropped)" = 0 ] &&
		[ "${writes:-0}" -ge 1 ] && [ $((writes * 50)) -le "$rec" ]; then
		pass "log.batched ($rec records in $writes writes, 0 dropped)"
	else
		fail log.batched "records=${rec:-?} writes=${writes:-?} dropped=$(stat_of access_log.dropped)"
	fi
}

check_log_json() {
	local out
	start_server json --access-log - --access-log-format json || return
	C python3 "$OC" hostile $SRV_IP 80 >"$WORK/hostile.out" 2>&1 ||
		fail log.json.hostile "$(tr '\n' ' ' <"$WORK/hostile.out")"
	check_ab log.json.ab -k -n 2000 -c 16
	stop_server json 5 || return
	if out=$(python3 "$OC" check json "$SRV_LOG" "$SRV_LOG" "$SKT_CLI" 2>&1); then
		pass "log.json ($out)"
	else
		fail log.json "$out"
	fi
}

check_log_slow_sink() {
	local fifo=$WORK/fifo rd dropped
	rm -f "$fifo"
	mkfifo "$fifo"
	# A reader that opens the FIFO and never reads: 64 KiB of pipe, then full.
	python3 -c 'import sys, time; f = open(sys.argv[1], "rb"); time.sleep(60)' "$fifo" &
	rd=$!
	if start_server slow_sink --access-log "$fifo"; then
		if check_ab log.slow_sink.ab -k -n 30000 -c 64; then
			if stop_server slow_sink 6; then
				dropped=$(stat_of access_log.dropped)
				if [ "${dropped:-0}" -gt 0 ] && [ "$STOP_MS" -lt 4000 ]; then
					pass "log.slow_sink (ab -k 0 failed, $AB_RPS req/s; $dropped records dropped, $(stat_of access_log.records) formatted; exit in $STOP_MS ms)"
				else
					fail log.slow_sink "dropped=${dropped:-?} exit in $STOP_MS ms"
				fi
			fi
		else
			stop_server slow_sink 6
		fi
	fi
	kill "$rd" 2>/dev/null
	wait "$rd" 2>/dev/null
}

# ---- the drain ----

# Tcp counters of the client namespace: "EstabResets AttemptFails".
# conns_80 [unacked]: the client namespace's established TCP connections to
# port 80 (with "unacked": only those whose sent bytes the server has not
# acknowledged).  On skiff:tap the kernel there holds only the clients.
conns_80() {
	ip netns exec "$NS_C" ss -Htn state established '( dport = :80 )' |
		awk -v u="${1:-}" 'u == "" || $2 > 0 { n++ } END { print n + 0 }'
}
# drain_ready N IDLE: the idle client has its response and N connections are up.
drain_ready() { grep -q '^response complete; idle' "$2" 2>/dev/null && [ "$(conns_80)" -ge "$1" ]; }
# half_head_in SLOW: the slow client's half head is out and acknowledged.
half_head_in() { grep -q '^half a head sent' "$1" 2>/dev/null && [ "$(conns_80 unacked)" = 0 ]; }

tcp_mib() {
	ip netns exec "$NS_C" awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) n[$i] = i; h = 1 }
		else print $n["EstabResets"], $n["AttemptFails"] }' /proc/net/snmp
}

check_drain_wrk() {
	local lua=$WORK/close.lua out=$WORK/drain.wrk idle=$WORK/idle.out e m0 m1 idle_pid wrk_pid
	# Each wrk thread stops once each of its 16 connections got its
	# "Connection: close": nothing is left in flight, and wrk does not spin
	# on reconnects that the closed listener refuses.
	cat >"$lua" <<'LUA'
local closes = 0
function response(status, headers, body)
	if headers["Connection"] == "close" then
		closes = closes + 1
		if closes >= 16 then wrk.thread:stop() end
	end
end
LUA
	start_server drain --drain-timeout 10 || return
	C python3 "$OC" idle $SRV_IP 80 20 >"$idle" 2>&1 &
	idle_pid=$!
	# The idle client has its response before wrk starts (a fixed 1.5 s for
	# both lost the race on a loaded machine: Python took longer to start,
	# and its connect came after the listener closed), then SIGTERM mid-run
	# once wrk's 32 connections are up too.
	skt_wait_for 15 grep -q '^response complete; idle' "$idle"
	read -r -a m0 <<<"$(tcp_mib)"
	T=30 C wrk -t 2 -c 32 -d 6 -s "$lua" "$URL" >"$out" 2>&1 &
	wrk_pid=$!
	skt_wait_for 5 drain_ready 33 "$idle"
	stop_server drain 12
	local rc=$? stop_ms=${STOP_MS:-?}
	wait "$wrk_pid"
	wait "$idle_pid"
	local idle_rc=$?
	read -r -a m1 <<<"$(tcp_mib)"
	local resets=$((m1[0] - m0[0])) fails=$((m1[1] - m0[1]))
	e=$(grep 'Socket errors:' "$out" | sed -E 's/.*connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+).*/\1 \2 \3 \4/')
	read -r -a e <<<"${e:-0 0 0 0}"
	local reqs
	reqs=$(awk '/requests in/ {print $1}' "$out")
	[ $rc -eq 0 ] || return
	if ! grep -q '^skiff serve: drained in' "$SRV_LOG"; then
		fail drain.wrk "no 'drained' line: $(grep '^skiff serve:' "$SRV_LOG" | tr '\n' ' ')"
	elif ! grep -q 'Requests/sec' "$out"; then
		fail drain.wrk "wrk did not finish: $(tail -n 3 "$out" | tr '\n' ' ')"
	elif [ "${e[1]}" != 0 ] || [ "${e[3]}" != 0 ] || grep -q 'Non-2xx' "$out"; then
		fail drain.wrk "$(grep -E 'Socket errors|Non-2xx' "$out" | tr '\n' ' ')"
	elif [ "$resets" -ne 0 ]; then
		fail drain.wrk "$resets established connections were reset (Tcp EstabResets)"
	elif [ $((e[0] + e[2])) -gt "$fails" ]; then
		fail drain.wrk "connect ${e[0]} + write ${e[2]} errors > $fails refused connects (Tcp AttemptFails)"
	elif [ "$(stat_of http.write_errors)" != 0 ]; then
		fail drain.wrk "server write errors: $(stat_of http.write_errors)"
	else
		pass "drain.wrk ($reqs requests; exit 0 in $stop_ms ms, $(grep '^skiff serve: drained' "$SRV_LOG" | sed 's/skiff serve: //'); 0 read errors, 0 resets; ${e[0]} connect + ${e[2]} write errors = refused reconnects <= $fails)"
	fi
	if [ $idle_rc -eq 0 ] && [ "$(stat_of http.drain_idle_closed)" -ge 1 ]; then
		pass "drain.idle_closed ($(tail -n 1 "$idle"); drain_idle_closed $(stat_of http.drain_idle_closed))"
	else
		fail drain.idle_closed "$(tr '\n' ' ' <"$idle") drain_idle_closed=$(stat_of http.drain_idle_closed)"
	fi
}

check_drain_timeout() {
	local slow=$WORK/slow.out slow_pid
	start_server drain_timeout --drain-timeout 2 --header-timeout 30 || return
	C python3 "$OC" slow $SRV_IP 80 20 >"$slow" 2>&1 &
	slow_pid=$!
	# SIGTERM only once the half head is out (a fixed sleep lost the race
	# on a loaded machine: "draining 0 connections") and the server's stack
	# has acknowledged it.
	skt_wait_for 10 half_head_in "$slow"
	stop_server drain_timeout 6
	local rc=$? ms=${STOP_MS:-0}
	wait "$slow_pid"
	[ $rc -eq 0 ] || return
	if grep -q '^skiff serve: drain-timeout after' "$SRV_LOG" && [ "$ms" -ge 1900 ] && [ "$ms" -le 3500 ]; then
		pass "drain.timeout (exit 0 after $ms ms with --drain-timeout 2; slow client: $(tail -n 1 "$slow"))"
	else
		fail drain.timeout "exit after $ms ms; $(grep '^skiff serve:' "$SRV_LOG" | tr '\n' ' ')"
	fi
}

# ---- reload ----

# mkcert NAME: an ECDSA P-256 key and a self-signed certificate in $WORK.
mkcert() {
	openssl req -x509 -nodes -days 2 -subj "/CN=skiff-ops-$1" \
		-newkey ec -pkeyopt ec_paramgen_curve:P-256 \
		-keyout "$WORK/$1.key" -out "$WORK/$1.crt" >"$WORK/$1.openssl.log" 2>&1
}

reload_setup() {
	rm -rf "$WORK/site" "$WORK/site.gone"
	mkdir -p "$WORK/site"
	echo old >"$WORK/site/index.html"
	[ -s "$WORK/a.crt" ] || { mkcert a && mkcert b; } || return 1
	echo 'not a certificate' >"$WORK/bad.crt"
	cp "$WORK/a.crt" "$WORK/live.crt"
	cp "$WORK/a.key" "$WORK/live.key"
}

check_reload() {
	local out=$WORK/reload.out
	if ! reload_setup; then
		fail reload "openssl could not make the certificates: $(tail -n 2 "$WORK"/*.openssl.log | tr '\n' ' ')"
		return
	fi
	start_server reload --root "$WORK/site" --tls-cert "$WORK/live.crt" \
		--tls-key "$WORK/live.key" --tls-port 443 || return
	C python3 "$OC" reload $SRV_IP "$SRV_PID" "$WORK" "$SRV_LOG" >"$out" 2>&1
	local rc=$?
	stop_server reload 5 || return
	local ok=1 want
	# One reload, one outcome: the whole of what the flags name is read
	# again, or none of it (the root gone: refused before the
	# certificate is read; then a key that does not match).
	for want in 'root reloaded: files=1 ' 'certificate reloaded: ' 'the flags loaded' \
		"--root $WORK/site: No such file or directory (the old configuration stays)" \
		'tls: private key .*key values mismatch.*(the old configuration stays)'; do
		grep -q -- "SIGHUP: .*$want" "$SRV_LOG" || { ok=0; fail reload.log "no 'SIGHUP: $want' line"; }
	done
	if [ $rc -ne 0 ]; then
		fail reload "$(tr '\n' ' ' <"$out")"
	elif [ $ok = 1 ] && [ "$(stat_of sites.reloads)" = 1 ] && [ "$(stat_of sites.reload_failures)" = 2 ]; then
		pass "reload ($(tr '\n' ';' <"$out"))"
	else
		fail reload "sites.reloads=$(stat_of sites.reloads) sites.reload_failures=$(stat_of sites.reload_failures)"
	fi
}

check_reload_wrk() {
	local w1=$WORK/reload.wrk1 w2=$WORK/reload.wrk2 p1 p2 i f bad=
	reload_setup || return
	start_server reload_wrk --root "$WORK/site" --tls-cert "$WORK/live.crt" \
		--tls-key "$WORK/live.key" --tls-port 443 || return
	T=30 C wrk -t 1 -c 16 -d 6 "$URL" >"$w1" 2>&1 &
	p1=$!
	T=30 C wrk -t 1 -c 4 -d 6 -H 'Connection: close' "https://$H/" >"$w2" 2>&1 &
	p2=$!
	sleep 1
	for i in 1 2 3 4; do
		f=$([ $((i % 2)) = 1 ] && echo b || echo a)
		cp "$WORK/$f.crt" "$WORK/live.crt.tmp" && mv "$WORK/live.crt.tmp" "$WORK/live.crt"
		cp "$WORK/$f.key" "$WORK/live.key.tmp" && mv "$WORK/live.key.tmp" "$WORK/live.key"
		echo "$f" >"$WORK/site/index.tmp" && mv "$WORK/site/index.tmp" "$WORK/site/index.html"
		kill -HUP "$SRV_PID"
		sleep 1.1
	done
	wait "$p1"
	wait "$p2"
	stop_server reload_wrk 5 || return
	for f in "$w1" "$w2"; do
		grep -q 'Requests/sec' "$f" || bad="$bad wrk did not finish: $(tail -n 2 "$f" | tr '\n' ' ');"
		grep -qE 'Socket errors|Non-2xx' "$f" && bad="$bad $(grep -E 'Socket errors|Non-2xx' "$f" | tr '\n' ' ');"
	done
	local n
	n=$(grep -c 'SIGHUP: certificate reloaded' "$SRV_LOG")
	[ "$n" = 4 ] || bad="$bad $n certificate reloads reported, not 4;"
	n=$(grep -c 'SIGHUP: root reloaded' "$SRV_LOG")
	[ "$n" = 4 ] || bad="$bad $n root reloads reported, not 4;"
	if [ -z "$bad" ]; then
		pass "reload.wrk (http keep-alive $(awk '/requests in/ {print $1}' "$w1"), https one per connection $(awk '/requests in/ {print $1}' "$w2") requests through 4 reloads: 0 errors, 0 non-2xx)"
	else
		fail reload.wrk "$bad"
	fi
}

# errlog_lines LOG: "N SUP": the handshake-failed lines and the messages
# their suppressed lines account for.
errlog_lines() {
	local n sup
	n=$(grep -cE '^[0-9-]{10}T[0-9:]{8}Z skiff serve: info: tls: handshake failed \(not TLS, or a hello refused\): '"$PEER_RE"':[0-9]*$' "$1")
	sup=$(sed -nE 's/^[0-9-]{10}T[0-9:]{8}Z skiff serve: info: tls.handshake: suppressed ([0-9]+) messages? \(more than 10 in 1000 ms\)$/\1/p' "$1" | awk '{s += $1} END {print s + 0}')
	echo "$n $sup"
}
# errlog_done LOG: the failed reload's line is there and the 30 refused
# handshakes are all accounted for.
errlog_done() {
	local ns
	read -r -a ns <<<"$(errlog_lines "$1")"
	grep -q 'SIGHUP: .*(the old configuration stays)' "$1" 2>/dev/null && [ $((ns[0] + ns[1])) -ge 30 ]
}

check_errlog() {
	local elog=$WORK/${TGT/:/-}-error.log out=$WORK/nottls.out n sup
	reload_setup || return
	rm -f "$elog"
	start_server errlog --tls-cert "$WORK/live.crt" --tls-key "$WORK/live.key" --tls-port 443 \
		--log-level info --error-log "$elog" || return
	C python3 "$OC" nottls $SRV_IP 443 30 >"$out" 2>&1 || fail errlog.client "$(tr '\n' ' ' <"$out")"
	cp "$WORK/bad.crt" "$WORK/live.crt"
	kill -HUP "$SRV_PID"
	# The reload, and the report of the window that ended (the server's
	# timer, within a second): until both are in the log, at most 5 s.
	skt_wait_for 5 errlog_done "$elog"
	cp "$elog" "$elog.before-exit"
	stop_server errlog 5 || return
	read -r n sup <<<"$(errlog_lines "$elog.before-exit")"
	if [ "$n" -ge 1 ] && [ "$n" -le 20 ] && [ $((n + sup)) = 30 ] && [ "$sup" -ge 1 ] &&
		grep -qE '^[0-9-]{10}T[0-9:]{8}Z skiff serve: error: SIGHUP: tls: certificate .*\(the old configuration stays\)$' "$elog.before-exit" &&
		! grep -q 'handshake failed\|configuration stays' "$SRV_LOG" &&
		[ "$(stat_of log.suppressed)" = "$sup" ]; then
		pass "errlog ($n handshake lines + $sup suppressed = 30, reported before the exit; the failed reload an error line; none on stdout/stderr)"
	else
		fail errlog "lines=$n suppressed=$sup log.suppressed=$(stat_of log.suppressed): $(head -n 14 "$elog.before-exit" | tr '\n' '|')"
	fi
	cp "$WORK/a.crt" "$WORK/live.crt"
	start_server errlog_default --tls-cert "$WORK/live.crt" --tls-key "$WORK/live.key" --tls-port 443 || return
	C python3 "$OC" nottls $SRV_IP 443 5 >"$out" 2>&1
	stop_server errlog_default 5 || return
	if grep -q 'handshake failed' "$SRV_LOG"; then
		fail errlog.default "info lines at the default level: $(grep -m 2 'handshake failed' "$SRV_LOG" | tr '\n' ' ')"
	elif [ "$(stat_of tls.handshake_failed)" != 5 ]; then
		fail errlog.default "tls.handshake_failed=$(stat_of tls.handshake_failed), not 5"
	else
		pass "errlog.default (warn: 5 refused handshakes counted, no line)"
	fi
	local rc
	out=$("$BIN" serve --stack linux --log-level loud 2>&1)
	rc=$?
	if [ $rc = 2 ] && grep -q "log-level: 'loud' is not one of error, warn, info or debug" <<<"$out"; then
		out=$("$BIN" serve --stack linux --port 1 --error-log /nonexistent/dir/error.log 2>&1)
		rc=$?
		if [ $rc = 1 ] && grep -q 'error-log: cannot open /nonexistent/dir/error.log' <<<"$out"; then
			pass "errlog.cli (a bad level: exit 2; an unopenable file: exit 1)"
		else
			fail errlog.cli "error-log: exit $rc: $out"
		fi
	else
		fail errlog.cli "log-level: exit $rc: $out"
	fi
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
	local c
	# OPS_ONLY="reload reload_wrk": just those checks (while working on one).
	for c in ${OPS_ONLY:-log_combined log_json log_slow_sink drain_wrk drain_timeout reload reload_wrk errlog}; do
		"check_$c"
	done
	skt_cleanup
	echo "--- $TGT: $((SECONDS - t0)) s"
}

for t in "${TARGETS[@]}"; do
	run_target "$t"
done
SKT_SCOPE=
summary
