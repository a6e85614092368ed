#!/usr/bin/env bash
# tests/http_diff.sh BIN [TARGET...] — skiff's static file semantics against
# nginx on the same tree (tests/http_diff.py: what is compared, and the
# documented exceptions), on each TARGET (default both):
#   linux   skiff serve --stack linux on 127.0.0.1:PORT, nginx on
#           127.0.0.1:PORT2, client in this namespace (loopback only;
#           every port one the kernel finds free, skt_free_port);
#   skiff   one namespace skt-<pid>-tap (tests/lib.sh skt_topo_tap): skiff
#           serve --stack skiff --dev tap:sk0 as 198.18.0.2, nginx on the
#           namespace's own 127.0.0.1, the client in it;
#   vm      the unikernel (SKIFF_UK, default skiff-uk.elf beside BIN):
#           `skiff vm --root TREE -p PORT:80` (QEMU user networking, the
#           forward on 127.0.0.1 only), nginx and the client here.
# nginx runs without root-owned paths: its config, pid, logs and temp
# folders are generated into a temporary directory (master process off,
# no daemon), and it is stopped by pid.
# SKT_FAMILY=6 (run-all.sh phase http-diff6): the skiff target over IPv6
# (tests/lib.sh skt_family: the client on 2001:2::1/64, skiff --ip6
# 2001:2::2/64, compared as [2001:2::2]:80; checks print as skiff.v6/...).
# linux and vm stay IPv4: serve --stack linux binds [::] without --ip (all
# of the root namespace's interfaces, not loopback alone), and QEMU's user
# networking forwards only IPv4 (docs/ipv6.md).
# Prints "PASS target/diff (...)" / "FAIL target/diff: why" and ends with
# "http_diff: N passed, N failed".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=http_diff
export PYTHONDONTWRITEBYTECODE=1

usage() { echo "usage: $0 path/to/skiff [linux] [skiff] [vm]" >&2; exit 2; }
BIN=${1:-}
[ -n "$BIN" ] || usage
shift
TARGETS=("$@")
skt_family "$SKT_FAMILY" || { echo "$0: SKT_FAMILY is 4 or 6, not '$SKT_FAMILY'" >&2; exit 2; }
if [ "$SKT_FAMILY" = 6 ]; then
	[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(skiff)
	for t in "${TARGETS[@]}"; do
		[ "$t" = skiff ] || { echo "$0: over IPv6 only the skiff target (not '$t')" >&2; usage; }
	done
fi
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(linux skiff vm)
for t in "${TARGETS[@]}"; do
	case $t in linux | skiff | vm) ;; *) echo "$0: unknown target '$t'" >&2; usage ;; esac
done
skt_check_bin "$BIN" || exit 2
BIN=$(readlink -f "$BIN")
UK=$(readlink -f "${SKIFF_UK:-$(dirname "$BIN")/skiff-uk.elf}")
if ! skt_need setup nginx python3; then
	summary
	exit 1
fi

WORK=$(mktemp -d /tmp/skiff-http-diff.XXXXXX)
on_exit() {
	skt_cleanup
	if [ "$SKT_FAILED" -eq 0 ] && [ -z "${HTTP_KEEP_LOGS:-}" ]; then
		rm -rf "$WORK"
	else
		echo "http_diff: logs kept in $WORK"
	fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# NS CMD...: run in the target's namespace (none for linux).
NS=
IN_NS=()
in_ns() { "${IN_NS[@]}" "$@"; }

# wait_http ADDR LOG PID: until ADDR answers (or PID died).
wait_http() {
	local i
	for ((i = 0; i < 300; i++)); do
		in_ns python3 -c "import http.client,sys; c=http.client.HTTPConnection('${1%:*}'.strip('[]'), ${1##*:}, timeout=1); c.request('GET','/'); c.getresponse()" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
	done
	fail "$N/start" "$1 did not answer in 30 s: $(tail -n 3 "$2" | tr '\n' ' ')"
	return 1
}

python3 "$HERE/http_diff.py" tree "$WORK/www" || { fail setup "cannot build the tree"; summary; exit 1; }

for TGT in "${TARGETS[@]}"; do
	N=$TGT # the checks' names
	[ "$SKT_FAMILY" = 6 ] && N=$TGT.v6
	NS=
	IN_NS=()
	skt_cleanup_stale
	if [ "$TGT" = vm ]; then
		if [ ! -f "$UK" ]; then
			fail "$N/setup" "no unikernel image at $UK (make uk)"
			continue
		fi
		# Ports the kernel finds free now: ports from the pid (20000 +
		# pid % 20000, much of it the ephemeral range) were once in use
		# on a shared host, and QEMU could not set up its forwarding
		# (ci-fresh, 2026-12-06).
		SK_ADDR=127.0.0.1:$(skt_free_port tcp)
		CTL_PORT=$(skt_free_port udp)
	elif [ "$TGT" = skiff ]; then
		if ! skt_topo_tap tap sk0; then
			fail "$N/setup" "cannot build the namespace"
			skt_cleanup
			continue
		fi
		NS=$SKT_NS_S
		IN_NS=(ip netns exec "$NS")
		SK_ADDR=$SKT_HOST:80
		SERVE=(--stack skiff --dev tap:sk0 --ip "$SKT_SKIFF_IP/24" --port 80)
		skt_family_up skiff || { fail "$N/setup" "cannot turn IPv6 on"; skt_cleanup; continue; }
		SERVE+=("${SKT_SERVE6[@]}")
	else
		PORT=$(skt_free_port tcp)
		SK_ADDR=127.0.0.1:$PORT
		SERVE=(--stack linux --ip 127.0.0.1 --port "$PORT")
	fi
	NGX=$WORK/nginx-$TGT
	mkdir -p "$NGX"
	NGX_PORT=$(skt_free_port tcp)
	NGX_ADDR=127.0.0.1:$NGX_PORT
	python3 "$HERE/http_diff.py" nginx-conf "$NGX" "$WORK/www" "$NGX_PORT"
	"${IN_NS[@]}" nginx -p "$NGX" -c "$NGX/nginx.conf" -e "$NGX/error.log" >"$NGX/out.log" 2>&1 &
	NGX_PID=$!
	SKT_PIDS+=("$NGX_PID")
	SK_LOG=$WORK/skiff-$TGT.log
	if [ "$TGT" = vm ]; then
		timeout 600 "$BIN" vm --image "$UK" --root "$WORK/www" -p "${SK_ADDR##*:}:80" \
			-p "$CTL_PORT:9/udp" -- shutdown-port=9 exit-after=580 </dev/null >"$SK_LOG" 2>&1 &
	else
		"${IN_NS[@]}" "$BIN" serve "${SERVE[@]}" --root "$WORK/www" --stats >"$SK_LOG" 2>&1 &
	fi
	SK_PID=$!
	SKT_PIDS+=("$SK_PID")
	if wait_http "$NGX_ADDR" "$NGX/error.log" "$NGX_PID" && wait_http "$SK_ADDR" "$SK_LOG" "$SK_PID"; then
		OUT=$WORK/compare-$TGT.out
		if timeout 300 "${IN_NS[@]}" python3 "$HERE/http_diff.py" compare "$NGX_ADDR" "$SK_ADDR" \
			"$WORK/www" >"$OUT" 2>&1; then
			pass "$N/diff ($(tail -n 1 "$OUT"))"
		else
			fail "$N/diff" "$(grep -c '^differ' "$OUT") differ; $(grep -m 5 -E '^differ|Error|error' "$OUT" | tr '\n' ' ') ($(tail -n 1 "$OUT"))"
		fi
		grep '^exception' "$OUT" | sed "s|^|    $TGT: |"
	fi
	if [ "$TGT" = vm ]; then
		# The guest's own way out: "exit 0" to its shutdown port.
		python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", ("127.0.0.1", int(sys.argv[1])))' "$CTL_PORT"
	else
		kill -TERM "$SK_PID" 2>/dev/null
	fi
	if skt_wait_exit "$SK_PID" 10 && [ "$SKT_RC" -eq 0 ]; then
		pass "$N/exit"
	else
		fail "$N/exit" "skiff did not exit 0 when asked: $(tail -n 3 "$SK_LOG" | tr '\n' ' ')"
	fi
	skt_cleanup
done
summary
