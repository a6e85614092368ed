#!/usr/bin/env bash
# tests/tls_app.sh SKIFF EXAMPLES_DIR — HTTPS for the hosted applications
# (http/app.h: --tls-cert/--tls-key on an application binary) and the
# choice of certificate by server name (--tls-sni NAME:CERT:KEY) on both
# `skiff serve` and an application, on --stack linux over loopback only
# (127.0.0.1, ports picked free here; no namespace, no device: the TLS
# layer is the same code over skiff's stack, which tests/tls.sh covers).
#
# Keys and certificates are made here, at run time (ECDSA P-256): the
# default one for 127.0.0.1, one for a.test, one for *.b.test; none is kept.
#
#   app.*   the kv example with --tls-cert: a value PUT over HTTP is read
#           back over HTTPS and the other way round (one store, one init);
#           curl --cacert; python ssl (ALPN http/1.1, resumption, TLS 1.2
#           and 1.3, on hello: kv has no /); openssl s_client -sess_out/-sess_in "Reused" on 1.2
#           and 1.3; ab -f TLS1.2 with 0 failed; the counters at exit
#           (https.app.*, tls.*).
#   sni.*   on serve and on the hello example: s_client -servername a.test
#           gets a.test's certificate, x.b.test the wildcard's, c.test and
#           no name at all the default; curl verifies a.test's chain by
#           name; python ssl resumes under a.test's name.
#           resume_by_name: a session made under one name (ticket, or
#           TLS 1.2 ID) offered under another gets a full handshake and
#           the asked name's certificate; under its own it resumes (RFC
#           6066 3, RFC 8446 4.2.11).  By TLS 1.2 ID, what each engine
#           does: OpenSSL as by ticket; GnuTLS an ID never resumed (New);
#           wolfSSL with names no ID (s_client saves no session).
#   sites.* serve --config with sites a.test and b.test on one tls
#           listener: b.test's session under a.test: New, a.test's
#           certificate, site-a's answer; under b.test Reused, site-b's.
#   reload  new files for a.test and the default, SIGHUP: the new
#           certificates are served, by name and by default; a broken file
#           and SIGHUP: the last good ones stay (tls.reload_failures 1).
#   cli.*   --tls-sni without --tls-cert, --tls-key without --tls-cert
#           (exit 2); a --tls-sni key that does not match its certificate
#           (exit 1, a message naming the file).
#
# TLS_ENGINE=openssl|gnutls|wolfssl (run-all.sh phases tls-app-gnutls and
# tls-app-wolfssl): every server here runs with --tls-engine TLS_ENGINE;
# with gnutls or wolfssl each one's counters must show that engine took
# every handshake (tls.gnutls_sessions, tls.wolfssl_sessions).
#
# Prints "PASS name" / "FAIL name: why", ends with "tls-app: N passed, N
# failed"; exits non-zero if anything failed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=tls-app
export PYTHONDONTWRITEBYTECODE=1

usage() { echo "usage: $0 path/to/skiff path/to/examples" >&2; exit 2; }
[ "${1:-}" = -h ] || [ "${1:-}" = --help ] && { sed -n '2,30p' "$0"; exit 0; }
[ $# -eq 2 ] || usage
BIN=$1 EX=$2
for f in "$BIN" "$EX/kv" "$EX/hello"; do
	[ -x "$f" ] || { fail setup "'$f' is not an executable (make all)"; summary; exit 1; }
done
skt_need setup openssl curl ab python3 timeout || { summary; exit 1; }
TLS_ENGINE=${TLS_ENGINE:-}
ENGINE_ARGS=()
case $TLS_ENGINE in
'') ;;
openssl | gnutls | wolfssl) ENGINE_ARGS=(--tls-engine "$TLS_ENGINE") ;;
*) echo "$0: TLS_ENGINE is openssl, gnutls or wolfssl, not '$TLS_ENGINE'" >&2; exit 2 ;;
esac

WORK=$(mktemp -d /tmp/skiff-tls-app.XXXXXX)
SRV_PID=
on_exit() {
	if [ -n "$SRV_PID" ] && kill -0 "$SRV_PID" 2>/dev/null; then
		kill -KILL "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
	fi
	if [ "$SKT_FAILED" -eq 0 ]; then rm -rf "$WORK"; else echo "tls-app: logs kept in $WORK"; fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# mkcert NAME CN SAN: WORK/NAME.pem and WORK/NAME.key
mkcert() {
	openssl req -x509 -nodes -days 2 -subj "/CN=$2" -addext "subjectAltName=$3" \
		-newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$WORK/$1.key" \
		-out "$WORK/$1.pem" >"$WORK/$1.openssl.log" 2>&1
}
mkcert def skiff-default "IP:127.0.0.1" && mkcert a a.test "DNS:a.test" &&
	mkcert b wild.b.test "DNS:*.b.test" && mkcert a2 a2.test "DNS:a.test" &&
	mkcert def2 skiff-default2 "IP:127.0.0.1" && mkcert other other.test "DNS:other.test" || {
	fail setup "openssl could not make the test certificates: $(tail -n 2 "$WORK"/*.openssl.log | tr '\n' ' ')"
	summary
	exit 1
}

# Two free loopback ports (bound and released at once: nothing else here
# races for them but the other helpers' tests, which pick theirs the same way).
read -r HTTP_PORT TLS_PORT < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

SNI=(--tls-sni "a.test:$WORK/a.pem:$WORK/a.key" --tls-sni "*.b.test:$WORK/b.pem:$WORK/b.key")

# start NAME CMD...: run it (stdout+stderr in WORK/NAME.log) until HTTPS answers.
start() {
	local name=$1
	shift
	SRV_LOG=$WORK/$name.log
	"$@" "${ENGINE_ARGS[@]}" >"$SRV_LOG" 2>&1 &
	SRV_PID=$!
	for _ in $(seq 100); do
		if timeout 2 curl -sk -o /dev/null "https://127.0.0.1:$TLS_PORT/" 2>/dev/null; then
			return 0
		fi
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "$name.start" "no HTTPS answer within 10 s: $(tail -n 3 "$SRV_LOG" | tr '\n' ' ')"
	stop quiet
	return 1
}

# stop [quiet]: SIGTERM, exit 0 within 5 s; the counters into ST[].
declare -A ST
stop() {
	[ -n "$SRV_PID" ] || return
	kill -TERM "$SRV_PID" 2>/dev/null
	local rc=0 i
	for i in $(seq 50); do
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SRV_PID" 2>/dev/null; then
		kill -KILL "$SRV_PID"
		rc=137
	fi
	wait "$SRV_PID" 2>/dev/null || rc=$?
	SRV_PID=
	ST=()
	local k v
	while read -r k v; do ST[$k]=$v; done < <(grep -E '^[a-z_.0-9]+ [0-9]+$' "$SRV_LOG")
	[ "${1:-}" = quiet ] && return
	[ $rc -eq 0 ] && pass "$CUR.sigterm (exit 0)" || fail "$CUR.sigterm" "exit status $rc"
	case $TLS_ENGINE in gnutls | wolfssl) ;; *) return 0 ;; esac
	local e=$TLS_ENGINE
	local g=${ST[tls.${e}_sessions]:-none} h=${ST[tls.handshakes]:-0}
	[ "$g" != none ] && [ "$h" -gt 0 ] && [ "$g" -ge "$h" ] &&
		pass "$CUR.engine ($e: tls.${e}_sessions=$g >= tls.handshakes=$h)" ||
		fail "$CUR.engine" "not on $e: tls.${e}_sessions=$g, tls.handshakes=$h"
}

# subject NAME|-: the CN of the certificate s_client gets asking for NAME ('-': no SNI).
subject() {
	local sn=(-servername "$1")
	[ "$1" = - ] && sn=(-noservername)
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$TLS_PORT" "${sn[@]}" ${2:+"$2"} 2>/dev/null |
		sed -n 's/^subject=.*CN *= *\([^,/]*\).*/\1/p' | head -n 1
}

# check_sni PREFIX: the certificate by name, by wildcard, and the default.
check_sni() {
	local p=$1 got want=(a.test wild.b.test skiff-default skiff-default) names=(a.test x.b.test c.test -)
	local i bad=
	for i in 0 1 2 3; do
		got=$(subject "${names[$i]}")
		[ "$got" = "${want[$i]}" ] || bad="$bad ${names[$i]}->'$got' (want ${want[$i]})"
	done
	# *.b.test covers one label only; TLS 1.2 chooses the same way.
	got=$(subject y.x.b.test)
	[ "$got" = skiff-default ] || bad="$bad y.x.b.test->'$got' (want skiff-default)"
	got=$(subject a.test -tls1_2)
	[ "$got" = a.test ] || bad="$bad a.test/1.2->'$got'"
	[ -z "$bad" ] && pass "$p.servername (a.test, *.b.test, c.test and none: the default; 1.2 too)" ||
		fail "$p.servername" "$bad"
	got=$(timeout 10 curl -s --cacert "$WORK/a.pem" --resolve "a.test:$TLS_PORT:127.0.0.1" \
		"https://a.test:$TLS_PORT/" -o /dev/null -w '%{http_code}' 2>&1)
	[ "$got" = 200 ] || [ "$got" = 404 ] && pass "$p.curl (a.test's chain verified by name: $got)" ||
		fail "$p.curl" "got: $got"
	got=$(timeout 30 python3 "$HERE/tls_probe.py" resume 127.0.0.1 "$TLS_PORT" "$WORK/a.pem" a.test 2>&1)
	[ $? -eq 0 ] && pass "$p.python_ssl ($got)" || fail "$p.python_ssl" "$got"
	check_resume_name "$p"
}

# check_resume_name PREFIX: a session resumes under the name it was made
# under only (RFC 6066 3; RFC 8446 4.2.11, 4.6.1).  x.b.test's session
# (ticket, and for TLS 1.2 the session ID too) offered with the name
# a.test must get a full handshake ("New") and a.test's certificate, and
# the request an answer; offered again under x.b.test it still resumes
# ("Reused"), and so does a.test's own.  TLS 1.2 and 1.3; s_client
# -ign_eof reads the answer (and so the TLS 1.3 ticket) to the end.
check_resume_name() {
	local p=$1 v pair from to out r cn code bad= got=
	local sess=$WORK/sess-name get='GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n'
	# "-tls1_2 -no_ticket": by session ID only.  What each engine does,
	# asserted: OpenSSL gives an ID that resumes under its own name only;
	# GnuTLS gives an ID but keeps no cache, so s_client saves a session
	# that never resumes (New); wolfSSL, whose ID cache is off with names,
	# gives an empty ID, so s_client saves no session at all.  Tickets
	# (1.2 and 1.3) always leave a session to offer.
	local idv="-tls1_2 -no_ticket"
	for v in -tls1_2 -tls1_3 "$idv"; do
		for pair in x.b.test:a.test x.b.test:x.b.test a.test:a.test; do
			from=${pair%%:*} to=${pair#*:}
			rm -f "$sess"
			# shellcheck disable=SC2059
			# shellcheck disable=SC2086
			printf "$get" "$from" | timeout 10 openssl s_client -connect "127.0.0.1:$TLS_PORT" $v \
				-servername "$from" -sess_out "$sess" -ign_eof >/dev/null 2>&1
			# No session to offer (wolfSSL by ID, above): the second
			# handshake offers none, and must be New; whether there is
			# one is asserted below (wsf).
			local sin=() sf=nofile
			[ -s "$sess" ] && sin=(-sess_in "$sess") sf=file
			# shellcheck disable=SC2059
			# shellcheck disable=SC2086
			out=$(printf "$get" "$to" | timeout 10 openssl s_client -connect "127.0.0.1:$TLS_PORT" $v \
				-servername "$to" "${sin[@]}" -ign_eof 2>/dev/null)
			r=$(grep -E '^(Reused|New),' <<<"$out" | head -n 1)
			r=${r%%,*}
			cn=$(sed -n 's/^subject=.*CN *= *\([^,/]*\).*/\1/p' <<<"$out" | head -n 1)
			code=$(grep -aoE '^HTTP/1\.1 [0-9]+' <<<"$out" | head -n 1)
			local tag=${v#-tls}
			tag=${tag// -no_ticket/id}
			got="$got $tag:$from>$to:$sf:${r:-none}:${cn:-?}:${code#HTTP/1.1 }"
			local want=Reused wcn= wsf=file
			if [ "$v" = "$idv" ]; then
				case $TLS_ENGINE in
				gnutls) want=New ;;
				wolfssl) want=New wsf=nofile ;;
				esac
			fi
			[ "$from" = "$to" ] || want=New wcn=a.test
			local ok=1
			[ "$sf" = "$wsf" ] || ok=0
			[ "$r" = "$want" ] || ok=0
			[ -z "$wcn" ] || [ "$cn" = "$wcn" ] || ok=0
			case ${code#HTTP/1.1 } in 200 | 404) ;; *) ok=0 ;; esac
			if [ $ok = 0 ]; then
				bad="$bad $tag:$from>$to:$sf (want $wsf):${r:-none} (want $want) cn=${cn:-?}${wcn:+ (want $wcn)} answer=${code:-none}"
			fi
		done
	done
	[ -z "$bad" ] && pass "$p.resume_by_name (other name: New, a.test's certificate; same name: Reused;$got)" ||
		fail "$p.resume_by_name" "$bad"
}

# ---- an application over HTTPS ------------------------------------------
CUR=app
SKT_SCOPE=
if start app "$EX/kv" --ip 127.0.0.1 --port "$HTTP_PORT" --tls-port "$TLS_PORT" \
	--tls-cert "$WORK/def.pem" --tls-key "$WORK/def.key" --stats; then
	U=https://127.0.0.1:$TLS_PORT
	CA=(--cacert "$WORK/def.pem")
	a=$(timeout 10 curl -s -X PUT --data-binary plain-to-tls "http://127.0.0.1:$HTTP_PORT/kv/one" -o /dev/null -w '%{http_code}')
	b=$(timeout 10 curl -s "${CA[@]}" "$U/kv/one")
	c=$(timeout 10 curl -s "${CA[@]}" -X PUT --data-binary tls-to-plain "$U/kv/two" -o /dev/null -w '%{http_code}')
	d=$(timeout 10 curl -s "http://127.0.0.1:$HTTP_PORT/kv/two")
	[ "$a" = 201 ] || [ "$a" = 200 ] || [ "$a" = 204 ]
	ok=$?
	[ $ok -eq 0 ] && [ "$b" = plain-to-tls ] && [ "$d" = tls-to-plain ] &&
		pass "app.curl (PUT over HTTP, GET over HTTPS and back: one store)" ||
		fail app.curl "PUT http=$a GET https='$b' PUT https=$c GET http='$d'"
	head -c 300000 /dev/urandom >"$WORK/big"
	want=$(sha256sum <"$WORK/big" | cut -c1-64)
	timeout 20 curl -s "${CA[@]}" -X PUT --data-binary @"$WORK/big" "$U/kv/big" -o /dev/null
	got=$(timeout 20 curl -s "${CA[@]}" "$U/kv/big" | sha256sum | cut -c1-64)
	[ "$got" = "$want" ] && pass "app.body (300 kB PUT and GET over HTTPS, sha256 equal)" ||
		fail app.body "sha256 ${got:0:12}.. != ${want:0:12}.."
	res=
	# A request, so that the client reads the answer and the TLS 1.3
	# ticket sent before it.
	GET1='GET /kv/one HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'
	for v in -tls1_2 -tls1_3; do
		rm -f "$WORK/sess"
		printf "$GET1" | timeout 10 openssl s_client -connect "127.0.0.1:$TLS_PORT" $v \
			-sess_out "$WORK/sess" -quiet >/dev/null 2>&1
		r=$(printf "$GET1" | timeout 10 openssl s_client -connect "127.0.0.1:$TLS_PORT" $v \
			-sess_in "$WORK/sess" 2>/dev/null | grep -E '^(Reused|New),' | head -n 1)
		res="$res ${v#-}:${r%%,*}"
	done
	[ "$res" = " tls1_2:Reused tls1_3:Reused" ] && pass "app.s_client.resume ($res)" ||
		fail app.s_client.resume "$res"
	out=$(timeout 60 ab -n 400 -c 4 -f TLS1.2 "$U/kv/one" 2>&1)
	done_=$(sed -n 's/^Complete requests: *//p' <<<"$out")
	failed=$(sed -n 's/^Failed requests: *//p' <<<"$out")
	[ "${done_:-0}" = 400 ] && [ "${failed:-1}" = 0 ] && pass "app.ab (-f TLS1.2, 400 new connections, 0 failed)" ||
		fail app.ab "complete=${done_:-?} failed=${failed:-?}: $(tail -n 2 <<<"$out" | tr '\n' ' ')"
	stop
	hs=${ST[tls.handshakes]:-0} rq=${ST[https.requests]:-0} re=${ST[tls.resumed]:-0}
	[ "$hs" -ge 405 ] && [ "$rq" -ge 405 ] && [ "$re" -ge 2 ] && [ "${ST[http.requests]:-0}" -ge 2 ] &&
		pass "app.counters (tls.handshakes=$hs tls.resumed=$re https.requests=$rq http.requests=${ST[http.requests]})" ||
		fail app.counters "tls.handshakes=$hs (>= 405) tls.resumed=$re (>= 2) https.requests=$rq (>= 405) http.requests=${ST[http.requests]:-?} (>= 2)"
fi

# ---- certificates by name, on serve and on an application ---------------
mkdir -p "$WORK/www" && echo "skiff by name" >"$WORK/www/index.html"
cp "$WORK/a.pem" "$WORK/a-live.pem" && cp "$WORK/a.key" "$WORK/a-live.key"
cp "$WORK/def.pem" "$WORK/def-live.pem" && cp "$WORK/def.key" "$WORK/def-live.key"
SNI_LIVE=(--tls-sni "a.test:$WORK/a-live.pem:$WORK/a-live.key" --tls-sni "*.b.test:$WORK/b.pem:$WORK/b.key")
CUR=serve
if start serve "$BIN" serve --stack linux --ip 127.0.0.1 --port "$HTTP_PORT" --root "$WORK/www" \
	--tls-port "$TLS_PORT" --tls-cert "$WORK/def-live.pem" --tls-key "$WORK/def-live.key" \
	"${SNI_LIVE[@]}" --stats --control none; then
	check_sni sni.serve
	# reload: new files for a.test and the default, SIGHUP
	cp "$WORK/a2.pem" "$WORK/a-live.pem" && cp "$WORK/a2.key" "$WORK/a-live.key"
	cp "$WORK/def2.pem" "$WORK/def-live.pem" && cp "$WORK/def2.key" "$WORK/def-live.key"
	kill -HUP "$SRV_PID"
	g1= g2= g3=
	for _ in $(seq 30); do
		sleep 0.2
		g1=$(subject a.test)
		[ "$g1" = a2.test ] && break
	done
	g2=$(subject -) g3=$(subject x.b.test)
	[ "$g1" = a2.test ] && [ "$g2" = skiff-default2 ] && [ "$g3" = wild.b.test ] &&
		pass "sni.reload (SIGHUP: a.test and the default anew, *.b.test kept)" ||
		fail sni.reload "a.test->'$g1' (want a2.test) none->'$g2' (want skiff-default2) x.b.test->'$g3'"
	# a broken SNI file: nothing changes
	echo broken >"$WORK/a-live.pem"
	kill -HUP "$SRV_PID"
	# The reload runs on the server's 1 s timer: until it has said so.
	skt_wait_for 5 grep -q 'SIGHUP: certificate reload failed' "$SRV_LOG"
	g1=$(subject a.test) g2=$(subject -)
	[ "$g1" = a2.test ] && [ "$g2" = skiff-default2 ] &&
		pass "sni.reload_bad (a broken file: the last good certificates stay)" ||
		fail sni.reload_bad "a.test->'$g1' none->'$g2'"
	stop
	[ "${ST[tls.reloads]:-0}" = 1 ] && [ "${ST[tls.reload_failures]:-0}" = 1 ] &&
		[ "${ST[tls.sni_matched]:-0}" -ge 6 ] && [ "${ST[tls.sni_default]:-0}" -ge 4 ] &&
		pass "sni.counters (reloads 1, reload_failures 1, sni_matched ${ST[tls.sni_matched]}, sni_default ${ST[tls.sni_default]})" ||
		fail sni.counters "reloads=${ST[tls.reloads]:-?} reload_failures=${ST[tls.reload_failures]:-?} sni_matched=${ST[tls.sni_matched]:-?} sni_default=${ST[tls.sni_default]:-?}"
fi
CUR=app_sni
if start app_sni "$EX/hello" --ip 127.0.0.1 --port "$HTTP_PORT" --tls-port "$TLS_PORT" \
	--tls-cert "$WORK/def.pem" --tls-key "$WORK/def.key" "${SNI[@]}" --stats; then
	check_sni sni.app
	# no name (an address): the default certificate, verified
	out=$(timeout 30 python3 "$HERE/tls_probe.py" resume 127.0.0.1 "$TLS_PORT" "$WORK/def.pem" 127.0.0.1 2>&1)
	[ $? -eq 0 ] && pass "app.python_ssl (default certificate: $out)" || fail app.python_ssl "$out"
	stop
fi
# The application reloads too (serve's SIGHUP path: its flags are one site of sites_host.c).
cp "$WORK/a.pem" "$WORK/a-live.pem" && cp "$WORK/a.key" "$WORK/a-live.key"
CUR=app_reload
if start app_reload "$EX/hello" --ip 127.0.0.1 --port "$HTTP_PORT" --tls-port "$TLS_PORT" \
	--tls-cert "$WORK/def.pem" --tls-key "$WORK/def.key" "${SNI_LIVE[@]}" --stats; then
	g0=$(subject a.test)
	cp "$WORK/a2.pem" "$WORK/a-live.pem" && cp "$WORK/a2.key" "$WORK/a-live.key"
	kill -HUP "$SRV_PID"
	g1=
	for _ in $(seq 30); do
		sleep 0.2
		g1=$(subject a.test)
		[ "$g1" = a2.test ] && break
	done
	[ "$g0" = a.test ] && [ "$g1" = a2.test ] &&
		pass "sni.app_reload (SIGHUP on an application: a.test anew)" ||
		fail sni.app_reload "before '$g0' (want a.test), after '$g1' (want a2.test)"
	stop
fi

# ---- sites by name (serve --config): a session resumes at its own site ----
# Two sites on one tls listener, a.test (the default certificate) and
# b.test (its own, by SNI), each answering its name.  b.test's session
# (TLS 1.3 and 1.2) offered under a.test with Host a.test: New, a.test's
# certificate verified, site-a's answer; under b.test again: Reused and
# site-b's.  (The RFC 6066 3 check of sni.*.resume_by_name, where the
# answer says which site.)
CUR=sites
mkcert bsite b.test "DNS:b.test" || fail sites.setup "openssl could not make b.test's certificate"
printf 'site a.test {\n    listen 127.0.0.1:%s tls;\n    tls %s %s;\n    route / {\n        return 200 site-a;\n    }\n}\nsite b.test {\n    listen 127.0.0.1:%s tls;\n    tls %s %s;\n    route / {\n        return 200 site-b;\n    }\n}\n' \
	"$TLS_PORT" "$WORK/a.pem" "$WORK/a.key" "$TLS_PORT" "$WORK/bsite.pem" "$WORK/bsite.key" >"$WORK/sites.conf"
# site_get VERSION NAME HOST CA [s_client args]: "CN verify body New|Reused"
site_get() {
	local v=$1 n=$2 host=$3 ca=$4 out
	shift 4
	out=$(printf 'GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$host" |
		timeout 10 openssl s_client -connect "127.0.0.1:$TLS_PORT" "-$v" -servername "$n" \
			-CAfile "$ca" -ign_eof "$@" 2>&1)
	printf '%s %s %s %s' "$(sed -n 's/^subject=.*CN *= *\([^,/]*\).*/\1/p' <<<"$out" | head -n 1)" \
		"$(grep -m1 -o 'Verify return code: [0-9]*' <<<"$out" | grep -o '[0-9]*$')" \
		"$(grep -aom1 'site-[ab]' <<<"$out")" "$(grep -aom1 -E '^(New|Reused)' <<<"$out")"
}
if start sites "$BIN" serve --stack linux --config "$WORK/sites.conf" --stats --control none; then
	bad= got=
	for v in tls1_3 tls1_2; do
		rm -f "$WORK/site-b.sess"
		r1=$(site_get $v b.test b.test "$WORK/bsite.pem" -sess_out "$WORK/site-b.sess")
		# a session to offer (a ticket), or the rest is void
		[ -s "$WORK/site-b.sess" ] || r1="$r1 (no session saved)"
		r2=$(site_get $v a.test a.test "$WORK/a.pem" -sess_in "$WORK/site-b.sess")
		r3=$(site_get $v b.test b.test "$WORK/bsite.pem" -sess_in "$WORK/site-b.sess")
		got="$got $v: '$r1' '$r2' '$r3';"
		[ "$r1" = "b.test 0 site-b New" ] && [ "$r2" = "a.test 0 site-a New" ] &&
			[ "$r3" = "b.test 0 site-b Reused" ] || bad=1
	done
	[ -z "$bad" ] && pass "sites.resume_by_name (b.test's session under a.test: New, a.test's certificate, site-a; under b.test: Reused, site-b;$got)" ||
		fail sites.resume_by_name "$got (want 'b.test 0 site-b New' 'a.test 0 site-a New' 'b.test 0 site-b Reused')"
	stop
	case $TLS_ENGINE in
	gnutls) ;; # it cannot tell these tickets from a key gone (docs/tls.md)
	*)
		[ "${ST[tls.resume_refused_name]:-0}" -ge 2 ] &&
			pass "sites.counters (tls.resume_refused_name ${ST[tls.resume_refused_name]})" ||
			fail sites.counters "tls.resume_refused_name '${ST[tls.resume_refused_name]:-none}' (>= 2)"
		;;
	esac
fi

# ---- bad command lines ---------------------------------------------------
out=$("$EX/hello" --port "$HTTP_PORT" --tls-sni "a.test:$WORK/a.pem:$WORK/a.key" 2>&1)
rc=$?
[ $rc -eq 2 ] && grep -q 'need --tls-cert' <<<"$out" && pass "cli.sni_without_cert (exit 2)" ||
	fail cli.sni_without_cert "rc=$rc: $out"
out=$("$EX/kv" --port "$HTTP_PORT" --tls-key "$WORK/def.key" 2>&1)
rc=$?
[ $rc -eq 2 ] && pass "cli.app_key_without_cert (exit 2)" || fail cli.app_key_without_cert "rc=$rc: $out"
out=$(timeout 10 "$BIN" serve --stack linux --ip 127.0.0.1 --port "$HTTP_PORT" --root "$WORK/www" \
	--tls-port "$TLS_PORT" --tls-cert "$WORK/def.pem" --tls-key "$WORK/def.key" \
	--tls-sni "a.test:$WORK/a.pem:$WORK/other.key" --control none 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -q 'other.key' <<<"$out" && pass "cli.sni_wrong_key (exit 1, names the key)" ||
	fail cli.sni_wrong_key "rc=$rc: $out"
out=$(timeout 10 "$EX/hello" --port "$HTTP_PORT" --tls-port "$HTTP_PORT" --tls-cert "$WORK/def.pem" \
	--tls-key "$WORK/def.key" 2>&1)
rc=$?
# A usage error (exit 2), as serve's: one check of the flags for every front end.
[ $rc -eq 2 ] && grep -q 'is --port too' <<<"$out" && pass "cli.app_same_port (exit 2)" ||
	fail cli.app_same_port "rc=$rc: $out"

summary
