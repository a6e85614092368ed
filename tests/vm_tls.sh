#!/usr/bin/env bash
# tests/vm_tls.sh — HTTPS in the unikernel: `skiff vm --tls-cert F --tls-key
# F` under QEMU TCG, user networking, forwards on 127.0.0.1 only.
#
#   tests/vm_tls.sh [build/skiff] [build/skiff-uk.elf] [build/examples/kv-uk.elf]
#
# The guest's engine is BearSSL (src/tls/tls_bearssl.c, TLS 1.2 only).  Keys
# and certificates are made here with openssl (ECDSA P-256, RSA 2048, for
# localhost and 127.0.0.1) in a temporary directory removed on exit; none is
# kept.  Checks, each PASS/FAIL, ending "vm-tls: N passed, N failed":
#   boot          the guest boots with the files in its module and says https=443
#   curl          curl --cacert: GET / -> 200 and the 41-byte body; plain HTTP on 80 too
#   s_client      openssl s_client -reconnect: TLS 1.2, ALPN http/1.1, verified,
#                 one New and five Reused (session IDs); -sess_out/-sess_in: Reused
#   alpn-default  s_client -alpn h2,http/1.1: h2 (offered first by default); curl
#                 above gets HTTP/2 by it (its %{http_version} 2)
#   tls13-refused a TLS 1.3-only client gets no session (TLS 1.2 only)
#   python-resume tests/tls_probe.py resume ... 1.2: ALPN, 200, resumed
#   ab / ab-k / wrk  ab -f TLS1.2 (new connections, then -k) and wrk: 0 failed
#   testssl       testssl.sh --vulnerable --nodns none on the forward (vm_lib.sh's
#                 vm_testssl, tests/tls.sh's rule): none VULNERABLE or "NOT ok",
#                 12 checks "not vulnerable" (all testssl 3.0.8 reports of a
#                 TLS 1.2-only ECDSA server), run to its end; 45 s-2.5 min under TCG.
#                 On the pc machine only (VM_MACHINE=microvm: the same engine)
#   hostile       tests/tls_probe.py hostile: random bytes, a lying ClientHello,
#                 a wrong MAC, an oversized record, 3 of each at once: each closed,
#                 then GET / still 200; a truncated record then FIN: closed at once
#   stall         a handshake that stalls: closed by tls-handshake-timeout=3; one
#                 that finished and then idles 4 s is not (GET / -> 200).  3 s,
#                 not less: the hostile step's good handshakes and ab's must
#                 finish within it under TCG on a busy host (0.3 s each there)
#   counters      on "exit 0": tls.handshake_failed, tls.protocol_errors,
#                 tls.handshake_timeouts, tls.resumed name the above
#   rsa-redirect  an RSA 2048 certificate, --tls-redirect: port 80 answers 301
#                 to https://, HTTPS answers 200
#   root+tls      the same guest with --root: a 70,000 B file sha256-identical over
#                 HTTPS (archive and TLS files in one module)
#   alpn-off      the same guest with the word http2=off (HTTP/1.1 only; BearSSL's
#                 protocol names): s_client told http/1.1 for h2,http/1.1 and for
#                 http/1.1, none for foo (the handshake done, a request answered)
#   app           an application image (build/examples/kv-uk.elf, the third
#                 argument) with the files: a value PUT over HTTP is read back over
#                 HTTPS (one store), s_client -sess_out/-sess_in Reused, exit 0
#                 with https.requests counted.  VM_TLS_ONLY=app runs this one alone.
#   bad-*         --tls-cert without --tls-key (exit 2); a key that is not the
#                 certificate's (the guest stops at boot, exit 1, with the reason);
#                 tls-port= with no files (exit 1)
# QEMU runs are bounded by `timeout`; the lock (flock /tmp/skiff-nettest.lock)
# is the caller's, as for tests/vm.sh.
set -u
cd "$(dirname "$0")/.." || exit 2
SKIFF=${1:-build/skiff}
# VM_MACHINE=microvm: every guest on QEMU's microvm machine (virtio-mmio,
# no PCI or ACPI; docs/microvm.md), the vm-microvm phases; default pc.
MACHINE=(--machine "${VM_MACHINE:-pc}")
IMG=${2:-build/skiff-uk.elf}
APP_IMG=${3:-build/examples/kv-uk.elf}
VM_ARGS=("${MACHINE[@]}")
# shellcheck source=tests/lib.sh
. tests/lib.sh
# shellcheck source=tests/vm_lib.sh
. tests/vm_lib.sh
vm_init vm-tls
vm_need_files "make all uk" "$SKIFF" "$IMG" "$APP_IMG"
skt_need setup qemu-system-x86_64 python3 openssl curl ab wrk timeout testssl || { summary; exit 1; }

vm_mkcert ec ec && vm_mkcert rsa rsa && vm_mkcert other ec || { fail setup "openssl req failed"; summary; exit 1; }

# After a failed check of the ECDSA guest: is its loop still turning (its
# UDP echo on port 7 answers), or is QEMU gone?  Tells a wedged TCP/TLS
# path from a guest that stopped.
guest_state() {
	kill -0 "$VM" 2>/dev/null || { echo "the guest has exited"; return; }
	python3 - "$ECHO" <<'PY' 2>&1
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
t0 = time.monotonic()
try:
    s.sendto(b"alive?", ("127.0.0.1", int(sys.argv[1])))
    s.recv(64)
    print(f"the guest's UDP echo answers in {(time.monotonic() - t0) * 1000:.0f} ms")
except OSError as e:
    print(f"the guest's UDP echo does not answer in 2 s ({type(e).__name__})")
PY
}

# --- an application image over HTTPS (kv: one store behind both ports) ------------
app_check() {
	local http https ctl a b s1 s2 rc
	http=$(skt_free_port STREAM) https=$(skt_free_port STREAM) ctl=$(skt_free_port DGRAM)
	: >"$LOG/app.log"
	timeout 150 "$SKIFF" vm "${MACHINE[@]}" --accel tcg --image "$APP_IMG" --tls-cert "$CERTS/ec.crt" \
		--tls-key "$CERTS/ec.key" -p "$http:80" -p "$https:443" -p "$ctl:9/udp" -- \
		shutdown-port=9 exit-after=140 stats </dev/null >"$LOG/app.log" 2>&1 &
	VM=$!
	PIDS+=("$VM")
	if ! skt_wait_log "$LOG/app.log" "skiff-uk: ready" 30 || ! grep -aq "https=443" "$LOG/app.log"; then
		fail app "no ready/https line in 30 s: $(grep -a 'skiff-uk' "$LOG/app.log" | tail -n 2 | tr '\n' ' ')"
		return
	fi
	a=$(timeout 30 curl -sS -X PUT --data-binary over-http "http://127.0.0.1:$http/kv/k" -o /dev/null -w '%{http_code}' 2>&1)
	b=$(timeout 60 curl -sS --cacert "$CERTS/ec.crt" "https://localhost:$https/kv/k" 2>&1)
	local get='GET /kv/k HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
	s1=$(printf "$get" | timeout 60 openssl s_client -connect "127.0.0.1:$https" -CAfile "$CERTS/ec.crt" \
		-sess_out "$CERTS/app.sess" 2>&1 | grep -aE '^(New|Reused),')
	s2=$(printf "$get" | timeout 60 openssl s_client -connect "127.0.0.1:$https" -CAfile "$CERTS/ec.crt" \
		-sess_in "$CERTS/app.sess" 2>&1 | grep -aE '^(New|Reused),')
	vm_say_exit "$ctl"
	wait "$VM"
	rc=$?
	local req
	req=$(awk '$1 == "https.requests" {gsub(/\r/, "", $2); print $2}' "$LOG/app.log" | tail -1)
	if [ "$b" = over-http ] && [[ $s1 == New,* ]] && [[ $s2 == Reused,* ]] && [ "$rc" = 0 ] &&
		[ "${req:-0}" -ge 3 ]; then
		pass "app (kv-uk.elf: PUT on http $a, GET over HTTPS '$b', ${s2%%,*} by session ID, https.requests $req, exit 0)"
	else
		fail app "PUT $a; GET '$b'; s_client '$s1' / '$s2'; exit $rc; https.requests '${req:-}'"
	fi
}
if [ "${VM_TLS_ONLY:-}" = app ]; then
	app_check
	summary
	exit
fi

# --- the ECDSA guest ------------------------------------------------------------
HTTP=$(skt_free_port STREAM)
HTTPS=$(skt_free_port STREAM)
CTL=$(skt_free_port DGRAM)
ECHO=$(skt_free_port DGRAM)
# exit-after= and the host's timeout are only backstops against a hung
# guest: the script ends the guest through the shutdown port.  They were
# 280 / 300 s, and the steps before the hostile one (ab's 100 full
# handshakes and 2,000 requests, wrk, s_client) can take that long under
# TCG on a busy host: the guest would then drain and stop in the middle of
# the checks, and every later one fail as if it had wedged (the likeliest
# reading of a fresh machine's failure on 2026-12-03, whose log did not
# say; guest_state now does).  Each step below has its own timeout.
vm_boot ec 900 --tls-cert "$CERTS/ec.crt" --tls-key "$CERTS/ec.key" -p "$HTTP:80" -p "$HTTPS:443" \
	-p "$CTL:9/udp" -p "$ECHO:7/udp" -- shutdown-port=9 exit-after=880 tls-handshake-timeout=3 stats
if skt_wait_log "$LOG/ec.log" "skiff-uk: ready" 30 && grep -aq "https=443" "$LOG/ec.log"; then
	# The guest's clock too: a LAPIC rate measured wrong makes every sleep
	# wrong by as much (stall below), so a log says what it was.
	pass "boot ($(grep -ao 'https=443[^;]*;[^;]*' "$LOG/ec.log"); $(tr -d '\r' <"$LOG/ec.log" | grep -ao 'timer .*' | head -1))"
else
	fail boot "no ready/https line in 30 s; see $LOG/ec.log"
	summary
	exit 1
fi
CA=$CERTS/ec.crt
URL=https://localhost:$HTTPS/

out=$(timeout 60 curl -sS --cacert "$CA" "$URL" -o "$LOG/curl.body" -w '%{http_code} %{size_download} %{ssl_verify_result} %{http_version}' 2>&1)
plain=$(timeout 30 curl -sS "http://127.0.0.1:$HTTP/" -o /dev/null -w '%{http_code}' 2>&1)
if [ "$out" = "200 41 0 2" ] && [ "$plain" = 200 ]; then
	pass "curl (https: $out; http on 80: $plain)"
else
	fail curl "https: '$out', http: '$plain'"
fi

sc=$(echo | timeout 120 openssl s_client -connect "127.0.0.1:$HTTPS" -CAfile "$CA" -servername localhost \
	-alpn http/1.1 -reconnect 2>&1)
printf '%s\n' "$sc" >"$LOG/s_client.log"
new=$(grep -c '^New, TLSv1.2' <<<"$sc")
reused=$(grep -c '^Reused, TLSv1.2' <<<"$sc")
if [ "$new" = 1 ] && [ "$reused" = 5 ] && grep -q 'ALPN protocol: http/1.1' <<<"$sc" &&
	grep -q 'Verify return code: 0 (ok)' <<<"$sc"; then
	pass "s_client -reconnect (1 New, 5 Reused, $(grep -m1 -o 'Cipher is .*' <<<"$sc"), ALPN http/1.1, verified)"
else
	fail s_client "New $new, Reused $reused; see $LOG/s_client.log"
fi
a=$(echo | timeout 60 openssl s_client -connect "127.0.0.1:$HTTPS" -CAfile "$CA" -alpn h2,http/1.1 2>&1 |
	grep -m1 -oE '^(ALPN protocol: .*|No ALPN negotiated)$')
[ "$a" = "ALPN protocol: h2" ] && pass "alpn-default (s_client -alpn h2,http/1.1: $a)" ||
	fail alpn-default "s_client -alpn h2,http/1.1: '${a:-no handshake}' (want h2)"
S1=$(echo | timeout 60 openssl s_client -connect "127.0.0.1:$HTTPS" -CAfile "$CA" -sess_out "$CERTS/sess" 2>&1 | grep -E '^(New|Reused),')
S2=$(echo | timeout 60 openssl s_client -connect "127.0.0.1:$HTTPS" -CAfile "$CA" -sess_in "$CERTS/sess" 2>&1 | grep -E '^(New|Reused),')
if [[ $S1 == New,* ]] && [[ $S2 == Reused,* ]]; then
	pass "s_client -sess_out/-sess_in (${S2%%,*})"
else
	fail s_client-sess "first '$S1', second '$S2'"
fi
t13=$(echo | timeout 60 openssl s_client -connect "127.0.0.1:$HTTPS" -tls1_3 2>&1)
if ! grep -q '^New, TLSv1.3' <<<"$t13" && grep -qiE 'alert|error|no protocols' <<<"$t13"; then
	pass "tls13-refused (TLS 1.2 only)"
else
	fail tls13-refused "$(grep -E '^New|alert|error' <<<"$t13" | head -2 | tr '\n' ' ')"
fi

out=$(timeout 120 python3 tests/tls_probe.py resume 127.0.0.1 "$HTTPS" "$CA" localhost 1.2 2>&1)
[ $? -eq 0 ] && pass "python-resume ($out)" || fail python-resume "$out"

timeout 200 ab -f TLS1.2 -n 100 -c 4 "$URL" >"$LOG/ab.log" 2>&1
ab_fail=$(awk '/^Failed requests:/{print $3}' "$LOG/ab.log")
ab_done=$(awk '/^Complete requests:/{print $3}' "$LOG/ab.log")
ab_rps=$(awk '/^Requests per second:/{print $4}' "$LOG/ab.log")
if [ "$ab_done" = 100 ] && [ "$ab_fail" = 0 ]; then
	pass "ab -f TLS1.2 -n 100 -c 4 (new connections, full handshakes: $ab_rps/s under TCG, 0 failed)"
else
	fail ab "complete '$ab_done' failed '$ab_fail'; see $LOG/ab.log"
fi
timeout 200 ab -k -f TLS1.2 -n 2000 -c 4 "$URL" >"$LOG/ab-k.log" 2>&1
ab_fail=$(awk '/^Failed requests:/{print $3}' "$LOG/ab-k.log")
ab_done=$(awk '/^Complete requests:/{print $3}' "$LOG/ab-k.log")
ab_rps=$(awk '/^Requests per second:/{print $4}' "$LOG/ab-k.log")
if [ "$ab_done" = 2000 ] && [ "$ab_fail" = 0 ]; then
	pass "ab -k -f TLS1.2 -n 2000 -c 4 ($ab_rps req/s under TCG, 0 failed)"
else
	fail ab-k "complete '$ab_done' failed '$ab_fail'; see $LOG/ab-k.log"
fi
timeout 60 wrk -t 1 -c 4 -d 3 "$URL" >"$LOG/wrk.log" 2>&1
wrk_req=$(awk '/requests in/{print $1}' "$LOG/wrk.log")
if [ -n "$wrk_req" ] && [ "$wrk_req" -gt 0 ] && ! grep -q -e 'Socket errors' -e 'Non-2xx' "$LOG/wrk.log"; then
	pass "wrk -c 4 -d 3 ($wrk_req requests, no errors)"
else
	fail wrk "$(tr '\n' ' ' <"$LOG/wrk.log" | cut -c1-300)"
fi
# testssl.sh against BearSSL in the guest, on the pc machine only: the
# engine and its answers are the same on microvm, and the run takes 45 s-2.5 min.
if [ "${VM_MACHINE:-pc}" = pc ]; then
	vm_testssl "$HTTPS" 12
fi

out=$(timeout 120 python3 tests/tls_probe.py hostile 127.0.0.1 "$HTTPS" "$CA" localhost 3 2>&1)
[ $? -eq 0 ] && pass "hostile ($out)" || fail hostile "$out; $(guest_state)"
# closed at once, not by the 3 s handshake timeout
out=$(timeout 60 python3 tests/tls_probe.py truncated 127.0.0.1 "$HTTPS" 1.5 2>&1)
[ $? -eq 0 ] && pass "truncated record ($out)" || fail truncated "$out; $(guest_state)"
out=$(timeout 60 python3 - "$HTTPS" "$CA" <<'PY' 2>&1
import socket, ssl, sys, time
c = ssl.create_default_context(cafile=sys.argv[2])
c.maximum_version = ssl.TLSVersion.TLSv1_2
t = c.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=15),
                  server_hostname="localhost")
time.sleep(4)  # past tls-handshake-timeout=3: the handshake is over, the deadline must be gone
t.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = b""
while True:
    d = t.recv(4096)
    if not d:
        break
    data += d
print("idle-after-handshake: " + data.split(b"\r\n", 1)[0].decode(errors="replace"))
sys.exit(0 if data.startswith(b"HTTP/1.1 200") else 1)
PY
)
[ $? -eq 0 ] && pass "idle after the handshake, past its timeout ($out)" || fail idle-after-handshake "$out"
out=$(timeout 60 python3 tests/tls_probe.py stall 127.0.0.1 "$HTTPS" 3 2>&1)
[ $? -eq 0 ] && pass "stall ($out)" || fail stall "$out; $(guest_state)"
after=$(timeout 60 curl -sS --cacert "$CA" "$URL" -o /dev/null -w '%{http_code}' 2>&1)
[ "$after" = 200 ] && pass "serving after the bad input (200)" || fail after-bad "'$after'; $(guest_state)"

vm_say_exit "$CTL"
wait "$VM"
rc=$?
ctr() { awk -v n="$1" '$1 == n {gsub(/\r/, "", $2); print $2}' "$LOG/ec.log" | tail -1; }
hf=$(ctr tls.handshake_failed) pe=$(ctr tls.protocol_errors) ht=$(ctr tls.handshake_timeouts)
rs=$(ctr tls.resumed) hs=$(ctr tls.handshakes)
if [ "$rc" = 0 ] && [ "${hf:-0}" -ge 7 ] && [ "${pe:-0}" -ge 6 ] && [ "${ht:-0}" -ge 1 ] && [ "${rs:-0}" -ge 7 ]; then
	pass "counters (exit 0; tls.handshakes $hs, tls.resumed $rs, tls.handshake_failed $hf, tls.protocol_errors $pe, tls.handshake_timeouts $ht)"
else
	fail counters "exit $rc; handshakes '$hs' resumed '$rs' handshake_failed '$hf' protocol_errors '$pe' handshake_timeouts '$ht'"
fi

# --- RSA, with the redirect ----------------------------------------------------
HTTP=$(skt_free_port STREAM)
HTTPS=$(skt_free_port STREAM)
CTL=$(skt_free_port DGRAM)
# With a --root site too: archive and TLS files share the boot module.
mkdir -p "$CERTS/site/sub"
head -c 70000 /dev/urandom >"$CERTS/site/sub/blob.bin"
echo '<p>index</p>' >"$CERTS/site/index.html"
vm_boot rsa 120 --root "$CERTS/site" --tls-cert "$CERTS/rsa.crt" --tls-key "$CERTS/rsa.key" \
	--tls-redirect -p "$HTTP:80" -p "$HTTPS:443" -p "$CTL:9/udp" -- shutdown-port=9 exit-after=100 \
	http2=off
if skt_wait_log "$LOG/rsa.log" "skiff-uk: ready" 30; then
	r=$(timeout 30 curl -sS "http://127.0.0.1:$HTTP/x?y" -o /dev/null -w '%{http_code} %{redirect_url}' 2>&1)
	s=$(timeout 60 curl -sS --http1.1 --cacert "$CERTS/rsa.crt" "https://localhost:$HTTPS/" -o /dev/null \
		-w '%{http_code} %{ssl_verify_result}' 2>&1)
	if [[ $r == "301 https://127.0.0.1/x?y" ]] && [ "$s" = "200 0" ]; then
		pass "rsa-redirect (http: $r; https with RSA 2048: $s)"
	else
		fail rsa-redirect "http: '$r', https: '$s'"
	fi
	want=$(sha256sum <"$CERTS/site/sub/blob.bin" | cut -c1-64)
	got=$(timeout 60 curl -sS --http1.1 --cacert "$CERTS/rsa.crt" "https://localhost:$HTTPS/sub/blob.bin" | sha256sum | cut -c1-64)
	if [ "$got" = "$want" ] && grep -aq 'site: 2 files' "$LOG/rsa.log"; then
		pass "root+tls (--root and the TLS files in one module: a 70,000 B file sha256-identical over HTTPS)"
	else
		fail root+tls "sha256 '$got' want '$want'; $(grep -a 'site:' "$LOG/rsa.log")"
	fi
	# http2=off: what s_client offering each list is told, and the first
	# line of the answer to a request.
	alpn_of() {
		local out
		out=$(printf 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' |
			timeout 60 openssl s_client -connect "127.0.0.1:$HTTPS" -CAfile "$CERTS/rsa.crt" \
				-alpn "$1" ${2:+"$2"} 2>&1)
		printf '%s %s' "$(grep -m1 -oE '^(ALPN protocol: .*|No ALPN negotiated)$' <<<"$out" |
			sed 's/^ALPN protocol: //; s/^No ALPN negotiated$/none/')" \
			"$(grep -m1 -oE '^HTTP/1\.1 [0-9]+' <<<"$out")"
	}
	a2=$(alpn_of h2,http/1.1 -ign_eof) a1=$(alpn_of http/1.1 -ign_eof) af=$(alpn_of foo -ign_eof)
	if [ "$a2" = "http/1.1 HTTP/1.1 200" ] && [ "$a1" = "http/1.1 HTTP/1.1 200" ] &&
		[ "$af" = "none HTTP/1.1 200" ]; then
		pass "alpn-off (http2=off: h2,http/1.1 -> $a2; http/1.1 -> $a1; foo -> $af)"
	else
		fail alpn-off "h2,http/1.1 -> '$a2' (want http/1.1 HTTP/1.1 200); http/1.1 -> '$a1' (want http/1.1 HTTP/1.1 200); foo -> '$af' (want none HTTP/1.1 200)"
	fi
	vm_say_exit "$CTL"
	wait "$VM"
else
	fail rsa-redirect "no ready line; see $LOG/rsa.log"
fi

app_check

# --- refused ---------------------------------------------------------------------
timeout 30 "$SKIFF" vm "${MACHINE[@]}" --accel tcg --image "$IMG" --tls-cert "$CERTS/ec.crt" </dev/null >"$LOG/bad-nokey.log" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q 'needs --tls-key' "$LOG/bad-nokey.log" && pass "bad-nokey (exit 2)" ||
	fail bad-nokey "exit $rc: $(tail -1 "$LOG/bad-nokey.log")"
timeout 60 "$SKIFF" vm "${MACHINE[@]}" --accel tcg --image "$IMG" --tls-cert "$CERTS/ec.crt" --tls-key "$CERTS/other.key" \
	-- exit-after=30 </dev/null >"$LOG/bad-mismatch.log" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -aq 'does not match the certificate' "$LOG/bad-mismatch.log" &&
	pass "bad-mismatch (exit 1: $(grep -ao 'tls: the key does not match[^;]*' "$LOG/bad-mismatch.log"))" ||
	fail bad-mismatch "exit $rc: $(tail -2 "$LOG/bad-mismatch.log" | tr '\n' ' ')"
timeout 60 "$SKIFF" vm "${MACHINE[@]}" --accel tcg --image "$IMG" -- tls-port=8443 exit-after=30 </dev/null >"$LOG/bad-nofiles.log" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -aq 'need the certificate and key' "$LOG/bad-nofiles.log" && pass "bad-nofiles (exit 1)" ||
	fail bad-nofiles "exit $rc: $(tail -1 "$LOG/bad-nofiles.log")"

summary
