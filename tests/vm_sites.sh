#!/usr/bin/env bash
# tests/vm_sites.sh — `skiff vm --config FILE`: the unikernel serves the sites
# of a configuration file (issue 32; docs/unikernel.md "skiff vm --config").
#
#   tests/vm_sites.sh [build/skiff] [build/skiff-uk.elf]
#
# Works on a copy of examples/sites.conf and examples/sites/ in a temporary
# folder, with certificates made here (as tests/sites.sh does) and each
# listener's port moved to a free one on 127.0.0.1 (the file's ports are
# also the guest's: skiff vm forwards 127.0.0.1:PORT to the guest's PORT).
# Checks, each PASS/FAIL, ending with "vm-sites: N passed, N failed":
#   bad-file      a file with an unknown directive: `skiff vm --config` exits
#                 1 before booting, printing FILE:LINE:COL and the message
#   bad-flags     --config with --root, --tls-cert or the guest word port=:
#                 a usage error (exit 2) naming the flag
#   sni-bound     9 names besides the first site's on one tls listener (the
#                 bound is 8, as skiff serve's): the guest refuses the file
#                 at boot naming the site past the bound, and exits 1
# Then the example as written (only its ports moved), booted under TCG:
#   boot          the ready line names both listeners; the boot says which
#                 certificate the tls listener chooses by SNI
#   a-files       Host a.test: examples/sites/a/index.html byte for byte,
#                 200 with X-Site: a
#   a-redirect    /old/x?y=1 -> 301 Location /new/x?y=1, X-Site: a
#   a-proxy       /api/ proxied to a Python upstream on the host's
#                 127.0.0.1 (reached from the guest through QEMU's gateway),
#                 the body and the upstream's Host as the client sent it
#   b-http        Host b.test over HTTP -> 301 https://b.test:PORT/p
#   b-https       https://b.test:PORT/ verified against b's certificate:
#                 examples/sites/b/index.html byte for byte
#   a-https       https://a.test:PORT/ verified against a's certificate:
#                 a's index.html, X-Site: a (the same tls listener)
#   sni           the certificate each name is shown (python ssl with
#                 server_hostname, the peer's sha256 against the file's, by
#                 tests/sites_check.py cert/certfile): b.test and B.TEST b's,
#                 a.test a's, an unknown name and no name at all a's (the
#                 first site's is the default, as skiff serve's)
#   unknown-host  a Host no site names: 404
#   shutdown      with a keep-alive connection idle, "exit 0" to the shutdown
#                 port: the guest drains (the idle connection gets EOF, the
#                 console says "draining 1 connections" and "drained in"),
#                 skiff vm exits 0 and the guest printed its counters (the
#                 TLS engine's tls.sni_matched among them)
# Then the example with a `metrics;` route added to a.test, booted again:
#   metrics       the metrics route: sites.requests counted the requests
# Then `app;` (a route that runs the image's application):
#   app-refused   skiff-uk.elf (no application linked) stops the boot at the
#                 file's app; route, FILE:LINE:COL, exit 1
#   app           examples/kv-uk.elf with --config: PUT /kv/k1 201, GET it
#                 back, the site's header line on the application's answer
#   app-routes    POST on the kv route 405 with kv's Allow; /health, the
#                 file's return route beside it, answered
# Traffic goes to 127.0.0.1 only (QEMU's user network); every QEMU run is
# bounded by `timeout` and stopped by pid on exit.
set -u
case "${1:-}" in
-h | --help)
	sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
SKIFF=${1:-build/skiff}
IMG=${2:-build/skiff-uk.elf}
LOG=${VM_LOG_DIR:-build/test-logs/vm-sites}
mkdir -p "$LOG"
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=vm-sites
PIDS=()
WORK=$(mktemp -d)
cleanup() {
	skt_kill_tree "${PIDS[@]}"
	rm -rf "$WORK"
	skt_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for f in "$SKIFF" "$IMG"; do
	[ -r "$f" ] || { fail setup "missing $f (make all)"; summary; exit 1; }
done
skt_need setup qemu-system-x86_64 python3 curl openssl || { summary; exit 1; }



# ---- the tree: the example's folders, certificates made now ----
D=$WORK/ex
mkdir -p "$D/sites/certs"
cp -r examples/sites/a examples/sites/b "$D/sites/"
for s in a b; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=$s.test" -addext "subjectAltName=DNS:$s.test" \
		-keyout "$D/sites/certs/$s.key" -out "$D/sites/certs/$s.crt" 2>/dev/null ||
		{ fail setup "openssl req failed"; summary; exit 1; }
done
HP=$(skt_free_port SOCK_STREAM) SP=$(skt_free_port SOCK_STREAM) UP=$(skt_free_port SOCK_STREAM)
CP=$(skt_free_port SOCK_DGRAM)
# The example with its ports moved (8080 -> HP, 8443 -> SP everywhere,
# the redirect's too) and its upstream at UP.
sed -e "s/:8080\\b/:$HP/g" -e "s/:8443\\b/:$SP/g" -e "s/127\\.0\\.0\\.1:9090/127.0.0.1:$UP/" \
	examples/sites.conf >"$D/as-written.conf"
if ! grep -q "listen 127.0.0.1:$SP tls;" "$D/as-written.conf" || grep -q ':8080\|:8443\|:9090' "$D/as-written.conf"; then
	fail setup "examples/sites.conf no longer has the listeners this test moves"
	summary
	exit 1
fi

# ---- refused before booting ----
printf 'site a.test {\n    listen 127.0.0.1:%s;\n    route / {\n        fils sites/a;\n    }\n}\n' "$HP" >"$D/bad.conf"
out=$(timeout 30 "$SKIFF" vm --accel tcg --image "$IMG" --config "$D/bad.conf" 2>&1 </dev/null)
rc=$?
if [ $rc = 1 ] && grep -q "^$D/bad.conf:4:9: unknown directive 'fils'" <<<"$out" && ! grep -q booting <<<"$out"; then
	pass "bad-file (exit 1: $(head -1 <<<"$out" | sed "s,$D/,,"))"
else
	fail bad-file "exit $rc: $out"
fi
bad=0
for args in "--root $D/sites/a" "--tls-cert $D/sites/certs/a.crt --tls-key $D/sites/certs/a.key" "-- port=80"; do
	# shellcheck disable=SC2086  # the words on purpose
	out=$(timeout 30 "$SKIFF" vm --accel tcg --image "$IMG" --config "$D/as-written.conf" $args 2>&1 </dev/null)
	rc=$?
	first=${args%% *}
	[ "$first" = -- ] && first=port=
	if [ $rc != 2 ] || ! grep -q -- "$first.*with --config\|$first.*the file" <<<"$out"; then
		fail bad-flags "$args: exit $rc: $out"
		bad=1
	fi
done
[ $bad = 0 ] && pass "bad-flags (--root, --tls-cert, port=: exit 2)"

# The same with a `metrics;` route on a.test, for the second boot.
python3 - "$D/as-written.conf" "$D/metrics.conf" <<'EOF'
import sys
s = open(sys.argv[1]).read()
old = "    route /old/ {"
assert s.count(old) == 1, "a.test's /old/ route not found"
s = s.replace(old, "    route = /metrics {\n        metrics;\n    }\n" + old, 1)
open(sys.argv[2], "w").write(s)
EOF

# ---- more SNI names than a tls listener takes ----
{
	printf 'site a.test {\n    listen 127.0.0.1:%s tls;\n    tls sites/certs/a.crt sites/certs/a.key;\n    route / {\n        return 200 a;\n    }\n}\n' "$SP"
	printf 'site b.test b1.test b2.test b3.test b4.test {\n    listen 127.0.0.1:%s tls;\n    tls sites/certs/b.crt sites/certs/b.key;\n    route / {\n        return 200 b;\n    }\n}\n' "$SP"
	printf 'site c.test c1.test c2.test c3.test {\n    listen 127.0.0.1:%s tls;\n    tls sites/certs/b.crt sites/certs/b.key;\n    route / {\n        return 200 c;\n    }\n}\n' "$SP"
} >"$D/nine.conf"
timeout 90 "$SKIFF" vm --accel tcg --image "$IMG" --mem 512M --config "$D/nine.conf" \
	-- exit-after=60 </dev/null >"$LOG/nine.log" 2>&1
rc=$?
if [ $rc = 1 ] && grep -aq "configuration:15:1: site 'c.test': more than 8 certificate names on the tls listener of port $SP.*not booting" "$LOG/nine.log"; then
	pass "sni-bound (exit 1: $(grep -ao "site 'c.test': more than 8 certificate names[^(]*" "$LOG/nine.log"))"
else
	fail sni-bound "exit $rc: $(tail -3 "$LOG/nine.log")"
fi

# ---- the example as written ----
mkdir -p "$WORK/up"
printf 'upstream says hi\n' >"$WORK/up/hello.txt"
# The upstream: answers /api/hello.txt with the file and echoes the Host it got.
python3 - "$UP" "$WORK/up" >"$LOG/upstream.log" 2>&1 <<'EOF' &
import http.server, sys, os
root = sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        name = os.path.basename(self.path)
        try:
            body = open(os.path.join(root, name), "rb").read()
        except OSError:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Upstream-Host", self.headers.get("Host", ""))
        self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
PIDS+=($!)
VLOG=$LOG/served.log
timeout 200 "$SKIFF" vm --accel tcg --image "$IMG" --mem 512M --config "$D/as-written.conf" \
	-p "$CP:9/udp" -- shutdown-port=9 exit-after=180 stats </dev/null >"$VLOG" 2>&1 &
VM=$!
PIDS+=("$VM")
if ! skt_wait_log "$VLOG" '^skiff-uk: ready' 90; then
	fail boot "no ready line: $(tail -5 "$VLOG")"
	summary
	exit 1
fi
if grep -aq "^skiff-uk: ready.*sites=$HP,$SP/tls" "$VLOG" &&
	grep -aq "^skiff-uk: sites: port $SP: https (BearSSL, TLS 1.2) with .*/a.crt, .*/b.crt for b.test by SNI" "$VLOG"; then
	pass "boot ($(grep -a '^skiff-uk: ready' "$VLOG" | grep -o 'sites=[^ ]*'); $(grep -a "^skiff-uk: sites: port $SP: https" "$VLOG" | tr -d '\r' | sed "s,$D/,,g; s/^skiff-uk: sites: //"))"
else
	fail boot "$(grep -a '^skiff-uk: ready\|https' "$VLOG" | tr -d '\r')"
fi
C=(curl -s --max-time 20 -o "$WORK/body" -D "$WORK/head")
hdr() { tr -d '\r' <"$WORK/head" | grep -i "^$1:" | head -1 | cut -d' ' -f2-; }
status() { tr -d '\r' <"$WORK/head" | head -1 | cut -d' ' -f2; }

"${C[@]}" -H 'Host: a.test' "http://127.0.0.1:$HP/"
if [ "$(status)" = 200 ] && [ "$(hdr X-Site)" = a ] && cmp -s "$WORK/body" examples/sites/a/index.html; then
	pass "a-files (200, X-Site: a, index.html byte for byte)"
else
	fail a-files "$(status) X-Site=$(hdr X-Site) $(head -c 200 "$WORK/body")"
fi
"${C[@]}" -H 'Host: a.test' "http://127.0.0.1:$HP/old/x?y=1"
if [ "$(status)" = 301 ] && [ "$(hdr Location)" = "/new/x?y=1" ] && [ "$(hdr X-Site)" = a ]; then
	pass "a-redirect (301 Location /new/x?y=1)"
else
	fail a-redirect "$(status) Location=$(hdr Location) X-Site=$(hdr X-Site)"
fi
"${C[@]}" -H 'Host: a.test' "http://127.0.0.1:$HP/api/hello.txt"
if [ "$(status)" = 200 ] && cmp -s "$WORK/body" "$WORK/up/hello.txt" && [ "$(hdr X-Upstream-Host)" = a.test ] &&
	[ "$(hdr X-Site)" = a ]; then
	pass "a-proxy (the upstream's body, Host a.test kept, via $(hdr Via))"
else
	fail a-proxy "$(status) upstream-host=$(hdr X-Upstream-Host) $(head -c 200 "$WORK/body")"
fi
"${C[@]}" -H 'Host: b.test' "http://127.0.0.1:$HP/p?q"
if [ "$(status)" = 301 ] && [ "$(hdr Location)" = "https://b.test:$SP/p?q" ]; then
	pass "b-http (301 $(hdr Location))"
else
	fail b-http "$(status) Location=$(hdr Location)"
fi
"${C[@]}" --cacert "$D/sites/certs/b.crt" --resolve "b.test:$SP:127.0.0.1" "https://b.test:$SP/"
if [ "$(status)" = 200 ] && cmp -s "$WORK/body" examples/sites/b/index.html && [ -z "$(hdr X-Site)" ]; then
	pass "b-https (verified against b.test's certificate, index.html byte for byte)"
else
	fail b-https "status '$(status)' $(head -c 200 "$WORK/body")"
fi
"${C[@]}" --cacert "$D/sites/certs/a.crt" --resolve "a.test:$SP:127.0.0.1" "https://a.test:$SP/"
if [ "$(status)" = 200 ] && cmp -s "$WORK/body" examples/sites/a/index.html && [ "$(hdr X-Site)" = a ]; then
	pass "a-https (verified against a.test's certificate on the same listener, X-Site: a)"
else
	fail a-https "status '$(status)' X-Site=$(hdr X-Site) $(head -c 200 "$WORK/body")"
fi
# The certificate each name is shown, by its sha256 ("-": no SNI at all).
ha=$(python3 tests/sites_check.py certfile "$D/sites/certs/a.crt")
hb=$(python3 tests/sites_check.py certfile "$D/sites/certs/b.crt")
bad=""
for nw in b.test:$hb B.TEST:$hb a.test:$ha nobody.test:$ha -:$ha; do
	name=${nw%%:*} want=${nw#*:}
	if [ "$name" = - ]; then
		got=$(python3 - "$SP" <<'EOF' 2>&1
import hashlib, socket, ssl, sys
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20) as s:
    with ctx.wrap_socket(s) as t:  # no server_hostname: no SNI extension
        print(hashlib.sha256(t.getpeercert(binary_form=True)).hexdigest())
EOF
)
	else
		got=$(python3 tests/sites_check.py cert 127.0.0.1 "$SP" "$name" "$D/sites/certs" 2>&1)
	fi
	[ "$got" = "$want" ] || bad="$bad $name: shown ${got:0:16}, want ${want:0:16};"
done
if [ -z "$bad" ] && [ "$ha" != "$hb" ]; then
	pass "sni (b.test, B.TEST: b's certificate; a.test, nobody.test, no SNI: a's)"
else
	fail sni "$bad"
fi
"${C[@]}" -H 'Host: nobody.test' "http://127.0.0.1:$HP/"
if [ "$(status)" = 404 ]; then
	pass "unknown-host (404)"
else
	fail unknown-host "$(status)"
fi
# A keep-alive connection idles through the shutdown: the drain closes it
# (EOF at the client) and the guest says it drained.
python3 - "$HP" >"$WORK/idle.out" 2>&1 <<'EOF2' &
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
s.sendall(b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
got = b""
while b"</p>" not in got:
    got += s.recv(4096)
print("answered", flush=True)
rest = s.recv(4096)
print("eof" if rest == b"" else "bytes %r" % rest[:60], flush=True)
EOF2
IDLE=$!
skt_wait_log "$WORK/idle.out" answered 20
python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", ("127.0.0.1", int(sys.argv[1])))' "$CP"
if skt_wait_exit "$VM" 30 && [ "$SKT_RC" = 0 ] && grep -aq '^http.requests [1-9]' "$VLOG" &&
	grep -aq '^sites.no_site 1' "$VLOG" && grep -aq '^tls.sni_matched [1-9]' "$VLOG" &&
	grep -aq '^skiff-uk: shutdown: draining 1 connections' "$VLOG" &&
	grep -aq '^skiff-uk: drained in' "$VLOG" && wait "$IDLE" && grep -q '^eof' "$WORK/idle.out"; then
	pass "shutdown (exit 0, the idle keep-alive connection closed by the drain: $(grep -a '^skiff-uk: drained in' "$VLOG" | tr -d '\r'); $(grep -a '^http.requests \|^tls.sni_' "$VLOG" | tr -d '\r' | paste -sd ' '))"
else
	fail shutdown "exit ${SKT_RC:-still running}: $(cat "$WORK/idle.out") $(grep -a 'drain' "$VLOG") $(tail -3 "$VLOG")"
fi

# ---- again with a metrics route ----
VLOG=$LOG/metrics.log
timeout 200 "$SKIFF" vm --accel tcg --image "$IMG" --mem 512M --config "$D/metrics.conf" \
	-p "$CP:9/udp" -- shutdown-port=9 exit-after=180 </dev/null >"$VLOG" 2>&1 &
VM=$!
PIDS+=("$VM")
if ! skt_wait_log "$VLOG" '^skiff-uk: ready' 90; then
	fail metrics "no ready line: $(tail -5 "$VLOG")"
	summary
	exit 1
fi
"${C[@]}" -H 'Host: a.test' "http://127.0.0.1:$HP/"
"${C[@]}" -H 'Host: b.test' "http://127.0.0.1:$HP/"
"${C[@]}" -H 'Host: a.test' "http://127.0.0.1:$HP/metrics"
n=$(grep -a '^skiff_sites_requests_total ' "$WORK/body" | awk '{print $2}')
if [ "$(status)" = 200 ] && [ -n "$n" ] && [ "$n" -ge 3 ]; then
	pass "metrics (sites.requests $n after 3 requests)"
else
	fail metrics "$(status) sites.requests='$n' $(head -c 300 "$WORK/body")"
fi

python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", ("127.0.0.1", int(sys.argv[1])))' "$CP"
skt_wait_exit "$VM" 30 || fail metrics-exit "the second guest did not exit on \"exit 0\""

# ---- app;: an application image (examples/kv) runs the file's app; routes ----
KV_IMG=$(dirname "$IMG")/examples/kv-uk.elf
printf 'site kv.test {\n    listen 127.0.0.1:%s;\n    default;\n    header X-S kv;\n    route /kv/ {\n        app;\n    }\n    route = /health {\n        return 200 "ok\\n";\n    }\n}\n' "$HP" >"$D/app.conf"
timeout 90 "$SKIFF" vm --accel tcg --image "$IMG" --config "$D/app.conf" -- exit-after=60 \
	</dev/null >"$LOG/app-refused.log" 2>&1
rc=$?
if [ $rc = 1 ] && grep -aq "configuration:5:5: app: no application is linked into this image" "$LOG/app-refused.log"; then
	pass "app-refused (skiff-uk.elf has no application: exit 1 at boot)"
else
	fail app-refused "exit $rc: $(tail -3 "$LOG/app-refused.log")"
fi
if [ ! -r "$KV_IMG" ]; then
	fail app "missing $KV_IMG (make examples)"
	summary
	exit 1
fi
VLOG=$LOG/app.log
timeout 200 "$SKIFF" vm --accel tcg --image "$KV_IMG" --mem 512M --config "$D/app.conf" \
	-p "$CP:9/udp" -- shutdown-port=9 exit-after=180 </dev/null >"$VLOG" 2>&1 &
VM=$!
PIDS+=("$VM")
if ! skt_wait_log "$VLOG" '^skiff-uk: ready' 90; then
	fail app "no ready line: $(tail -5 "$VLOG")"
	summary
	exit 1
fi
"${C[@]}" -X PUT --data-binary 'kept in the guest' "http://127.0.0.1:$HP/kv/k1"
put=$(status)
"${C[@]}" "http://127.0.0.1:$HP/kv/k1"
if [ "$put" = 201 ] && [ "$(status)" = 200 ] && [ "$(cat "$WORK/body")" = "kept in the guest" ] &&
	[ "$(hdr X-S)" = kv ]; then
	pass "app (kv-uk.elf: PUT 201, GET the value back, the site's header line kept)"
else
	fail app "PUT $put, GET $(status) '$(head -c 100 "$WORK/body")' X-S '$(hdr X-S)'"
fi
"${C[@]}" -X POST --data-binary x "http://127.0.0.1:$HP/kv/k1"
a405=$(status) allow=$(hdr Allow)
"${C[@]}" "http://127.0.0.1:$HP/health"
if [ "$a405" = 405 ] && [ "$allow" = "GET, PUT, DELETE" ] && [ "$(status)" = 200 ]; then
	pass "app-routes (POST 405 Allow: $allow; /health answered by the file beside it)"
else
	fail app-routes "POST $a405 Allow '$allow', /health $(status)"
fi
python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", ("127.0.0.1", int(sys.argv[1])))' "$CP"
skt_wait_exit "$VM" 30 || fail app-exit "the kv guest did not exit on \"exit 0\""
summary
