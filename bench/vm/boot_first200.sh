#!/usr/bin/env bash
# bench/vm/boot_first200.sh — time from starting `skiff vm` to the first
# 200 from the guest, per machine model (docs/microvm.md).
#
#   bench/vm/boot_first200.sh [--accel tcg|kvm|auto] REPS MACHINE... [SKIFF]
#
# For each repetition and each MACHINE (pc, microvm; the order flips every
# repetition), starts `SKIFF vm --machine MACHINE --accel ACCEL -p PORT:80`
# (the built-in page, on 127.0.0.1 only), runs `curl -m 0.3` on / every
# 10 ms, and prints "rep machine ms" with ms from the start of skiff vm to
# the first 200 (QEMU's own start included), or "timeout" after 20 s.  The
# guest is stopped through its shutdown port, then killed if it lingers.
# Run it under the network lock (flock /tmp/skiff-nettest.lock).  Default
# accelerator: tcg; every figure it prints is that accelerator's.
set -u
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
ACCEL=tcg
case "${1:-}" in
-h | --help) usage; exit 0 ;;
--accel) ACCEL=${2:-}; shift 2 ;;
esac
if [ $# -lt 2 ]; then
	usage >&2
	exit 2
fi
REPS=$1
shift
MACHINES=()
SKIFF=build/skiff
for a in "$@"; do
	case "$a" in
	pc | microvm) MACHINES+=("$a") ;;
	*) SKIFF=$a ;;
	esac
done
case "$REPS" in '' | *[!0-9]*) echo "boot_first200: REPS must be a number: $REPS" >&2; exit 2 ;; esac
[ ${#MACHINES[@]} -gt 0 ] || { echo "boot_first200: name pc and/or microvm" >&2; exit 2; }
[ -x "$SKIFF" ] || { echo "boot_first200: $SKIFF: not found" >&2; exit 2; }
command -v curl >/dev/null || { echo "boot_first200: curl is missing" >&2; exit 2; }
PORT=${BOOT_PORT:-18941}
now_ms() { date +%s%3N; }

one() { # MACHINE -> prints ms or timeout
	local m=$1 t0 pid ms=timeout
	if curl -s -m 0.3 -o /dev/null "http://127.0.0.1:$PORT/" 2>/dev/null; then
		echo "boot_first200: 127.0.0.1:$PORT answers before the guest starts (set BOOT_PORT)" >&2
		exit 1
	fi
	t0=$(now_ms)
	setsid "$SKIFF" vm --machine "$m" --accel "$ACCEL" -p "$PORT:80" >"$LOGF" 2>&1 &
	pid=$!
	while [ $(($(now_ms) - t0)) -lt 20000 ]; do
		if [ "$(curl -s -m 0.3 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/" 2>/dev/null)" = 200 ]; then
			ms=$(($(now_ms) - t0))
			break
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	kill -INT "$pid" 2>/dev/null # skiff vm: the guest drains and stops
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL -- -"$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	echo "$ms"
}

LOGF=$(mktemp "${TMPDIR:-/tmp}/skiff-boot200.XXXXXX")
trap 'rm -f "$LOGF"' EXIT
for rep in $(seq 1 "$REPS"); do
	order=("${MACHINES[@]}")
	if [ $((rep % 2)) = 0 ] && [ ${#order[@]} = 2 ]; then
		order=("${MACHINES[1]}" "${MACHINES[0]}")
	fi
	for m in "${order[@]}"; do
		echo "$rep $m $(one "$m")"
	done
done
