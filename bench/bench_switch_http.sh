#!/usr/bin/env bash
# bench/bench_switch_http.sh [SKIFF] [SECONDS] [REPS] [MEM_CONNS] — kernel-free
# HTTP: `skiff load` ⇄ `skiff switch` ⇄ `skiff serve --stack skiff`, all on
# shared-memory switch ports (no interface, no namespace, no kernel on the
# data path).
#
#  1. keep-alive at 64 connections and close (a new connection per request)
#     at 64 connections, SECONDS each, median of REPS runs by req/s;
#  2. memory: `skiff load --hold` opens MEM_CONNS (default 100,000)
#     keep-alive connections from 4 client addresses (4 worker processes on
#     4 switch ports: one address has ~28k ephemeral ports), makes one
#     request on each and keeps them idle; the server's memory per idle
#     connection is (VmRSS with them - VmRSS before) / MEM_CONNS, from
#     /proc/PID/status, and the mappings that grew are listed.
# The server is sized for it: --max-conns MEM_CONNS + 10% (its TCP socket
# pool follows --max-conns), timeouts longer than the run.
set -u
SKIFF=$(realpath "${1:-build/skiff}")
SECS=${2:-5}
REPS=${3:-3}
MEMC=${4:-100000}
TMP=$(mktemp -d /tmp/skiff-bench-http.XXXXXX)
NAME=bsh$$
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_for() { # FILE REGEX SECONDS
	local i
	for ((i = 0; i < ${3:-10} * 20; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "bench_switch_http: timeout waiting for '$2' in $1" >&2
	return 1
}
field() { sed -nE "s/^skiff load: summary .*[ ]$2=([0-9.]+).*/\1/p" "$1" | tail -1; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }

start_switch() {
	"$SKIFF" switch "$NAME" --ports 8 >"$TMP/sw" 2>&1 &
	SW=$!
	PIDS+=($SW)
	wait_for "$TMP/sw" ready 5
}

start_server() { # ARGS...
	"$SKIFF" serve --stack skiff --dev "switch:$NAME/1" --ip 198.18.0.2/24 --port 80 "$@" \
		>"$TMP/srv" 2>&1 &
	SRV=$!
	PIDS+=($SRV)
	wait_for "$TMP/srv" '^skiff serve: listening' 10
}

stop_pid() {
	kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs," \
	"$(sed -nE 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)," \
	"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); kernel $(uname -r)"
echo

start_switch || exit 1
start_server || exit 1
echo "## kernel-free HTTP through skiff switch ($SECS s per run, median of $REPS by req/s)"
echo
echo "server: skiff serve --stack skiff --dev switch:NAME/1 --ip 198.18.0.2/24 (41-byte body)"
echo "client: skiff load http://198.18.0.2/ -c 64 -d $SECS [-k] --dev switch:NAME/2 --ip 198.18.0.10/24"
echo
printf '| mode | conns | req/s | MB/s | p50 ms | p99 ms | max ms | failed |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for mode in keep-alive close; do
	k=()
	[ $mode = keep-alive ] && k=(-k)
	: >"$TMP/rows"
	for ((r = 0; r < REPS; r++)); do
		timeout $((SECS + 30)) "$SKIFF" load http://198.18.0.2/ -c 64 -d "$SECS" "${k[@]}" \
			--dev "switch:$NAME/2" --ip 198.18.0.10/24 >"$TMP/load" 2>&1
		printf '%s %s %s %s %s %s\n' "$(field "$TMP/load" rps)" \
			"$(awk -v b="$(field "$TMP/load" bytes)" -v s="$(field "$TMP/load" secs)" \
				'BEGIN { printf "%.1f", (s > 0 ? b / s / 1e6 : 0) }')" \
			"$(awk -v v="$(field "$TMP/load" p50_us)" 'BEGIN { printf "%.3f", v / 1000 }')" \
			"$(awk -v v="$(field "$TMP/load" p99_us)" 'BEGIN { printf "%.3f", v / 1000 }')" \
			"$(awk -v v="$(field "$TMP/load" max_us)" 'BEGIN { printf "%.1f", v / 1000 }')" \
			"$(field "$TMP/load" failed)" >>"$TMP/rows"
	done
	row=$(sort -g "$TMP/rows" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }')
	read -r rps mbs p50 p99 mx fl <<<"$row"
	printf '| %s | 64 | %.0f | %s | %s | %s | %s | %s |\n' $mode "$rps" "$mbs" "$p50" "$p99" \
		"$mx" "${fl:-?}"
done
stop_pid "$SRV"
echo

# ---- memory per idle keep-alive connection ----
maxc=$((MEMC + MEMC / 10 + 64))
start_server --max-conns $maxc --keepalive-timeout 86400 --header-timeout 86400 || exit 1
sleep 0.5
rss0=$(rss_kb "$SRV")
grep -E '^[0-9a-f]+-' "/proc/$SRV/smaps" >/dev/null 2>&1 &&
	awk '/^[0-9a-f]+-/ { m = $1 " " $6 } /^Rss:/ { print m, $2 }' "/proc/$SRV/smaps" >"$TMP/smaps0"
t0=$(date +%s.%N)
timeout 900 "$SKIFF" load http://198.18.0.2/ -c "$MEMC" -k --hold -d 600 --timeout 60 --ips 4 \
	--dev "switch:$NAME/2" --ip 198.18.0.10/24 >"$TMP/hold" 2>&1 &
LP=$!
PIDS+=($LP)
held=0
for ((i = 0; i < 6000; i++)); do
	grep -q '^skiff load: holding' "$TMP/hold" && { held=1; break; }
	kill -0 "$SRV" 2>/dev/null || break
	kill -0 "$LP" 2>/dev/null || break
	sleep 0.1
done
if [ $held = 1 ]; then
	t1=$(date +%s.%N)
	sleep 1
	rss1=$(rss_kb "$SRV")
	awk '/^[0-9a-f]+-/ { m = $1 " " $6 } /^Rss:/ { print m, $2 }' "/proc/$SRV/smaps" >"$TMP/smaps1"
	kill -INT $LP
	wait $LP
	echo "## server memory per idle keep-alive connection"
	echo
	echo "server: skiff serve --stack skiff --dev switch:NAME/1 --ip 198.18.0.2/24 --max-conns $maxc --keepalive-timeout 86400 --header-timeout 86400"
	echo "client: skiff load http://198.18.0.2/ -c $MEMC -k --hold -d 600 --ips 4 --dev switch:NAME/2 --ip 198.18.0.10/24"
	echo
	printf '| connections | opened in | server RSS before | with them | per connection |\n'
	printf '|---|---|---|---|---|\n'
	printf '| %d | %.1f s | %.1f MiB | %.1f MiB | %.2f KiB |\n' "$MEMC" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
		"$(awk -v v="$rss0" 'BEGIN { print v / 1024 }')" \
		"$(awk -v v="$rss1" 'BEGIN { print v / 1024 }')" \
		"$(awk -v a="$rss0" -v b="$rss1" -v n="$MEMC" 'BEGIN { print (b - a) / n }')"
	echo
	echo "where it grew (server mappings, KiB per connection):"
	awk -v n="$MEMC" 'NR == FNR { a[$1] = $NF; next }
		{ d = $NF - a[$1]; if (d * 1024 / n >= 16) printf "  %-36s %-20s %8.2f\n", $1, ($3 == "" ? "[anon]" : $3), d / n }' \
		"$TMP/smaps0" "$TMP/smaps1" 2>/dev/null | sort -k3 -g -r
	grep -E '^  (requests|held)' "$TMP/hold"
else
	echo "memory: the client did not get to 'holding' (600 s, or a process died):"
	tail -n 3 "$TMP/srv"
	tail -n 5 "$TMP/hold"
	kill -INT $LP
	wait $LP
fi
stop_pid "$SRV"
