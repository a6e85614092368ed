#!/usr/bin/env bash
# tests/vm_proxy.sh — `skiff proxy` in the unikernel: the proxy image
# (build/skiff-proxy-uk.elf, uk/uk_proxy.c) under QEMU TCG with user
# networking, in front of tests/proxy_upstream.py on the host's 127.0.0.1
# (the guest reaches it at 10.0.2.2, which stays inside QEMU); clients
# (curl, python) on the 127.0.0.1 forward.  Ports are picked free.
#
#   tests/vm_proxy.sh [build/skiff] [build/skiff-proxy-uk.elf]
#
# Checks, each PASS/FAIL, ending "vm-proxy: N passed, N failed":
#   boot       the guest says its upstream and cache, then ready
#   forward    GET through the guest reaches the upstream (its log: one request,
#              Host kept, X-Forwarded-For 10.0.2.2, Via 1.1 skiff), 200 and its body
#   clock      the guest's Date header is the host's UTC time around the request
#              within 2 s (RTC + TSC)
#   cache      a max-age=60 answer: MISS, then HIT with Age, the upstream asked once
#   cache-clock the cache's dates are the guest's wall clock: an answer dated 30 s
#              ago (max-age=60) is a HIT with Age 27..33 (the RTC counts whole seconds,
#              so the guest may lag by one); one dated 120 s ago is
#              stale at once (the second request reaches the upstream too)
#   no-store   Cache-Control: no-store: both requests reach the upstream, no HIT
#   big-down   a 2 MiB answer, sha256 checked against the upstream's pattern
#   big-up     a 2 MiB POST to /echo: the upstream's sha256 of the body and the
#              echoed body's both match what was sent
#   https      the same guest with skiff vm --tls-cert/--tls-key (BearSSL, TLS 1.2):
#              curl --cacert over HTTPS gets the upstream's answer, and the upstream
#              sees X-Forwarded-Proto https (http on the plain port)
#   down       the upstream killed: 502 with "no upstream could be reached"
#   exit       the shutdown port's "exit 0": exit 0, stats with proxy.requests,
#              cache.hits and the upstream's counters
#   bad-*      upstream=1.2.3 stops the boot with the message `skiff proxy
#              --upstream 1.2.3` gives hosted (which exits 2); no upstream= and a
#              cache= beyond --mem stop it too, each saying what to change
# The QEMU runs are bounded by `timeout`.
set -u
cd "$(dirname "$0")/.." || exit 2
SKIFF=${1:-build/skiff}
IMG=${2:-build/skiff-proxy-uk.elf}
# shellcheck source=tests/lib.sh
. tests/lib.sh
# shellcheck source=tests/vm_lib.sh
. tests/vm_lib.sh
vm_init vm-proxy
vm_need_files "make all" "$SKIFF" "$IMG"
skt_need setup qemu-system-x86_64 python3 curl sha256sum timeout openssl || { summary; exit 1; }
# A throwaway ECDSA P-256 certificate for localhost (removed on exit).
vm_mkcert ec ec || { fail setup "openssl req failed"; summary; exit 1; }

# up_count PATH: requests the upstream logged for that target.
up_count() {
	curl -sS --max-time 10 "http://127.0.0.1:$UP/_stats" |
		python3 -c "import json,sys; print(sum(1 for e in json.load(sys.stdin)['log'] if e['target'] == sys.argv[1]))" "$1"
}
# up_field PATH HEADER: that header of the upstream's last request for PATH.
up_field() {
	curl -sS --max-time 10 "http://127.0.0.1:$UP/_stats" | python3 -c "
import json, sys
log = [e for e in json.load(sys.stdin)['log'] if e['target'] == sys.argv[1]]
print(''.join(v for k, v in log[-1]['headers'] if k.lower() == sys.argv[2].lower()) if log else '')" "$1" "$2"
}
hdr() { tr -d '\r' <"$1" | awk -v h="$(tr '[:upper:]' '[:lower:]' <<<"$2"):" 'tolower($1) == h {sub(/^[^:]*: */, ""); print; exit}'; }

UP=$(skt_free_port STREAM)
PX=$(skt_free_port STREAM)
PXS=$(skt_free_port STREAM)
CTL=$(skt_free_port DGRAM)
python3 tests/proxy_upstream.py "$UP" up >"$LOG/upstream.log" 2>&1 &
UPPID=$!
PIDS+=("$UPPID")
skt_wait_log "$LOG/upstream.log" "^upstream up on" 10 || { fail setup "upstream did not start"; summary; exit 1; }

: >"$LOG/guest.log"
timeout 150 "$SKIFF" vm --accel tcg --proxy --tls-cert "$CERTS/ec.crt" --tls-key "$CERTS/ec.key" \
	-p "$PX:80" -p "$PXS:443" -p "$CTL:9/udp" -- \
	"upstream=10.0.2.2:$UP" cache=16M max-body=4M shutdown-port=9 exit-after=140 stats \
	</dev/null >"$LOG/guest.log" 2>&1 &
VM=$!
PIDS+=("$VM")
if skt_wait_log "$LOG/guest.log" "skiff-uk: ready" 60 &&
	grep -aq "skiff-uk: proxy: upstream=10.0.2.2:$UP .*cache 16384 KiB" "$LOG/guest.log"; then
	pass "boot ($(grep -ao 'proxy: upstream=[^;]*;[^;]*' "$LOG/guest.log"))"
else
	fail boot "no proxy/ready line in 60 s: $(grep -a 'skiff-uk' "$LOG/guest.log" | tail -n 3 | tr '\n' ' ')"
	summary
	exit 1
fi
BASE=http://127.0.0.1:$PX

# --- forward ---------------------------------------------------------------------
t_before=$(date +%s)
code=$(timeout 30 curl -sS -D "$LOG/fwd.h" -o "$LOG/fwd.body" -w '%{http_code}' "$BASE/hello" 2>&1)
t_after=$(date +%s)
n=$(up_count /hello)
xff=$(up_field /hello X-Forwarded-For)
host=$(up_field /hello Host)
via=$(hdr "$LOG/fwd.h" Via)
if [ "$code" = 200 ] && [ "$(cat "$LOG/fwd.body")" = "up /hello" ] && [ "$n" = 1 ] &&
	[ "$xff" = 10.0.2.2 ] && [ "$host" = "127.0.0.1:$PX" ] && [ "$via" = "1.1 skiff" ]; then
	pass "forward (200 '$(cat "$LOG/fwd.body")', upstream saw 1 request, Host $host, X-Forwarded-For $xff, Via $via)"
else
	fail forward "code '$code' body '$(head -c 80 "$LOG/fwd.body")' upstream count '$n' Host '$host' XFF '$xff' Via '$via'"
fi

# --- the guest's wall clock --------------------------------------------------------
gd=$(hdr "$LOG/fwd.h" Date)
# How far the Date lies outside the host's seconds around the request.
skew=$(python3 -c "
import email.utils, sys
d = int(email.utils.parsedate_to_datetime(sys.argv[1]).timestamp())
print(max(0, int(sys.argv[2]) - d, d - int(sys.argv[3])))" "$gd" "$t_before" "$t_after" 2>&1)
if [[ $skew =~ ^[0-9]+$ ]] && [ "$skew" -le 2 ]; then
	pass "clock (Date: $gd, ${skew} s outside the host's seconds around the request)"
else
	fail clock "Date '$gd', skew '$skew'"
fi

# --- cache -------------------------------------------------------------------------
c1=$(timeout 30 curl -sS -D "$LOG/c1.h" -o "$LOG/c1.body" -w '%{http_code}' "$BASE/cache/a?max-age=60" 2>&1)
c2=$(timeout 30 curl -sS -D "$LOG/c2.h" -o "$LOG/c2.body" -w '%{http_code}' "$BASE/cache/a?max-age=60" 2>&1)
n=$(up_count "/cache/a?max-age=60")
x1=$(hdr "$LOG/c1.h" X-Cache) x2=$(hdr "$LOG/c2.h" X-Cache) age=$(hdr "$LOG/c2.h" Age)
if [ "$c1" = 200 ] && [ "$c2" = 200 ] && [ "$x1" = MISS ] && [ "$x2" = HIT ] && [ "$n" = 1 ] &&
	[ -n "$age" ] && cmp -s "$LOG/c1.body" "$LOG/c2.body" && [ -s "$LOG/c1.body" ]; then
	pass "cache (MISS then HIT, Age $age, same $(stat -c %s "$LOG/c2.body") B, upstream asked $n time)"
else
	fail cache "codes $c1/$c2, X-Cache '$x1'/'$x2', Age '$age', upstream count '$n'"
fi

# --- the cache's clock ---------------------------------------------------------------
timeout 30 curl -sS -o /dev/null "$BASE/dated?ago=30&max-age=60"
timeout 30 curl -sS -D "$LOG/d2.h" -o /dev/null "$BASE/dated?ago=30&max-age=60"
timeout 30 curl -sS -o /dev/null "$BASE/dated?ago=120&max-age=60"
timeout 30 curl -sS -D "$LOG/d4.h" -o /dev/null "$BASE/dated?ago=120&max-age=60"
x2=$(hdr "$LOG/d2.h" X-Cache) age=$(hdr "$LOG/d2.h" Age) x4=$(hdr "$LOG/d4.h" X-Cache)
n30=$(up_count "/dated?ago=30&max-age=60") n120=$(up_count "/dated?ago=120&max-age=60")
if [ "$x2" = HIT ] && [[ $age =~ ^[0-9]+$ ]] && [ "$age" -ge 27 ] && [ "$age" -le 33 ] &&
	[ "$n30" = 1 ] && [ "$x4" != HIT ] && [ "$n120" = 2 ]; then
	pass "cache-clock (dated 30 s ago: HIT, Age $age; dated 120 s ago with max-age=60: '$x4', upstream asked $n120 times)"
else
	fail cache-clock "30 s: X-Cache '$x2' Age '$age' upstream '$n30'; 120 s: X-Cache '$x4' upstream '$n120'"
fi

# --- no-store ----------------------------------------------------------------------
s1=$(timeout 30 curl -sS -D "$LOG/s1.h" -o /dev/null -w '%{http_code}' "$BASE/nostore" 2>&1)
s2=$(timeout 30 curl -sS -D "$LOG/s2.h" -o /dev/null -w '%{http_code}' "$BASE/nostore" 2>&1)
n=$(up_count /nostore)
x1=$(hdr "$LOG/s1.h" X-Cache) x2=$(hdr "$LOG/s2.h" X-Cache)
if [ "$s1" = 200 ] && [ "$s2" = 200 ] && [ "$n" = 2 ] && [ "$x2" != HIT ]; then
	pass "no-store (both reached the upstream: $n requests, X-Cache '$x1'/'$x2')"
else
	fail no-store "codes $s1/$s2, upstream count '$n', X-Cache '$x1'/'$x2'"
fi

# --- 2 MiB each way ----------------------------------------------------------------
BIG=2097152
want=$(python3 -c "import sys; sys.path.insert(0, 'tests'); import hashlib, proxy_upstream as p; print(hashlib.sha256(p.pattern($BIG)).hexdigest())")
t0=$(date +%s.%N)
got=$(timeout 60 curl -sS "$BASE/big?n=$BIG" | sha256sum | cut -d' ' -f1)
dt=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)")
if [ "$got" = "$want" ]; then
	pass "big-down ($BIG B, sha256 ${want:0:16}..., ${dt} s under TCG)"
else
	fail big-down "sha256 '$got', want '$want'"
fi
head -c "$BIG" /dev/urandom >"$LOG/up.bin"
sent=$(sha256sum <"$LOG/up.bin" | cut -d' ' -f1)
echoed=$(timeout 60 curl -sS -H 'Content-Type: application/octet-stream' --data-binary @"$LOG/up.bin" "$BASE/echo" |
	sha256sum | cut -d' ' -f1)
seen=$(curl -sS --max-time 10 "http://127.0.0.1:$UP/_stats" | python3 -c "
import json, sys
log = [e for e in json.load(sys.stdin)['log'] if e['target'] == '/echo']
print('%d %s' % (log[-1]['body_len'], log[-1]['body_sha']) if log else '')")
if [ "$echoed" = "$sent" ] && [ "$seen" = "$BIG $sent" ]; then
	pass "big-up ($BIG B POST: the upstream's sha256 and the echoed body's match)"
else
	fail big-up "sent $sent; upstream saw '$seen'; echoed '$echoed'"
fi

# --- HTTPS in front (BearSSL, TLS 1.2) ------------------------------------------------
code=$(timeout 60 curl -sS --cacert "$CERTS/ec.crt" -o "$LOG/tls.body" -w '%{http_code} %{ssl_verify_result}' \
	"https://localhost:$PXS/tls" 2>&1)
xfp_s=$(up_field /tls X-Forwarded-Proto)
xfp_p=$(up_field /hello X-Forwarded-Proto)
if [ "$code" = "200 0" ] && [ "$(cat "$LOG/tls.body")" = "up /tls" ] && [ "$xfp_s" = https ] &&
	[ "$xfp_p" = http ]; then
	pass "https (verified, 200 '$(cat "$LOG/tls.body")', X-Forwarded-Proto $xfp_s; $xfp_p on the plain port)"
else
	fail https "curl '$code' body '$(head -c 80 "$LOG/tls.body")', X-Forwarded-Proto '$xfp_s' / plain '$xfp_p'"
fi

# --- the upstream down ---------------------------------------------------------------
kill "$UPPID" 2>/dev/null
wait "$UPPID" 2>/dev/null
code=$(timeout 30 curl -sS -o "$LOG/down.body" -w '%{http_code}' "$BASE/hello" 2>&1)
if [ "$code" = 502 ] && grep -q "no upstream could be reached" "$LOG/down.body"; then
	pass "down (502: $(head -c 80 "$LOG/down.body"))"
else
	fail down "code '$code', body '$(head -c 120 "$LOG/down.body")'"
fi

# --- exit and the counters -------------------------------------------------------------
python3 -c "import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'exit 0', ('127.0.0.1', int(sys.argv[1])))" "$CTL"
wait "$VM"
rc=$?
counter() { awk -v n="$1" '$1 == n {gsub(/\r/, "", $2); print $2}' "$LOG/guest.log" | tail -1; }
req=$(counter proxy.requests) hits=$(counter cache.hits) r502=$(counter proxy.resp_502)
upr=$(counter "proxy.upstream.10.0.2.2:$UP.requests")
if [ "$rc" = 0 ] && [ "${req:-0}" -ge 8 ] && [ "${hits:-0}" -ge 1 ] && [ "${r502:-0}" -ge 1 ] &&
	[ "${upr:-0}" -ge 6 ]; then
	pass "exit (0; proxy.requests $req, cache.hits $hits, proxy.resp_502 $r502, upstream requests $upr)"
else
	fail exit "rc '$rc', proxy.requests '${req:-}', cache.hits '${hits:-}', resp_502 '${r502:-}', upstream '${upr:-}'"
fi

# --- bad words stop the boot -------------------------------------------------------------
# bad NAME WANT [skiff vm args] -- words: the guest exits 1 with WANT on its console.
bad() {
	local name=$1 want=$2 rc
	shift 2
	timeout 60 "$SKIFF" vm --accel tcg "$@" </dev/null >"$LOG/bad-$name.log" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && grep -aqF "skiff-uk: $want" "$LOG/bad-$name.log" &&
		! grep -aq "skiff-uk: ready" "$LOG/bad-$name.log"; then
		pass "bad-$name (exit 1 at boot: $want)"
	else
		fail "bad-$name" "exit $rc; want 'skiff-uk: $want'; got: $(grep -a 'skiff-uk' "$LOG/bad-$name.log" | tail -n 2)"
	fi
}
hosted=$("$SKIFF" proxy --upstream 1.2.3 2>&1 >/dev/null)
hrc=$?
hmsg=$(head -n 1 <<<"$hosted")
hmsg=${hmsg#skiff proxy: }
if [ "$hrc" = 2 ] && [[ $hmsg == upstream:* ]]; then
	bad upstream "$hmsg" --proxy -- upstream=1.2.3
else
	fail bad-upstream "hosted skiff proxy --upstream 1.2.3: exit $hrc, '$hosted'"
fi
bad no-upstream "upstream=ADDR:PORT[,ADDR:PORT...] is required" --proxy -- port=80
bad cache-mem "out of memory: the cache (cache=100M) needs 102400 KiB" --proxy --mem 128M -- \
	upstream=10.0.2.2:1 cache=100M
grep -aq "(lower cache=, or give the guest more --mem)" "$LOG/bad-cache-mem.log" ||
	fail bad-cache-mem-hint "the line does not say what to change: $(grep -a 'out of memory' "$LOG/bad-cache-mem.log")"

summary
