#!/usr/bin/env bash
# tests/app.sh EXAMPLES_DIR [TARGET...] — the applications of examples/ on
# http/app.h (build/examples/kv, echo, hello, links), on each TARGET (default all):
#   linux         --stack linux; server and client in namespaces srv and
#                 cli joined by a veth (tests/lib.sh skt_topo_veth)
#   skiff:tap     --stack skiff --dev tap:sk0; one namespace (skt_topo_tap)
#   skiff:packet  --stack skiff --dev packet:vs0  (cli/srv veth, offloads off)
#   skiff:xdp     --stack skiff --dev xdp:vs0
#   uk            the unikernel images (build/examples/NAME-uk.elf) under
#                 `skiff vm --image ... -p PORT:80` (user networking, TCG
#                 where there is no hardware KVM); kv.ops is APP_OPS_UK
#                 (default 10,000); no kv.stuck: the guest takes no
#                 body-timeout/send-timeout words yet, and QEMU's user
#                 network buffers what the guest sends
# Checks per target (tests/app_client.py does the HTTP):
#   kv.ops     APP_OPS random PUT/GET/DELETE (values 0 B .. 1 MiB, 40 %
#              of PUTs chunked in random pieces, sha256 and ETag checked,
#              conditional GETs 304) by 4 concurrent clients; 0 failures.
#              APP_OPS: 10,000 on every target (env
#              APP_OPS_LINUX / APP_OPS_SKIFF / APP_OPS_UK)
#   kv.limits  a 1 MiB + 1 value by Content-Length and chunked: 413; the
#              store filled with 1 MiB values: 507 after 32..64 of them;
#              a DELETE makes room again
#   kv.stuck   with --body-timeout 3 --send-timeout 3: a client sending its
#              body a byte every 0.5 s gets 408 after ~3 s, one that asks
#              16 MiB and reads nothing is cut off (fewer bytes, then EOF),
#              while 300 operations of another client all succeed
#   kv.exit    SIGTERM: exit 0, the counters show no 500
#   echo       a 5 MiB upload by Content-Length and chunked comes back
#              byte for byte (sha256), with Expect: 100-continue too
#   hello      curl: 200 and the greeting; /hello/NAME
#   hello.https (hosted targets) the same over HTTPS: hello runs with
#              --tls-cert/--tls-key --tls-port 443 (an ECDSA P-256
#              certificate for 198.18.0.2 made here, at run time), curl
#              --cacert on 443 (tests/tls_app.sh has the rest of HTTPS
#              for applications, on loopback)
#   links.*    examples/links (a URL shortener on the helper kit: a body
#              from the engine's pool, http_app_headerf, JSON error
#              answers) by tests/links_client.py: links.api (create,
#              follow, stats, the engine's 404/405 as JSON); links.hostile
#              (14 bad JSON bodies: 400; a URL too long for the 1 KiB
#              header area: 500 and never a 302 without Location; bodies
#              over 4 KiB by length, chunked and with Expect: 413, early;
#              32 bodies held half-sent: the 33rd read gets 503 from the
#              empty pool, and the 32 are answered 201 after); links.slow
#              (a head and body sent in bits over ~3 s: 201; 200 requests
#              served beside a client that pipelines 20,000 and reads
#              none; hosted, with --body-timeout 3 --send-timeout 3: a
#              body that stops gets 408, the non-reader is cut off);
#              links.exit: exit 0, and its counters show the overflow
#              (http.header_overflow >= 1, as many 500s) and the empty
#              pool (http.body_pool_empty >= 1)
#   cli.name   (once) a bad option and --help name the binary as run
# APP_RUN="links kv" runs those applications only (default: all four).
# Prints PASS/FAIL per check; ends with "app: N passed, N failed".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=app
export PYTHONDONTWRITEBYTECODE=1

usage() { echo "usage: $0 build/examples [linux] [skiff:tap] [skiff:packet] [skiff:xdp] [uk]" >&2; exit 2; }
EX=${1:-}
[ -n "$EX" ] || usage
shift
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(linux skiff:tap skiff:packet skiff:xdp uk)
for t in "${TARGETS[@]}"; do
	case $t in linux | skiff:tap | skiff:packet | skiff:xdp | uk) ;; *) echo "$0: unknown target '$t'" >&2; usage ;; esac
done
for a in kv echo hello links; do
	skt_check_bin "$EX/$a" || exit 2
	if [[ " ${TARGETS[*]} " == *" uk "* ]] && [ ! -r "$EX/$a-uk.elf" ]; then
		echo "$0: $EX/$a-uk.elf missing (make examples)" >&2
		exit 2
	fi
done
EX=$(readlink -f "$EX")
SKIFF=$(readlink -f "$EX/../skiff")
if ! skt_need setup curl python3 openssl; then
	summary
	exit 1
fi

SRV_IP=198.18.0.2 SRV_PORT=80
# The guests' forwards on 127.0.0.1 (APP_UK_PORT / APP_UK_CTL move them, e.g.
# for a second run beside a make test's own app phase).
UK_PORT=${APP_UK_PORT:-18180} UK_CTL=${APP_UK_CTL:-18181}
WORK=$(mktemp -d /tmp/skiff-app.XXXXXX)
AC=$HERE/app_client.py
SRV_PID=
NS_C= NS_S= IF_C=
STACK=()

on_exit() {
	skt_cleanup
	if [ "$SKT_FAILED" -eq 0 ] && [ -z "${APP_KEEP_LOGS:-}" ]; then
		rm -rf "$WORK"
	else
		echo "app: logs kept in $WORK"
	fi
}
trap on_exit EXIT
openssl req -x509 -nodes -days 2 -subj /CN=skiff-app -addext "subjectAltName=IP:$SRV_IP" \
	-newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$WORK/tls.key" -out "$WORK/tls.pem" \
	>"$WORK/openssl.log" 2>&1 || { fail setup "openssl req: $(tail -n 2 "$WORK/openssl.log")"; summary; exit 1; }
trap 'exit 130' INT

# The binary is its own program: a bad option and --help name it as run
# (hello), never `skiff app`, which is no command.
msg=$("$EX/hello" --no-such-option 2>&1 >/dev/null)
rc=$?
if [ "$rc" = 2 ] && grep -qx "hello: unknown option 'no-such-option'" <<<"$msg" &&
	grep -qx "Try 'hello --help'." <<<"$msg" && "$EX/hello" --help | head -n 1 | grep -q '^usage: hello '; then
	pass "cli.name" "exit 2, 'hello: unknown option', 'Try 'hello --help'', usage: hello"
else
	fail "cli.name" "rc $rc: $msg / $("$EX/hello" --help 2>&1 | head -n 1)"
fi
trap 'exit 143' TERM

C() {
	if [ "$TGT" = uk ]; then
		timeout "${T:-300}" "$@"
	else
		timeout "${T:-120}" ip netns exec "$NS_C" "$@"
	fi
}

setup_target() {
	skt_cleanup_stale
	if [ "$TGT" = uk ]; then
		SRV_IP=127.0.0.1 SRV_PORT=$UK_PORT
		return 0
	fi
	SRV_IP=198.18.0.2 SRV_PORT=80
	case $TGT in
	linux) skt_topo_veth on "$SRV_IP/24" ;;
	skiff:tap) skt_topo_tap tap sk0 ;;
	*) skt_topo_veth off "" ;;
	esac || return 1
	NS_C=$SKT_NS_L NS_S=$SKT_NS_S IF_C=$SKT_IF_L
	case $TGT in
	linux) STACK=(--stack linux) ;;
	skiff:tap) STACK=(--stack skiff --dev "tap:$SKT_IF_S" --ip "$SRV_IP/24") ;;
	skiff:packet) STACK=(--stack skiff --dev "packet:$SKT_IF_S" --ip "$SRV_IP/24") ;;
	skiff:xdp) STACK=(--stack skiff --dev "xdp:$SKT_IF_S" --ip "$SRV_IP/24") ;;
	esac
	ip netns exec "$NS_C" sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse'
}

# start_app NAME PROBE_PATH ARGS...: wait for the listening line and a
# first answer on PROBE_PATH.
start_app() {
	local name=$1 probe=$2 i
	shift 2
	SRV_LOG=$WORK/${TGT/:/-}-$name.log
	if [ "$TGT" = uk ]; then
		# Guest words: max-body= as the hosted option; the rest defaults.
		local words=(stats shutdown-port=9 exit-after=600)
		[ "$name" = echo ] && words+=(max-body=8M)
		"$SKIFF" vm --image "$EX/$name-uk.elf" -p "$UK_PORT:80" -p "$UK_CTL:9/udp" -- "${words[@]}" >"$SRV_LOG" 2>&1 &
		SRV_PID=$!
		SKT_PIDS+=("$SRV_PID")
		for ((i = 0; i < 600; i++)); do
			grep -q "^skiff-uk: ready" "$SRV_LOG" 2>/dev/null && break
			kill -0 "$SRV_PID" 2>/dev/null || break
			sleep 0.1
		done
	else
		ip netns exec "$NS_S" "$EX/$name" "${STACK[@]}" --port 80 --stats "$@" >"$SRV_LOG" 2>&1 &
		SRV_PID=$!
		SKT_PIDS+=("$SRV_PID")
		for ((i = 0; i < 200; i++)); do
			grep -q "^$name: listening" "$SRV_LOG" 2>/dev/null && break
			kill -0 "$SRV_PID" 2>/dev/null || break
			sleep 0.05
		done
		ip -n "$NS_C" neigh flush dev "$IF_C" 2>/dev/null
	fi
	for ((i = 0; i < 50; i++)); do
		C curl -s -o /dev/null --max-time 2 "http://$SRV_IP:$SRV_PORT$probe" && return 0
		sleep 0.1
	done
	fail "$TGT.$name.start" "no answer: $(tail -n 3 "$SRV_LOG" | tr '\n' ' ')"
	return 1
}

stop_app() { # stop_app NAME: SIGTERM (the guest: its shutdown-port), exit 0 within 5 s
	local name=$1
	if [ "$TGT" = uk ]; then
		# The guest's own stop: "exit 0" to its shutdown-port.
		python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", ("127.0.0.1", int(sys.argv[1])))' "$UK_CTL"
	else
		kill -TERM "$SRV_PID" 2>/dev/null
	fi
	if ! skt_wait_exit "$SRV_PID" 5; then
		kill -KILL "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
		SKT_PIDS=()
		fail "$TGT.$name.exit" "still running 5 s after SIGTERM"
		return 1
	fi
	SKT_PIDS=()
	if [ "$SKT_RC" -ne 0 ]; then
		fail "$TGT.$name.exit" "exit status $SKT_RC: $(tail -n 3 "$SRV_LOG" | tr '\n' ' ')"
		return 1
	fi
	return 0
}

stat_of() { tr -d '\r' <"$SRV_LOG" | awk -v k="$1" '$1 == k {print $2}'; } # the guest's console ends lines in CRLF

client() { # client CHECK ARGS...: app_client.py, PASS/FAIL with its last line
	local check=$1 out
	shift
	out=$WORK/${TGT/:/-}-$check.out
	if C python3 "$AC" "$@" "$SRV_IP" "$SRV_PORT" "${CARGS[@]}" >"$out" 2>&1; then
		pass "$TGT.$check" "$(tail -n 1 "$out")"
	else
		fail "$TGT.$check" "$(grep -m 3 FAIL-DETAIL "$out" | tr '\n' ' ') $(tail -n 1 "$out")"
	fi
}

run_kv() {
	local ops=${APP_OPS_SKIFF:-10000} clients=4
	[ "$TGT" = linux ] && ops=${APP_OPS_LINUX:-10000}
	[ "$TGT" = uk ] && ops=${APP_OPS_UK:-10000}
	start_app kv /kv/ --body-timeout 3 --send-timeout 3 || return 1
	CARGS=("$ops" "$clients" "$RANDOM")
	client kv.ops ops
	CARGS=()
	client kv.limits limits
	if [ "$TGT" != uk ]; then
		CARGS=(3 3 300)
		client kv.stuck stuck
	fi
	stop_app kv || return 1
	local e500
	e500=$(stat_of http.resp_500)
	if [ "${e500:-x}" = 0 ]; then
		pass "$TGT.kv.exit" "requests=$(stat_of http.requests) aborted=$(stat_of http.aborted) timeout_body=$(stat_of http.timeout_body) timeout_send=$(stat_of http.timeout_send)"
	else
		fail "$TGT.kv.exit" "resp_500=${e500:-none}"
	fi
}

run_echo() {
	start_app echo /nothing --max-body 8M || return 1
	local f=$WORK/echo.bin want got how
	head -c $((5 << 20)) /dev/urandom >"$f"
	want=$(sha256sum <"$f" | cut -d' ' -f1)
	for how in length chunked continue; do
		local h=()
		case $how in
		chunked) h=(-H "Transfer-Encoding: chunked") ;;
		continue) h=(-H "Expect: 100-continue") ;;
		esac
		got=$(C curl -s --max-time 120 "${h[@]}" --data-binary @"$f" "http://$SRV_IP:$SRV_PORT/echo" | sha256sum | cut -d' ' -f1)
		if [ "$got" = "$want" ]; then
			pass "$TGT.echo.$how" "5 MiB back, sha256 equal"
		else
			fail "$TGT.echo.$how" "sha256 $got, want $want"
		fi
	done
	stop_app echo
}

run_hello() {
	local tls=()
	[ "$TGT" != uk ] && tls=(--tls-cert "$WORK/tls.pem" --tls-key "$WORK/tls.key" --tls-port 443)
	start_app hello / "${tls[@]}" || return 1
	local a b
	a=$(C curl -s --max-time 5 "http://$SRV_IP:$SRV_PORT/")
	b=$(C curl -s --max-time 5 "http://$SRV_IP:$SRV_PORT/hello/skiff%20user")
	if [ "$a" = "Hello from a skiff application." ] && [ "$b" = "Hello, skiff user!" ]; then
		pass "$TGT.hello" "'$a' '$b'"
	else
		fail "$TGT.hello" "got '$a' '$b'"
	fi
	if [ "$TGT" != uk ]; then
		a=$(C curl -s --max-time 10 --cacert "$WORK/tls.pem" "https://$SRV_IP/")
		b=$(C curl -s --max-time 10 --cacert "$WORK/tls.pem" "https://$SRV_IP/hello/skiff%20user")
		if [ "$a" = "Hello from a skiff application." ] && [ "$b" = "Hello, skiff user!" ]; then
			pass "$TGT.hello.https" "curl --cacert on 443: '$a' '$b'"
		else
			fail "$TGT.hello.https" "got '$a' '$b'"
		fi
	fi
	stop_app hello
}

run_links() {
	local cut=1 w
	[ "$TGT" = uk ] && cut=0 # the guest takes no body-timeout/send-timeout words yet
	start_app links /stats --body-timeout 3 --send-timeout 3 || return 1
	for w in api hostile slow; do
		local out=$WORK/${TGT/:/-}-links-$w.out args=()
		[ $w = slow ] && args=("$cut" 3)
		if C python3 "$HERE/links_client.py" $w "$SRV_IP" "$SRV_PORT" "${args[@]}" >"$out" 2>&1; then
			pass "$TGT.links.$w" "$(grep -c '^ok' "$out") checks: $(awk '$1 == "ok" {printf "%s ", $2}' "$out")"
		else
			fail "$TGT.links.$w" "$(grep -m 3 FAIL-DETAIL "$out" | tr '\n' ' ') $(tail -n 1 "$out")"
		fi
	done
	stop_app links || return 1
	local ov e500 pool
	ov=$(stat_of http.header_overflow) e500=$(stat_of http.resp_500) pool=$(stat_of http.body_pool_empty)
	if [ "${ov:-0}" -ge 1 ] && [ "${e500:-x}" = "$ov" ] && [ "${pool:-0}" -ge 1 ]; then
		pass "$TGT.links.exit" "header_overflow=$ov resp_500=$e500 body_pool_empty=$pool requests=$(stat_of http.requests)"
	else
		fail "$TGT.links.exit" "header_overflow=${ov:-none} resp_500=${e500:-none} body_pool_empty=${pool:-none}"
	fi
}

for TGT in "${TARGETS[@]}"; do
	t0=$SECONDS
	if ! setup_target; then
		fail "$TGT.setup" "topology"
		skt_cleanup
		continue
	fi
	for a in ${APP_RUN:-links hello echo kv}; do
		"run_$a"
	done
	skt_cleanup
	echo "app: $TGT took $((SECONDS - t0)) s"
done
summary
