#!/usr/bin/env bash
# tests/http.sh BIN [TARGET...] — `skiff serve` against real clients, on
# each TARGET (default: all four, in this order):
#   linux         --stack linux (kernel sockets, epoll)
#   skiff:tap     --stack skiff --dev tap:sk0
#   skiff:packet  --stack skiff --dev packet:vs0
#   skiff:xdp     --stack skiff --dev xdp:vs0
# The same HTTP server code runs on all of them; so do the same checks.
#
# Topologies (tests/lib.sh, created per target, always deleted;
# 198.18.0.0/15 only, nothing in the root namespace), as tests/integration.sh:
#   linux:        skt-<pid>-cli vc0 198.18.0.1/24 <-veth-> skt-<pid>-srv
#                 vs0 198.18.0.2/24; the server runs in srv.
#   skiff:tap:    one namespace skt-<pid>-tap; a persistent TAP sk0 with
#                 198.18.0.1/24 on the kernel side; skiff is 198.18.0.2 on it;
#                 the clients run in the same namespace.
#   skiff:packet, skiff:xdp: cli/srv veth as for linux, offloads off on both
#                 ends (Linux then sends complete checksums); skiff owns vs0
#                 (no Linux address there) as 198.18.0.2.
# Every client runs under `timeout` with a bounded count or duration.
#
# Per target: curl 1.1 and 1.0, python http.client keep-alive, ab -k -n 50000
# -c 64, ab -n 20000 -c 16 (no keep-alive), wrk -c 64 (3 s), h2load --h1
# pipelined (10 connections x 10 deep, 10,000 requests), wrk -c 1000 -d 10
# with "Connection: close" (read/write errors fail; connect errors and
# timeouts are reported: there is no nginx here to compare with), the bad-request
# corpus, path escapes, 600 B / 6000 B / 10 MiB files byte-identical,
# slowloris (header timeout 3 s), idle CPU < 1% over 10 s, --max-conns 2
# answered 503, SIGTERM -> exit 0 with counters.  The loads are the same on
# every target, none shortened: about 30 s per target, 2 minutes for all
# four on 2 cores.  Server logs (with --stats) are kept, path printed, when a
# check fails or HTTP_KEEP_LOGS=1.
#
# HTTP_FAMILY=6 (run-all.sh phase http6) runs every check above over IPv6
# (2001:2::/48; see FAMILY below).
#
# Prints "PASS target/name" / "FAIL target/name: why" per check and ends with
# "http: N passed, N failed"; exits non-zero if anything failed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=http
export PYTHONDONTWRITEBYTECODE=1

usage() { echo "usage: $0 path/to/skiff [linux] [skiff:tap] [skiff:packet] [skiff:xdp]" >&2; exit 2; }
BIN=${1:-}
[ -n "$BIN" ] || usage
shift
skt_targets "linux skiff:tap skiff:packet skiff:xdp" "$@"
skt_check_bin "$BIN" || exit 2
BIN=$(readlink -f "$BIN")
if ! skt_need setup curl ab wrk h2load python3 sha256sum; then
	summary
	exit 1
fi

# HTTP_FAMILY=6: every check over IPv6 instead (issue 18): the client's
# interface gets 2001:2::1/64, the server 2001:2::2/64 (Linux's vs0 for the
# linux target, which listens on both families; skiff's --ip6 for the
# others), and every client is pointed at http://[2001:2::2]/.  Only
# 2001:2::/48, only inside this script's namespaces (tests/lib.sh
# skt_family; SKT_FAMILY, the other scripts' switch, works here too).
# Checks print as TARGET.v6/NAME.
FAMILY=${HTTP_FAMILY:-${SKT_FAMILY:-4}}
skt_family "$FAMILY" || { echo "$0: HTTP_FAMILY is 4 or 6, not '$FAMILY'" >&2; exit 2; }
SRV_IP=$SKT_SRV URL=http://$SKT_HOST/
SRV_IP4=198.18.0.2
WORK=$(mktemp -d /tmp/skiff-http.XXXXXX)
# shellcheck disable=SC2034 # set and read by tests/lib.sh skt_serve_*
{
SRV_PID=
TGT=         # the current target (SKT_SCOPE: checks print as TARGET/NAME)
NS_C=        # where the clients run
NS_S=        # where the server runs
IF_C=        # the clients' interface (its neighbour cache is flushed per server)
SERVE=()     # the stack arguments of `skiff serve` for this target
}

skt_work_traps "HTTP_KEEP_LOGS" "server logs"

# C CMD...: a client in the client namespace, bounded in time.
C() { timeout "${T:-60}" ip netns exec "$NS_C" "$@"; }

# The target's topology and stack arguments (tests/lib.sh
# skt_serve_target); many short connections from one client address.
setup_target() {
	skt_serve_target "$SRV_IP4" || return 1
	if [ "$TGT" = linux ]; then
		ip netns exec "$NS_S" sh -c 'echo 4096 > /proc/sys/net/core/somaxconn' 2>/dev/null
	fi
	skt_client_sysctls
}

# start_server NAME ARGS...: serve, wait for the listening line and for
# the first answer (skiff's device may take a moment, xdp loads a program).
start_server() {
	local name=$1
	shift
	skt_serve_start "$name" --port 80 --stats "$@"
}

# stop_server NAME: SIGTERM, expect exit 0 and the counters.
stop_server() {
	local name=$1
	skt_serve_exit "$name.sigterm" TERM 5 || return
	if ! grep -q '^http.requests ' "$SRV_LOG"; then
		fail "$name.sigterm" "no counters printed with --stats"
	elif [ "${TGT%%:*}" = skiff ] && ! grep -q '^tcp.*established ' "$SRV_LOG"; then
		fail "$name.sigterm" "no stack counters (hoststack) printed with --stats"
	else
		pass "$name.sigterm"
	fi
}

HELLO='Hello, world! This is skiff serving you.'

check_curl() { # check_curl NAME CURLFLAG
	local out=$WORK/curl.out
	if ! C curl -s --fail "$2" -o "$out" "$URL"; then
		fail "$1" "curl failed"
	elif [ "$(stat -c %s "$out")" -ne 41 ] || [ "$(cat "$out")" != "$HELLO" ]; then
		fail "$1" "body is not the 41-byte hello: $(head -c 80 "$out")"
	else
		pass "$1"
	fi
}

check_ab() { # check_ab NAME N ARGS...
	local name=$1 n=$2 out=$WORK/$1.out
	shift 2
	T=180 C ab -q -r "$@" "$URL" >"$out" 2>&1
	local done_ fails non2xx rps
	done_=$(awk '/^Complete requests:/ {print $3}' "$out")
	fails=$(awk '/^Failed requests:/ {print $3}' "$out")
	non2xx=$(awk '/^Non-2xx responses:/ {print $3}' "$out")
	rps=$(awk '/^Requests per second:/ {print $4}' "$out")
	if [ "${done_:-0}" != "$n" ] || [ "${fails:-x}" != 0 ] || [ -n "$non2xx" ]; then
		fail "$name" "complete=${done_:-?} failed=${fails:-?} non2xx=${non2xx:-0}: $(tail -n 2 "$out" | tr '\n' ' ')"
	else
		pass "$name ($rps req/s)"
	fi
}

# wrk_errors FILE: "connect read write timeout" (zeros when none).
wrk_errors() {
	local line
	line=$(grep 'Socket errors:' "$1")
	if [ -z "$line" ]; then
		echo "0 0 0 0"
	else
		echo "$line" | sed -E 's/.*connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+).*/\1 \2 \3 \4/'
	fi
}

run_load_checks() {
	check_curl curl.http11 --http1.1
	check_curl curl.http10 --http1.0

	if C python3 "$HERE/http_client.py" keepalive $SRV_IP 80 >"$WORK/ka.out" 2>&1; then
		pass python.keepalive
	else
		fail python.keepalive "$(tr '\n' ' ' <"$WORK/ka.out")"
	fi

	check_ab ab.keepalive.c64 50000 -k -n 50000 -c 64
	check_ab ab.close.c16 20000 -n 20000 -c 16

	local out=$WORK/wrk.out e
	T=30 C wrk -t 2 -c 64 -d 3 "$URL" >"$out" 2>&1
	read -r -a e <<<"$(wrk_errors "$out")"
	if ! grep -q 'Requests/sec' "$out"; then
		fail wrk.c64 "wrk did not finish: $(tail -n 2 "$out" | tr '\n' ' ')"
	elif [ "${e[0]}${e[1]}${e[2]}${e[3]}" != 0000 ] || grep -q 'Non-2xx' "$out"; then
		fail wrk.c64 "$(grep -E 'Socket errors|Non-2xx' "$out" | tr '\n' ' ')"
	else
		pass "wrk.c64 ($(awk '/Requests\/sec/ {print $2}' "$out") req/s)"
	fi

	out=$WORK/h2load.out
	T=60 C h2load --h1 -n 10000 -c 10 -m 10 "$URL" >"$out" 2>&1
	if grep -q 'requests: 10000 total, 10000 started, 10000 done, 10000 succeeded, 0 failed, 0 errored' "$out" &&
		grep -q 'status codes: 10000 2xx' "$out"; then
		pass "h2load.pipelined ($(awk '/^finished in/ {print $4, $5}' "$out" | tr -d ,))"
	else
		fail h2load.pipelined "$(grep -E '^requests:|^status codes:' "$out" | tr '\n' ' ')"
	fi

	# Many connections, one request each.  read/write errors fail; connect
	# errors are reported only (the open-files limit can bite the client).
	out=$WORK/wrk1000.out
	T=40 C wrk -t 2 -c 1000 -d 10 -H 'Connection: close' "$URL" >"$out" 2>&1
	read -r -a e <<<"$(wrk_errors "$out")"
	if ! grep -q 'Requests/sec' "$out"; then
		fail wrk.close.c1000 "wrk did not finish: $(tail -n 2 "$out" | tr '\n' ' ')"
	elif [ "${e[1]}" != 0 ] || [ "${e[2]}" != 0 ] || grep -q 'Non-2xx' "$out"; then
		fail wrk.close.c1000 "$(grep -E 'Socket errors|Non-2xx' "$out" | tr '\n' ' ')"
	else
		pass "wrk.close.c1000 ($(awk '/Requests\/sec/ {print $2}' "$out") req/s; errors connect ${e[0]} timeout ${e[3]})"
	fi

	if [ -f "$HERE/http_bad_requests.txt" ]; then
		if T=300 C python3 "$HERE/http_client.py" corpus $SRV_IP 80 "$HERE/http_bad_requests.txt" \
			>"$WORK/corpus.out" 2>&1; then
			pass "bad_requests ($(tail -n 1 "$WORK/corpus.out"))"
		else
			fail bad_requests "$(tail -n 6 "$WORK/corpus.out" | tr '\n' ' ')"
		fi
	else
		fail bad_requests "tests/http_bad_requests.txt is missing"
	fi
}

make_root() {
	local r=$WORK/www
	mkdir -p "$r/sub" "$r/.git"
	head -c 600 /dev/urandom >"$r/f600.bin"
	head -c 6000 /dev/urandom >"$r/sub/f6000.bin"
	head -c $((10 * 1024 * 1024)) /dev/urandom >"$r/f10m.bin"
	echo '<h1>index</h1>' >"$r/index.html"
	echo 'secret' >"$r/.hidden"
	echo 'secret' >"$r/.git/config"
	echo 'a' >"$r/a.txt"
	ln -s /etc/passwd "$r/passwd_link"
	ln -s /etc/passwd "$r/sub/passwd_link"
	ln -s /etc "$r/linkdir"
}

run_file_checks() {
	local r=$WORK/www f out ok=1
	for f in f600.bin sub/f6000.bin f10m.bin; do
		out=$WORK/got.bin
		rm -f "$out"
		if ! T=30 C curl -s --fail -o "$out" "$URL$f"; then
			fail "files.$(basename "$f")" "curl failed"; ok=0; continue
		fi
		if [ "$(sha256sum <"$out")" = "$(sha256sum <"$r/$f")" ]; then
			pass "files.$(basename "$f") (sha256 equal, $(stat -c %s "$out") bytes)"
		else
			fail "files.$(basename "$f")" "content differs ($(stat -c %s "$out") bytes)"
		fi
	done
	local hdr
	hdr=$(C curl -s -I "$URL")
	if echo "$hdr" | grep -qi '^content-type: text/html' && echo "$hdr" | grep -qi '^content-length: 15'; then
		pass files.index_html_head
	else
		fail files.index_html_head "$(echo "$hdr" | tr '\r\n' '  ')"
	fi
	if C python3 "$HERE/http_client.py" escape $SRV_IP 80 >"$WORK/esc.out" 2>&1; then
		pass "files.no_escape ($(tail -n 1 "$WORK/esc.out"))"
	else
		fail files.no_escape "$(tr '\n' ' ' <"$WORK/esc.out")"
	fi
}

# Idle CPU of the server over 10 s, from /proc/PID/stat utime+stime:
# under 1% of a core, fewer than 0.1 s of CPU in 10 s.
check_idle_cpu() {
	if skt_idle_ticks 10; then
		pass "idle_cpu ($IDLE_TICKS ticks of $((IDLE_HZ * 10)) in 10 s)"
	else
		fail idle_cpu "$IDLE_TICKS ticks in 10 s (limit $((IDLE_HZ / 10)))"
	fi
}

check_refusal() {
	# Two connections held open fill --max-conns 2; the third is answered
	# 503 and closed (at once: it need not send a request), and once one is
	# released a new client is served.
	local out=$WORK/refuse.out
	if T=30 C python3 - "$SRV_IP" >"$out" 2>&1 <<'PY'
import socket, sys, time
host = sys.argv[1]
held = [socket.create_connection((host, 80), timeout=5) for _ in range(2)]
time.sleep(0.3)
s = socket.create_connection((host, 80), timeout=5)
# Nothing is sent: the server answers a refused connection as soon as it
# accepts it, so a request that arrived after its close would meet a RST,
# which may destroy the 503 before it is read (a race seen on --stack linux).
data = b""
while True:
    x = s.recv(4096)
    if not x:
        break
    data += x
assert data.startswith(b"HTTP/1.1 503 "), data[:60]
held[0].close()
time.sleep(0.3)
s = socket.create_connection((host, 80), timeout=5)
s.sendall(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
data = s.recv(4096)
assert data.startswith(b"HTTP/1.1 200 "), data[:60]
print("ok")
PY
	then
		pass max_conns.refused_503
	else
		fail max_conns.refused_503 "$(tail -n 2 "$out" | tr '\n' ' ')"
	fi
}

# check_pcap FILE: a pcap file whose frames include HTTP on port 80 both ways.
check_pcap() {
	local out
	if out=$(python3 - "$1" 2>&1 <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
magic = struct.unpack("<I", d[:4])[0]
assert magic in (0xa1b2c3d4, 0xa1b23c4d), "not a pcap file: %x" % magic
off, n, to80, from80 = 24, 0, 0, 0
while off + 16 <= len(d):
    incl = struct.unpack("<I", d[off + 8:off + 12])[0]
    f = d[off + 16:off + 16 + incl]
    off += 16 + incl
    n += 1
    l4 = None
    if len(f) >= 54 and f[12:14] == b"\x08\x00" and f[23] == 6:
        l4 = 14 + (f[14] & 15) * 4
    elif len(f) >= 74 and f[12:14] == b"\x86\xdd" and f[20] == 6:
        l4 = 54  # IPv6 with no extension headers: what TCP sends here
    if l4 is not None:
        sp, dp = struct.unpack(">HH", f[l4:l4 + 4])
        to80 += dp == 80
        from80 += sp == 80
assert to80 and from80, "frames %d, to port 80 %d, from port 80 %d" % (n, to80, from80)
print("%d frames, %d to port 80, %d from it" % (n, to80, from80))
PY
	); then
		pass "pcap ($out)"
	else
		fail pcap "$(echo "$out" | tail -n 1)"
	fi
}

check_cli() {
	local rc args ok=1 why=
	# Each of these is a usage error: exit 2 before touching any device.
	for args in "--port 0" "--port x" "--bogus" "--stack foo" "--max-conns 0" "extra" \
		"--stack skiff" "--stack skiff --dev tap:x" "--stack skiff --dev tap:x --ip 198.18.0.2" \
		"--stack linux --dev tap:x" "--stack linux --spin-us 5" \
		"--stack skiff --dev tap:x --ip 198.18.0.2/24 --gw 198.18.1.1"; do
		# shellcheck disable=SC2086
		ip netns exec "$NS_S" "$BIN" serve $args >/dev/null 2>&1
		rc=$?
		[ $rc -eq 2 ] || { ok=0; why+="'$args' -> $rc; "; }
	done
	if [ $ok = 1 ]; then pass cli.bad_args_exit_2; else fail cli.bad_args_exit_2 "$why"; fi
	# A device that cannot be opened: a message and exit 1.
	ip netns exec "$NS_S" "$BIN" serve --stack skiff --dev packet:nonexistent0 --ip 198.18.0.2/24 \
		>/dev/null 2>"$WORK/cli.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'skiff serve:' "$WORK/cli.err"; then
		pass cli.bad_device_exit_1
	else
		fail cli.bad_device_exit_1 "exit $rc: $(head -c 200 "$WORK/cli.err")"
	fi
}

run_target() {
	TGT=$1
	SKT_SCOPE=$TGT
	[ "$FAMILY" = 6 ] && SKT_SCOPE=$TGT.v6
	local t0=$SECONDS
	if ! setup_target; then
		fail setup "cannot create the topology"
		skt_cleanup
		return
	fi
	[ "$TGT" = linux ] && check_cli

	if start_server default; then
		run_load_checks
		stop_server default
	fi

	if start_server root --root "$WORK/www" --header-timeout 3; then
		run_file_checks
		if T=60 C python3 "$HERE/http_client.py" slowloris $SRV_IP 80 3 >"$WORK/slow.out" 2>&1; then
			pass "slowloris ($(tail -n 1 "$WORK/slow.out"))"
		else
			fail slowloris "$(tr '\n' ' ' <"$WORK/slow.out")"
		fi
		check_idle_cpu
		stop_server root
	fi

	# The skiff stack records its frames with --pcap (here, with the limit run).
	local pcap=()
	[ "$TGT" = linux ] || pcap=(--pcap "$WORK/limit.pcap")
	if start_server limit --max-conns 2 "${pcap[@]}"; then
		check_refusal
		stop_server limit
		[ ${#pcap[@]} -gt 0 ] && check_pcap "$WORK/limit.pcap"
	fi
	skt_cleanup
	echo "--- $TGT: $((SECONDS - t0)) s"
}

make_root
for t in "${TARGETS[@]}"; do
	run_target "$t"
done

SKT_SCOPE=
summary
