#!/usr/bin/env bash
# tests/offload.sh BIN [TARGET...] — skiff's stack over tap: and packet:
# with the kernel's DEFAULT offloads on the Linux side (issue 31), as a
# container's interface has them, where every other test turns them off.
# TARGET: skiff:tap, skiff:packet (default: both).
#
#   skiff:tap     one namespace skt-<pid>-tap, a persistent TAP sk0 with
#                 198.18.0.1/24 on the kernel side; skiff opens tap:sk0
#                 with IFF_VNET_HDR and TUNSETOFFLOAD (csum, TSO4/6), so
#                 Linux sends it unfinished checksums and TSO super-frames.
#   skiff:packet  namespaces skt-<pid>-cli (vc0 198.18.0.1/24) and
#                 skt-<pid>-srv (vs0, skiff's, 198.18.0.2) joined by a veth,
#                 offloads as Linux sets them (tx-checksumming, TSO, GSO on):
#                 the client's kernel leaves TCP checksums unfinished
#                 (TP_STATUS_CSUMNOTREADY) and the veth hands skiff its TSO
#                 frames whole, up to 64 KiB.
#
# Per target, with `skiff serve --stats --root DIR`:
#   get.100k, get.4m   curl downloads, sha256-identical to the files
#   counters           dev.offload set, dev.rx_csum_ok > 0 (the client's
#                      unfinished checksums were taken), dev.rx_vnet_bad 0
# and with build/examples/echo (POST /echo answers the body back):
#   echo.2m            a 2 MiB upload comes back sha256-identical
#   echo.counters      dev.rx_gso_frames > 0 and rx_gso_segs > rx_gso_frames:
#                      the client's TSO frames were cut, not dropped
#   echo.tso           dev.tx_tso_frames > 0, tx_tso_segs > tx_tso_frames: the
#                      answer went out as TSO frames (and came back whole
#                      to Linux, echo.2m), each standing for several segments
#   echo.pcap          the --pcap capture holds skiff's TCP frames larger
#                      than the MTU (1514 bytes), as a capture on a Linux
#                      interface with TSO shows them
# packet only, again as echo_sw.*, with TSO and checksum offload turned off
# on skiff's own end (vs0): the kernel then cuts skiff's TSO frames and
# finishes their checksums in software before the veth (validate_xmit_skb),
# from the TCP checksum field skiff left, so a wrong pseudo-header sum there
# corrupts every segment and the echo does not come back.
# Everything runs under `timeout`; the namespaces are deleted on exit.
# Server logs are kept, path printed, when a check fails or
# OFFLOAD_KEEP_LOGS=1.  Ends "offload: N passed, N failed".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SKT_SUITE=offload

usage() {
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
	exit "${1:-2}"
}
case ${1:-} in -h | --help) usage 0 ;; "") usage ;; esac
BIN=$1
shift
skt_targets "skiff:tap skiff:packet" "$@"
for t in "${TARGETS[@]}"; do
	case $t in skiff:tap | skiff:packet) ;; *) echo "$0: target '$t': skiff:tap or skiff:packet" >&2; exit 2 ;; esac
done
skt_check_bin "$BIN" || exit 2
BIN=$(readlink -f "$BIN")
ECHO=$(dirname "$BIN")/examples/echo
if ! skt_need setup curl sha256sum head; then
	summary
	exit 1
fi
if [ ! -x "$ECHO" ]; then
	fail setup "$ECHO not built (make all builds the examples)"
	summary
	exit 1
fi

WORK=$(mktemp -d /tmp/skiff-offload.XXXXXX)
SRV_IP=198.18.0.2
URL=http://$SRV_IP/
# shellcheck disable=SC2034 # read by tests/lib.sh skt_serve_*
{
SRV_PID=
TGT=
NS_C=
NS_S=
IF_C=
SERVE=()
}
skt_work_traps OFFLOAD_KEEP_LOGS "server logs"

C() { timeout "${T:-60}" ip netns exec "$NS_C" "$@"; }

mkdir -p "$WORK/root"
head -c $((100 << 10)) /dev/urandom >"$WORK/root/100k.bin"
head -c $((4 << 20)) /dev/urandom >"$WORK/root/4m.bin"
head -c $((2 << 20)) /dev/urandom >"$WORK/up.bin"
sum() { sha256sum "$1" | cut -d' ' -f1; }

# counters LOG: the "name value" lines of a --stats log into ST.
declare -A ST
counters() {
	local k v
	ST=()
	while read -r k v _; do
		[[ $k =~ ^[a-z_.0-9]+$ && $v =~ ^[0-9]+$ ]] && ST[$k]=$v
	done <"$1"
}
st() { echo "${ST[$1]:-0}"; }

# The topology with the kernel's offloads left as they are.
setup_target() {
	skt_cleanup_stale
	case $TGT in
	skiff:tap) skt_topo_tap tap sk0 ;;
	skiff:packet) skt_topo_veth on "" ;;
	esac || return 1
	NS_C=$SKT_NS_L NS_S=$SKT_NS_S IF_C=$SKT_IF_L
	SERVE=(--stack skiff --dev "${TGT#skiff:}:$SKT_IF_S" --ip "$SRV_IP/24")
}

get() { # get NAME FILE
	local name=$1 f=$2 out=$WORK/got
	rm -f "$out"
	if ! C curl -s --max-time 50 -o "$out" "$URL$f"; then
		fail "$name" "curl failed: $(skt_serve_tail)"
	elif [ "$(sum "$out")" != "$(sum "$WORK/root/$f")" ]; then
		fail "$name" "body differs: $(stat -c %s "$out") bytes, want $(stat -c %s "$WORK/root/$f")"
	else
		pass "$name ($(stat -c %s "$out") bytes, sha256 identical)"
	fi
}

run_serve() {
	skt_serve_start serve --root "$WORK/root" --stats || return 1
	get get.100k 100k.bin
	get get.4m 4m.bin
	skt_serve_exit serve.exit TERM 5 || return 1
	counters "$SRV_LOG"
	local d="offload=$(st dev.offload) rx_csum_ok=$(st dev.rx_csum_ok) rx_gso_frames=$(st dev.rx_gso_frames) rx_vnet_bad=$(st dev.rx_vnet_bad) rx_drops=$(st dev.rx_drops)"
	if [ "$(st dev.offload)" -eq 0 ]; then
		fail counters "no offload negotiated ($d)"
	elif [ "$(st dev.rx_csum_ok)" -eq 0 ]; then
		fail counters "no frame taken as CSUM_OK ($d)"
	elif [ "$(st dev.rx_vnet_bad)" -ne 0 ]; then
		fail counters "the kernel's vnet headers refused ($d)"
	else
		pass "counters ($d)"
	fi
}

run_echo() { # run_echo NAME: checks NAME.2m, NAME.counters, NAME.tso, NAME.pcap
	local e=$1 out=$WORK/echoed i
	SRV_LOG=$WORK/${TGT/:/-}-$e.log
	ip netns exec "$NS_S" "$ECHO" "${SERVE[@]}" --port 80 --stats --max-body 8M \
		--pcap "$WORK/$e.pcap" >"$SRV_LOG" 2>&1 &
	SRV_PID=$!
	SKT_PIDS+=("$SRV_PID")
	for ((i = 0; i < 200; i++)); do
		grep -q '^echo: listening' "$SRV_LOG" 2>/dev/null && break
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.05
	done
	if ! skt_serve_answer 5 -X POST --data-binary x "${URL}echo"; then
		fail "$e.start" "no answer: $(skt_serve_tail)"
		return 1
	fi
	rm -f "$out"
	if ! C curl -s --max-time 50 -X POST -H 'Content-Type: application/octet-stream' \
		--data-binary "@$WORK/up.bin" -o "$out" "${URL}echo"; then
		fail "$e.2m" "curl failed: $(skt_serve_tail)"
	elif [ "$(sum "$out")" != "$(sum "$WORK/up.bin")" ]; then
		fail "$e.2m" "answer differs: $(stat -c %s "$out") bytes back of $(stat -c %s "$WORK/up.bin")"
	else
		pass "$e.2m (2 MiB up and back, sha256 identical)"
	fi
	skt_serve_exit "$e.exit" TERM 5 || return 1
	counters "$SRV_LOG"
	local f s d
	f=$(st dev.rx_gso_frames) s=$(st dev.rx_gso_segs)
	d="rx_gso_frames=$f rx_gso_segs=$s rx_csum_ok=$(st dev.rx_csum_ok) rx_vnet_bad=$(st dev.rx_vnet_bad) rx_drops=$(st dev.rx_drops)"
	if [ "$f" -gt 0 ] && [ "$s" -gt "$f" ] && [ "$(st dev.rx_vnet_bad)" -eq 0 ]; then
		pass "$e.counters ($d)"
	else
		fail "$e.counters" "want super-frames cut and none refused ($d)"
	fi
	f=$(st dev.tx_tso_frames) s=$(st dev.tx_tso_segs)
	d="tx_tso_frames=$f tx_tso_segs=$s tx_csum_offload=$(st dev.tx_csum_offload) tx_drops=$(st dev.tx_drops)"
	if [ "$f" -gt 0 ] && [ "$s" -gt "$f" ] && [ "$(st dev.tx_drops)" -eq 0 ]; then
		pass "$e.tso ($d)"
	else
		fail "$e.tso" "want TSO frames sent, none dropped ($d)"
	fi
	# Frames from skiff's MAC larger than an MTU-sized frame, IPv4 TCP.
	local big
	big=$(python3 - "$WORK/$e.pcap" "$SRV_IP" <<'PY'
import socket, struct, sys
data = open(sys.argv[1], 'rb').read()
src = socket.inet_aton(sys.argv[2])
off, big = 24, 0
while off + 16 <= len(data):
    incl = struct.unpack_from('<IIII', data, off)[2]
    f = data[off + 16:off + 16 + incl]
    off += 16 + incl
    if len(f) > 1514 and f[12:14] == b'\x08\x00' and f[23] == 6 and f[26:30] == src:
        big += 1
print(big)
PY
)
	if [ "${big:-0}" -gt 0 ]; then
		pass "$e.pcap ($big TCP frames over 1514 bytes from $SRV_IP in the capture)"
	else
		fail "$e.pcap" "no frame over 1514 bytes from $SRV_IP in $WORK/$e.pcap"
	fi
}

for TGT in "${TARGETS[@]}"; do
	SKT_SCOPE=$TGT
	if ! setup_target; then
		fail setup "topology for $TGT"
		skt_cleanup
		continue
	fi
	run_serve
	run_echo echo
	if [ "$TGT" = skiff:packet ]; then
		if skt_offloads_off "$SKT_NS_S" vs0; then
			run_echo echo_sw
		else
			fail echo_sw.setup "cannot turn offloads off on vs0"
		fi
	fi
	skt_cleanup
done
SKT_SCOPE=
summary
