#!/usr/bin/env bash
# tests/h2_serve_tap.sh BIN — HTTP/2 through skiff's one HTTP engine
# (src/http/app.c) over skiff's own TCP/IP stack: `skiff serve --stack skiff
# --dev tap:sk0 --root DIR --tls-cert F --tls-key F`, in a namespace of
# tests/lib.sh's tap topology (198.18.0.0/24, nothing in the root
# namespace), the clients in the Linux peer's namespace.  The h2-serve-tap
# phase of `make test` (docs/testing.md); tests/h2_serve.py is the same
# engine on kernel sockets.
#
# Checks (PASS/FAIL, ending "h2-serve-tap: N passed, N failed"):
#   h2c.FILE        curl --http2-prior-knowledge: 200, HTTP/2, the body's sha256
#                   the file's (41 B to 3 MB), and curl --http1.1 the same
#   h2c.http1       HTTP/1.1 on the same port
#   h2c.nghttp      nghttp: three files on one connection, exit 0
#   h2c.h2load      h2load -c 4 -m 10: 4000 requests, 0 failed, 4000 2xx (and
#                   100 KB files: 300, 0 failed)
#   h2c.python-h2   python3-h2 (tests/h2_serve.py --streams): 20 concurrent
#                   streams on one connection, each a 200 with its file's bytes
#   tls.curl        curl's default over HTTPS: ALPN h2 (HTTP/2), the 3 MB file
#                   sha256-identical; --http1.1 still HTTP/1.1
#   tls.h2load      h2load over TLS: "Application protocol: h2", 2000 requests,
#                   0 failed
#   counters        SIGTERM, exit 0; http.h2_sessions, http.h2_streams,
#                   https.h2_sessions, no connection error, no session refused
# Keys and the certificate are made here at run time (openssl); none kept.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=h2-serve-tap
export PYTHONDONTWRITEBYTECODE=1

usage() { echo "usage: $0 path/to/skiff" >&2; exit 2; }
BIN=${1:-}
[ -n "$BIN" ] || usage
[ "$BIN" = -h ] || [ "$BIN" = --help ] && { sed -n '2,25p' "$0"; exit 0; }
if ! skt_check_bin "$BIN"; then
	fail setup "skiff binary '$BIN' missing or not runnable"
	summary
	exit 1
fi
skt_need setup openssl curl nghttp h2load timeout sha256sum || { summary; exit 1; }
PY=/usr/bin/python3 # Debian's, with python3-h2 (PATH's may lack it)
"$PY" -c 'import h2' 2>/dev/null || { fail setup "$PY lacks h2 (python3-h2)"; summary; exit 1; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
skt_family 4
SRV_IP=$SKT_SRV H=$SKT_HOST
WORK=$(mktemp -d /tmp/skiff-h2tap.XXXXXX)
# shellcheck disable=SC2034 # set and read by tests/lib.sh skt_serve_*
{
SRV_PID=
NS_C= NS_S= IF_C=
TGT=skiff:tap
SERVE=()
}
skt_work_traps "" "logs"

C() { timeout "${T:-60}" ip netns exec "$NS_C" "$@"; }

if ! openssl req -x509 -nodes -days 2 -subj "/CN=skiff-test" -addext "subjectAltName=IP:$SRV_IP" \
	-newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$WORK/k.pem" -out "$WORK/c.pem" \
	>"$WORK/openssl.log" 2>&1; then
	fail setup "openssl could not make the certificate: $(tail -n 2 "$WORK/openssl.log" | tr '\n' ' ')"
	summary
	exit 1
fi
ROOT=$WORK/root
mkdir -p "$ROOT"
printf '<html>hello over h2 on skiff</html>\n' >"$ROOT/index.html"
head -c 41 /dev/urandom >"$ROOT/small.txt"
head -c 100000 /dev/urandom >"$ROOT/mid.bin"
head -c 3000017 /dev/urandom >"$ROOT/big.bin"
sha() { sha256sum <"$1" | cut -c1-64; }

# curl_get NAME ARGS...: "CODE VERSION" on stdout, the body in $WORK/NAME.
curl_get() {
	local name=$1
	shift
	C curl -s --max-time 30 -o "$WORK/$name" -w '%{http_code} %{http_version}' "$@" 2>/dev/null
}

# h2load_ok N OUT: N requests done, 0 failed, N 2xx.
h2load_ok() {
	grep -q "requests: $1 total, $1 started, $1 done, $1 succeeded, 0 failed" <<<"$2" &&
		grep -q "status codes: $1 2xx" <<<"$2"
}
h2load_says() { grep -E '^(requests:|status codes:|Application protocol:)' <<<"$1" | tr '\n' ' '; }

SKT_SCOPE=$TGT
echo "== $TGT"
if ! skt_serve_target "$SKT_SKIFF_IP"; then
	fail setup "could not build the $TGT topology"
	summary
	exit 1
fi
skt_client_sysctls
skt_serve_launch files --port 80 --root "$ROOT" --stats \
	--tls-cert "$WORK/c.pem" --tls-key "$WORK/k.pem" --tls-port 443
if ! skt_serve_answer 10 --http2-prior-knowledge "http://$H/"; then
	fail start "no h2c answer within 10 s: $(skt_serve_tail)"
	summary
	exit 1
fi
pass "start (h2c answered)"

# ---- h2c: HTTP/2 by prior knowledge ---------------------------------------
for f in index.html small.txt mid.bin big.bin; do
	v2=$(curl_get "$f.h2" --http2-prior-knowledge "http://$H/$f")
	v1=$(curl_get "$f.h1" --http1.1 "http://$H/$f")
	want=$(sha "$ROOT/$f")
	if [ "$v2" = "200 2" ] && [ "$v1" = "200 1.1" ] && [ "$(sha "$WORK/$f.h2")" = "$want" ] &&
		[ "$(sha "$WORK/$f.h1")" = "$want" ]; then
		pass "h2c.$f (200 over HTTP/2 and HTTP/1.1, $(stat -c %s "$ROOT/$f") B sha256-identical)"
	else
		fail "h2c.$f" "h2: '$v2' $(stat -c %s "$WORK/$f.h2" 2>/dev/null) B; h1: '$v1' (want '200 2', '200 1.1', the file's sha256)"
	fi
done
out=$(curl_get plain "http://$H/small.txt")
[ "$out" = "200 1.1" ] && pass "h2c.http1 (curl without --http2: $out)" || fail h2c.http1 "got '$out'"
out=$(C nghttp -n -s "http://$H/index.html" "http://$H/mid.bin" "http://$H/big.bin" 2>&1)
rc=$?
[ $rc -eq 0 ] && grep -q '/big.bin' <<<"$out" && pass "h2c.nghttp (three files, one connection, exit 0)" ||
	fail h2c.nghttp "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
out=$(C h2load -n 4000 -c 4 -m 10 "http://$H/small.txt" 2>&1)
h2load_ok 4000 "$out" && pass "h2c.h2load ($(h2load_says "$out"))" || fail h2c.h2load "$(h2load_says "$out")"
out=$(C h2load -n 300 -c 4 -m 10 "http://$H/mid.bin" 2>&1)
h2load_ok 300 "$out" && pass "h2c.h2load-100KB ($(h2load_says "$out"))" ||
	fail h2c.h2load-100KB "$(h2load_says "$out")"
out=$(C "$PY" "$HERE/h2_serve.py" --streams "$SRV_IP" 80 "$ROOT" 2>&1)
[ $? -eq 0 ] && pass "h2c.python-h2 ($out)" || fail h2c.python-h2 "$out"

# ---- TLS: ALPN h2 by default ----------------------------------------------
out=$(curl_get tls.big --cacert "$WORK/c.pem" "https://$H/big.bin")
if [ "$out" = "200 2" ] && [ "$(sha "$WORK/tls.big")" = "$(sha "$ROOT/big.bin")" ]; then
	pass "tls.curl (curl's default over HTTPS: $out, 3 MB sha256-identical)"
else
	fail tls.curl "'$out' (want '200 2'), $(stat -c %s "$WORK/tls.big" 2>/dev/null) B"
fi
out=$(curl_get tls.h1 --http1.1 --cacert "$WORK/c.pem" "https://$H/small.txt")
[ "$out" = "200 1.1" ] && pass "tls.http1 (--http1.1: $out)" || fail tls.http1 "got '$out'"
out=$(C h2load -n 2000 -c 8 -m 10 "https://$H/small.txt" 2>&1)
if h2load_ok 2000 "$out" && grep -q '^Application protocol: h2' <<<"$out"; then
	pass "tls.h2load ($(h2load_says "$out"))"
else
	fail tls.h2load "$(h2load_says "$out")"
fi

# ---- the counters ---------------------------------------------------------
if skt_serve_exit counters TERM 10; then
	declare -A ST=()
	while read -r k v; do ST[$k]=$v; done < <(grep -E '^[a-z_.0-9]+ [0-9]+$' "$SRV_LOG")
	hs=${ST[http.h2_sessions]:-0} hst=${ST[http.h2_streams]:-0} ts=${ST[https.h2_sessions]:-0}
	ce=$((${ST[http.h2_conn_errors]:-0} + ${ST[https.h2_conn_errors]:-0}))
	rf=$((${ST[http.h2_sessions_refused]:-0} + ${ST[https.h2_sessions_refused]:-0}))
	if [ "$hs" -ge 14 ] && [ "$hst" -ge 4300 ] && [ "$ts" -ge 9 ] && [ "$ce" = 0 ] && [ "$rf" = 0 ]; then
		pass "counters (exit 0; http.h2_sessions=$hs h2_streams=$hst https.h2_sessions=$ts, no connection error, none refused)"
	else
		fail counters "http.h2_sessions=$hs (>= 14) http.h2_streams=$hst (>= 4300) https.h2_sessions=$ts (>= 9) conn_errors=$ce (0) refused=$rf (0)"
	fi
fi
summary
