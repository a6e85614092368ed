#!/usr/bin/env bash
# bench/http/app_bench.sh EXAMPLES_DIR — examples/kv's requests per second
# on skiff's stack against the same binary on --stack linux: GET and PUT of
# a 1 KiB value, keep-alive (ab -k) and a connection per request (ab),
# concurrency APP_BENCH_C (default 8), APP_BENCH_N requests (default
# 20000; 5000 for close), APP_BENCH_REPS (default 3) alternating runs, the
# median.  Servers: linux (the kernel's sockets, on a veth with offloads
# off, as bench.py's linux-app), skiff-packet and skiff-xdp (the veth's
# server end).  APP_BENCH_OLD=DIR (another build's examples, e.g. main's
# before a change): a server name may end in "-old" (linux-old,
# skiff-packet-old), that server run from DIR/kv, so old and new alternate
# in one run.  Prints a markdown table (and writes it to
# bench/results/app-<date>.md).  Root; run under the network-test lock.
set -u
HERE=$(cd "$(dirname "$0")/../../tests" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=app_bench
EX=$(readlink -f "${1:?usage: $0 build/examples}")
OLD=${APP_BENCH_OLD:+$(readlink -f "$APP_BENCH_OLD")}
C=${APP_BENCH_C:-8} N=${APP_BENCH_N:-20000} NC=${APP_BENCH_N_CLOSE:-5000}
REPS=${APP_BENCH_REPS:-3}
SERVERS=(${APP_BENCH_SERVERS:-linux skiff-packet skiff-xdp})
SRV_IP=198.18.0.2
WORK=$(mktemp -d /tmp/skiff-appbench.XXXXXX)
trap 'skt_cleanup; rm -rf "$WORK"' EXIT
trap 'exit 130' INT
skt_need setup ab || exit 1
head -c 1024 /dev/urandom >"$WORK/v1k"

start() { # start SERVER
	skt_cleanup_stale
	local bin=$EX/kv
	if [[ $1 == *-old ]]; then
		[ -n "$OLD" ] || { echo "app_bench: $1 needs APP_BENCH_OLD" >&2; return 1; }
		bin=$OLD/kv
	fi
	case ${1%-old} in
	linux) skt_topo_veth off "$SRV_IP/24" || return 1; ST=(--stack linux) ;;
	skiff-packet) skt_topo_veth off "" || return 1; ST=(--stack skiff --dev packet:vs0 --ip "$SRV_IP/24") ;;
	skiff-xdp) skt_topo_veth off "" || return 1; ST=(--stack skiff --dev xdp:vs0 --ip "$SRV_IP/24") ;;
	esac
	ip netns exec "$SKT_NS_S" "$bin" "${ST[@]}" --port 80 --max-conns 1024 >"$WORK/srv.log" 2>&1 &
	SKT_PIDS+=($!)
	local i
	for ((i = 0; i < 100; i++)); do
		ip netns exec "$SKT_NS_L" curl -s -o /dev/null --max-time 1 -T "$WORK/v1k" "http://$SRV_IP/kv/k" && return 0
		sleep 0.1
	done
	return 1
}

rps() { # rps ARGS...: ab's Requests per second, or 0 on failed requests
	local out
	out=$(timeout 120 ip netns exec "$SKT_NS_L" ab -q -r "$@" 2>&1)
	if [ "$(awk '/^Failed requests:/ {print $3}' <<<"$out")" != 0 ] ||
		[ "$(awk '/^Non-2xx responses:/ {print $3}' <<<"$out")" != "" ]; then
		echo 0
		return
	fi
	awk '/^Requests per second:/ {print $4}' <<<"$out"
}

declare -A R
LOADS=(get-k get-close put-k put-close)
for ((rep = 0; rep < REPS; rep++)); do
	for s in "${SERVERS[@]}"; do
		if ! start "$s"; then
			echo "app_bench: $s did not start: $(tail -n 2 "$WORK/srv.log")" >&2
			skt_cleanup
			continue
		fi
		U=http://$SRV_IP/kv/k
		R[$s,get-k,$rep]=$(rps -k -c "$C" -n "$N" "$U")
		R[$s,get-close,$rep]=$(rps -c "$C" -n "$NC" "$U")
		R[$s,put-k,$rep]=$(rps -k -c "$C" -n "$N" -u "$WORK/v1k" -T application/octet-stream "$U")
		R[$s,put-close,$rep]=$(rps -c "$C" -n "$NC" -u "$WORK/v1k" -T application/octet-stream "$U")
		skt_cleanup
	done
done

median() { sort -n | awk '{a[NR] = $1} END {print (NR ? a[int((NR + 1) / 2)] : 0)}'; }
out=$(
	echo "kv, a 1 KiB value, ab -c $C: requests per second, the median of $REPS"
	echo
	printf '| load |'; for s in "${SERVERS[@]}"; do printf ' %s |' "$s"; done; echo
	printf '|---|'; for s in "${SERVERS[@]}"; do printf -- '---:|'; done; echo
	for l in "${LOADS[@]}"; do
		printf '| %s |' "$l"
		for s in "${SERVERS[@]}"; do
			m=$(for ((rep = 0; rep < REPS; rep++)); do echo "${R[$s,$l,$rep]:-0}"; done | median)
			printf ' %.0f |' "$m"
		done
		echo
	done
)
echo "$out"
mkdir -p "$(dirname "$0")/../results"
echo "$out" >"$(dirname "$0")/../results/app-$(date +%Y%m%d-%H%M%S).md"
