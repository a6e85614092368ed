#!/usr/bin/env bash
# dev_smoke.sh DEVLOOP [tap|packet|xdp ...] — each hosted device moves frames
# both ways with real Linux, with no stack in between (`make dev-smoke`
# builds DEVLOOP, build/test/devloop, from tests/devloop.c and runs this).
# devloop answers ARP and ICMP echo for 198.18.0.2 with raw byte edits;
# Linux (198.18.0.1) runs arping and ping against it.
#
# What the stack-level tests (integration.sh, http.sh, tcp.sh) do not cover:
#   - tap: devloop opens tap:sk0 where no TAP exists, so the device creates
#     the TAP and brings its link up itself (every other test hands skiff a
#     persistent TAP made beforehand);
#   - a 1000-frame burst sent in ring-sized batches, counted on the peer;
#   - xdp: opening a device whose previous owner was SIGKILLed, its XDP
#     program still attached;
#   - the device alone: a fault seen here is the device's, not the stack's.
#
# Topologies (tests/lib.sh; 198.18.0.0/15, nothing in the root namespace):
#   tap:         namespace skt-<pid>-tap; devloop creates sk0, Linux then
#                puts 198.18.0.1/24 on the kernel side;
#   packet, xdp: skt_topo_veth (offloads off): Linux on cli's vc0, devloop
#                owns srv's vs0 (no address).
# Checks per device: devloop answered 3 ARP and 5 echo requests, sent >= 8
# frames, exited 0; the burst left devloop and reached the peer; tap: the
# --pcap file holds the ICMP echoes both ways.  "PASS/FAIL name" lines, then
# "dev_smoke: N passed, N failed"; exit 1 on a failure, 2 on bad usage.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/lib.sh"
SKT_SUITE=dev_smoke

usage() { echo "usage: $0 path/to/devloop [tap|packet|xdp ...]" >&2; exit 2; }
BIN=${1:-}
[ -n "$BIN" ] || usage
shift
skt_devices "$@"
devices=("${SKT_DEVICES[@]}")
skt_check_bin "$BIN" || exit 2
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
if ! skt_need setup arping ping python3 timeout; then
	summary
	exit 1
fi

TMP=$(mktemp -d /tmp/skiff-dev-smoke.XXXXXX)
on_exit() {
	skt_cleanup
	[ "$SKT_FAILED" -eq 0 ] && rm -rf "$TMP"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
skt_cleanup_stale

NS_L='' NS_S='' IF_L='' IF_S=''
in_l() { ip netns exec "$NS_L" "$@"; }
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
peer_rx() { in_l cat "/sys/class/net/$IF_L/statistics/rx_packets"; }

# check NAME FILE KEY MIN: devloop's counter KEY is at least MIN.
check() {
	local v
	v=$(stat_of "$3" "$2")
	if [ "${v:-0}" -ge "$4" ]; then
		pass "$1.$3 ($v, want >= $4)"
	else
		fail "$1.$3" "${v:-missing}, want >= $4"
	fi
}

# run_probe NAME DEVSPEC [devloop options]: devloop on DEVSPEC in NS_S for
# at most 8 s; arping and ping from Linux on IF_L; then SIGTERM and checks.
run_probe() {
	local name=$1 spec=$2 out=$TMP/$1.out err=$TMP/$1.err pid before after i st burst=0
	shift 2
	[[ " $* " == *" --burst "* ]] && burst=1
	before=$(peer_rx 2>/dev/null || echo 0)
	ip netns exec "$NS_S" "$BIN" "$spec" "$SKT_SKIFF_IP" 8 "$@" >"$out" 2>"$err" &
	pid=$!
	SKT_PIDS+=("$pid")
	for ((i = 0; i < 50; i++)); do
		in_l ip link show "$IF_L" >/dev/null 2>&1 && grep -q "up, mac" "$err" && break
		sleep 0.1
	done
	if [ "$DEV" = tap ]; then
		# devloop made the TAP: Linux's side gets its address only now.
		in_l ip addr add "$SKT_LINUX_IP/24" dev "$IF_L"
		before=$(peer_rx)
	fi
	in_l timeout 10 arping -c 3 -w 3 -I "$IF_L" "$SKT_SKIFF_IP" >"$TMP/$name.arping" 2>&1
	in_l timeout 10 ping -c 5 -i 0.2 -W 1 "$SKT_SKIFF_IP" >"$TMP/$name.ping" 2>&1
	kill -TERM "$pid" 2>/dev/null
	# With --burst, devloop sends it after SIGTERM, says "burst done" and
	# waits a second (a TAP it created vanishes when it exits).
	for ((i = 0; burst && i < 30; i++)); do
		grep -q "burst done" "$err" && break
		sleep 0.1
	done
	after=$(peer_rx 2>/dev/null || echo 0)
	if skt_wait_exit "$pid" 5; then
		st=$SKT_RC
	else
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		st="still running 5 s after SIGTERM"
	fi
	echo "== $name ($spec): $(head -1 "$err")"
	grep -E "packets transmitted|rtt" "$TMP/$name.ping" | sed 's/^/  ping: /'
	grep -E "Received" "$TMP/$name.arping" | sed 's/^/  arping: /'
	check "$name" "$out" devloop.arp_replies 3
	check "$name" "$out" devloop.echo_replies 5
	check "$name" "$out" dev.tx_frames 8
	if [ "$burst" = 1 ]; then
		check "$name" "$out" devloop.burst_sent 1000
		if [ $((after - before)) -ge 1008 ]; then
			pass "$name.burst_received (the peer received $((after - before)) frames: burst + replies)"
		else
			fail "$name.burst_received" "the peer received $((after - before)) frames, want >= 1008"
		fi
	fi
	if [ "$st" = 0 ]; then
		pass "$name.exit (0)"
	else
		fail "$name.exit" "exit status $st; stderr: $(grep -v -e 'up, mac' -e 'burst done' "$err" | tail -n 3)"
	fi
	sed 's/^/    /' "$out"
	grep -v -e "up, mac" -e "burst done" "$err" | sed "s/^/  stderr: /"
}

run_device() {
	DEV=$1
	local n rc
	if [ "$DEV" = tap ]; then
		# Not skt_topo_tap: the point here is that the device creates the TAP.
		NS_L=$(skt_ns_name tap) NS_S=$NS_L IF_L=sk0 IF_S=sk0
		skt_ns_add "$NS_L"
		rc=$?
	else
		skt_topo_veth off ""
		rc=$?
		NS_L=$SKT_NS_L NS_S=$SKT_NS_S IF_L=$SKT_IF_L IF_S=$SKT_IF_S
	fi
	if [ "$rc" -ne 0 ]; then
		fail "$DEV.setup" "could not build the $DEV topology"
		skt_cleanup
		return
	fi
	case $DEV in
	tap)
		run_probe tap tap:sk0 --pcap "$TMP/tap.pcap" --burst 1000
		if n=$(python3 - "$TMP/tap.pcap" 2>&1 <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
magic = struct.unpack("<I", d[:4])[0] if len(d) >= 24 else 0
assert magic in (0xa1b2c3d4, 0xa1b23c4d), "not a pcap file (%d bytes)" % len(d)
off, frames, req, rep = 24, 0, 0, 0
while off + 16 <= len(d):
    incl = struct.unpack("<I", d[off + 8:off + 12])[0]
    f = d[off + 16:off + 16 + incl]
    off += 16 + incl
    frames += 1
    if len(f) >= 42 and f[12:14] == b"\x08\x00" and f[23] == 1:
        t = f[14 + (f[14] & 15) * 4]
        req += t == 8
        rep += t == 0
assert req >= 5 and rep >= 5, "%d frames: %d echo requests, %d replies (want 5 each)" % (frames, req, rep)
print("%d frames: %d echo requests, %d replies" % (frames, req, rep))
PY
		); then
			pass "tap.pcap ($n)"
		else
			fail tap.pcap "$(tail -n 1 <<<"$n")"
		fi
		;;
	packet)
		run_probe packet "packet:$IF_S" --burst 1000
		;;
	xdp)
		run_probe xdp "xdp:$IF_S" --burst 1000
		echo "  xdp program after close: $(ip -n "$NS_S" link show "$IF_S" | grep -o 'prog/xdp.*' || echo none)"
		# A crashed run leaves its XDP program attached; the next open must work.
		xdp_attached() { ip -n "$NS_S" link show "$IF_S" | grep -q 'prog/xdp'; }
		ip netns exec "$NS_S" "$BIN" "xdp:$IF_S" "$SKT_SKIFF_IP" 30 >/dev/null 2>&1 &
		n=$!
		# SIGKILL once its program is attached (at most 5 s).
		skt_wait_for 5 xdp_attached
		kill -KILL "$n" 2>/dev/null
		wait "$n" 2>/dev/null
		echo "  xdp program after SIGKILL: $(ip -n "$NS_S" link show "$IF_S" | grep -o 'prog/xdp.*' || echo none)"
		run_probe xdp-after-crash "xdp:$IF_S"
		;;
	esac
	skt_cleanup
}

for d in "${devices[@]}"; do
	run_device "$d"
done
[ "$SKT_FAILED" -eq 0 ] || echo "logs: $TMP"
summary
