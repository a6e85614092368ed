#!/usr/bin/env bash
# run.sh BIN — the main job (`make run`): `BIN echo` on a TAP inside a
# network namespace this script creates, pinged once from Linux, then kept
# running until Ctrl-C; the namespace is removed on exit.
#   namespace skt-<pid>-run: TAP sk0, kernel side 198.18.0.1/24, skiff 198.18.0.2
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../tests/lib.sh"

BIN=${1:-}
skt_check_bin "$BIN" || exit 2
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

OUT=$(mktemp /tmp/skiff-run.XXXXXX)
SHOWN=0      # stdout lines of skiff already shown
SK_PID=

# shellcheck disable=SC2317  # called from the EXIT trap
finish() {
	trap - EXIT INT TERM
	if [ -n "$SK_PID" ] && kill -0 "$SK_PID" 2>/dev/null; then
		kill -TERM "$SK_PID" 2>/dev/null
		skt_wait_exit "$SK_PID" 5 || kill -KILL "$SK_PID" 2>/dev/null
	fi
	# Whatever skiff printed since (the --stats counters).
	tail -n +$((SHOWN + 1)) "$OUT" 2>/dev/null
	skt_cleanup
	rm -f "$OUT"
	echo "run: namespace removed"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

skt_cleanup_stale
NS=$(skt_ns_name run)
skt_ns_add "$NS" || { echo "run: cannot create namespace $NS" >&2; exit 1; }

# skiff creates the TAP (integration.sh covers attaching to an existing one);
# the kernel side is configured once skiff is ready.
ip netns exec "$NS" "$BIN" echo --dev tap:sk0 --ip "$SKT_SKIFF_IP/24" --stats >"$OUT" &
SK_PID=$!
SKT_PIDS+=("$SK_PID")
if ! skt_wait_ready "$OUT" "$SK_PID" 15; then
	echo "run: skiff did not get ready" >&2
	exit 1
fi
cat "$OUT"
SHOWN=$(wc -l <"$OUT")

ip netns exec "$NS" ip addr add "$SKT_LINUX_IP/24" dev sk0 || exit 1
ip netns exec "$NS" ip link set sk0 up || exit 1
echo "run: Linux (198.18.0.1, TAP sk0 in namespace $NS) pings skiff (198.18.0.2):"
if ! ip netns exec "$NS" ping -n -c 1 -W 3 "$SKT_SKIFF_IP"; then
	echo "run: no answer from skiff" >&2
	exit 1
fi
cat <<EOF

skiff echo is running in namespace $NS. Try, in another shell:
  ip netns exec $NS ping $SKT_SKIFF_IP
  ip netns exec $NS arping -I sk0 $SKT_SKIFF_IP
  ip netns exec $NS python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2); s.sendto(b"hello", ("$SKT_SKIFF_IP", 7)); print(s.recv(100))'
Ctrl-C stops it (counters are printed) and removes the namespace.
EOF

# Ctrl-C reaches skiff too (same process group); the trap makes sure it is
# told to stop either way.  Then wait for its real exit status.
trap 'echo; kill -TERM "$SK_PID" 2>/dev/null' INT TERM
while :; do
	wait "$SK_PID"
	rc=$?
	kill -0 "$SK_PID" 2>/dev/null || break
done
if [ "$rc" -gt 128 ]; then
	wait "$SK_PID" 2>/dev/null
	r2=$?
	[ "$r2" -ne 127 ] && rc=$r2
fi
tail -n +$((SHOWN + 1)) "$OUT"
SHOWN=$(wc -l <"$OUT")
echo "run: skiff exited with status $rc"
exit "$rc"
