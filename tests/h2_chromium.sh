#!/usr/bin/env bash
# tests/h2_chromium.sh [build/skiff] — a browser's page load over HTTP/2
# (issue 33): headless Chromium loads tools/h2_page.sh's page (index.html
# and 60 stylesheets) from `skiff serve --stack linux` over HTTPS with ALPN
# h2, the h2-chromium phase of `make test` (docs/testing.md).
#
# The script runs in a network namespace of its own (unshare -n, only lo
# up), so nothing Chromium might try to reach beyond the page can leave
# the machine; its host resolver maps every other name to nothing too.
# The certificate is made here by openssl (ECDSA P-256, a day long) in a
# temporary folder removed at exit; Chromium is told to ignore that it is
# self-signed.  Checks, each PASS/FAIL, ending "h2-chromium: N passed,
# N failed":
#   start     skiff serve --tls-alpn h2,http/1.1 --access-log answers curl
#             --http2 over TLS with HTTP/2
#   chromium  chromium --headless=new --dump-dom exits 0 within 60 s
#   dom       the DOM it dumps is the page (its title) and says
#             "stylesheets 60": the page's last script ran after all 60 loaded
#   log-h2    skiff's access log: /page/index.html and each of the 60 assets
#             fetched with 200 over HTTP/2.0 by HeadlessChrome's User-Agent,
#             and no request from it over any other protocol
#   stats     skiff's counters at exit: https.h2_sessions >= 2 (the probe's
#             and Chromium's), https.h2_streams >= 62, no
#             https.h2_conn_errors, tls.alpn_h2 >= 2
# Root is needed for the namespace (make test runs as root).
set -u
cd "$(dirname "$0")/.." || exit 2
case ${1:-} in -h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
SKIFF=${1:-build/skiff}
if [ -z "${H2_CHROMIUM_NETNS:-}" ]; then
	exec unshare -n env H2_CHROMIUM_NETNS=1 bash "$0" "$SKIFF"
fi
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=h2-chromium
ip link set lo up || { fail setup "ip link set lo up in the new namespace"; summary; exit 1; }
skt_need setup chromium openssl curl timeout || { summary; exit 1; }
[ -x "$SKIFF" ] || { fail setup "missing $SKIFF (make)"; summary; exit 1; }

LOG=${H2_CHROMIUM_LOG:-build/test-logs/h2-chromium}
mkdir -p "$LOG"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/skiff-h2chromium.XXXXXX")
SRV=
cleanup() {
	[ -n "$SRV" ] && skt_stop_pid "$SRV"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/tls.key" \
	-out "$WORK/tls.crt" -days 1 -subj /CN=localhost \
	-addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>"$LOG/openssl.log" ||
	{ fail setup "openssl req: $(tail -1 "$LOG/openssl.log")"; summary; exit 1; }
tools/h2_page.sh "$WORK/root" "" >/dev/null || { fail setup "tools/h2_page.sh"; summary; exit 1; }

HTTP=$(skt_free_port) HTTPS=$(skt_free_port)
: >"$LOG/access.log"
"$SKIFF" serve --stack linux --ip 127.0.0.1 --port "$HTTP" --root "$WORK/root" \
	--tls-cert "$WORK/tls.crt" --tls-key "$WORK/tls.key" --tls-port "$HTTPS" \
	--tls-alpn h2,http/1.1 --access-log "$LOG/access.log" --stats >"$LOG/skiff.out" 2>"$LOG/skiff.err" &
SRV=$!
URL=https://localhost:$HTTPS/page/index.html
probe() { [ "$(curl -sk --http2 -o /dev/null -w '%{http_version}' --max-time 2 "$URL")" = 2 ]; }
if skt_wait_for 10 probe; then
	pass "start (skiff serve over TLS, curl --http2 told HTTP/2 by ALPN)"
else
	fail start "no HTTP/2 answer in 10 s: $(tail -n 3 "$LOG/skiff.err" | tr '\n' ' ')"
	summary
	exit 1
fi
before=$(wc -l <"$LOG/access.log")

# Chromium (tests/lib.sh): its own profile, nothing of its own on the
# network (the namespace has only lo).
t0=$(date +%s.%N)
skt_chromium_dom 60 "$URL" "$WORK/profile" "$LOG/dom.html" "$LOG/chromium.err"
rc=$?
t1=$(date +%s.%N)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
if [ "$rc" = 0 ] && [ -s "$LOG/dom.html" ]; then
	pass "chromium ($(chromium --version 2>/dev/null | head -1), --headless=new --dump-dom, exit 0, ${secs} s)"
else
	fail chromium "exit $rc after ${secs} s; $(grep -v '^\s*$' "$LOG/chromium.err" | tail -n 3 | tr '\n' ' ')"
fi
if grep -q '<title>skiff h2 page</title>' "$LOG/dom.html" && grep -q '>stylesheets 60<' "$LOG/dom.html"; then
	pass "dom (the page's title; its script counted 60 stylesheets loaded)"
else
	fail dom "$(grep -o '<title>[^<]*</title>\|id="sheets">[^<]*<' "$LOG/dom.html" | tr '\n' ' ') (want the title and 'stylesheets 60'; $LOG/dom.html)"
fi

# The access log is written at most 1 s after a record, and at exit: stop
# the server first (its counters come with it).
declare -A ST
skt_stop_counters stats-exit "$SRV" "$LOG/skiff.out" "$LOG/skiff.err"
SRV=
tail -n +"$((before + 1))" "$LOG/access.log" >"$LOG/chromium-access.log"
read -r ua_h2 ua_other page assets <<<"$(awk '
	/HeadlessChrome/ {
		if ($0 ~ /" [0-9]+ [0-9-]+ "[^"]*" "[^"]*"$/ && $0 ~ / HTTP\/2\.0" /) h2++; else other++
		if ($0 ~ /"GET \/page\/index\.html HTTP\/2\.0" 200 /) page++
		if (match($0, /"GET \/page\/a[0-9][0-9]\.css HTTP\/2\.0" 200 /)) seen[substr($0, RSTART + 11, 3)] = 1
	}
	END { n = 0; for (k in seen) n++; printf "%d %d %d %d\n", h2, other, page, n }' "$LOG/chromium-access.log")"
if [ "$page" = 1 ] && [ "$assets" = 60 ] && [ "$ua_other" = 0 ]; then
	pass "log-h2 (HeadlessChrome: the page and 60 distinct assets 200 over HTTP/2.0, $ua_h2 records, all HTTP/2.0)"
else
	fail log-h2 "page $page (want 1), assets $assets (want 60), records over HTTP/2.0 $ua_h2, other $ua_other (want 0); $LOG/chromium-access.log"
fi
# The TLS listener's engine counts as https.* (the plain one's http.*).
sess=${ST[https.h2_sessions]:-0} streams=${ST[https.h2_streams]:-0} cerr=${ST[https.h2_conn_errors]:--1}
alpn=${ST[tls.alpn_h2]:-0}
if [ "$sess" -ge 2 ] && [ "$streams" -ge 62 ] && [ "$cerr" = 0 ] && [ "$alpn" -ge 2 ]; then
	pass "stats (https.h2_sessions $sess, https.h2_streams $streams, https.h2_conn_errors 0, tls.alpn_h2 $alpn)"
else
	fail stats "https.h2_sessions '$sess' (>= 2: curl's and Chromium's), https.h2_streams '$streams' (>= 62), https.h2_conn_errors '$cerr' (0), tls.alpn_h2 '$alpn' (>= 2)"
fi
summary
