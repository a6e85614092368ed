#!/usr/bin/env bash
# tests/vm_h2.sh — HTTP/2 in the unikernel (issue 33): the one HTTP engine
# (http/app.c) in the guest under QEMU TCG, user networking, forwards on
# 127.0.0.1 only; the vm-h2 phase of `make test` (docs/testing.md).
#
#   tests/vm_h2.sh [build/skiff] [build/skiff-uk.elf] [build/skiff-uk-tls13.elf] [build/examples/kv-uk.elf]
#
# The guests get the word tls-alpn=h2,http/1.1 (ALPN h2 on their TLS
# listener whatever the default).  Certificates are made here with openssl
# (ECDSA P-256) in a temporary folder removed at exit, with the site's
# files.  Checks, each PASS/FAIL, ending "vm-h2: N passed, N failed":
# the serve image (BearSSL, TLS 1.2) with --root:
#   boot        the guest says ready with its https line
#   h2c-bodies  curl --http2-prior-knowledge: 200, HTTP version 2, for four
#               files (41 B to 300,017 B) the body's sha256 equal to the
#               file's and to curl --http1.1's
#   h2c-head    HEAD: 200, content-length the file's, no body
#   h2c-range   Range: bytes=1000-1999: 206, the 1,000 bytes of the file
#   h2c-404     a missing file: 404 over HTTP/2
#   nghttp      nghttp -n -v with three URIs on one connection: three
#               :status 200, exit 0
#   h2load      h2load -n 400 -c 4 -m 10: 400 succeeded, 0 failed, 400 2xx
#   python-h2   python3-h2 (tests/h2_serve.py's client): 20 concurrent
#               streams on one connection, each 200 with its file's bytes
#   tls12-h2    curl --http2 over HTTPS (BearSSL, TLS 1.2): ALPN h2, HTTP
#               version 2, the body sha256-identical; h2load over TLS: 0
#               failed; at exit https.h2_* counting these clients
#   python-h2-tls12  python3-h2 over python's ssl, 10 concurrent streams of
#               300,017 B at the default windows (WINDOW_UPDATEs arriving as
#               the guest's records leave: loop_tls's kick, tls.kicks)
#   chromium-tls12  headless Chromium (--dump-dom, in this script's own
#               network namespace) loads tools/h2_page.sh's page: its DOM
#               counts 60 stylesheets, and the guest's access-log=console
#               shows the page and all 60 assets 200 over HTTP/2.0 to
#               HeadlessChrome's User-Agent, none of its requests otherwise
#   counters    at "exit 0": http.h2_sessions/h2_streams (h2c) and
#               https.h2_sessions/h2_streams (TLS) at least what the clients
#               above opened, tls.alpn_h2, no h2 connection error, no
#               session refused
# the TLS 1.3 image (wolfSSL), when given and built:
#   tls13-h2, python-h2-tls13, chromium-tls13  as over TLS 1.2 (tls_h2),
#               curl --http2 --tlsv1.3 and h2load over TLSv1.3
# the kv application image (an application on http/app.h):
#   app-h2      curl --http2-prior-knowledge PUT of 200,000 B (past a
#               stream's window) then GET of the key: 201/204, 200 and the
#               same bytes, over HTTP/2; exit 0, http.h2_streams at exit
# The lock (flock /tmp/skiff-nettest.lock) is the caller's, as for
# tests/vm_tls.sh.  Every timing printed is under TCG.
set -u
cd "$(dirname "$0")/.." || exit 2
case ${1:-} in -h | --help) sed -n '2,48p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
# In a network namespace of its own (unshare -n, only lo up): QEMU's user
# networking needs nothing more, and nothing Chromium might try to reach
# beyond the page can leave the machine.
if [ -z "${VM_H2_NETNS:-}" ]; then
	exec unshare -n env VM_H2_NETNS=1 bash "$0" "$@"
fi
ip link set lo up || { echo "vm-h2: ip link set lo up failed in the new namespace" >&2; exit 1; }
SKIFF=${1:-build/skiff}
IMG=${2:-build/skiff-uk.elf}
IMG13=${3:-build/skiff-uk-tls13.elf}
APP=${4:-build/examples/kv-uk.elf}
# shellcheck source=tests/lib.sh
. tests/lib.sh
# shellcheck source=tests/vm_lib.sh
. tests/vm_lib.sh
vm_init vm-h2
vm_need_files "make all uk-tls13" "$SKIFF" "$IMG" "$IMG13" "$APP"
skt_need setup qemu-system-x86_64 python3 openssl curl nghttp h2load chromium timeout || { summary; exit 1; }
PY=/usr/bin/python3 # Debian's, with python3-h2
"$PY" -c 'import h2' 2>/dev/null || { fail setup "$PY lacks h2 (python3-h2)"; summary; exit 1; }
VM_ARGS=(--mem 512M)
vm_mkcert ec ec || { fail setup "openssl req failed"; summary; exit 1; }
CA=$CERTS/ec.crt
ALPN=tls-alpn=h2,http/1.1

SITE=$CERTS/site
mkdir -p "$SITE"
echo '<html>hello over h2 in the guest</html>' >"$SITE/index.html"
head -c 41 /dev/urandom >"$SITE/small.txt"
head -c 6000 /dev/urandom >"$SITE/mid.bin"
head -c 300017 /dev/urandom >"$SITE/big.bin"
tools/h2_page.sh "$SITE" "" >/dev/null || { fail setup "tools/h2_page.sh"; summary; exit 1; }
sha() { sha256sum | cut -c1-64; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
ctr() { awk -v n="$1" '$1 == n {gsub(/\r/, "", $2); print $2}' "$2" | tail -1; }

# py_h2_tls HTTPS_PORT: python3-h2 over python's ssl (ALPN h2), 10
# concurrent streams of big.bin on one connection, the client's windows at
# their 65,535-byte defaults so that WINDOW_UPDATEs keep coming while the
# guest's records leave (the case loop_tls's kick is for); prints what it
# got, status 0 when every stream has the file's bytes.
py_h2_tls() {
	timeout 120 "$PY" - "$1" "$CA" "$SITE/big.bin" <<'PY' 2>&1
import socket, ssl, sys, time
sys.path.insert(0, "tests")
import h2.config, h2.connection
from h2_serve import H2Client
port, ca, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
want = open(path, "rb").read()

class TLSClient(H2Client):
    def __init__(self):
        ctx = ssl.create_default_context(cafile=ca)
        ctx.set_alpn_protocols(["h2"])
        raw = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.sock = ctx.wrap_socket(raw, server_hostname="localhost")
        self.alpn = self.sock.selected_alpn_protocol()
        self.tls = self.sock.version()
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        self.sock.sendall(self.conn.data_to_send())
        self.port = port

    def headers(self, method, p, extra=()):
        return [(":method", method), (":path", p), (":scheme", "https"),
                (":authority", f"localhost:{self.port}"), *extra]

t = time.time()
c = TLSClient()
res = c.run({1 + 2 * i: c.headers("GET", "/big.bin") for i in range(10)})
c.close()
good = sum(1 for st, body in res.values() if st == 200 and body == want)
print(f"ALPN {c.alpn}, {c.tls}: {good} of 10 streams of 300,017 B whole in {time.time() - t:.1f} s")
sys.exit(0 if good == 10 and c.alpn == "h2" else 1)
PY
}

# chromium_load NAME HTTPS_PORT: headless Chromium loads the page
# (tools/h2_page.sh's, under --root) from the guest over TLS; CHROME is
# "exit RC, DOM ok|bad, S s".  chromium_log NAME GUEST_LOG (after the guest
# has exited, its console holding access-log=console's records): CHROME_LOG
# is "PAGE ASSETS H2 OTHER" as tests/h2_chromium.sh counts them.
chromium_load() {
	local t rc dom=bad
	t=$(date +%s.%N)
	skt_chromium_dom 90 "https://localhost:$2/page/index.html" "$CERTS/profile-$1" \
		"$LOG/dom-$1.html" "$LOG/chromium-$1.err"
	rc=$?
	grep -q '<title>skiff h2 page</title>' "$LOG/dom-$1.html" && grep -q '>stylesheets 60<' "$LOG/dom-$1.html" && dom=ok
	CHROME="exit $rc, DOM $dom, $(elapsed "$t") s"
}
chromium_log() {
	tr -d '\r' <"$2" | grep -a 'HeadlessChrome' >"$LOG/chromium-access-$1.log"
	CHROME_LOG=$(awk '
		{
			if ($0 ~ / HTTP\/2\.0" /) h2++; else other++
			if ($0 ~ /"GET \/page\/index\.html HTTP\/2\.0" 200 /) page++
			if (match($0, /"GET \/page\/a[0-9][0-9]\.css HTTP\/2\.0" 200 /)) seen[substr($0, RSTART + 11, 3)] = 1
		}
		END { n = 0; for (k in seen) n++; printf "%d %d %d %d\n", page, n, h2, other }' "$LOG/chromium-access-$1.log")
}

# tls_h2 TAG ENGINE VER HTTPS GUEST_LOG: HTTP/2 over a guest's TLS listener
# (ENGINE's TLS VER, ALPN h2), the same for both images: curl --http2 of
# big.bin and h2load -n 100, python3-h2 (py_h2_tls), headless Chromium
# (chromium_load); then the guest is told to exit (CTL) and waited for
# (VM), RC its status, and GUEST_LOG (its console) read: the checks
# python-h2-TAG, chromium-TAG (the DOM, the access log) and TAG-h2 (curl,
# h2load, exit 0, the https.h2_* counters at least what these clients
# opened: 5 sessions, 1 + 100 + 10 + 61 streams, no connection error).
tls_h2() {
	local tag=$1 engine=$2 ver=$3 port=$4 gl=$5 want r s req out page assets h2 other se ss ce
	want=$(sha <"$SITE/big.bin")
	r=$(timeout 60 curl -sS --http2 "--tlsv$ver" --cacert "$CA" -o "$LOG/$tag.body" \
		-w '%{http_code} %{http_version} %{ssl_verify_result}' "https://localhost:$port/big.bin" 2>&1)
	s=$(sha <"$LOG/$tag.body")
	timeout 120 h2load -n 100 -c 2 -m 10 "https://127.0.0.1:$port/small.txt" >"$LOG/h2load-$tag.log" 2>&1
	req=$(grep '^requests:' "$LOG/h2load-$tag.log")
	if out=$(py_h2_tls "$port"); then
		pass "python-h2-$tag ($engine: $out)"
	else
		fail "python-h2-$tag" "$out"
	fi
	chromium_load "$tag" "$port"
	vm_say_exit "$CTL"
	wait "$VM"
	RC=$?
	chromium_log "$tag" "$gl"
	read -r page assets h2 other <<<"$CHROME_LOG"
	if [[ $CHROME == "exit 0, DOM ok"* ]] && [ "$page" = 1 ] && [ "$assets" = 60 ] && [ "$other" = 0 ]; then
		pass "chromium-$tag (headless Chromium, $engine TLS $ver + ALPN h2: $CHROME; the guest's access log: the page and 60 assets 200 over HTTP/2.0, $h2 records of HeadlessChrome, all HTTP/2.0)"
	else
		fail "chromium-$tag" "$CHROME; access log: page $page (1), assets $assets (60), HTTP/2.0 $h2, other $other (0); $LOG/chromium-$tag.err $LOG/chromium-access-$tag.log"
	fi
	se=$(ctr https.h2_sessions "$gl") ss=$(ctr https.h2_streams "$gl") ce=$(ctr https.h2_conn_errors "$gl")
	if [ "$r" = "200 2 0" ] && [ "$s" = "$want" ] &&
		[[ $req == "requests: 100 total, 100 started, 100 done, 100 succeeded, 0 failed"* ]] &&
		grep -q 'Application protocol: h2$' "$LOG/h2load-$tag.log" && grep -q "TLSv$ver" "$LOG/h2load-$tag.log" &&
		[ "$RC" = 0 ] && [ "${se:-0}" -ge 5 ] && [ "${ss:-0}" -ge 172 ] && [ "${ce:-1}" = 0 ]; then
		pass "$tag-h2 ($engine: curl --http2 --tlsv$ver -> $r, 300,017 B sha256-identical; h2load -n 100 -c 2 -m 10 over TLSv$ver, ALPN h2: 0 failed; exit 0, https.h2_sessions $se, https.h2_streams $ss; $(elapsed "$T0") s under tcg)"
	else
		fail "$tag-h2" "curl '$r' sha ${s:0:12} want ${want:0:12}; h2load '$req'; exit $RC; h2_sessions '$se' h2_streams '$ss' h2_conn_errors '$ce'; $gl $LOG/h2load-$tag.log"
	fi
}

# --- the serve image: h2c and TLS 1.2 (BearSSL) ----------------------------
HTTP=$(skt_free_port STREAM) HTTPS=$(skt_free_port STREAM) CTL=$(skt_free_port DGRAM)
T0=$(date +%s.%N)
vm_boot serve 300 --root "$SITE" --tls-cert "$CA" --tls-key "$CERTS/ec.key" -p "$HTTP:80" -p "$HTTPS:443" \
	-p "$CTL:9/udp" -- shutdown-port=9 exit-after=280 stats access-log=console "$ALPN"
if skt_wait_log "$LOG/serve.log" "skiff-uk: ready" 60 && grep -aq "https=443" "$LOG/serve.log"; then
	pass "boot (skiff-uk.elf, tcg, ready in $(elapsed "$T0") s; $(grep -ao 'https=443[^;]*' "$LOG/serve.log" | head -1))"
else
	fail boot "no ready/https line in 60 s; see $LOG/serve.log"
	summary
	exit 1
fi
H=http://127.0.0.1:$HTTP

# h2c: each file over HTTP/2 by prior knowledge and over HTTP/1.1.
t=$(date +%s.%N) bad=
for f in index.html small.txt mid.bin big.bin; do
	want=$(sha <"$SITE/$f")
	r2=$(timeout 60 curl -sS --http2-prior-knowledge -o "$LOG/h2.body" -w '%{http_code} %{http_version}' "$H/$f" 2>&1)
	s2=$(sha <"$LOG/h2.body")
	s1=$(timeout 60 curl -sS --http1.1 "$H/$f" 2>/dev/null | sha)
	[ "$r2" = "200 2" ] && [ "$s2" = "$want" ] && [ "$s1" = "$want" ] || bad="$bad $f: '$r2' h2 ${s2:0:12} h1 ${s1:0:12} file ${want:0:12};"
done
[ -z "$bad" ] && pass "h2c-bodies (4 files, 41 to 300,017 B: 200 over HTTP/2, sha256 = HTTP/1.1's = the file's; $(elapsed "$t") s)" ||
	fail h2c-bodies "$bad"

hd=$(timeout 30 curl -sS --http2-prior-knowledge -I "$H/big.bin" 2>&1 | tr -d '\r')
if grep -q '^HTTP/2 200' <<<"$hd" && grep -qi '^content-length: 300017$' <<<"$hd"; then
	pass "h2c-head (HEAD: HTTP/2 200, content-length 300017)"
else
	fail h2c-head "$(tr '\n' ' ' <<<"$hd")"
fi
r=$(timeout 30 curl -sS --http2-prior-knowledge -r 1000-1999 -o "$LOG/range.body" -w '%{http_code} %{http_version} %{size_download}' "$H/big.bin" 2>&1)
if [ "$r" = "206 2 1000" ] && [ "$(sha <"$LOG/range.body")" = "$(tail -c +1001 "$SITE/big.bin" | head -c 1000 | sha)" ]; then
	pass "h2c-range (bytes=1000-1999: $r, the file's bytes)"
else
	fail h2c-range "'$r' (want 206 2 1000) or the bytes differ"
fi
r=$(timeout 30 curl -sS --http2-prior-knowledge -o /dev/null -w '%{http_code} %{http_version}' "$H/nope.txt" 2>&1)
[ "$r" = "404 2" ] && pass "h2c-404 ($r)" || fail h2c-404 "'$r' (want 404 2)"

timeout 60 nghttp -n -v "$H/index.html" "$H/small.txt" "$H/mid.bin" >"$LOG/nghttp.log" 2>&1
rc=$?
n=$(grep -c ':status: 200' "$LOG/nghttp.log")
[ "$rc" = 0 ] && [ "$n" = 3 ] && pass "nghttp (-n, 3 URIs on one connection: 3 :status 200, exit 0)" ||
	fail nghttp "exit $rc, $n :status 200 (want 3); $LOG/nghttp.log"

t=$(date +%s.%N)
timeout 120 h2load -n 400 -c 4 -m 10 "$H/small.txt" >"$LOG/h2load.log" 2>&1
req=$(grep '^requests:' "$LOG/h2load.log") st=$(grep '^status codes:' "$LOG/h2load.log")
if [[ $req == "requests: 400 total, 400 started, 400 done, 400 succeeded, 0 failed"* ]] && [[ $st == "status codes: 400 2xx,"* ]] &&
	grep -q 'Application protocol: h2c' "$LOG/h2load.log"; then
	pass "h2load (-n 400 -c 4 -m 10, h2c: 400 succeeded, 0 failed, 400 2xx; $(grep -o 'finished in [^,]*, [^,]*' "$LOG/h2load.log") under tcg)"
else
	fail h2load "$req / $st; $LOG/h2load.log"
fi

out=$(timeout 90 "$PY" tests/h2_serve.py --streams 127.0.0.1 "$HTTP" "$SITE" 2>&1)
[ $? -eq 0 ] && pass "python-h2 (20 concurrent streams on one connection: $out)" || fail python-h2 "$out"

# TLS 1.2 (BearSSL): curl --http2 negotiates h2 by ALPN; the guest exits.
tls_h2 tls12 BearSSL 1.2 "$HTTPS" "$LOG/serve.log"
rc=$RC
L=$LOG/serve.log
# The plain listener's engine counts as http.*, the TLS one's as https.*.
# h2c sessions: 4 curl files + HEAD + range + 404 + nghttp + 4 h2load +
# python = 13, streams 4 + 1 + 1 + 1 + 3 + 400 + 20 = 430; over TLS: curl,
# 2 h2load, python and Chromium = 5 sessions (tls.alpn_h2), 1 + 100 + 10 +
# 61 streams.
se=$(ctr http.h2_sessions "$L") ss=$(ctr http.h2_streams "$L") ce=$(ctr http.h2_conn_errors "$L")
sr=$(ctr http.h2_sessions_refused "$L")
tse=$(ctr https.h2_sessions "$L") tss=$(ctr https.h2_streams "$L") tce=$(ctr https.h2_conn_errors "$L")
tsr=$(ctr https.h2_sessions_refused "$L") alpn=$(ctr tls.alpn_h2 "$L")
if [ "$rc" = 0 ] && [ "${se:-0}" -ge 13 ] && [ "${ss:-0}" -ge 430 ] && [ "${ce:-1}" = 0 ] && [ "${sr:-1}" = 0 ] &&
	[ "${tse:-0}" -ge 5 ] && [ "${tss:-0}" -ge 172 ] && [ "${tce:-1}" = 0 ] && [ "${tsr:-1}" = 0 ] && [ "${alpn:-0}" -ge 5 ]; then
	pass "counters (exit 0; http.h2_sessions $se, http.h2_streams $ss, https.h2_sessions $tse, https.h2_streams $tss, tls.alpn_h2 $alpn, tls.kicks $(ctr tls.kicks "$L"), no h2 connection error or refused session; the guest's whole run $(elapsed "$T0") s under tcg)"
else
	fail counters "exit $rc; http.h2_sessions '$se' (>= 13) http.h2_streams '$ss' (>= 430) https.h2_sessions '$tse' (>= 5) https.h2_streams '$tss' (>= 172) tls.alpn_h2 '$alpn' (>= 5); h2_conn_errors '$ce'/'$tce' h2_sessions_refused '$sr'/'$tsr' (0); $L"
fi

# --- the TLS 1.3 image (wolfSSL) ----------------------------------------------
HTTP=$(skt_free_port STREAM) HTTPS=$(skt_free_port STREAM) CTL=$(skt_free_port DGRAM)
T0=$(date +%s.%N)
IMG_SAVE=$IMG IMG=$IMG13
vm_boot tls13 200 --root "$SITE" --tls-cert "$CA" --tls-key "$CERTS/ec.key" -p "$HTTP:80" -p "$HTTPS:443" \
	-p "$CTL:9/udp" -- shutdown-port=9 exit-after=180 stats access-log=console "$ALPN"
if skt_wait_log "$LOG/tls13.log" "skiff-uk: ready" 60 && grep -aq "https=443 (wolfSSL" "$LOG/tls13.log"; then
	tls_h2 tls13 wolfSSL 1.3 "$HTTPS" "$LOG/tls13.log"
else
	fail tls13-h2 "no ready line with https=443 (wolfSSL) in 60 s; see $LOG/tls13.log"
fi
IMG=$IMG_SAVE

# --- an application image (kv, http/app.h) ---------------------------------------
HTTP=$(skt_free_port STREAM) CTL=$(skt_free_port DGRAM)
IMG=$APP
vm_boot app 120 -p "$HTTP:80" -p "$CTL:9/udp" -- shutdown-port=9 exit-after=100 stats
if skt_wait_log "$LOG/app.log" "skiff-uk: ready" 60; then
	# A body of 200,000 B: more than a stream's receive window, so the
	# guest's WINDOW_UPDATEs carry it.
	head -c 200000 /dev/urandom >"$CERTS/value.bin"
	p=$(timeout 60 curl -sS --http2-prior-knowledge -X PUT --data-binary @"$CERTS/value.bin" -o /dev/null \
		-w '%{http_code} %{http_version}' "http://127.0.0.1:$HTTP/kv/k" 2>&1)
	g=$(timeout 60 curl -sS --http2-prior-knowledge -o "$LOG/kv.body" -w '%{http_code} %{http_version}' \
		"http://127.0.0.1:$HTTP/kv/k" 2>&1)
	same=no
	cmp -s "$LOG/kv.body" "$CERTS/value.bin" && same=yes
	vm_say_exit "$CTL"
	wait "$VM"
	rc=$?
	ss=$(ctr http.h2_streams "$LOG/app.log")
	if [[ $p == 20[14]" 2" ]] && [ "$g" = "200 2" ] && [ "$same" = yes ] && [ "$rc" = 0 ] && [ "${ss:-0}" -ge 2 ]; then
		pass "app-h2 (kv-uk.elf over h2c: PUT of 200,000 B $p, GET $g, the same bytes; exit 0, http.h2_streams $ss)"
	else
		fail app-h2 "PUT '$p', GET '$g', same bytes: $same; exit $rc; http.h2_streams '${ss:-}'; $LOG/app.log"
	fi
else
	fail app-h2 "no ready line in 60 s; see $LOG/app.log"
fi
IMG=$IMG_SAVE

summary
