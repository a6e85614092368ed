#!/usr/bin/env bash
# bench/h2.sh SKIFF — `make bench-h2` (issue 33): HTTP/2 from `skiff serve`
# against nginx (`listen ... ssl http2` and `listen ... http2`) on the same
# certificate and the same files, on 127.0.0.1 only (no namespace, nothing
# leaves the loopback).  Every key, certificate, file and nginx.conf is
# made at run time in a temporary folder, removed at exit.
#
# The cells, each run H2_BENCH_REPS times (default 3), servers alternating
# (nginx, skiff, nginx, ...: each rep starts each server afresh), the
# median reported:
#   h2load -c 1 -m 1, -c 16 -m 16, -c 100 -m 10 (H2_BENCH_N requests,
#   default 20000), over TLS (h2 by ALPN, TLS 1.3) and h2c (HTTP/2 by prior
#   knowledge on the plain port), for a 41-byte body (skiff's hello page's
#   size) and a 6000-byte one: req/s, and the server's CPU per request
#   (utime + stime of the server's processes from /proc/PID/stat, before
#   and after the run, over the requests that succeeded).  A run with any
#   request failed or errored voids its cell.
#   A page load: 60 small assets (a 10-size pattern, 500..3200 B, six
#   times over) over HTTPS, over HTTP/2 (h2load -i with the 60 URIs, one
#   connection, all 60 streams at once) and over HTTP/1.1 (h2load --h1,
#   6 connections as a browser opens, one request at a time on each;
#   h2load gives each connection the first 10 URIs, which is why the sizes
#   repeat every 10): the time per page (h2load's "finished in", the
#   handshakes included) and the server's CPU per page, the median of
#   H2_BENCH_PAGES loads (default 50) per rep, the CPU over them together.
#
# skiff speaks HTTP/2 only once issue 33's engine serves it: one h2load
# probe per transport at start says whether it does.  When it does not,
# its cells print "void" and a line says why; nginx's still run, and so
# does skiff's HTTP/1.1 page load.
#
# Knobs: H2_BENCH_REPS H2_BENCH_N H2_BENCH_PAGES H2_BENCH_WARMUP (requests
# before each server's cells, default 2000), H2_BENCH_LOADS ("c1m1 c16m16
# c100m10"), H2_BENCH_TRANSPORTS ("tls h2c"), H2_BENCH_BODIES ("41 6000"),
# H2_BENCH_SERVERS ("nginx skiff"), H2_BENCH_SERVER_CPU (1) and
# H2_BENCH_CLIENT_CPU (0) (taskset; empty: not pinned), H2_BENCH_PORT (the
# first of four ports, default 18600), H2_BENCH_SKIFF_ARGS (more flags for
# skiff serve), H2_BENCH_OUT (the table's file; default
# bench/results/h2-DATE.md).  A quick look:
#   H2_BENCH_REPS=1 H2_BENCH_N=2000 H2_BENCH_PAGES=3 make bench-h2
# Timing: run it under flock /tmp/skiff-nettest.lock on a shared machine.
set -u
usage() { sed -n '2,42p' "$0"; exit "${1:-2}"; }
case ${1:-} in -h | --help) usage 0 ;; '') usage ;; esac
BIN=$(readlink -f "$1")
[ -x "$BIN" ] || { echo "bench-h2: $1 is not an executable skiff" >&2; exit 2; }
for c in h2load nginx openssl curl taskset; do
	command -v "$c" >/dev/null || { echo "bench-h2: needs $c (tools/deps.sh)" >&2; exit 1; }
done

REPS=${H2_BENCH_REPS:-3} N=${H2_BENCH_N:-20000} PAGES=${H2_BENCH_PAGES:-50}
WARMUP=${H2_BENCH_WARMUP:-2000}
read -ra LOADS <<<"${H2_BENCH_LOADS:-c1m1 c16m16 c100m10}"
read -ra TRANSPORTS <<<"${H2_BENCH_TRANSPORTS:-tls h2c}"
read -ra BODIES <<<"${H2_BENCH_BODIES:-41 6000}"
read -ra SERVERS <<<"${H2_BENCH_SERVERS:-nginx skiff}"
read -ra SKIFF_ARGS <<<"${H2_BENCH_SKIFF_ARGS:-}"
SRV_CPU=${H2_BENCH_SERVER_CPU-1} CLI_CPU=${H2_BENCH_CLIENT_CPU-0}
PORT=${H2_BENCH_PORT:-18600}
OUT=${H2_BENCH_OUT:-$(dirname "$0")/results/h2-$(date +%Y%m%d-%H%M%S).md}
HZ=$(getconf CLK_TCK)
IP=127.0.0.1

WORK=$(mktemp -d /tmp/skiff-bench-h2.XXXXXX)
chmod 755 "$WORK" # nginx's workers run as nobody (the key stays 0600, read by the master)
SRV_PID=
stop_server() {
	[ -n "$SRV_PID" ] || return 0
	kill -TERM "$SRV_PID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	SRV_PID=
}
trap 'stop_server; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# The server's and h2load's CPU (taskset; nothing when unset).  An array,
# not a function: `taskset ... nginx &` execs nginx in the background job,
# so $! is the server itself (a function would leave a subshell there,
# which the CPU count and the stop would take for the server).
SRV_PIN=() CLI_PIN=()
[ -n "$SRV_CPU" ] && SRV_PIN=(taskset -c "$SRV_CPU")
[ -n "$CLI_CPU" ] && CLI_PIN=(taskset -c "$CLI_CPU")

# ---- the certificate and the files, made now ----
if ! openssl req -x509 -nodes -days 2 -subj /CN=skiff-bench -addext "subjectAltName=IP:$IP" \
	-newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$WORK/tls.key" -out "$WORK/tls.crt" \
	>"$WORK/openssl.log" 2>&1; then
	echo "bench-h2: openssl could not make the certificate: $(tail -n 2 "$WORK/openssl.log")" >&2
	exit 1
fi
ROOT=$WORK/root
mkdir -p "$ROOT"
printf 'Hello, world! This is skiff serving you.\n' >"$ROOT/b41.txt"
head -c 6000 /dev/urandom >"$ROOT/b6000.bin"
# The page's 60 assets (tools/h2_page.sh, shared with tests/h2_chromium.sh).
"$(dirname "$0")/../tools/h2_page.sh" "$ROOT" "https://$IP:$((PORT + 2))" >"$WORK/page-urls"

# Ports: nginx TLS, nginx h2c, skiff TLS, skiff plain (h2c and HTTP/1.1).
declare -A TLS_PORT=([nginx]=$PORT [skiff]=$((PORT + 2)))
declare -A H2C_PORT=([nginx]=$((PORT + 1)) [skiff]=$((PORT + 3)))
TLS12_CIPHERS=ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305
TLS13_SUITES=TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256
mkdir -p "$WORK/nginx"
# nginx as bench/http/nginx.conf.in sets it up (one worker, no access log,
# keep-alive limits raised: keepalive_requests bounds an HTTP/2
# connection's requests too, 1000 by default, which would end h2load's
# connections mid-run), plus HTTP/2 on both ports and TLS as skiff's; but
# sendfile off: with it, nginx 1.22's h2c sends a DATA frame's file bytes
# by sendfile after the frame headers by writev, on a socket without
# TCP_NODELAY, and every response waits for the client's delayed ACK
# (h2load -c 1 -m 1, 41 B: 23 req/s, 44 ms a request; sendfile off: 13,000
# req/s; measured 2026-12-05).  Over TLS nginx never uses sendfile.
cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process on;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
worker_rlimit_nofile 8192;
events {
    worker_connections 4096;
    use epoll;
    multi_accept on;
    accept_mutex off;
}
http {
    access_log off;
    server_tokens off;
    keepalive_timeout 60s;
    keepalive_requests 100000000;
    sendfile off;
    tcp_nodelay on;
    open_file_cache max=1000 inactive=3600s;
    open_file_cache_valid 3600s;
    open_file_cache_min_uses 1;
    etag off;
    max_ranges 0;
    default_type text/plain;
    client_body_temp_path $WORK/nginx/body;
    proxy_temp_path $WORK/nginx/proxy;
    fastcgi_temp_path $WORK/nginx/fastcgi;
    uwsgi_temp_path $WORK/nginx/uwsgi;
    scgi_temp_path $WORK/nginx/scgi;
    server {
        listen $IP:${TLS_PORT[nginx]} ssl http2 backlog=4096;
        listen $IP:${H2C_PORT[nginx]} http2 backlog=4096;
        ssl_certificate $WORK/tls.crt;
        ssl_certificate_key $WORK/tls.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ciphers $TLS12_CIPHERS;
        ssl_conf_command Ciphersuites $TLS13_SUITES;
        ssl_ecdh_curve X25519:prime256v1;
        ssl_prefer_server_ciphers on;
        ssl_session_cache shared:SSL:10m;
        ssl_session_tickets on;
        root $ROOT;
    }
}
EOF

# start_server NAME: the server, pinned, ready when HTTPS answers (HTTP/1.1).
start_server() {
	case $1 in
	nginx)
		"${SRV_PIN[@]}" nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" >"$WORK/nginx.log" 2>&1 &
		;;
	skiff)
		"${SRV_PIN[@]}" "$BIN" serve --stack linux --ip "$IP" --port "${H2C_PORT[skiff]}" \
			--root "$ROOT" --tls-cert "$WORK/tls.crt" --tls-key "$WORK/tls.key" \
			--tls-port "${TLS_PORT[skiff]}" --tls-alpn h2,http/1.1 "${SKIFF_ARGS[@]}" \
			>"$WORK/skiff.log" 2>&1 &
		;;
	esac
	SRV_PID=$!
	local i
	for ((i = 0; i < 100; i++)); do
		curl -sk --http1.1 -o /dev/null --max-time 1 "https://$IP:${TLS_PORT[$1]}/b41.txt" && return 0
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "bench-h2: $1 did not start: $(tail -n 3 "$WORK/$1.log" "$WORK/nginx/error.log" 2>/dev/null)" >&2
	stop_server
	return 1
}

# cpu_ticks: utime + stime of the server and its children (nginx's
# workers), in clock ticks.
cpu_ticks() {
	local pids=("$SRV_PID") t=0 p f
	for p in $(cat "/proc/$SRV_PID/task/"*/children 2>/dev/null); do pids+=("$p"); done
	for p in "${pids[@]}"; do
		f=$(cut -d')' -f2 "/proc/$p/stat" 2>/dev/null) || continue
		read -ra f <<<"$f"
		t=$((t + f[11] + f[12])) # fields 14 and 15 of stat, counted after "pid (comm)"
	done
	echo "$t"
}

# h2run ARGS...: h2load pinned to the client CPU; prints "RPS US_PER_REQ
# MS" (MS: h2load's "finished in"), or "void REASON" when a request
# failed or errored.
h2run() {
	local out t0 t1 ok failed errored rps ms
	t0=$(cpu_ticks)
	out=$(timeout 300 "${CLI_PIN[@]}" h2load "$@" 2>&1)
	t1=$(cpu_ticks)
	ok=$(sed -nE 's/^requests: .* ([0-9]+) succeeded.*/\1/p' <<<"$out")
	failed=$(sed -nE 's/^requests: .* ([0-9]+) failed.*/\1/p' <<<"$out")
	errored=$(sed -nE 's/^requests: .* ([0-9]+) errored.*/\1/p' <<<"$out")
	if [ -z "$ok" ] || [ "$ok" = 0 ] || [ "${failed:-1}" != 0 ] || [ "${errored:-1}" != 0 ]; then
		echo "void ${failed:-?}-failed,${errored:-?}-errored"
		grep -E '^(requests|status codes):|[Ee]rror|[Nn]o protocol|refused|failed' <<<"$out" |
			tr '\n' ' ' >"$WORK/h2load-void.log"
		return
	fi
	read -r ms rps < <(sed -nE 's/^finished in ([0-9.]+)(m?s), ([0-9.]+) req\/s.*/\1 \2 \3/p' <<<"$out" |
		awk '{print ($2 == "ms" ? $1 : $1 * 1000), $3}')
	awk -v r="$rps" -v d=$((t1 - t0)) -v hz="$HZ" -v n="$ok" -v ms="$ms" \
		'BEGIN {printf "%.0f %.1f %.1f\n", r, d * 1e6 / hz / n, ms}'
}

url() { # url SERVER TRANSPORT BODY
	case $2 in
	tls) echo "https://$IP:${TLS_PORT[$1]}/b$3.$( [ "$3" = 41 ] && echo txt || echo bin)" ;;
	h2c) echo "http://$IP:${H2C_PORT[$1]}/b$3.$( [ "$3" = 41 ] && echo txt || echo bin)" ;;
	esac
}

declare -A R SPEAKS
# Does SERVER speak HTTP/2 over TRANSPORT?  One h2load request.
probe() {
	local r
	r=$(h2run -n 1 -c 1 "$(url "$1" "$2" 41)")
	[[ $r != void* ]]
}

for ((rep = 0; rep < REPS; rep++)); do
	for s in "${SERVERS[@]}"; do
		start_server "$s" || continue
		for tr in "${TRANSPORTS[@]}"; do
			if [ -z "${SPEAKS[$s,$tr]:-}" ]; then
				if probe "$s" "$tr"; then SPEAKS[$s,$tr]=yes; else SPEAKS[$s,$tr]=no; fi
				[ "${SPEAKS[$s,$tr]}" = no ] &&
					echo "bench-h2: $s: its $tr column is void: it does not speak HTTP/2 over $tr yet (an h2load probe failed: $(cat "$WORK/h2load-void.log"))"
			fi
			[ "${SPEAKS[$s,$tr]}" = yes ] || continue
			[ "$WARMUP" -gt 0 ] && h2run -n "$WARMUP" -c 16 -m 16 "$(url "$s" "$tr" 41)" >/dev/null
			for b in "${BODIES[@]}"; do
				for l in "${LOADS[@]}"; do
					c=${l#c} c=${c%m*} m=${l#*m}
					R[$s,$tr,$b,$l,$rep]=$(h2run -n "$N" -c "$c" -m "$m" "$(url "$s" "$tr" "$b")")
					echo "bench-h2: rep $((rep + 1))/$REPS $s $tr ${b}B $l: ${R[$s,$tr,$b,$l,$rep]}"
				done
			done
		done
		# The page: HTTP/2 (TLS, ALPN h2) and HTTP/1.1 (TLS, 6 connections).
		sed "s/:$((PORT + 2))\//:${TLS_PORT[$s]}\//" "$WORK/page-urls" >"$WORK/urls-$s"
		for p in h2 h1; do
			[ $p = h2 ] && [ "${SPEAKS[$s,tls]:-no}" != yes ] && continue
			# The CPU over all PAGES loads (one page is about a clock
			# tick of it); each load's time on its own.
			t0=$(cpu_ticks) pvoid=
			for ((k = 0; k < PAGES; k++)); do
				if [ $p = h2 ]; then
					r=$(h2run -i "$WORK/urls-$s" -n 60 -c 1 -m 60)
				else
					r=$(h2run --h1 -i "$WORK/urls-$s" -n 60 -c 6 -m 1)
				fi
				[[ $r == void* ]] && pvoid=$r
				R[$s,page,$p,$rep,$k]=$r
			done
			t1=$(cpu_ticks)
			if [ -n "$pvoid" ]; then
				R[$s,pagecpu,$p,$rep]=$pvoid
			elif [ "$PAGES" -gt 0 ]; then
				R[$s,pagecpu,$p,$rep]=$(awk -v d=$((t1 - t0)) -v hz="$HZ" -v n="$PAGES" \
					'BEGIN {printf "%.0f", d * 1e6 / hz / n}')
			fi
			echo "bench-h2: rep $((rep + 1))/$REPS $s page $p: ms per page $(for ((k = 0; k < PAGES; k++)); do printf '%s ' "$(awk '{print ($1 == "void" ? $0 : $3)}' <<<"${R[$s,page,$p,$rep,$k]}")"; done); CPU µs per page ${R[$s,pagecpu,$p,$rep]:-}"
		done
		stop_server
	done
done

# ---- the table ----
median() { sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]}'; }
# cell KEY FIELD(1 rps, 2 us/req, 3 ms) REPS-KEYS...: the median, or void
cell() {
	local field=$1 v vals=() void=
	shift
	for v in "$@"; do
		[ -n "$v" ] || { void=missing; continue; }
		[[ $v == void* ]] && { void=${v#void }; continue; }
		vals+=("$(awk -v f="$field" '{print $f}' <<<"$v")")
	done
	if [ -n "$void" ] || [ ${#vals[@]} = 0 ]; then echo "void${void:+ ($void)}"; return; fi
	printf '%s\n' "${vals[@]}" | median
}
runs() { # runs SERVER TR BODY LOAD: the reps' results, one word each
	local r
	for ((r = 0; r < REPS; r++)); do printf '%s\n' "${R[$1,$2,$3,$4,$r]:-}"; done
}
# table_head LEFT LEFT_RULE A B: a table's header row (the LEFT cells,
# then "SERVER A | SERVER B" for each server) and its rule (LEFT_RULE, then
# two right-aligned columns a server).
table_head() {
	local s
	printf '%s' "$1"
	for s in "${SERVERS[@]}"; do printf ' %s %s | %s %s |' "$s" "$3" "$s" "$4"; done
	echo
	printf '%s' "$2"
	for s in "${SERVERS[@]}"; do printf -- '---:|---:|'; done
	echo
}
table=$(
	echo "# make bench-h2, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r)"
	echo
	echo "h2load -n $N, $REPS alternating reps, medians; server pinned to CPU ${SRV_CPU:-none}, h2load to ${CLI_CPU:-none}."
	echo "req/s, and the server's CPU (utime+stime) in µs per request.  nginx $(nginx -v 2>&1 | sed 's/.*\///'), $(h2load --version | head -1)."
	for s in "${SERVERS[@]}"; do
		for tr in "${TRANSPORTS[@]}"; do
			[ "${SPEAKS[$s,$tr]:-no}" = yes ] || echo "- $s over $tr: void, it does not speak HTTP/2 there yet (h2load's probe failed)."
		done
	done
	echo
	table_head '| transport | body | load |' '|---|---:|---|' 'req/s' 'µs/req'
	for tr in "${TRANSPORTS[@]}"; do
		for b in "${BODIES[@]}"; do
			for l in "${LOADS[@]}"; do
				printf '| %s | %s B | -c %s -m %s |' "$tr" "$b" "$(c=${l#c}; echo "${c%m*}")" "${l#*m}"
				for s in "${SERVERS[@]}"; do
					if [ "${SPEAKS[$s,$tr]:-no}" != yes ]; then
						printf ' void (no HTTP/2) | void |'
						continue
					fi
					mapfile -t rr < <(runs "$s" "$tr" "$b" "$l")
					printf ' %s | %s |' "$(cell 1 "${rr[@]}")" "$(cell 2 "${rr[@]}")"
				done
				echo
			done
		done
	done
	echo
	echo "Page load: 60 assets (500..3200 B) over HTTPS; ms per page (h2load's \"finished in\", handshakes included: the median of $REPS x $PAGES loads) and the server's CPU in µs per page (over each rep's $PAGES loads; the median of $REPS)."
	echo
	table_head '| protocol |' '|---|' 'ms/page' 'CPU µs/page'
	for p in h2 h1; do
		printf '| %s |' "$([ $p = h2 ] && echo 'HTTP/2, 1 connection' || echo 'HTTP/1.1, 6 connections')"
		for s in "${SERVERS[@]}"; do
			if [ $p = h2 ] && [ "${SPEAKS[$s,tls]:-no}" != yes ]; then
				printf ' void (no HTTP/2) | void |'
				continue
			fi
			mapfile -t rr < <(for ((r = 0; r < REPS; r++)); do
				for ((k = 0; k < PAGES; k++)); do printf '%s\n' "${R[$s,page,$p,$r,$k]:-}"; done
			done)
			ms=$(cell 3 "${rr[@]}")
			mapfile -t rr < <(for ((r = 0; r < REPS; r++)); do printf '%s\n' "${R[$s,pagecpu,$p,$r]:-}"; done)
			printf ' %s | %s |' "$ms" "$(cell 1 "${rr[@]}")"
		done
		echo
	done
)
echo
echo "$table"
mkdir -p "$(dirname "$OUT")"
echo "$table" >"$OUT"
echo
echo "bench-h2: written to $OUT"
