#!/usr/bin/env bash
# bench/bench_switch.sh [SKIFF] [SECONDS] [REPS] — pktgen port to port
# through `skiff switch`, at 60 and 1514 bytes (64 and 1518 on the wire),
# with 1 sender (port 0 -> port 2) and 2 senders (0 -> 2 and 1 -> 3, unicast
# to the receivers' learned MACs).  Each point runs REPS times (default 3);
# the table shows the median of the frames the receivers got per second
# (delivered) and of what the senders handed over (offered: the switch took
# all of it; the difference was dropped at full receiver rings, counted).
# The switch is pinned to the last CPU, senders and receivers share the
# others: on a machine with few cores the clients, not the switch, are the
# limit (bench_switch's engine numbers show the switch's own cost).
# Only shared memory: no interface, no namespace, nothing leaves the switch.
set -u
SKIFF=$(realpath "${1:-build/skiff}")
SECS=${2:-3}
REPS=${3:-3}
NCPU=$(nproc)
SWCPU=$((NCPU - 1))
CLCPU=0-$((NCPU > 1 ? NCPU - 2 : 0))
TMP=$(mktemp -d /tmp/skiff-bench-switch.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_for() { # FILE REGEX
	local i
	for ((i = 0; i < 200; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "bench_switch: timeout waiting for '$2' in $1" >&2
	return 1
}
field() { sed -nE "s/^pktgen: $2 summary .*$3=([0-9.]+).*/\1/p" "$1" | tail -1; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }

# run SIZE SENDERS REP: prints "delivered_mpps offered_mpps"
run() {
	local size=$1 senders=$2 rep=$3 name=bsw$$-$1-$2-$3 i pids=() rx=() del=0 off=0
	# A failed start must not leave this run's processes to load the next.
	local mark=${#PIDS[@]}
	fail_run() {
		local p
		for p in "${PIDS[@]:$mark}"; do kill -KILL "$p" 2>/dev/null; done
		wait 2>/dev/null
		return 1
	}
	taskset -c $SWCPU "$SKIFF" switch "$name" --ports 4 >"$TMP/sw" 2>&1 &
	local sw=$!
	PIDS+=($sw)
	wait_for "$TMP/sw" ready || { fail_run; return 1; }
	for ((i = 0; i < senders; i++)); do
		taskset -c "$CLCPU" "$SKIFF" pktgen --dev "switch:$name/$((2 + i))" rx \
			--mac "02:00:00:be:0$i:02" >"$TMP/rx$i" 2>&1 &
		rx+=($!)
		PIDS+=($!)
		wait_for "$TMP/rx$i" ready || { fail_run; return 1; }
	done
	sleep 0.2
	for ((i = 0; i < senders; i++)); do
		taskset -c "$CLCPU" "$SKIFF" pktgen --dev "switch:$name/$i" tx --size "$size" \
			--duration "$SECS" --dst-mac "02:00:00:be:0$i:02" >"$TMP/tx$i" 2>&1 &
		pids+=($!)
		PIDS+=($!)
	done
	wait "${pids[@]}"
	sleep 0.3
	for ((i = 0; i < senders; i++)); do
		kill -INT "${rx[$i]}"
		wait "${rx[$i]}"
		# Delivered: receiver frames over the sender's run time.
		local f s
		f=$(field "$TMP/rx$i" rx frames) s=$(field "$TMP/tx$i" tx seconds)
		del=$(awk -v a="$del" -v f="$f" -v s="$s" 'BEGIN { print a + f / s / 1e6 }')
		off=$(awk -v a="$off" -v m="$(field "$TMP/tx$i" tx mpps)" 'BEGIN { print a + m }')
	done
	kill -TERM $sw
	wait $sw
	echo "$del $off"
}

echo "skiff switch, pktgen port to port: $SECS s per run, median of $REPS;" \
	"switch on CPU $SWCPU, clients on CPU $CLCPU ($NCPU CPUs)"
printf '| frame (wire) | senders | delivered Mpps | delivered Gbit/s | offered Mpps |\n'
printf '|---|---|---|---|---|\n'
for size in 60 1514; do
	for senders in 1 2; do
		: >"$TMP/res"
		for ((r = 0; r < REPS; r++)); do
			run "$size" "$senders" "$r" >>"$TMP/res" || echo "0 0" >>"$TMP/res"
		done
		d=$(cut -d' ' -f1 "$TMP/res" | median)
		o=$(cut -d' ' -f2 "$TMP/res" | median)
		printf '| %d B (%d) | %d | %.2f | %.2f | %.2f |\n' "$size" $((size + 4)) "$senders" \
			"$d" "$(awk -v d="$d" -v s="$size" 'BEGIN { print d * s * 8 / 1000 }')" "$o"
	done
done
