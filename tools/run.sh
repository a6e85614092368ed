#!/usr/bin/env bash
# run.sh BIN [uk|hosted] — the main job.
#
# uk (default, `make run`): boot the unikernel (skiff-uk.elf next to BIN)
#   with `BIN vm --root DIR -p 8080:80`: QEMU user networking, the host
#   forward bound to 127.0.0.1 only (QEMU's 10.0.2.x network stays inside
#   QEMU).  DIR is RUN_ROOT (`make run ROOT=DIR`; the Makefile passes the
#   demo site/ when ROOT is not given; empty: no --root, the 41-byte hello);
#   --mem is 256M, or the site's size + 200M when that is more (the guest's
#   pools take ~170 MiB).  Wait for it, fetch http://127.0.0.1:8080/ once
#   with curl, print how to reach it,
#   serve in the foreground until Ctrl-C.  Ctrl-C asks the guest to stop
#   through a UDP shutdown port (forwarded from 127.0.0.1 only as well), so
#   it prints its counters and exits 0; if it has not gone within 5 s,
#   QEMU is stopped by pid.  No root needed.  RUN_PORT overrides 8080.
#
# hosted (`make run-hosted`, root): `BIN serve --stack skiff` (the HTTP
#   server on skiff's own TCP/IP) on a TAP inside a network namespace this
#   script creates, fetched once with curl from Linux in that namespace,
#   then serving in the foreground until Ctrl-C; the namespace is removed
#   on exit (the EXIT trap, whatever happened).  Nothing in the root
#   namespace.
#   namespace skt-<pid>-run: TAP sk0, kernel side 198.18.0.1/24, skiff 198.18.0.2
set -u -o pipefail

BIN=${1:-}
MODE=${2:-uk}
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
	echo "usage: $0 path/to/skiff [uk|hosted]  ('$BIN' is not an executable file: make)" >&2
	exit 2
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

# ---- uk -------------------------------------------------------------------
UK_OUT='' UK_VM='' UK_QEMU='' UK_TAIL='' UK_CTL=''

uk_alive() { [ -n "$UK_VM" ] && kill -0 "$UK_VM" 2>/dev/null; }

# shellcheck disable=SC2317  # called from the EXIT trap
uk_finish() {
	trap - EXIT INT TERM
	local i
	if uk_alive; then
		# skiff vm passes SIGTERM on to QEMU; QEMU itself, by pid, if that
		# did not end it.
		kill -TERM "$UK_VM" 2>/dev/null
		for ((i = 0; i < 60; i++)); do uk_alive || break; sleep 0.05; done
		if uk_alive; then
			[ -n "$UK_QEMU" ] && kill -KILL "$UK_QEMU" 2>/dev/null
			kill -KILL "$UK_VM" 2>/dev/null
		fi
	fi
	[ -n "$UK_TAIL" ] && kill "$UK_TAIL" 2>/dev/null
	[ -n "$UK_OUT" ] && rm -f "$UK_OUT"
}

# shellcheck disable=SC2317  # called from the INT/TERM trap
uk_stop_guest() {
	local i
	echo
	python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", ("127.0.0.1", int(sys.argv[1])))' "$UK_CTL"
	for ((i = 0; i < 100; i++)); do uk_alive || return 0; sleep 0.05; done
	echo "run: the guest did not stop within 5 s; stopping QEMU" >&2
	kill -TERM "$UK_VM" 2>/dev/null
}

run_uk() {
	local img port t0 t1 i rc accel resp
	img=$(dirname "$BIN")/skiff-uk.elf
	port=${RUN_PORT:-8080}
	if [ ! -r "$img" ]; then
		echo "run: no unikernel image at $img (make uk)" >&2
		exit 1
	fi
	command -v qemu-system-x86_64 >/dev/null || { echo "run: qemu-system-x86_64 missing (make deps)" >&2; exit 1; }
	command -v curl >/dev/null || { echo "run: curl missing (make deps)" >&2; exit 1; }
	# Fail early and clearly if something holds the port already (QEMU's
	# own message would be buried in its output).
	if ! python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1])))' "$port" 2>/dev/null; then
		echo "run: 127.0.0.1:$port is in use; stop what holds it, or set RUN_PORT" >&2
		exit 1
	fi
	UK_CTL=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	local -a site=()
	local root=${RUN_ROOT:-} mib
	if [ -n "$root" ]; then
		if [ ! -d "$root" ]; then
			echo "run: ROOT=$root is not a directory" >&2
			exit 1
		fi
		mib=$(($(du -sb "$root" | cut -f1) >> 20))
		site=(--root "$root" --mem "$((mib + 200 > 256 ? mib + 200 : 256))M")
	fi
	UK_OUT=$(mktemp /tmp/skiff-run.XXXXXX)
	trap uk_finish EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	# Its own session: the terminal's Ctrl-C must reach this script (which
	# stops the guest cleanly), not QEMU, which would die at once.  stdin
	# is not the terminal, so QEMU leaves the tty's mode alone.  (A
	# background job of a script is no group leader: setsid does not fork,
	# so $! is skiff vm itself.)
	t0=$(date +%s%N)
	setsid "$BIN" vm "${site[@]}" -p "$port:80" -p "$UK_CTL:9/udp" -- shutdown-port=9 stats </dev/null >"$UK_OUT" 2>&1 &
	UK_VM=$!
	for ((i = 0; i < 600; i++)); do
		grep -aq '^skiff-uk: ready' "$UK_OUT" 2>/dev/null && break
		uk_alive || break
		sleep 0.05
	done
	UK_QEMU=$(pgrep -P "$UK_VM" | head -1)
	cat "$UK_OUT"
	if ! grep -aq '^skiff-uk: ready' "$UK_OUT"; then
		echo "run: the unikernel did not come up within 30 s" >&2
		exit 1
	fi
	echo
	echo "run: the host fetches http://127.0.0.1:$port/ (QEMU forwards it to the guest's port 80):"
	# With a site, its index page's head and size (a page of HTML is for a
	# browser); without, the whole 41-byte answer.
	if [ -n "$root" ]; then
		resp=$(curl -sS --fail --max-time 10 -D /dev/stdout -o /dev/null -w 'run: (%{size_download} bytes of body)' "http://127.0.0.1:$port/")
	else
		resp=$(curl -sS --fail --max-time 10 -i "http://127.0.0.1:$port/")
	fi || { echo "run: no answer from the unikernel" >&2; exit 1; }
	printf '%s\n' "$resp"
	t1=$(date +%s%N)
	accel=$(sed -n 's/^skiff vm: \(accel=.*\) net=.*/\1/p' "$UK_OUT" | head -1)
	cat <<EOF

skiff-uk -- the same HTTP/1.1 server and TCP/IP as skiff serve, as a unikernel under QEMU
($accel) -- served that $(((t1 - t0) / 1000000)) ms after QEMU was started${root:+, from $root}.
Open http://127.0.0.1:$port/ in a browser, or try, in another shell:
  curl http://127.0.0.1:$port/
  ab -k -n 20000 -c 8 http://127.0.0.1:$port/
It is reachable from this machine only (127.0.0.1).  Ctrl-C stops it (the guest prints its counters).
EOF
	# The guest's console from here on, live.
	tail -n +$(($(wc -l <"$UK_OUT") + 1)) -f "$UK_OUT" &
	UK_TAIL=$!
	trap uk_stop_guest INT TERM
	# wait returns early (> 128) when a trapped signal arrives; the exit
	# status of skiff vm is what a wait after its end returns.
	while :; do
		wait "$UK_VM"
		rc=$?
		uk_alive || break
	done
	if [ "$rc" -gt 128 ]; then
		wait "$UK_VM" 2>/dev/null
		i=$?
		[ "$i" -ne 127 ] && rc=$i
	fi
	sleep 0.3 # let tail show the last lines
	echo "run: skiff vm exited with status $rc"
	exit "$rc"
}

# ---- hosted ---------------------------------------------------------------
run_hosted() {
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	# shellcheck source=tests/lib.sh
	. "$here/../tests/lib.sh"

	skt_check_bin "$BIN" || exit 2

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
	# The TAP is persistent, inside the namespace, so its kernel side is
	# addressed before skiff starts and skiff's first gratuitous ARP lands.
	skt_topo_tap run sk0 || { echo "run: cannot create namespace $SKT_NS_L with TAP sk0" >&2; exit 1; }
	NS=$SKT_NS_L

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
}

case $MODE in
uk) run_uk ;;
hosted) run_hosted ;;
*)
	echo "usage: $0 path/to/skiff [uk|hosted]" >&2
	exit 2
	;;
esac
