#!/usr/bin/env bash
# tests/sites.sh SKIFF [TARGET...] — `skiff serve --config FILE` (issue 32,
# docs/config.md): examples/sites.conf as written, on each TARGET (default
# both):
#   linux      --stack linux inside a namespace of its own (its loopback
#              only), so the file's 127.0.0.1:8080/8443 and the API's
#              upstream on 127.0.0.1:9090 are taken as written
#   skiff:tap  --stack skiff --dev tap:sk0 as 198.18.0.2 in a namespace; the
#              file's listeners become *:8080/*:8443 and the API's upstream
#              198.18.0.1:9090 (the TAP's kernel side), nothing else changed
# Checks (tests/sites_check.py does the HTTP):
#   check      skiff check on the example: exit 0
#   example    every route: a.test's files, /old/ -> 301 /new/..., /api/
#              proxied (the client's Host kept, cached: X-Cache MISS then
#              HIT, the upstream asked once; a GET with a body 400), X-Site:
#              a on every a.test answer; b.test over HTTPS with its own
#              certificate (SNI), its HTTP requests 301 to https://; an
#              unknown Host and an HTTP/1.0 request without one: 404
#   reload     SIGHUP under wrk (-c 8, Host a.test): the file now names
#              another folder for a.test and a.test's certificate files hold
#              a new certificate: served from the new folder, the new
#              certificate shown for SNI a.test, wrk: 0 errors and 0 non-2xx;
#              the replaced generation freed while wrk's connections are
#              still open (sites.generations_retired 0, read by skiff stat)
#   broken     a file that does not parse, then SIGHUP: refused with its
#              FILE:LINE:COL in the log, the old configuration still serves
#   header_area, listeners  SIGHUP with a header_area added, then with a
#              listener's port changed: each refused with its reason in
#              the log, the old configuration still serves
#   nginx      (linux) nginx with an equivalent nginx.conf answers every
#              route as skiff does (status, Location, X-Site, the body of a
#              200)
#   exit       SIGTERM: exit 0, sites.* counters in --stats
#   directives a second file using every directive the example does not
#              (workers 2 on linux, limits and timeouts, error_log, default
#              and wildcard sites, header removal, return, metrics,
#              redirect variables, proxy_host upstream, body_on_get allow,
#              two upstreams, cache_control; the proxy's upstream options:
#              x_cache off, purge_allow none, balance least, pool 0, fail_max
#              and fail_timeout over an upstream that resets, the timeouts),
#              listeners *:PORT (linux: over IPv6 too); sites_check.py
#              directives asks each
#   listen.v6  (linux) listen [::1]:8084: answers over ::1, and 127.0.0.1:8084
#              is refused (one address, not both families)
#   access_log the second file's JSON access log: a line per answer; moved
#              away and SIGHUP: written anew at its path
#   app        examples/kv (beside BIN) with --config: `route /kv/ { app; }`
#              runs its routes (PUT, GET, list, 405 with Allow, DELETE) beside
#              files and return routes; header_area: 1.4 KB of route header
#              lines are the engine's 500 on the default 1 KiB area (8083),
#              a 200 with them where a route asks 4k (8085); skiff serve refuses the file (no
#              application linked) and kv refuses --port with --config
#   drain      SIGTERM (--drain-timeout 30): a 24 MB download at 4 MB/s in
#              flight ends whole, an idle keep-alive connection is closed at
#              once, "drained in", exit 0
# Prints PASS/FAIL per check; ends with "sites: N passed, N failed".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=sites
export PYTHONDONTWRITEBYTECODE=1

usage() { echo "usage: $0 build/skiff [linux] [skiff:tap]" >&2; exit 2; }
case ${1:-} in -h | --help) sed -n '2,47p' "$0"; exit 0 ;; esac
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
if ! skt_need setup python3 wrk nginx openssl curl; then
	summary
	exit 1
fi

WORK=$(mktemp -d /tmp/skiff-sites.XXXXXX)
SC=$HERE/sites_check.py
UP=$HERE/proxy_upstream.py
on_exit() {
	skt_cleanup
	if [ "$SKT_FAILED" -eq 0 ] && [ -z "${SITES_KEEP_LOGS:-}" ]; then
		rm -rf "$WORK"
	else
		echo "sites: logs kept in $WORK"
	fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

NS=()
X() { timeout "${T:-60}" "${NS[@]}" "$@"; }

# A copy of examples/ (the file, its folders, certificates made here), so
# the reload checks may change it; for skiff:tap with the addresses of the
# TAP's namespace.
make_tree() {
	local d=$WORK/$TGT
	rm -rf "$d"
	mkdir -p "$d/sites/certs"
	cp -r "$ROOT/examples/sites/a" "$ROOT/examples/sites/b" "$d/sites/"
	for s in a b; do
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
			-subj "/CN=$s.test" -addext "subjectAltName=DNS:$s.test" \
			-keyout "$d/sites/certs/$s.key" -out "$d/sites/certs/$s.crt" 2>/dev/null || return 1
	done
	if [ "$TGT" = linux ]; then
		cp "$ROOT/examples/sites.conf" "$d/sites.conf"
	else
		sed -e 's/listen 127\.0\.0\.1:/listen *:/' -e "s/proxy 127\.0\.0\.1:9090/proxy $SKT_LINUX_IP:9090/" \
			"$ROOT/examples/sites.conf" >"$d/sites.conf"
	fi
	CONF=$d/sites.conf
}

start_up() {
	"${NS[@]}" python3 "$UP" 9090 api --addr "$UP_IP" >"$WORK/$TGT-up.log" 2>&1 &
	SKT_PIDS+=($!)
	skt_wait_for 20 grep -q "^upstream api on" "$WORK/$TGT-up.log"
}

start_skiff() {
	SRV_LOG=$WORK/$TGT-skiff.log
	local stack=(--stack linux)
	[ "$TGT" = linux ] || stack=(--stack skiff --dev "tap:$SKT_IF_S" --ip "$SKT_SKIFF_IP/24")
	"${NS[@]}" "$BIN" serve --config "$CONF" "${stack[@]}" --stats >"$SRV_LOG" 2>&1 &
	SRV_PID=$!
	SKT_PIDS+=("$SRV_PID")
	skt_wait_for 15 X python3 "$SC" served "$ADDR" 8080 a.test / && return 0
	fail "$TGT.setup" "skiff did not serve: $(tail -n 3 "$SRV_LOG")"
	return 1
}

stop_skiff() {
	kill -TERM "$SRV_PID" 2>/dev/null
	if skt_wait_exit "$SRV_PID" 10 && [ "$SKT_RC" = 0 ] && grep -q '^sites.requests [1-9]' "$SRV_LOG"; then
		pass "$TGT.exit"
	else
		fail "$TGT.exit" "rc=${SKT_RC:-running} $(grep '^sites.requests' "$SRV_LOG")"
		kill -KILL "$SRV_PID" 2>/dev/null
	fi
}

check_reload() {
	local d=$WORK/$TGT old_cert new_cert
	mkdir -p "$d/sites/a2"
	echo "<p>a2: the folder after the reload</p>" >"$d/sites/a2/index.html"
	"${NS[@]}" wrk -t 1 -c 8 -d 6s -H "Host: a.test" "http://$ADDR:8080/" >"$WORK/$TGT-wrk.txt" 2>&1 &
	local wpid=$!
	# A keep-alive connection that stays open, idle, across the reload
	# (at most 20 s): the old generation must not wait for it.
	"${NS[@]}" timeout 20 python3 -c 'import socket, sys, time
s = socket.create_connection((sys.argv[1], 8080))
s.sendall(b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
s.recv(65536)
time.sleep(20)' "$ADDR" &
	local hpid=$!
	sleep 2
	old_cert=$(X python3 "$SC" cert "$ADDR" 8443 a.test "$d/sites/certs")
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=a.test" -addext "subjectAltName=DNS:a.test" \
		-keyout "$d/sites/certs/a.key.new" -out "$d/sites/certs/a.crt.new" 2>/dev/null
	mv "$d/sites/certs/a.key.new" "$d/sites/certs/a.key"
	mv "$d/sites/certs/a.crt.new" "$d/sites/certs/a.crt"
	sed -i 's#files sites/a;#files sites/a2;#' "$CONF"
	kill -HUP "$SRV_PID"
	# The replaced generation goes while keep-alive connections stay open
	# (wrk's, and the idle one above): once no request routed before the
	# swap is left (http_app_live_old), not once every connection has
	# closed.  Read from the control socket, at most 8 s.
	local retired=""
	for _ in $(seq 16); do
		sleep 0.5
		grep -q 'SIGHUP' "$SRV_LOG" || continue # not swapped yet: nothing retired
		retired=$("$BIN" stat "$SRV_PID" 2>/dev/null | awk '$1 == "sites.generations_retired" {print $2}')
		[ "$retired" = 0 ] && break
	done
	local held=0
	kill -0 "$hpid" 2>/dev/null && held=1
	if [ "$retired" = 0 ] && [ "$held" = 1 ]; then
		pass "$TGT.reload.retired" "the old generation freed with a keep-alive connection open"
	else
		fail "$TGT.reload.retired" "sites.generations_retired '$retired' (the idle connection open: $held)"
	fi
	kill "$hpid" 2>/dev/null
	wait "$hpid" 2>/dev/null
	wait "$wpid"
	if skt_wait_for 5 X python3 "$SC" served "$ADDR" 8080 a.test / --expect "a2: the folder"; then
		pass "$TGT.reload.root"
	else
		fail "$TGT.reload.root" "still the old folder: $(grep SIGHUP "$SRV_LOG")"
	fi
	new_cert=$(X python3 "$SC" cert "$ADDR" 8443 a.test "$d/sites/certs")
	if [ "$new_cert" != "$old_cert" ] && [ "$new_cert" = "$(python3 "$SC" certfile "$d/sites/certs/a.crt")" ]; then
		pass "$TGT.reload.cert"
	else
		fail "$TGT.reload.cert" "the certificate did not change ($old_cert -> $new_cert)"
	fi
	local reqs
	reqs=$(awk '/requests in/ {print $1}' "$WORK/$TGT-wrk.txt")
	if [ -n "$reqs" ] && [ "$reqs" -gt 0 ] && ! grep -qE 'Socket errors|Non-2xx' "$WORK/$TGT-wrk.txt"; then
		pass "$TGT.reload.wrk" "$reqs requests, 0 errors"
	else
		fail "$TGT.reload.wrk" "$(tr '\n' ' ' <"$WORK/$TGT-wrk.txt")"
	fi
}

check_broken() {
	cp "$CONF" "$CONF.good"
	printf 'site a.test {\n    listen 127.0.0.1:8080;\n    route / { fils x; }\n}\n' >"$CONF"
	kill -HUP "$SRV_PID"
	if skt_wait_for 5 grep -q "SIGHUP: .*sites.conf:3:15: .*(the old configuration stays)" "$SRV_LOG" &&
		X python3 "$SC" served "$ADDR" 8080 a.test / --expect "a2: the folder"; then
		pass "$TGT.broken" "refused, the old configuration serves"
	else
		fail "$TGT.broken" "$(grep SIGHUP "$SRV_LOG" | tail -n 2)"
	fi
	cp "$CONF.good" "$CONF"
}

# SIGHUP with the file as it is now: NAME passes when the log says the
# reload was refused with PATTERN and the old configuration still serves.
check_refused() {
	kill -HUP "$SRV_PID"
	if skt_wait_for 5 grep -q "SIGHUP: .*sites.conf: $2" "$SRV_LOG" &&
		X python3 "$SC" served "$ADDR" 8080 a.test / --expect "a2: the folder"; then
		pass "$TGT.$1" "refused, the old configuration serves"
	else
		fail "$TGT.$1" "$(grep SIGHUP "$SRV_LOG" | tail -n 2)"
	fi
}

# A reload that changes a listener's header_area (the engines reserved
# theirs at start) is refused with its reason, and the old file serves on;
# then one that changes a listener is refused too.
check_header_area() {
	cp "$CONF" "$CONF.good"
	{ echo "header_area 4k;"; cat "$CONF.good"; } >"$CONF"
	check_refused header_area "header_area changed for listener 1: restart skiff"
	sed -e 's/:8443 tls;/:8444 tls;/' "$CONF.good" >"$CONF"
	check_refused listeners "the listeners or the sites' certificate files changed"
	cp "$CONF.good" "$CONF"
}

# nginx with the same sites, on the same ports (skiff stopped first).
check_nginx() {
	local d=$WORK/$TGT n=$WORK/nginx
	mkdir -p "$n/tmp"
	sed -i 's#files sites/a2;#files sites/a;#' "$CONF"
	cat >"$n/nginx.conf" <<EOF
user root;
worker_processes 1;
pid $n/nginx.pid;
error_log $n/error.log;
daemon off;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $n/tmp; proxy_temp_path $n/tmp; fastcgi_temp_path $n/tmp;
    uwsgi_temp_path $n/tmp; scgi_temp_path $n/tmp;
    include /etc/nginx/mime.types;
    absolute_redirect off;
    server {
        listen 127.0.0.1:8080 default_server; listen 127.0.0.1:8443 ssl default_server;
        ssl_certificate $d/sites/certs/a.crt; ssl_certificate_key $d/sites/certs/a.key;
        return 404;
    }
    server {
        listen 127.0.0.1:8080; listen 127.0.0.1:8443 ssl; server_name a.test;
        ssl_certificate $d/sites/certs/a.crt; ssl_certificate_key $d/sites/certs/a.key;
        add_header X-Site a always;
        root $d/sites/a;
        location / { }
        location /api/ { proxy_pass http://127.0.0.1:9090; proxy_set_header Host \$host; }
        location /old/ { rewrite ^/old/(.*)\$ /new/\$1 permanent; }
    }
    server {
        listen 127.0.0.1:8443 ssl; server_name b.test;
        ssl_certificate $d/sites/certs/b.crt; ssl_certificate_key $d/sites/certs/b.key;
        root $d/sites/b;
    }
    server {
        listen 127.0.0.1:8080; server_name b.test;
        return 301 https://b.test:8443\$request_uri;
    }
}
EOF
	"${NS[@]}" nginx -c "$n/nginx.conf" -e "$n/error.log" >"$n/out.log" 2>&1 &
	local npid=$!
	SKT_PIDS+=("$npid")
	if ! skt_wait_for 10 X python3 "$SC" served 127.0.0.1 8080 a.test /; then
		fail "$TGT.nginx" "nginx did not start: $(tail -n 3 "$n/error.log" "$n/out.log")"
		return
	fi
	X python3 "$SC" answers 127.0.0.1 8080 8443 "$d/sites/certs" >"$WORK/answers-nginx.json"
	kill -TERM "$npid"
	skt_wait_exit "$npid" 5 || kill -KILL "$npid"
	local cmp
	if cmp=$(python3 "$SC" compare "$WORK/answers-skiff.json" "$WORK/answers-nginx.json"); then
		pass "$TGT.nginx" "$(tail -1 <<<"$cmp"), answered alike"
	else
		echo "$cmp"
		fail "$TGT.nginx" "answers differ (above)"
	fi
}

# FILE holds the /health answer and at least 10 lines.
alog_filled() {
	grep -q '/health HTTP/1.1","status":200' "$1" 2>/dev/null && [ "$(grep -c . "$1")" -ge 10 ]
}

# Every directive examples/sites.conf does not use, in a file of its own.
check_directives() {
	local d=$WORK/$TGT-dir up=127.0.0.1 workers=2 addr6= v6l=
	[ "$TGT" = linux ] || { up=$SKT_LINUX_IP; workers=1; }
	# A listener on one IPv6 address (the kernel's stack: skiff's takes
	# the interface's addresses, every one or its IPv4 one).
	[ "$TGT" = linux ] && v6l='listen [::1]:8084;'
	mkdir -p "$d/d" "$d/logs"
	echo "d index" >"$d/d/index.html"
	head -c 24000000 /dev/urandom >"$d/d/big.bin"
	cat >"$d/dir.conf" <<EOF
workers $workers;
max_conns 512;
max_body 1k;
header_timeout 2s;
keepalive_timeout 3s;
body_timeout 5s;
send_timeout 5s;
error_log logs/error.log;
access_log logs/access.log json;
site d.test *.w.test {
    listen *:8081;
    listen *:8082;
    default;
    header X-D d;
    header -Server;
    route / { files d; cache_control "public, max-age=60"; }
    route = /health { return 200 "ok\n"; }
    route = /gone { return 410; }
    route = /empty { return 204; }
    route /metrics { metrics; }
    route /up/ {
        proxy $up:9090 $up:9091;
        proxy_host upstream;
        body_on_get allow;
        header X-R up;
        header -Via;
    }
    route /echo/ { proxy $up:9090; }
    route /cache/ { proxy $up:9090; cache 1m; x_cache off; purge_allow none; }
    route /api/cache/ { proxy $up:9090; cache 1m; }
    route /fail/ {
        proxy $up:9092 $up:9090;
        balance least;
        pool 0;
        fail_max 1;
        fail_timeout 30s;
        connect_timeout 2s;
        first_byte_timeout 10s;
        upstream_idle_timeout 10s;
    }
    route /r/ { redirect 308 https://\$host/x/\$rest; }
}
site e.test {
    listen *:8082;
    $v6l
    route / { return 200 "e\n"; }
}
EOF
	"${NS[@]}" python3 "$UP" 9091 u2 --addr "$UP_IP" >"$WORK/$TGT-up2.log" 2>&1 &
	SKT_PIDS+=($!)
	skt_wait_for 10 grep -q "^upstream u2 on" "$WORK/$TGT-up2.log" || fail "$TGT.directives" "upstream u2"
	# /fail/'s first upstream: resets every request before a byte of answer
	"${NS[@]}" python3 "$UP" 9092 rst --reset-all --addr "$UP_IP" >"$WORK/$TGT-up3.log" 2>&1 &
	SKT_PIDS+=($!)
	skt_wait_for 10 grep -q "^upstream rst on" "$WORK/$TGT-up3.log" || fail "$TGT.directives" "upstream rst"
	local stack=(--stack linux) log=$WORK/$TGT-dir-skiff.log
	[ "$TGT" = linux ] || stack=(--stack skiff --dev "tap:$SKT_IF_S" --ip "$SKT_SKIFF_IP/24")
	if [ "$TGT" = linux ]; then
		# IPv6 on the namespace's loopback, for the *:PORT listener over ::1
		"${NS[@]}" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.lo.disable_ipv6=0
		addr6=::1
	fi
	"${NS[@]}" "$BIN" serve --config "$d/dir.conf" "${stack[@]}" --log-level info --stats \
		--drain-timeout 30 >"$log" 2>&1 &
	local pid=$!
	SKT_PIDS+=("$pid")
	if ! skt_wait_for 15 X python3 "$SC" served "$ADDR" 8081 d.test /; then
		fail "$TGT.directives" "skiff did not serve: $(tail -n 3 "$log")"
		return
	fi
	if grep -q "workers=$workers" "$log"; then pass "$TGT.workers"; else fail "$TGT.workers" "$(head -n 1 "$log")"; fi
	X python3 "$SC" directives "$ADDR" "http://$UP_IP:9090/_stats" $addr6 >"$WORK/$TGT-dir.txt" 2>&1
	local rc=$?
	while read -r verdict name rest; do
		case $verdict in
		PASS) pass "$TGT.$name" ;;
		FAIL) fail "$TGT.$name" "$rest" ;;
		esac
	done <"$WORK/$TGT-dir.txt"
	grep -q '^PASS' "$WORK/$TGT-dir.txt" || fail "$TGT.directives" "$(tail -n 5 "$WORK/$TGT-dir.txt")"
	if [ -n "$v6l" ]; then
		# listen [::1]:8084: e.test over ::1; nothing on 127.0.0.1:8084
		# (IPV6_V6ONLY: the one address, not both families).
		local b6 r4
		b6=$(X curl -sg --max-time 5 -H 'Host: e.test' 'http://[::1]:8084/')
		X curl -s --max-time 5 -o /dev/null 'http://127.0.0.1:8084/'
		r4=$?
		if [ "$b6" = e ] && [ "$r4" = 7 ]; then
			pass "$TGT.listen.v6" "[::1]:8084 answers e.test; 127.0.0.1:8084 refused"
		else
			fail "$TGT.listen.v6" "[::1]:8084 body '$b6', curl to 127.0.0.1:8084 rc $r4 (want 7)"
		fi
	fi
	# A check that stopped half-way (an exception) fails, not only its FAIL lines.
	[ $rc -eq 0 ] || grep -q '^FAIL' "$WORK/$TGT-dir.txt" ||
		fail "$TGT.directives" "exit $rc: $(tail -n 3 "$WORK/$TGT-dir.txt")"
	# The access log: one JSON line per answer (each worker's flushed within
	# a second of its last).
	local n
	if skt_wait_for 5 alog_filled "$d/logs/access.log" &&
		n=$(python3 "$SC" jsonlines "$d/logs/access.log") && [ "$n" -ge 10 ]; then
		pass "$TGT.access_log" "$n JSON lines"
	else
		fail "$TGT.access_log" "$(tail -n 2 "$d/logs/access.log" 2>&1)"
	fi
	# Rotated as logrotate does: moved away, then SIGHUP opens the path anew.
	mv "$d/logs/access.log" "$d/logs/access.log.1"
	kill -HUP "$pid"
	if skt_wait_for 5 grep -q "SIGHUP" "$d/logs/error.log"; then
		pass "$TGT.error_log" "the reload is in logs/error.log"
	else
		fail "$TGT.error_log" "no SIGHUP line in $d/logs/error.log"
	fi
	X python3 "$SC" served "$ADDR" 8082 e.test / --expect e >/dev/null
	if skt_wait_for 5 grep -q '"remote_addr"' "$d/logs/access.log"; then
		pass "$TGT.access_log.reopen" "a new file after SIGHUP"
	else
		fail "$TGT.access_log.reopen" "no new $d/logs/access.log"
	fi
	# SIGTERM drains: a download in flight ends whole, an idle keep-alive
	# connection is closed at once, then the process exits 0.
	X python3 "$SC" idle "$ADDR" 8081 d.test 25 >"$WORK/$TGT-idle.txt" 2>&1 &
	local ipid=$!
	X curl -s -o "$WORK/$TGT-big.bin" --limit-rate 4M -H 'Host: d.test' \
		"http://$ADDR:8081/big.bin" &
	local cpid=$!
	skt_wait_for 5 grep -q ready "$WORK/$TGT-idle.txt"
	sleep 1
	kill -TERM "$pid"
	wait "$cpid"
	local crc=$?
	wait "$ipid"
	if [ "$crc" = 0 ] && cmp -s "$WORK/$TGT-big.bin" "$d/d/big.bin"; then
		pass "$TGT.drain.download" "24 MB delivered whole after SIGTERM"
	else
		fail "$TGT.drain.download" "curl rc=$crc, $(stat -c %s "$WORK/$TGT-big.bin" 2>&1) bytes"
	fi
	if grep -q "closed after" "$WORK/$TGT-idle.txt"; then
		pass "$TGT.drain.idle" "$(tail -n 1 "$WORK/$TGT-idle.txt")"
	else
		fail "$TGT.drain.idle" "$(tr '\n' ' ' <"$WORK/$TGT-idle.txt")"
	fi
	if skt_wait_exit "$pid" 30 && [ "$SKT_RC" = 0 ] && grep -q "drained in" "$log"; then
		pass "$TGT.drain" "$(grep -E 'draining|drained' "$log" | tr '\n' ' ')"
	else
		fail "$TGT.drain" "rc=${SKT_RC:-running} $(grep -E 'SIGTERM|drain' "$log" | tr '\n' ' ')"
		kill -KILL "$pid" 2>/dev/null
	fi
}

# `app;`: an application binary (examples/kv, built beside BIN) serving a
# file whose /kv/ route runs its routes; skiff serve refuses the same file.
check_app() {
	local d=$WORK/$TGT-app kv log pid big
	big=$(head -c 700 /dev/zero | tr '\0' b) # two lines of it: over the 1 KiB default area
	kv=$(dirname "$BIN")/examples/kv
	if [ ! -x "$kv" ]; then
		fail "$TGT.app" "no $kv (make examples)"
		return
	fi
	mkdir -p "$d/www"
	echo "www index" >"$d/www/index.html"
	cat >"$d/kv.conf" <<EOF
site kv.test {
    listen *:8083;
    default;
    header X-S kv;
    route /kv/ { app; }
    route = /health { return 200 "ok\n"; }
    route = /bighdr { return 200 "b\n"; header X-Big1 $big; header X-Big2 $big; }
    route / { files www; }
}
site big.test {
    listen *:8085;
    default;
    route = /bighdr { return 200 "b\n"; header X-Big1 $big; header X-Big2 $big; header_area 4k; }
}
EOF
	if X "$BIN" serve --config "$d/kv.conf" >"$WORK/$TGT-app-serve.txt" 2>&1; then
		fail "$TGT.app.serve.refused" "skiff serve ran a file with app;"
	elif grep -q "kv.conf:5:5: app: no application is linked into skiff serve" "$WORK/$TGT-app-serve.txt"; then
		pass "$TGT.app.serve.refused"
	else
		fail "$TGT.app.serve.refused" "$(cat "$WORK/$TGT-app-serve.txt")"
	fi
	if X "$kv" --config "$d/kv.conf" --port 9 >"$WORK/$TGT-app-flag.txt" 2>&1 ||
		! grep -q -- "--port: with --config the file says this" "$WORK/$TGT-app-flag.txt"; then
		fail "$TGT.app.flag.refused" "$(cat "$WORK/$TGT-app-flag.txt")"
	else
		pass "$TGT.app.flag.refused"
	fi
	local stack=(--stack linux)
	log=$WORK/$TGT-app.log
	[ "$TGT" = linux ] || stack=(--stack skiff --dev "tap:$SKT_IF_S" --ip "$SKT_SKIFF_IP/24")
	"${NS[@]}" "$kv" --config "$d/kv.conf" "${stack[@]}" --stats >"$log" 2>&1 &
	pid=$!
	SKT_PIDS+=("$pid")
	if ! skt_wait_for 15 X python3 "$SC" served "$ADDR" 8083 kv.test / --expect "www index"; then
		fail "$TGT.app" "kv did not serve: $(tail -n 3 "$log")"
		return
	fi
	X python3 "$SC" app "$ADDR" 8083 >"$WORK/$TGT-app.txt" 2>&1
	while read -r verdict name rest; do
		case $verdict in
		PASS) pass "$TGT.$name" ;;
		FAIL) fail "$TGT.$name" "$rest" ;;
		esac
	done <"$WORK/$TGT-app.txt"
	grep -q '^PASS' "$WORK/$TGT-app.txt" || fail "$TGT.app" "$(tail -n 5 "$WORK/$TGT-app.txt")"
	kill -TERM "$pid"
	if skt_wait_exit "$pid" 10 && [ "$SKT_RC" = 0 ] && grep -q '^sites.requests [1-9]' "$log"; then
		pass "$TGT.app.exit"
	else
		fail "$TGT.app.exit" "rc=${SKT_RC:-running} $(tail -n 3 "$log")"
		kill -KILL "$pid" 2>/dev/null
	fi
}

for TGT in "${TARGETS[@]}"; do
	if [ "$TGT" = linux ]; then
		ns=$(skt_ns_name lo)
		skt_ns_add "$ns" || { fail linux.setup "namespace"; continue; }
		NS=(ip netns exec "$ns")
		ADDR=127.0.0.1 UP_IP=127.0.0.1
	else
		skt_topo_tap || { fail "$TGT.setup" "tap"; continue; }
		NS=(ip netns exec "$SKT_NS_L")
		ADDR=$SKT_SKIFF_IP UP_IP=$SKT_LINUX_IP
	fi
	make_tree || { fail "$TGT.setup" "certificates"; continue; }
	if X "$BIN" check "$CONF" >"$WORK/$TGT-check.txt" 2>&1; then
		pass "$TGT.check" "$(head -n 1 "$WORK/$TGT-check.txt")"
	else
		fail "$TGT.check" "$(cat "$WORK/$TGT-check.txt")"
	fi
	start_up || { fail "$TGT.setup" "upstream"; skt_cleanup; continue; }
	start_skiff || { skt_cleanup; continue; }
	(cd "$ROOT" && X python3 "$SC" example "$ADDR" 8080 8443 "$WORK/$TGT/sites/certs" \
		"http://$UP_IP:9090/_stats") >"$WORK/$TGT-example.txt" 2>&1
	while read -r verdict name rest; do
		case $verdict in
		PASS) pass "$TGT.$name" ;;
		FAIL) fail "$TGT.$name" "$rest" ;;
		esac
	done <"$WORK/$TGT-example.txt"
	grep -q '^PASS' "$WORK/$TGT-example.txt" || fail "$TGT.example" "$(tail -n 5 "$WORK/$TGT-example.txt")"
	[ "$TGT" = linux ] && (cd "$ROOT" && X python3 "$SC" answers 127.0.0.1 8080 8443 \
		"$WORK/$TGT/sites/certs" >"$WORK/answers-skiff.json")
	check_reload
	check_broken
	check_header_area
	stop_skiff
	[ "$TGT" = linux ] && check_nginx
	check_directives
	check_app
	skt_cleanup
done
summary
