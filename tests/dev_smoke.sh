#!/usr/bin/env bash
# dev_smoke.sh [tap|packet|xdp|all] — prove each hosted device moves frames
# both ways with real Linux, inside a network namespace created (and always
# deleted) here.  tests/devloop.c answers ARP and ICMP echo for 198.18.0.2;
# Linux (198.18.0.1) runs arping and ping against it.
#   tap:    one namespace; devloop owns tap sk0, Linux the kernel side.
#   packet, xdp: one namespace with a veth pair; Linux holds v0 (.1),
#           devloop owns v1 (no address).
# Also: --pcap on the tap run (the capture must hold requests and replies),
# a 1000-frame tx burst on every device (counted on the peer), and for xdp
# a run after a SIGKILLed one (a stale XDP program must not break open).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=$BUILD/devloop
NS=skt-$$-dev
TMP=$(mktemp -d)
fail=0

cleanup() {
	for p in $(ip netns pids "$NS" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
	sleep 0.2
	for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

make -s "$BUILD/libskiff-host.a" "$BUILD/libskiff-core.a" >/dev/null || exit 1
# SAN: as for make, e.g. BUILD=build/asan SAN="-fsanitize=address,undefined"
cc -std=c11 -O2 -g -D_GNU_SOURCE -Wall -Wextra -Werror -Isrc ${SAN:-} -o "$BIN" tests/devloop.c \
	"$BUILD/libskiff-host.a" "$BUILD/libskiff-core.a" -lxdp -lbpf -lpcap -lelf -lz || exit 1

nsx() { ip netns exec "$NS" "$@"; }
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
check() { # NAME FILE KEY MIN
	local v
	v=$(stat_of "$3" "$2")
	if [ "${v:-0}" -ge "$4" ]; then
		echo "  ok   $1: $3 = $v"
	else
		echo "  FAIL $1: $3 = ${v:-missing} (want >= $4)"
		fail=1
	fi
}
peer_rx() { nsx cat "/sys/class/net/$1/statistics/rx_packets"; }

ns_up() {
	ip netns add "$NS" || exit 1
	nsx ip link set lo up
	nsx sh -c 'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6'
}
ns_down() { cleanup_ns_only; }
cleanup_ns_only() {
	for p in $(ip netns pids "$NS" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
	sleep 0.2
	ip netns del "$NS" 2>/dev/null
}

# run_probe NAME DEVSPEC LINUX_IF [extra devloop args]
run_probe() {
	local name=$1 spec=$2 lif=$3 out=$TMP/$1.out pid before after i st
	shift 3
	before=$(peer_rx "$lif" 2>/dev/null || echo 0)
	ip netns exec "$NS" "$BIN" "$spec" 198.18.0.2 8 "$@" >"$out" 2>"$TMP/$name.err" &
	pid=$!
	for ((i = 0; i < 50; i++)); do
		nsx ip link show "$lif" >/dev/null 2>&1 && grep -q "up, mac" "$TMP/$name.err" && break
		sleep 0.1
	done
	if [ "$spec" = tap:sk0 ]; then
		nsx ip addr add 198.18.0.1/24 dev sk0
		before=$(peer_rx sk0)
	fi
	nsx arping -c 3 -w 3 -I "$lif" 198.18.0.2 >"$TMP/$name.arping" 2>&1
	nsx ping -c 5 -i 0.2 -W 1 198.18.0.2 >"$TMP/$name.ping" 2>&1
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 30; i++)); do
		grep -q "burst done" "$TMP/$name.err" && break
		grep -q -- --burst <<<"$*" || break
		sleep 0.1
	done
	after=$(peer_rx "$lif")
	wait "$pid"; st=$?
	echo "== $name ($spec): $(head -1 "$TMP/$name.err")"
	grep -E "packets transmitted|rtt" "$TMP/$name.ping" | sed 's/^/  ping: /'
	grep -E "Received" "$TMP/$name.arping" | sed 's/^/  arping: /'
	check "$name" "$out" devloop.arp_replies 3
	check "$name" "$out" devloop.echo_replies 5
	check "$name" "$out" dev.tx_frames 8
	if grep -q -- --burst <<<"$*"; then
		check "$name" "$out" devloop.burst_sent 1000
		if [ $((after - before)) -ge 1008 ]; then
			echo "  ok   $name: peer received $((after - before)) frames (burst + replies)"
		else
			echo "  FAIL $name: peer received only $((after - before)) frames"
			fail=1
		fi
	fi
	sed 's/^/    /' "$out"
	grep -v -e "up, mac" -e "burst done" "$TMP/$name.err" | sed "s/^/  stderr: /"
	echo "  exit status $st"
}

veth_up() {
	nsx ip link add v0 type veth peer name v1
	nsx ip addr add 198.18.0.1/24 dev v0
	nsx ip link set v0 up
	nsx ip link set v1 up
	if command -v ethtool >/dev/null; then
		nsx ethtool -K v0 tx off tso off gso off gro off >/dev/null 2>&1
	else
		nsx python3 tests/offload_off.py v0 2>/dev/null
	fi
}

what=${1:-all}
if [ "$what" = tap ] || [ "$what" = all ]; then
	ns_up
	run_probe tap tap:sk0 sk0 --pcap "$TMP/tap.pcap" --burst 1000
	if command -v tcpdump >/dev/null; then
		n=$(tcpdump -nr "$TMP/tap.pcap" 2>/dev/null | grep -c "ICMP echo")
		[ "$n" -ge 10 ] && echo "  ok   tap: pcap holds $n ICMP echo frames" ||
			{ echo "  FAIL tap: pcap holds $n ICMP echo frames"; fail=1; }
	fi
	cleanup_ns_only
fi
if [ "$what" = packet ] || [ "$what" = all ]; then
	ns_up
	veth_up
	run_probe packet packet:v1 v0 --burst 1000
	cleanup_ns_only
fi
if [ "$what" = xdp ] || [ "$what" = all ]; then
	ns_up
	veth_up
	run_probe xdp xdp:v1 v0 --burst 1000
	echo "  xdp program after close: $(nsx ip link show v1 | grep -o 'prog/xdp.*' || echo none)"
	# A crashed run leaves its XDP program attached; the next open must work.
	ip netns exec "$NS" "$BIN" xdp:v1 198.18.0.2 30 >/dev/null 2>&1 &
	sleep 1
	kill -KILL $! 2>/dev/null
	wait $! 2>/dev/null
	echo "  xdp program after SIGKILL: $(nsx ip link show v1 | grep -o 'prog/xdp.*' || echo none)"
	run_probe xdp-after-crash xdp:v1 v0
	cleanup_ns_only
fi
[ $fail -eq 0 ] && echo "dev_smoke: all passed" || echo "dev_smoke: FAILED"
exit $fail
