#!/usr/bin/env bash
# run.sh BIN — the main job (`make run`): `BIN serve --stack skiff` (the
# HTTP server on skiff's own TCP/IP) on a TAP inside a network namespace
# this script creates, fetched once with curl from Linux in that namespace,
# then serving in the foreground until Ctrl-C; the namespace is removed on
# exit (the EXIT trap, whatever happened).  Nothing in the root namespace.
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

# The TAP is made persistent here, inside the namespace, so its kernel side
# is addressed before skiff starts and skiff's first gratuitous ARP lands.
ip netns exec "$NS" ip tuntap add dev sk0 mode tap || exit 1
ip netns exec "$NS" ip addr add "$SKT_LINUX_IP/24" dev sk0 || exit 1
ip netns exec "$NS" ip link set sk0 up || exit 1

ip netns exec "$NS" "$BIN" serve --stack skiff --dev tap:sk0 --ip "$SKT_SKIFF_IP/24" --port 80 \
	--stats >"$OUT" 2>&1 &
SK_PID=$!
SKT_PIDS+=("$SK_PID")
for ((i = 0; i < 300; i++)); do
	grep -q '^skiff serve: listening' "$OUT" 2>/dev/null && break
	kill -0 "$SK_PID" 2>/dev/null || break
	sleep 0.05
done
cat "$OUT"
SHOWN=$(wc -l <"$OUT")
if ! grep -q '^skiff serve: listening' "$OUT"; then
	echo "run: skiff serve did not start" >&2
	exit 1
fi

echo "run: Linux (198.18.0.1, TAP sk0 in namespace $NS) fetches http://$SKT_SKIFF_IP/ from skiff:"
if ! ip netns exec "$NS" curl -sS --fail --max-time 5 -i "http://$SKT_SKIFF_IP/"; then
	echo "run: no answer from skiff" >&2
	exit 1
fi
cat <<EOF

skiff serve (HTTP/1.1 on skiff's own TCP/IP) is running in namespace $NS. Try, in another shell:
  ip netns exec $NS curl http://$SKT_SKIFF_IP/
  ip netns exec $NS ab -k -n 100000 -c 64 http://$SKT_SKIFF_IP/
  ip netns exec $NS ping $SKT_SKIFF_IP
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
