#!/usr/bin/env bash
# tests/sendfile.sh BIN — `skiff serve --stack linux` sending file bodies
# with sendfile(2) (loop.h's sendfile op, src/loop_host/loop_linux.c), and
# the fallbacks beside it: --sendfile off (writev from the mapping) and
# HTTPS (records written from user space; kTLS where it takes).
#
# Loopback only (127.0.0.1, free ports found at run time), kernel sockets,
# no namespace; every client is bounded by `timeout`; the certificate is
# made here with openssl and removed with the work folder.
#
# Checks:
#   sizes      bodies of 100 KiB, 1 MiB and 16 MiB come back sha256-identical
#              with curl over HTTP and HTTPS, a connection per request and
#              all three on one keep-alive connection;
#   ranges     a 206 (one range, from an offset) and a multipart 206 give
#              exactly the file's bytes there;
#   reload     SIGHUP while a slow client downloads 16 MiB: the body still
#              comes whole (the retired tree keeps its descriptors until
#              the output is sent);
#   truncate   a 64 MiB file truncated to 1 MiB while a rate-limited curl
#              reads it: the connection ends short (curl fails, well before
#              the keep-alive timeout), the server is alive and serves the
#              next request;
#   counters   (--stats at SIGTERM, exit 0) send.sendfile_bytes covers the
#              plain bodies, send.sendfile_truncated counted the cut file,
#              files.sendfile_fds = the mapped files; tls.ktls_tx +
#              tls.ktls_fallback = tls.handshakes, and tls.ktls_kernel says
#              what the kernel offers (TCP_ULP "tls", probed here too);
#   off        --sendfile off: the same sizes identical, send.sendfile_calls
#              0, the bytes counted under send.writev_bytes, no descriptor
#              kept; a truncated file there closes the connection too
#              (writev's EFAULT);
#   cli        --sendfile with --stack skiff, or a bad value: exit 2 with a
#              message; serve --help lists it.
#
# Prints "PASS name" / "FAIL name: why", ends with "sendfile: N passed, N
# failed"; exits non-zero if anything failed.  SENDFILE_KEEP_LOGS=1 keeps
# the work folder.
set -u
usage() {
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
	exit "${1:-2}"
}
case ${1:-} in
-h | --help) usage 0 ;;
"") usage ;;
esac
BIN=$1
[ -x "$BIN" ] || { echo "sendfile.sh: $BIN is not an executable" >&2; exit 2; }
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=sendfile
skt_need tools curl openssl python3 sha256sum truncate || { summary; exit 1; }

WORK=$(mktemp -d /tmp/skiff-sendfile.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	if [ "${SKT_FAILED:-0}" = 0 ] && [ -z "${SENDFILE_KEEP_LOGS:-}" ]; then
		rm -rf "$WORK"
	else
		echo "sendfile: logs kept in $WORK" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
declare -A ST

sha() { sha256sum "$1" | cut -c1-64; }

# ---- the tree and the certificate ----------------------------------------
ROOT=$WORK/root
mkdir -p "$ROOT"
head -c $((100 * 1024)) /dev/urandom >"$ROOT/b100k"
head -c $((1024 * 1024)) /dev/urandom >"$ROOT/b1m"
head -c $((16 * 1024 * 1024)) /dev/urandom >"$ROOT/b16m"
head -c $((64 * 1024 * 1024)) /dev/urandom >"$ROOT/cut.bin"
printf 'small\n' >"$ROOT/index.html" # in the arena: no descriptor
MAPPED=4                             # the files of 16 KiB and more
SIZES="b100k b1m b16m"
if ! openssl req -x509 -nodes -days 2 -subj "/CN=skiff-test" -addext "subjectAltName=IP:127.0.0.1" \
	-newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$WORK/t.key" -out "$WORK/t.crt" \
	>"$WORK/openssl.log" 2>&1; then
	fail setup "openssl could not make the certificate: $(tail -n 2 "$WORK/openssl.log" | tr '\n' ' ')"
	summary
	exit 1
fi

# start NAME ARGS...: serve on fresh ports (PORT, TPORT), wait until it listens.
start() {
	local name=$1
	shift
	PORT=$(skt_free_port) TPORT=$(skt_free_port)
	LOG=$WORK/$name.out ERR=$WORK/$name.err
	"$BIN" serve --stack linux --ip 127.0.0.1 --port "$PORT" --root "$ROOT" --control none \
		--tls-cert "$WORK/t.crt" --tls-key "$WORK/t.key" --tls-port "$TPORT" --stats "$@" \
		>"$LOG" 2>"$ERR" &
	SRV=$!
	PIDS+=("$SRV")
	if ! skt_wait_for 10 grep -q 'skiff serve: listening' "$LOG"; then
		fail "$name.start" "no listening line: $(tail -n 3 "$ERR" | tr '\n' ' ')"
		return 1
	fi
}
c() { timeout 60 curl -sS "$@"; }
# HTTPS as HTTP/1.1: the phase is about sendfile and kTLS, which carry HTTP/1.1
# bodies (an HTTP/2 body goes through the session from the mapping).
cs() { timeout 60 curl -sS --http1.1 --cacert "$WORK/t.crt" "$@"; }

# sizes NAME: every size, HTTP and HTTPS, a connection each and keep-alive.
sizes() {
	local name=$1 f bad="" got
	for f in $SIZES; do
		c -o "$WORK/got" "http://127.0.0.1:$PORT/$f" && [ "$(sha "$WORK/got")" = "$(sha "$ROOT/$f")" ] ||
			bad+=" http/$f"
		cs -o "$WORK/got" "https://127.0.0.1:$TPORT/$f" &&
			[ "$(sha "$WORK/got")" = "$(sha "$ROOT/$f")" ] || bad+=" https/$f"
	done
	[ -z "$bad" ] && pass "$name.sizes (100 KiB, 1 MiB, 16 MiB identical, HTTP and HTTPS)" ||
		fail "$name.sizes" "differ or failed:$bad"
	for scheme in http https; do
		local port=$PORT cl=c args=()
		[ $scheme = https ] && port=$TPORT cl=cs
		for f in $SIZES; do args+=(-o "$WORK/ka.$f" "$scheme://127.0.0.1:$port/$f"); done
		got=$($cl -w '%{num_connects} ' "${args[@]}")
		bad=""
		for f in $SIZES; do [ "$(sha "$WORK/ka.$f")" = "$(sha "$ROOT/$f")" ] || bad+=" $f"; done
		# One connection for the three: curl says 1 new connect, then 0, 0.
		if [ -z "$bad" ] && [ "$(echo "$got" | tr -s ' ')" = "1 0 0 " ]; then
			pass "$name.keepalive.$scheme (three bodies, one connection)"
		else
			fail "$name.keepalive.$scheme" "connects '$got', differing:$bad"
		fi
	done
}

# ranges NAME: one range from an offset, and two ranges (multipart).
ranges() {
	local name=$1
	c -o "$WORK/r1" -r 1000-5000999 "http://127.0.0.1:$PORT/b16m"
	if cmp -s "$WORK/r1" <(tail -c +1001 "$ROOT/b16m" | head -c 5000000); then
		pass "$name.range (206, bytes 1000-5000999 exact)"
	else
		fail "$name.range" "206 body differs ($(stat -c %s "$WORK/r1") bytes)"
	fi
	c -o "$WORK/r2" -r 0-99,1048000-1048575 "http://127.0.0.1:$PORT/b1m"
	if python3 - "$WORK/r2" "$ROOT/b1m" <<'EOF'; then
import sys
body, f = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
parts = [f[0:100], f[1048000:1048576]]
at = 0
for p in parts:  # each part's bytes, in order, each after its part head
    i = body.find(b"\r\n\r\n" + p, at)
    if i < 0:
        sys.exit(1)
    at = i + 4 + len(p)
sys.exit(0 if body[at:].startswith(b"\r\n--") else 1)
EOF
		pass "$name.multipart (206, both parts exact)"
	else
		fail "$name.multipart" "a part differs ($(stat -c %s "$WORK/r2") bytes)"
	fi
}

# truncate_check NAME: cut.bin cut to 1 MiB under a rate-limited reader.
truncate_check() {
	local name=$1 t0 t1 rc got
	t0=$(date +%s)
	timeout 50 curl -sS --limit-rate 8M -o "$WORK/cut.got" "http://127.0.0.1:$PORT/cut.bin" \
		2>"$WORK/cut.curl" &
	local cpid=$!
	sleep 1
	# In place, as `cp` over it does: the inode the server holds (its
	# mapping and its descriptor) is the one cut.
	truncate -s 1M "$ROOT/cut.bin"
	wait "$cpid"
	rc=$?
	t1=$(date +%s)
	got=$(stat -c %s "$WORK/cut.got" 2>/dev/null || echo 0)
	# curl 18: the connection closed before Content-Length's bytes.
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$got" -lt $((64 * 1024 * 1024)) ] &&
		[ $((t1 - t0)) -lt 40 ]; then
		pass "$name.truncate (curl exit $rc after $((t1 - t0)) s with $got of 67108864 bytes)"
	else
		fail "$name.truncate" "curl exit $rc after $((t1 - t0)) s, $got bytes ($(head -c 200 "$WORK/cut.curl"))"
	fi
	if kill -0 "$SRV" 2>/dev/null && c -o "$WORK/after" "http://127.0.0.1:$PORT/b1m" &&
		[ "$(sha "$WORK/after")" = "$(sha "$ROOT/b1m")" ]; then
		pass "$name.truncate_alive (the next request served whole)"
	else
		fail "$name.truncate_alive" "the server died or the next 1 MiB differs"
	fi
}

# reload NAME: SIGHUP during a slow 16 MiB download.
reload_check() {
	local name=$1
	timeout 50 curl -sS --limit-rate 16M -o "$WORK/hup.got" "http://127.0.0.1:$PORT/b16m" &
	local cpid=$!
	sleep 0.3
	kill -HUP "$SRV"
	skt_wait_for 5 grep -q 'root reloaded' "$LOG"
	wait "$cpid"
	local rc=$?
	if [ "$rc" = 0 ] && [ "$(sha "$WORK/hup.got")" = "$(sha "$ROOT/b16m")" ] &&
		grep -q 'root reloaded' "$LOG"; then
		pass "$name.reload (SIGHUP mid-body: 16 MiB identical)"
	else
		fail "$name.reload" "curl exit $rc, reloaded: $(grep -c 'root reloaded' "$LOG")"
	fi
}

# stop NAME: SIGTERM, counters into ST.
stop() {
	skt_stop_counters "$1.exit" "$SRV" "$LOG" "$ERR"
}

# The kernel's kTLS, asked as the server asks it.
KTLS_KERNEL=$(python3 -c '
import socket, errno
s = socket.socket()
try:
    s.setsockopt(socket.IPPROTO_TCP, 31, b"tls")  # TCP_ULP
    print(1)
except OSError as e:
    print(1 if e.errno == errno.ENOTCONN else 0)')

# ---- sendfile on (the default) -------------------------------------------
if start on; then
	sizes on
	ranges on
	reload_check on
	truncate_check on
	stop on
	plain=$(((100 * 1024 + 1024 * 1024 + 16 * 1024 * 1024) * 2)) # each size, twice over HTTP
	sf=${ST[send.sendfile_bytes]:-0}
	[ "$sf" -ge "$plain" ] && [ "${ST[send.sendfile_calls]:-0}" -gt 0 ] &&
		pass "on.counters (send.sendfile_bytes $sf >= $plain)" ||
		fail on.counters "send.sendfile_bytes $sf < $plain (calls ${ST[send.sendfile_calls]:-none})"
	[ "${ST[send.sendfile_truncated]:-0}" -ge 1 ] &&
		pass "on.truncated_counted (send.sendfile_truncated ${ST[send.sendfile_truncated]})" ||
		fail on.truncated_counted "send.sendfile_truncated ${ST[send.sendfile_truncated]:-none}"
	# After the reload the current tree holds the descriptors again.
	[ "${ST[files.sendfile_fds]:-x}" = "$MAPPED" ] &&
		pass "on.fds (files.sendfile_fds $MAPPED: the mapped files)" ||
		fail on.fds "files.sendfile_fds ${ST[files.sendfile_fds]:-none}, want $MAPPED"
	hs=${ST[tls.handshakes]:-0} kt=${ST[tls.ktls_tx]:-x} kf=${ST[tls.ktls_fallback]:-x}
	if [ "$kt" != x ] && [ "$kf" != x ] && [ "$hs" -gt 0 ] && [ $((kt + kf)) = "$hs" ] &&
		[ "${ST[tls.ktls_kernel]:-x}" = "$KTLS_KERNEL" ] &&
		{ [ "$KTLS_KERNEL" = 1 ] || [ "$kt" = 0 ]; }; then
		pass "on.ktls (kernel tls ULP $KTLS_KERNEL; of $hs handshakes kTLS $kt, fallback $kf)"
	else
		fail on.ktls "handshakes $hs, ktls_tx $kt, ktls_fallback $kf, ktls_kernel ${ST[tls.ktls_kernel]:-none} (probe: $KTLS_KERNEL)"
	fi
fi

# ---- sendfile off ---------------------------------------------------------
head -c $((64 * 1024 * 1024)) /dev/urandom >"$ROOT/cut.bin" # whole again before the load
if start off --sendfile off; then
	sizes off
	ranges off
	truncate_check off
	stop off
	wv=${ST[send.writev_bytes]:-0}
	[ "${ST[send.sendfile_calls]:-x}" = 0 ] && [ "$wv" -ge $(((100 * 1024 + 1024 * 1024 + 16 * 1024 * 1024) * 2)) ] &&
		[ "${ST[files.sendfile_fds]:-x}" = 0 ] &&
		pass "off.counters (send.sendfile_calls 0, send.writev_bytes $wv, no descriptor kept)" ||
		fail off.counters "sendfile_calls ${ST[send.sendfile_calls]:-none}, writev_bytes $wv, fds ${ST[files.sendfile_fds]:-none}"
fi

# ---- the option -----------------------------------------------------------
out=$("$BIN" serve --stack skiff --dev tap:skt-none --ip 198.18.0.2/24 --sendfile off 2>&1)
rc=$?
[ "$rc" = 2 ] && [[ $out == *"sendfile goes with stack linux"* ]] &&
	pass "cli.skiff (exit 2: $(echo "$out" | head -n 1))" || fail cli.skiff "exit $rc: $out"
out=$("$BIN" serve --stack linux --sendfile maybe 2>&1)
rc=$?
[ "$rc" = 2 ] && [[ $out == *sendfile* ]] && pass "cli.bad_value (exit 2)" || fail cli.bad_value "exit $rc: $out"
"$BIN" serve --help 2>&1 | grep -q -- '--sendfile on|off' && pass "cli.help (--sendfile documented)" ||
	fail cli.help "--sendfile missing from serve --help"

summary
