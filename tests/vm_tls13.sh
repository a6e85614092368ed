#!/usr/bin/env bash
# tests/vm_tls13.sh — TLS 1.3 in the unikernel: build/skiff-uk-tls13.elf
# (make uk-tls13: wolfSSL, tls/tls_wolfssl.h) under QEMU TCG, user
# networking, forwards on 127.0.0.1 only.
#
#   tests/vm_tls13.sh [build/skiff] [build/skiff-uk-tls13.elf]
#
# Keys and certificates are made here with openssl (ECDSA P-256, RSA 2048)
# in a temporary directory removed on exit.  Checks, each PASS/FAIL, ending
# "vm-tls13: N passed, N failed":
#   boot          the guest boots with the files and says https=443 (wolfSSL)
#   s_client-13   openssl s_client -tls1_3: New, TLSv1.3, ALPN http/1.1, verified
#   curl-13       curl --tlsv1.3 --tls-max 1.3: 200 and the 41-byte body, over TLSv1.3
#   python-13     tests/tls_probe.py resume ... 1.3: python ssl with
#                 minimum_version = maximum_version = TLSv1_3: 200, ALPN, the 2nd
#                 and 3rd connections resumed
#   sess-13       s_client -tls1_3 -sess_out, then -sess_in: "Reused, TLSv1.3"
#   preconnect    tests/tls_probe.py preconnect: a ticket within 2 s of each
#                 handshake with no request sent, and each resumes
#   tls12         s_client -tls1_2 (New, TLSv1.2) and python resumption on 1.2
#   ab-13         ab -f TLS1.3 -n 100 -c 4 (full handshakes) and -k: 0 failed
#   hostile       tests/tls_probe.py hostile: random bytes, a lying ClientHello,
#                 a wrong MAC, an oversized record, 3 of each: each closed, then
#                 GET / still 200; a truncated record then FIN: closed
#   stall         a stalled handshake closed by tls-handshake-timeout=3
#   counters      on "exit 0": tls.wolfssl_sessions, tls.tickets_sent,
#                 tls.resumed, tls.handshake_failed name the above
#   smp           --smp 2: the AP comes up with its own copy of the thread-local
#                 variables (musl/init.c), ab -f TLS1.3 -n 100 -c 8 with 0 failed,
#                 exit 0.  User networking has one queue pair, so vCPU 0 serves
#                 every connection.  (HTTPS on every vCPU over a
#                 multi-queue TAP: tests/vm_smp.sh's smp-tap-tls13, which
#                 phase vm-tls13 runs after this script.)
#   rsa           an RSA 2048 certificate: curl --tlsv1.3 200
#   alpn-h2       that guest with tls-alpn=h2,http/1.1 (tls_wolfssl_alpn_h2):
#                 s_client -tls1_3 told h2 for h2,http/1.1, http/1.1 for http/1.1,
#                 none for foo (the handshake done, a request answered); its curl
#                 asks for HTTP/1.1, as nothing here speaks HTTP/2 yet
#   bad-mismatch  a key that is not the certificate's: the guest stops at boot
# QEMU runs are bounded by `timeout`; the lock (flock /tmp/skiff-nettest.lock)
# is the caller's, as for tests/vm_tls.sh.
set -u
cd "$(dirname "$0")/.." || exit 2
SKIFF=${1:-build/skiff}
IMG=${2:-build/skiff-uk-tls13.elf}
# shellcheck source=tests/lib.sh
. tests/lib.sh
# shellcheck source=tests/vm_lib.sh
. tests/vm_lib.sh
vm_init vm-tls13
vm_need_files "make all uk-tls13" "$SKIFF" "$IMG"
skt_need setup qemu-system-x86_64 python3 openssl curl ab timeout || { summary; exit 1; }

# wolfSSL's heap is musl's (64 MiB at most, half of what is free when it is
# first used, at boot): 512 MiB leaves the kernel's pools their room.
MEM=(--mem 512M)
VM_ARGS=("${MEM[@]}")
vm_mkcert ec ec && vm_mkcert rsa rsa && vm_mkcert other ec || { fail setup "openssl req failed"; summary; exit 1; }

alive() { kill -0 "$VM" 2>/dev/null && echo "the guest runs" || echo "the guest has exited"; }

HTTP=$(skt_free_port STREAM) HTTPS=$(skt_free_port STREAM) CTL=$(skt_free_port DGRAM)
vm_boot ec 900 --tls-cert "$CERTS/ec.crt" --tls-key "$CERTS/ec.key" -p "$HTTP:80" -p "$HTTPS:443" \
	-p "$CTL:9/udp" -- shutdown-port=9 exit-after=880 tls-handshake-timeout=3 stats
if skt_wait_log "$LOG/ec.log" "skiff-uk: ready" 60 && grep -aq "https=443 (wolfSSL" "$LOG/ec.log"; then
	pass "boot ($(grep -ao 'https=443 ([^;]*' "$LOG/ec.log"))"
else
	fail boot "no ready/https line in 60 s; see $LOG/ec.log"
	summary
	exit 1
fi
CA=$CERTS/ec.crt
URL=https://localhost:$HTTPS/

sc=$(echo | timeout 60 openssl s_client -connect "127.0.0.1:$HTTPS" -tls1_3 -CAfile "$CA" \
	-servername localhost -alpn http/1.1 2>&1)
printf '%s\n' "$sc" >"$LOG/s_client-13.log"
if grep -q '^New, TLSv1.3' <<<"$sc" && grep -q 'ALPN protocol: http/1.1' <<<"$sc" &&
	grep -q 'Verify return code: 0 (ok)' <<<"$sc"; then
	pass "s_client-13 ($(grep -m1 -o 'New, TLSv1.3, Cipher is .*' <<<"$sc"), ALPN http/1.1, verified)"
else
	fail s_client-13 "see $LOG/s_client-13.log"
fi

out=$(timeout 60 curl -sS -v --tlsv1.3 --tls-max 1.3 --cacert "$CA" "$URL" -o "$LOG/curl.body" \
	-w '%{http_code} %{size_download}' 2>"$LOG/curl-13.log")
ver=$(grep -ao 'SSL connection using TLSv1.3[^\r]*' "$LOG/curl-13.log" | head -1)
if [ "$out" = "200 41" ] && [ -n "$ver" ]; then
	pass "curl-13 ($out; $ver)"
else
	fail curl-13 "'$out' '$ver'; see $LOG/curl-13.log"
fi

out=$(timeout 120 python3 tests/tls_probe.py resume 127.0.0.1 "$HTTPS" "$CA" localhost 1.3 2>&1)
[ $? -eq 0 ] && pass "python-13 (TLS 1.3 only: $out)" || fail python-13 "$out"

get='GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
# -ign_eof: s_client reads on to the server's close, so the ticket (sent
# with the handshake) is in the session it writes.
S1=$(printf "$get" | timeout 60 openssl s_client -connect "127.0.0.1:$HTTPS" -tls1_3 -CAfile "$CA" -ign_eof \
	-sess_out "$CERTS/sess" 2>&1 | grep -aE '^(New|Reused),')
S2=$(printf "$get" | timeout 60 openssl s_client -connect "127.0.0.1:$HTTPS" -tls1_3 -CAfile "$CA" -ign_eof \
	-sess_in "$CERTS/sess" 2>&1 | grep -aE '^(New|Reused),')
if [[ $S1 == "New, TLSv1.3"* ]] && [[ $S2 == "Reused, TLSv1.3"* ]]; then
	pass "sess-13 (s_client -sess_out/-sess_in: '$S2')"
else
	fail sess-13 "first '$S1', second '$S2'"
fi

out=$(timeout 120 python3 tests/tls_probe.py preconnect 127.0.0.1 "$HTTPS" "$CA" localhost 3 2>&1)
[ $? -eq 0 ] && pass "preconnect ($out)" || fail preconnect "$out"

t12=$(echo | timeout 60 openssl s_client -connect "127.0.0.1:$HTTPS" -tls1_2 -CAfile "$CA" 2>&1 | grep -aE '^(New|Reused),')
out=$(timeout 120 python3 tests/tls_probe.py resume 127.0.0.1 "$HTTPS" "$CA" localhost 1.2 2>&1)
rc=$?
if [[ $t12 == "New, TLSv1.2"* ]] && [ $rc -eq 0 ]; then
	pass "tls12 (s_client: '$t12'; $out)"
else
	fail tls12 "s_client '$t12'; python: $out"
fi

timeout 300 ab -f TLS1.3 -n 100 -c 4 "$URL" >"$LOG/ab.log" 2>&1
ab_fail=$(awk '/^Failed requests:/{print $3}' "$LOG/ab.log")
ab_done=$(awk '/^Complete requests:/{print $3}' "$LOG/ab.log")
ab_rps=$(awk '/^Requests per second:/{print $4}' "$LOG/ab.log")
timeout 300 ab -k -f TLS1.3 -n 1000 -c 4 "$URL" >"$LOG/ab-k.log" 2>&1
abk_fail=$(awk '/^Failed requests:/{print $3}' "$LOG/ab-k.log")
abk_done=$(awk '/^Complete requests:/{print $3}' "$LOG/ab-k.log")
if [ "$ab_done" = 100 ] && [ "$ab_fail" = 0 ] && [ "$abk_done" = 1000 ] && [ "$abk_fail" = 0 ]; then
	pass "ab-13 (ab -f TLS1.3 -n 100 -c 4: $ab_rps/s full handshakes under TCG; -k -n 1000: 0 failed)"
else
	fail ab-13 "complete '$ab_done' failed '$ab_fail'; -k complete '$abk_done' failed '$abk_fail'; see $LOG/ab*.log"
fi

out=$(timeout 180 python3 tests/tls_probe.py hostile 127.0.0.1 "$HTTPS" "$CA" localhost 3 2>&1)
[ $? -eq 0 ] && pass "hostile ($out)" || fail hostile "$out; $(alive)"
out=$(timeout 60 python3 tests/tls_probe.py truncated 127.0.0.1 "$HTTPS" 2>&1)
[ $? -eq 0 ] && pass "truncated record ($out)" || fail truncated "$out; $(alive)"
out=$(timeout 60 python3 tests/tls_probe.py stall 127.0.0.1 "$HTTPS" 3 2>&1)
[ $? -eq 0 ] && pass "stall ($out)" || fail stall "$out; $(alive)"
after=$(timeout 60 curl -sS --tlsv1.3 --cacert "$CA" "$URL" -o /dev/null -w '%{http_code}' 2>&1)
[ "$after" = 200 ] && pass "serving after the bad input (200)" || fail after-bad "'$after'; $(alive)"

vm_say_exit "$CTL"
wait "$VM"
rc=$?
ctr() { awk -v n="$1" '$1 == n {gsub(/\r/, "", $2); print $2}' "$LOG/ec.log" | tail -1; }
ws=$(ctr tls.wolfssl_sessions) ts=$(ctr tls.tickets_sent) rs=$(ctr tls.resumed) hf=$(ctr tls.handshake_failed)
if [ "$rc" = 0 ] && [ "${ws:-0}" -ge 100 ] && [ "${ts:-0}" -ge 100 ] && [ "${rs:-0}" -ge 6 ] && [ "${hf:-0}" -ge 6 ]; then
	pass "counters (exit 0; tls.wolfssl_sessions $ws, tls.tickets_sent $ts, tls.resumed $rs, tls.handshake_failed $hf)"
else
	fail counters "exit $rc; wolfssl_sessions '$ws' tickets_sent '$ts' resumed '$rs' handshake_failed '$hf'"
fi

# --- two vCPUs ------------------------------------------------------------------
HTTPS=$(skt_free_port STREAM) CTL=$(skt_free_port DGRAM)
vm_boot smp 600 --smp 2 --tls-cert "$CERTS/ec.crt" --tls-key "$CERTS/ec.key" -p "$HTTPS:443" \
	-p "$CTL:9/udp" -- shutdown-port=9 exit-after=580 stats
if skt_wait_log "$LOG/smp.log" "skiff-uk: ready" 60; then
	timeout 400 ab -f TLS1.3 -n 100 -c 8 "https://localhost:$HTTPS/" >"$LOG/ab-smp.log" 2>&1
	d=$(awk '/^Complete requests:/{print $3}' "$LOG/ab-smp.log")
	f=$(awk '/^Failed requests:/{print $3}' "$LOG/ab-smp.log")
	vm_say_exit "$CTL"
	wait "$VM"
	rc=$?
	cpus=$(grep -aco 'cpu [0-9]* up' "$LOG/smp.log")
	if [ "$d" = 100 ] && [ "$f" = 0 ] && [ "$rc" = 0 ]; then
		pass "smp (--smp 2, $((cpus + 1)) vCPUs up, one queue pair (vCPU 0 serves): ab -f TLS1.3 -n 100 -c 8, 0 failed, exit 0)"
	else
		fail smp "complete '$d' failed '$f' exit $rc; see $LOG/smp.log"
	fi
else
	fail smp "no ready line; see $LOG/smp.log"
fi

# --- RSA -------------------------------------------------------------------------
HTTPS=$(skt_free_port STREAM) CTL=$(skt_free_port DGRAM)
vm_boot rsa 120 --tls-cert "$CERTS/rsa.crt" --tls-key "$CERTS/rsa.key" -p "$HTTPS:443" -p "$CTL:9/udp" \
	-- shutdown-port=9 exit-after=100 tls-alpn=h2,http/1.1
if skt_wait_log "$LOG/rsa.log" "skiff-uk: ready" 60; then
	s=$(timeout 60 curl -sS --http1.1 --tlsv1.3 --cacert "$CERTS/rsa.crt" "https://localhost:$HTTPS/" -o /dev/null \
		-w '%{http_code} %{ssl_verify_result}' 2>&1)
	# tls-alpn=h2,http/1.1: what s_client offering each list is told, and
	# (http/1.1, foo) the first line of the answer to a request.
	alpn_of() {
		local out
		out=$(printf 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' |
			timeout 60 openssl s_client -tls1_3 -connect "127.0.0.1:$HTTPS" -CAfile "$CERTS/rsa.crt" \
				-alpn "$1" ${2:+"$2"} 2>&1)
		printf '%s %s' "$(grep -m1 -oE '^(ALPN protocol: .*|No ALPN negotiated)$' <<<"$out" |
			sed 's/^ALPN protocol: //; s/^No ALPN negotiated$/none/')" \
			"$(grep -m1 -oE '^HTTP/1\.1 [0-9]+' <<<"$out")"
	}
	a2=$(alpn_of h2,http/1.1) a1=$(alpn_of http/1.1 -ign_eof) af=$(alpn_of foo -ign_eof)
	vm_say_exit "$CTL"
	wait "$VM"
	[ "$s" = "200 0" ] && pass "rsa (RSA 2048 over TLS 1.3: $s)" || fail rsa "'$s'"
	if [[ $a2 == "h2 "* ]] && [ "$a1" = "http/1.1 HTTP/1.1 200" ] && [ "$af" = "none HTTP/1.1 200" ]; then
		pass "alpn-h2 (tls-alpn=h2,http/1.1 on wolfSSL: h2,http/1.1 -> ${a2% }; http/1.1 -> $a1; foo -> $af)"
	else
		fail alpn-h2 "h2,http/1.1 -> '$a2' (want h2); http/1.1 -> '$a1' (want http/1.1 HTTP/1.1 200); foo -> '$af' (want none HTTP/1.1 200)"
	fi
else
	fail rsa "no ready line; see $LOG/rsa.log"
fi

timeout 60 "$SKIFF" vm --accel tcg --image "$IMG" "${MEM[@]}" --tls-cert "$CERTS/ec.crt" --tls-key "$CERTS/other.key" \
	-- exit-after=30 </dev/null >"$LOG/bad-mismatch.log" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -aq 'does not match the certificate' "$LOG/bad-mismatch.log" &&
	pass "bad-mismatch (exit 1: $(grep -ao 'tls: the key does not match[^;]*' "$LOG/bad-mismatch.log" | head -1 | tr -d '\r'))" ||
	fail bad-mismatch "exit $rc: $(tail -2 "$LOG/bad-mismatch.log" | tr '\n' ' ')"

summary
