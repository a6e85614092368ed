#!/usr/bin/env bash
# ipv6.sh BIN [tap|packet|xdp ...] — skiff's IPv6 (neighbour discovery, DAD,
# ICMPv6) against Linux, inside network namespaces this script creates (and
# always removes), for each device kind (default: all three).
#
# Topologies: those of tests/integration.sh (lib.sh's skt_topo_tap and
# skt_topo_veth), with IPv6 turned on for the Linux peer's interface only:
# 2001:2::1/64 (nodad) and its link-local address, Linux's own DAD off so
# it is usable at once.  skiff is 2001:2::2/64 (and 198.18.0.2/24, which
# the floods' flow control uses).  Addresses: 2001:2::/48 and fe80::/10
# only, never in the root namespace.
#
# Per device:
#   run 1 (skiff echo): Linux ping -6 500 x 1400 B at 2 ms to the global
#          address and 100 to the link-local one, 0 loss, byte-exact; 100
#          with a -p pattern; a VLAN-tagged ICMPv6 echo request unanswered
#          (tests/vlan_probe.py, after the same untagged one is answered);
#          ND_COUNT bogus NS and NA (tests/nd_flood.py), then ping -6 again;
#          stop: the neighbour cache stayed within its 256 entries, evicted,
#          learned nothing from the NA, and answered every NS.
#   run 2 (skiff echo): MALFORMED6_COUNT malformed IPv6 frames
#          (tests/malformed6.py); still answers ping -6; stop: drop counters
#          account for >= 90% of them, each kind under its own reason.
#   run 3 (skiff ping -6): 50 x 1400 B to Linux, every reply intact.
#   run 4 (skiff ping -6): Linux holds 2001:2::3; skiff configured with it
#          must find the duplicate by DAD, report it, and not use it.
#   run 5 (skiff echo --ip6 auto): a Linux radvd advertises 2001:2:0:1::/64;
#          skiff forms its address by SLAAC, passes DAD, answers ping -6
#          (the RA answers skiff's RS, or comes unsolicited first).  On
#          IPV6_EXPIRY_DEV (default tap) the RA's lifetimes are short
#          (router 8 s, valid 12 s, preferred 6 s) and radvd is then
#          killed: the address must stop answering while the link-local
#          one still does, and the counters show a renewal, one
#          deprecation, one expiry and the router's expiry.
#   run 6 (skiff echo): TCP over IPv6: Linux sends TCP6_BYTES (20 MiB) of
#          seeded random data to [2001:2::2]:7 (tests/tcp_echo.py) and gets
#          it back with the same sha256; the same echo over IPv4 on the same
#          listener at once after (one listener, both families); counters:
#          the v6 segments went out with the v6 MSS (no ip6.too_big); UDP
#          echo over IPv6: 2000 datagrams of 1..1452 B (tests/udp_echo.py),
#          every one back intact.
#   run 7 (skiff serve --stack skiff --ip6): curl -g 'http://[2001:2::2]/'
#          gets the 41-byte hello; ab -n HTTP6_AB_N (2000) -c 8 to it with
#          0 failed; skiff load --stack linux -k to it, 0 failed; the
#          listening line names [2001:2::2]:80.
#   run 8 (skiff echo, routed): path MTU from Linux's Packet Too Big.  cli
#          (vc0 2001:2:0:1::1/64) - mid, a Linux router (vm0 2001:2:0:1::ffff,
#          whose IPv6 MTU is PTB_MTU (1400) while its link's stays 1500, and
#          2001:2::1 towards skiff) - skiff 2001:2::2/64 --gw6 2001:2::1.
#          Linux sends 4 MiB to [2001:2::2]:7 from cli; skiff's 1500-byte
#          echoes cannot pass vm0, so mid answers with Packet Too Big and
#          the echo only comes back (same sha256) if skiff lowers the
#          connection's MSS and resends.  Then from cli, forged Packet Too
#          Big messages (tests/ptb6.py) for the live connection: one under
#          1280 and one quoting a sequence number not in flight; both
#          ignored.  Counters: tcp_pmtu_updates >= 1, icmp6.too_big_rx, mid's
#          Icmp6OutPktTooBigs > 0, tcp_pmtu_ignored and tcp_icmp_ignored.
# With IPV6_UK=IMAGE (run-all.sh sets build/skiff-uk.elf), the unikernel
# too: `skiff vm --net tap:vt0 -- ip6=2001:2::2/64` answers ping -6 500 x
# 1400 B with 0 loss once DAD has passed, curl -g 'http://[2001:2::2]/'
# with the hello, and UK_UDP6_COUNT (1000) UDP datagrams of 1..1452 B echoed
# intact on port 7.
#
# Prints "PASS name" / "FAIL name: reason" per check and a last line
# "ipv6: N passed, N failed"; exits 1 on any failure, 2 on bad usage.
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/lib.sh"
SKT_SUITE=ipv6

ND_COUNT=${ND_COUNT:-100000}
EXPIRY_DEV=${IPV6_EXPIRY_DEV:-tap} # the device whose run 5 lets the RA lifetimes run out
MALFORMED6_COUNT=${MALFORMED6_COUNT:-100000}
FLOOD_RATE=${FLOOD_RATE:-0}
export PYTHONDONTWRITEBYTECODE=1

L6=2001:2::1
S6=2001:2::2
DUP6=2001:2::3

usage() { echo "usage: $0 path/to/skiff [tap|packet|xdp ...]" >&2; exit 2; }

BIN=${1:-}
[ -n "$BIN" ] || usage
shift
skt_devices "$@"
devices=("${SKT_DEVICES[@]}")
if ! skt_check_bin "$BIN"; then
	fail setup "skiff binary '$BIN' missing or not runnable (see message above)"
	summary
	exit 1
fi
if ! skt_need setup ping python3 timeout sysctl radvd curl ab; then
	summary
	exit 1
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

WORK=$(mktemp -d /tmp/skiff-ipv6.XXXXXX)
on_exit() {
	skt_cleanup
	[ "$SKT_FAILED" -eq 0 ] && rm -rf "$WORK"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

skt_cleanup_stale

DEV='' NS_L='' NS_S='' IF_L='' SPEC='' SK_PID='' SK_OUT='' SK_ERR='' SK_MAC='' SK_LL='' SK_G6=''
declare -A ST=()

in_l() { ip netns exec "$NS_L" "$@"; }

# The device's topology, then IPv6 on the Linux peer's interface (lib.sh
# turns it off everywhere): no DAD of its own, no router solicitations.
setup() {
	case $DEV in
	tap) skt_topo_tap tap sk0 ;;
	*) skt_topo_veth off "" ;;
	esac || return 1
	NS_L=$SKT_NS_L NS_S=$SKT_NS_S IF_L=$SKT_IF_L SPEC=$DEV:$SKT_IF_S
	in_l sysctl -qw "net.ipv6.conf.$IF_L.accept_dad=0" "net.ipv6.conf.$IF_L.router_solicitations=0" \
		"net.ipv6.conf.$IF_L.disable_ipv6=0" || return 1
	in_l ip -6 addr add "$L6/64" dev "$IF_L" nodad
}

teardown() {
	skt_cleanup
	NS_L='' NS_S=''
}

# wait_line FILE REGEX SECONDS PID: until a line matches; 1 if PID died or time ran out.
wait_line() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		kill -0 "$4" 2>/dev/null || { grep -Eq "$2" "$1" 2>/dev/null; return; }
		sleep 0.05
	done
	return 1
}

# start_echo RUN [IP6 [REGEX]]: skiff echo with --ip6 IP6 (default $S6/64),
# ready, with the global address (matching REGEX) usable.
start_echo() {
	local run=$1 ip6=${2:-$S6/64} re=${3:-$S6}
	SK_OUT=$WORK/$DEV-$run.out SK_ERR=$WORK/$DEV-$run.err
	ip netns exec "$NS_S" "$BIN" echo --dev "$SPEC" --ip "$SKT_SKIFF_IP/$SKT_PLEN" --ip6 "$ip6" \
		--stats >"$SK_OUT" 2>"$SK_ERR" &
	SK_PID=$!
	SKT_PIDS+=("$SK_PID")
	if ! wait_line "$SK_OUT" "^skiff: ip6 $re usable" 15 "$SK_PID"; then
		fail "$DEV.start.$run" "no 'ip6 $re usable' within 15 s; out: $(tr '\n' ' ' <"$SK_OUT" | cut -c1-300); err: $(tail -n 3 "$SK_ERR" | tr '\n' ' ')"
		skt_stop_pid "$SK_PID"
		return 1
	fi
	SK_MAC=$(skt_ready_mac "$SK_OUT")
	SK_LL=$(sed -n 's/^skiff: ip6 \(fe80:[0-9a-f:]*\) usable.*/\1/p' "$SK_OUT" | head -n 1)
	in_l ip neigh flush dev "$IF_L" 2>/dev/null
	if [ -z "$SK_MAC" ] || [ -z "$SK_LL" ]; then
		fail "$DEV.start.$run" "no MAC or link-local address in: $(head -n 3 "$SK_OUT" | tr '\n' ' ')"
		skt_stop_pid "$SK_PID"
		return 1
	fi
	SK_G6=$(sed -En "s/^skiff: ip6 ($re) usable.*/\\1/p" "$SK_OUT" | head -n 1)
	pass "$DEV.start.$run (DAD passed for $SK_G6 and $SK_LL)"
}

# stop_echo NAME: SIGTERM, exit 0, counters into ST.
stop_echo() { skt_stop_counters "$1" "$SK_PID" "$SK_OUT" "$SK_ERR"; }

# ping6_check NAME COUNT INTERVAL SIZE DST [PING_ARGS...]: Linux's ping -6,
# 0% loss, no corrupt or duplicated reply.
ping6_check() {
	local name=$1 count=$2 interval=$3 size=$4 dst=$5 out rc stat
	out=$(in_l timeout $((count / 50 + 15)) ping -6 -n -c "$count" -i "$interval" -s "$size" -W 2 \
		"${@:6}" "$dst" 2>&1)
	rc=$?
	printf '%s\n' "$out" >>"$WORK/$DEV-ping.log"
	stat=$(grep -m1 'packets transmitted' <<<"$out")
	if grep -q 'wrong data byte' <<<"$out"; then
		fail "$name" "payload corrupted: $(grep -m1 'wrong data byte' <<<"$out")"
	elif grep -q 'DUP!' <<<"$out"; then
		fail "$name" "duplicate replies: $stat"
	elif [ $rc -ne 0 ] || ! grep -q ' 0% packet loss' <<<"$out"; then
		fail "$name" "rc=$rc: ${stat:-$(tail -n 1 <<<"$out")}"
	else
		pass "$name ($stat)"
	fi
}

SUM_TOTAL=0 SUM_DETAIL=''

TCP6_BYTES=${TCP6_BYTES:-$((20 << 20))}
HTTP6_AB_N=${HTTP6_AB_N:-2000}
HELLO='Hello, world! This is skiff serving you.'

# tcp6_echo NAME HOST BYTES: tests/tcp_echo.py client from Linux to
# HOST:7, sha256 of what came back == what was sent.
tcp6_echo() {
	local name=$1 host=$2 bytes=$3 out rc
	out=$(in_l timeout 120 python3 "$here/tcp_echo.py" client --host "$host" --bytes "$bytes" \
		--seed 6 --timeout 100 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'MATCH$' <<<"$out"; then
		pass "$name ($out)"
	else
		fail "$name" "rc=$rc: $(tail -n 2 <<<"$out" | tr '\n' ' ' | cut -c1-300)"
	fi
}

# start_serve RUN: skiff serve --stack skiff with --ip6 $S6/64, listening,
# the address usable.
start_serve() {
	local run=$1
	SK_OUT=$WORK/$DEV-$run.out SK_ERR=$WORK/$DEV-$run.err
	ip netns exec "$NS_S" "$BIN" serve --stack skiff --dev "$SPEC" --ip "$SKT_SKIFF_IP/$SKT_PLEN" \
		--ip6 "$S6/64" --port 80 --stats >"$SK_OUT" 2>"$SK_ERR" &
	SK_PID=$!
	SKT_PIDS+=("$SK_PID")
	if ! wait_line "$SK_OUT" "^skiff: ip6 $S6 usable" 15 "$SK_PID" ||
		! grep -q "^skiff serve: listening on .* ip6=\[$S6\]:80" "$SK_OUT"; then
		fail "$DEV.start.$run" "no listening line with ip6=[$S6]:80 and '$S6 usable' within 15 s; out: $(tr '\n' ' ' <"$SK_OUT" | cut -c1-300); err: $(tail -n 3 "$SK_ERR" | tr '\n' ' ')"
		skt_stop_pid "$SK_PID"
		return 1
	fi
	in_l ip neigh flush dev "$IF_L" 2>/dev/null
	pass "$DEV.start.$run (serve listening on [$S6]:80, DAD passed)"
}

# want NAME EXPR WHY: pass if the arithmetic EXPR (over ST values) holds.
want() {
	if (($2)); then pass "$1 ($3)"; else fail "$1" "$3"; fi
}

# The drop counters of src/net/iface_types.h for malformed IPv6.
DROP6_RE='^(ip6\.(truncated|bad_len|version|frag_dropped|route_dropped|bad_ext|bad_opt|ext_limit|bad_addr|bad)'
DROP6_RE+='|icmp6\.(truncated|csum)|nd\.(truncated|hop_limit|bad_code|bad_opt|bad_addr))$'
# shellcheck disable=SC2034 # used by name: skt_reasons_check ... REASON6_GROUPS
REASON6_GROUPS=(
	"ip6_trunc ip6_len_long : ip6.truncated"
	"ip6_version : ip6.version"
	"ip6_frag ip6_frag_first : ip6.frag_dropped"
	"ip6_rh0 : ip6.route_dropped"
	"ip6_hbh_late : ip6.bad_ext"
	"ip6_opt_drop : ip6.bad_opt"
	"ip6_ext_limit : ip6.ext_limit"
	"ip6_ext_cut : ip6.bad_len"
	"ip6_mcast_src : ip6.bad_addr"
	"icmp6_trunc : icmp6.truncated"
	"icmp6_csum : icmp6.csum"
	"nd_hop_limit : nd.hop_limit"
	"nd_zero_opt : nd.bad_opt"
	"nd_code : nd.bad_code"
)


# skiff_ping NAME IP6 ARGS...: skiff ping -6 on the device; output in PING_OUT, status in PING_RC.
PING_OUT='' PING_RC=''
skiff_ping() {
	local name=$1 addr=$2
	shift 2
	PING_OUT=$(ip netns exec "$NS_S" timeout 60 "$BIN" ping -6 --dev "$SPEC" --ip "$SKT_SKIFF_IP/$SKT_PLEN" \
		--ip6 "$addr/64" --stats "$@" 2>&1)
	PING_RC=$?
	printf '%s\n' "$PING_OUT" >"$WORK/$DEV-$name.log"
}

run_device() {
	DEV=$1
	local out rc
	echo "== $DEV"
	setup || { fail "$DEV.setup" "could not build the $DEV topology with IPv6"; teardown; return; }

	# ---- run 1: ping -6 both addresses, ND flood ----------------------
	if start_echo 1; then
		ping6_check "$DEV.ping6" 500 0.002 1400 "$S6"
		ping6_check "$DEV.ping6_link_local" 100 0.005 1000 "$SK_LL%$IF_L"
		ping6_check "$DEV.ping6_pattern" 100 0.005 1000 "$S6" -p a55aff0012
		# A VLAN-tagged echo request is not for an untagged host (eth.vlan);
		# the same request untagged first, which must be answered.
		out=$(in_l timeout 10 python3 "$here/vlan_probe.py" --iface "$IF_L" --dst-mac "$SK_MAC" \
			--src-ip "$L6" --dst-ip "$S6" --control 2>&1)
		rc=$?
		if [ $rc -eq 0 ]; then pass "$DEV.vlan6_ignored ($out)"; else fail "$DEV.vlan6_ignored" "$out"; fi
		out=$(in_l timeout 180 python3 "$here/nd_flood.py" --iface "$IF_L" --dst-mac "$SK_MAC" \
			--target "$S6" --exclude "$L6" --count "$ND_COUNT" --rate "$FLOOD_RATE" \
			--sync "$SKT_SKIFF_IP" 2>&1)
		rc=$?
		echo "   $out"
		if ! kill -0 "$SK_PID" 2>/dev/null; then
			fail "$DEV.nd_flood" "skiff died during the flood; err: $(tail -n 3 "$SK_ERR" | tr '\n' ' ')"
		elif [ $rc -ne 0 ]; then
			fail "$DEV.nd_flood" "sender rc=$rc: $out"
		else
			ping6_check "$DEV.nd_flood" 50 0.01 56 "$S6"
		fi
		if stop_echo "$DEV.sigterm.1"; then
			local half=$((ND_COUNT / 2))
			want "$DEV.nd_cache_bounded" "${ST[nd.entries]:-999} <= 256 && ${ST[nd.evictions]:-0} > 0" \
				"nd.entries=${ST[nd.entries]:-?} (<= 256) nd.evictions=${ST[nd.evictions]:-?} nd.learned=${ST[nd.learned]:-?}"
			want "$DEV.nd_ns_answered" "${ST[nd.ns_rx]:-0} >= $half && ${ST[nd.na_tx]:-0} >= $half" \
				"nd.ns_rx=${ST[nd.ns_rx]:-?} nd.na_tx=${ST[nd.na_tx]:-?} of $half NS"
			want "$DEV.nd_na_ignored" "${ST[nd.na_no_entry]:-0} >= $half" \
				"nd.na_no_entry=${ST[nd.na_no_entry]:-?} of $half unsolicited NA"
			want "$DEV.dad_ok" "${ST[nd.dad_ok]:-0} == 2 && ${ST[nd.dad_duplicate]:-1} == 0" \
				"nd.dad_ok=${ST[nd.dad_ok]:-?} nd.dad_duplicate=${ST[nd.dad_duplicate]:-?}"
		fi
	fi

	# ---- run 2: malformed IPv6 ------------------------------------------
	if start_echo 2; then
		out=$(in_l timeout 180 python3 "$here/malformed6.py" --iface "$IF_L" --dst-mac "$SK_MAC" \
			--src-ip "$L6" --dst-ip "$S6" --count "$MALFORMED6_COUNT" --rate "$FLOOD_RATE" \
			--sync "$SKT_SKIFF_IP" 2>&1)
		rc=$?
		echo "   ${out%%; kinds:*}"
		if ! kill -0 "$SK_PID" 2>/dev/null; then
			fail "$DEV.malformed6" "skiff died; err: $(tail -n 3 "$SK_ERR" | tr '\n' ' ')"
		elif [ $rc -ne 0 ]; then
			fail "$DEV.malformed6" "sender rc=$rc: $out"
		else
			ping6_check "$DEV.malformed6" 50 0.01 56 "$S6"
		fi
		if stop_echo "$DEV.sigterm.2"; then
			local sent
			sent=$(sed -n 's/^malformed6: sent \([0-9]*\)\/.*/\1/p' <<<"$out")
			sent=${sent:-$MALFORMED6_COUNT}
			skt_sum_counters "$DROP6_RE"
			want "$DEV.malformed6_drops" "$SUM_TOTAL >= $sent * 9 / 10" \
				"$SUM_TOTAL counted of $sent sent:$SUM_DETAIL"
			skt_reasons_check "$DEV.malformed6_reasons" "$out" REASON6_GROUPS every
			want "$DEV.icmp6_errors_limited" "${ST[icmp6.errors_tx]:-0} > 0 && ${ST[icmp6.ratelimited]:-0} > 0" \
				"icmp6.errors_tx=${ST[icmp6.errors_tx]:-?} icmp6.ratelimited=${ST[icmp6.ratelimited]:-?}"
		fi
	fi

	# ---- run 3: skiff ping -6 to Linux ------------------------------------
	in_l ip neigh flush dev "$IF_L" 2>/dev/null
	skiff_ping ping6_to_linux "$S6" -c 50 -i 10 -s 1400 "$L6"
	if [ "$PING_RC" -eq 0 ] && grep -q '^50 transmitted, 50 received, 0% loss' <<<"$PING_OUT"; then
		pass "$DEV.skiff_ping6 ($(grep -m1 transmitted <<<"$PING_OUT"))"
	else
		fail "$DEV.skiff_ping6" "rc=$PING_RC: $(grep -E 'transmitted|ping:|skiff' <<<"$PING_OUT" | tr '\n' ' ' | cut -c1-300)"
	fi

	# ---- run 4: DAD finds Linux holding the address -----------------------
	in_l ip -6 addr add "$DUP6/64" dev "$IF_L" nodad
	skiff_ping dad_duplicate "$DUP6" -c 1 "$L6"
	local dups
	dups=$(sed -n 's/^nd\.dad_duplicate \([0-9]*\)$/\1/p' <<<"$PING_OUT")
	if [ "$PING_RC" -eq 1 ] && grep -q "^skiff: ip6 $DUP6: duplicate address detected" <<<"$PING_OUT" &&
		grep -q 'no usable IPv6 source' <<<"$PING_OUT" && [ "${dups:-0}" -eq 1 ] &&
		grep -q '^icmp6.echo_requests_tx 0$' <<<"$PING_OUT"; then
		pass "$DEV.dad_duplicate (reported, nd.dad_duplicate=1, address not used)"
	else
		fail "$DEV.dad_duplicate" "rc=$PING_RC nd.dad_duplicate=${dups:-?}: $(grep -E 'skiff|ping:|dad|echo_requests_tx' <<<"$PING_OUT" | tr '\n' ' ' | cut -c1-300)"
	fi

	# ---- run 5: SLAAC from radvd --------------------------------------------
	# radvd advertises only as a router: forwarding on, in this namespace.
	local conf=$WORK/$DEV-radvd.conf radvd_pid ra_router=12 ra_valid=86400 ra_preferred=14400 expiry=0 i
	# On one device (the code is the same on all), short lifetimes that
	# then run out: radvd is killed (no final RA), and skiff must deprecate
	# the address, drop it and forget the router on its own clock.
	if [ "$DEV" = "$EXPIRY_DEV" ]; then
		ra_router=8 ra_valid=12 ra_preferred=6 expiry=1
	fi
	in_l sysctl -qw net.ipv6.conf.all.forwarding=1
	in_l ip -6 addr add 2001:2:0:1::1/64 dev "$IF_L" nodad
	cat >"$conf" <<-EOF
		interface $IF_L {
			AdvSendAdvert on;
			MinRtrAdvInterval 3;
			MaxRtrAdvInterval 4;
			AdvDefaultLifetime $ra_router;
			prefix 2001:2:0:1::/64 {
				AdvOnLink on; AdvAutonomous on;
				AdvValidLifetime $ra_valid; AdvPreferredLifetime $ra_preferred;
			};
		};
	EOF
	in_l radvd -n -C "$conf" -p "$WORK/$DEV-radvd.pid" -m stderr >"$WORK/$DEV-radvd.log" 2>&1 &
	radvd_pid=$!
	SKT_PIDS+=("$radvd_pid")
	if start_echo 5 auto '2001:2:0:1:[0-9a-f:]+'; then
		ping6_check "$DEV.slaac_ping6" 100 0.005 1400 "$SK_G6"
		local t_kill=0 t_gone=-1
		if [ "$expiry" = 1 ]; then
			# At least one more RA (MaxRtrAdvInterval 4): a renewal.  Two
			# intervals and a second: with 5 s, one RA that radvd sent late on
			# a loaded machine (ci-fresh) left none, slaac_refreshed 0.
			sleep 9
			# radvd's own pid (radvd_pid is the subshell around it).
			kill -KILL "$(cat "$WORK/$DEV-radvd.pid" 2>/dev/null)" "$radvd_pid" 2>/dev/null
			t_kill=$SECONDS
			# The address answers until its valid lifetime (12 s from the
			# last RA) ends; then nothing does, but skiff still runs.
			for ((i = 0; i < 40; i++)); do
				# Two misses in a row: one lost ping is not an expiry.
				if ! in_l ping -6 -n -c 1 -W 1 "$SK_G6" >/dev/null 2>&1 &&
					! in_l ping -6 -n -c 2 -i 0.2 -W 1 "$SK_G6" >/dev/null 2>&1; then
					t_gone=$((SECONDS - t_kill))
					break
				fi
				sleep 0.5
			done
		fi
		if [ "$expiry" = 1 ]; then
			if [ "$t_gone" -ge 0 ] && kill -0 "$SK_PID" 2>/dev/null &&
				in_l ping -6 -n -c 3 -i 0.2 -W 1 "$SK_LL%$IF_L" >/dev/null 2>&1; then
				pass "$DEV.slaac_expiry_ping (no answer at $SK_G6 ${t_gone} s after radvd died; the link-local still answers)"
			else
				fail "$DEV.slaac_expiry_ping" "t_gone=$t_gone s; skiff alive: $(kill -0 "$SK_PID" 2>/dev/null && echo yes || echo no)"
			fi
		fi
		if stop_echo "$DEV.sigterm.5"; then
			want "$DEV.slaac" "${ST[nd.slaac_addrs]:-0} == 1 && ${ST[nd.router_learned]:-0} == 1 && ${ST[nd.ra_rx]:-0} >= 1" \
				"address $SK_G6 from radvd's prefix; nd.rs_tx=${ST[nd.rs_tx]:-?} nd.ra_rx=${ST[nd.ra_rx]:-?} nd.slaac_addrs=${ST[nd.slaac_addrs]:-?} nd.router_learned=${ST[nd.router_learned]:-?}"
			if [ "$expiry" = 1 ]; then
				want "$DEV.slaac_lifetimes" "${ST[nd.slaac_refreshed]:-0} >= 1 && ${ST[nd.slaac_deprecated]:-0} == 1 && ${ST[nd.slaac_expired]:-0} == 1 && ${ST[nd.router_expired]:-0} == 1" \
					"nd.slaac_refreshed=${ST[nd.slaac_refreshed]:-?} nd.slaac_deprecated=${ST[nd.slaac_deprecated]:-?} nd.slaac_expired=${ST[nd.slaac_expired]:-?} nd.router_expired=${ST[nd.router_expired]:-?}"
			fi
		fi
	else
		skt_log "radvd: $(tail -n 5 "$WORK/$DEV-radvd.log" | tr '\n' ' ')"
	fi
	skt_stop_pid "$radvd_pid"
	in_l ip -6 addr del 2001:2:0:1::1/64 dev "$IF_L" 2>/dev/null
	in_l ip -6 addr del "$DUP6/64" dev "$IF_L" 2>/dev/null

	# ---- run 6: TCP echo over IPv6, then IPv4 on the same listener ---------
	if start_echo 6; then
		tcp6_echo "$DEV.tcp6_echo" "$S6" "$TCP6_BYTES"
		tcp6_echo "$DEV.tcp4_echo_same_listener" "$SKT_SKIFF_IP" $((1 << 20))
		if out=$(in_l timeout 60 python3 "$here/udp_echo.py" --dst "$S6" --count 2000 \
			--max-size 1452 2>&1); then
			pass "$DEV.udp6_echo ($out)"
		else
			fail "$DEV.udp6_echo" "$out"
		fi
		if stop_echo "$DEV.sigterm.6"; then
			want "$DEV.tcp6_counters" "${ST[tcp_established]:-0} >= 2 && ${ST[ip6.tx]:-0} > 1000 && ${ST[ip6.too_big]:-1} == 0 && ${ST[tcp_out_err]:-1} == 0" \
				"tcp_established=${ST[tcp_established]:-?} ip6.tx=${ST[ip6.tx]:-?} ip6.too_big=${ST[ip6.too_big]:-?} tcp_out_err=${ST[tcp_out_err]:-?} tcp_retransmits=${ST[tcp_retransmits]:-?}"
		fi
	fi

	# ---- run 7: HTTP over IPv6: curl -g and ab ------------------------------
	if start_serve 7; then
		local body=$WORK/$DEV-curl6.out abo=$WORK/$DEV-ab6.out done_ fails non2xx rps
		if ! in_l timeout 20 curl -g -s --fail --max-time 10 -o "$body" "http://[$S6]/"; then
			fail "$DEV.curl6" "curl -g http://[$S6]/ failed"
		elif [ "$(cat "$body")" != "$HELLO" ]; then
			fail "$DEV.curl6" "body is not the 41-byte hello: $(head -c 80 "$body")"
		else
			pass "$DEV.curl6 (curl -g 'http://[$S6]/': the 41-byte hello)"
		fi
		in_l timeout 120 ab -q -r -n "$HTTP6_AB_N" -c 8 "http://[$S6]/" >"$abo" 2>&1
		done_=$(awk '/^Complete requests:/ {print $3}' "$abo")
		fails=$(awk '/^Failed requests:/ {print $3}' "$abo")
		non2xx=$(awk '/^Non-2xx responses:/ {print $3}' "$abo")
		rps=$(awk '/^Requests per second:/ {print $4}' "$abo")
		if [ "${done_:-0}" != "$HTTP6_AB_N" ] || [ "${fails:-x}" != 0 ] || [ -n "$non2xx" ]; then
			fail "$DEV.ab6" "complete=${done_:-?} failed=${fails:-?} non2xx=${non2xx:-0}: $(tail -n 2 "$abo" | tr '\n' ' ')"
		else
			pass "$DEV.ab6 (ab -n $HTTP6_AB_N -c 8 http://[$S6]/: 0 failed, $rps req/s)"
		fi
		# skiff's own client (kernel sockets) to the v6 URL.
		local lo
		if lo=$(in_l timeout 60 "$BIN" load --stack linux -c 8 -n "$HTTP6_AB_N" -k "http://[$S6]/" 2>&1) &&
			grep -q "^skiff load: summary requests=$HTTP6_AB_N ok=$HTTP6_AB_N failed=0 " <<<"$lo"; then
			pass "$DEV.load6 ($(grep -o 'requests=[0-9]* ok=[0-9]* failed=0 rps=[0-9.]*' <<<"$lo"))"
		else
			fail "$DEV.load6" "$(grep -E '^skiff load' <<<"$lo" | tr '\n' ' ' | cut -c1-300)"
		fi
		stop_echo "$DEV.sigterm.7"
	fi
	teardown

	# ---- run 8: path MTU from Packet Too Big, through a Linux router --------
	ptb_run
}

PTB_MTU=${PTB_MTU:-1400}

# ptb_run: run 8 (see the top).  Its own topology: tests/lib.sh's relay
# shape with mid routing instead of bridging.
ptb_run() {
	local nsm out rc sk_pid sk_out sk_err i
	if ! skt_topo_relay "$DEV"; then
		fail "$DEV.ptb.setup" "could not build the routed topology"
		teardown
		return
	fi
	NS_L=$SKT_NS_L NS_S=$SKT_NS_S
	nsm=$SKT_NS_M
	local x=$SKT_RELAY_B spec=$DEV:$SKT_IF_S
	ip -n "$nsm" link set vm0 nomaster && ip -n "$nsm" link set "$x" nomaster &&
		ip -n "$nsm" link del br0 &&
		ip netns exec "$nsm" sysctl -qw net.ipv6.conf.all.forwarding=1 \
			"net.ipv6.conf.vm0.disable_ipv6=0" "net.ipv6.conf.vm0.accept_dad=0" \
			"net.ipv6.conf.$x.disable_ipv6=0" "net.ipv6.conf.$x.accept_dad=0" \
			"net.ipv6.conf.vm0.mtu=$PTB_MTU" &&
		ip -n "$nsm" -6 addr add 2001:2:0:1::ffff/64 dev vm0 nodad &&
		ip -n "$nsm" -6 addr add "$L6/64" dev "$x" nodad &&
		in_l sysctl -qw net.ipv6.conf.vc0.disable_ipv6=0 net.ipv6.conf.vc0.accept_dad=0 \
			net.ipv6.conf.vc0.router_solicitations=0 &&
		in_l ip -6 addr add 2001:2:0:1::1/64 dev vc0 nodad &&
		in_l ip -6 route add 2001:2::/64 via 2001:2:0:1::ffff dev vc0
	if [ $? -ne 0 ]; then
		fail "$DEV.ptb.setup" "could not configure the router namespace"
		teardown
		return
	fi
	sk_out=$WORK/$DEV-8.out sk_err=$WORK/$DEV-8.err
	ip netns exec "$NS_S" "$BIN" echo --dev "$spec" --ip "$SKT_SKIFF_IP/$SKT_PLEN" --ip6 "$S6/64" \
		--gw6 "$L6" --stats >"$sk_out" 2>"$sk_err" &
	sk_pid=$!
	SKT_PIDS+=("$sk_pid")
	if ! wait_line "$sk_out" "^skiff: ip6 $S6 usable" 15 "$sk_pid"; then
		fail "$DEV.ptb.start" "no 'ip6 $S6 usable' within 15 s: $(tail -n 3 "$sk_err" | tr '\n' ' ')"
		teardown
		return
	fi
	pass "$DEV.ptb.start (mid routes, vm0's IPv6 MTU $PTB_MTU)"
	local toobig0 toobig1
	toobig0=$(ip netns exec "$nsm" awk '$1 == "Icmp6OutPktTooBigs" {print $2}' /proc/net/snmp6)
	# A client that keeps its connection open after the echo, so forged
	# messages can name it: tests/ptb6.py runs the transfer itself.
	out=$(in_l timeout 120 python3 "$here/ptb6.py" --host "$S6" --bytes $((4 << 20)) --seed 8 \
		--iface vc0 --gw-mac "$(ip -n "$nsm" link show vm0 | awk '/link\/ether/ {print $2}')" \
		--timeout 90 2>&1)
	rc=$?
	toobig1=$(ip netns exec "$nsm" awk '$1 == "Icmp6OutPktTooBigs" {print $2}' /proc/net/snmp6)
	if [ $rc -eq 0 ] && grep -q 'MATCH' <<<"$out" && ! grep -q 'MISMATCH' <<<"$out"; then
		pass "$DEV.ptb.echo ($out; mid sent $((toobig1 - toobig0)) Packet Too Big)"
	else
		fail "$DEV.ptb.echo" "rc=$rc: $(tail -n 2 <<<"$out" | tr '\n' ' ' | cut -c1-300)"
	fi
	SK_PID=$sk_pid SK_OUT=$sk_out SK_ERR=$sk_err
	if stop_echo "$DEV.ptb.sigterm"; then
		want "$DEV.ptb.counters" "${ST[tcp_pmtu_updates]:-0} >= 1 && ${ST[icmp6.too_big_rx]:-0} >= 1 && $toobig1 > $toobig0 && ${ST[tcp_pmtu_ignored]:-0} >= 1 && ${ST[tcp_icmp_ignored]:-0} >= 1" \
			"tcp_pmtu_updates=${ST[tcp_pmtu_updates]:-?} icmp6.too_big_rx=${ST[icmp6.too_big_rx]:-?} mid Icmp6OutPktTooBigs +$((toobig1 - toobig0)) tcp_pmtu_ignored=${ST[tcp_pmtu_ignored]:-?} tcp_icmp_ignored=${ST[tcp_icmp_ignored]:-?} tcp_retransmits=${ST[tcp_retransmits]:-?}"
	fi
	teardown
}

# The guest's ip6= word: the same interface code behind virtio-net.
UK_UDP6_COUNT=${UK_UDP6_COUNT:-1000}
run_uk() {
	local img=$1 vm i
	echo "== unikernel"
	DEV=uk
	skt_topo_tap uk6 vt0 || { fail uk.setup "cannot build the TAP namespace"; teardown; return; }
	NS_L=$SKT_NS_L IF_L=vt0
	in_l sysctl -qw net.ipv6.conf.vt0.accept_dad=0 net.ipv6.conf.vt0.disable_ipv6=0
	in_l ip -6 addr add "$L6/64" dev vt0 nodad
	in_l timeout 90 "$BIN" vm --image "$img" --net tap:vt0 -- ip=$SKT_SKIFF_IP/24 ip6=$S6/64 \
		exit-after=80 </dev/null >"$WORK/uk.log" 2>&1 &
	vm=$!
	SKT_PIDS+=("$vm")
	for ((i = 0; i < 60; i++)); do
		in_l ping -6 -n -c 1 -W 1 "$S6" >/dev/null 2>&1 && break
		kill -0 "$vm" 2>/dev/null || break
		sleep 0.5
	done
	if [ "$i" -lt 60 ] && kill -0 "$vm" 2>/dev/null; then
		ping6_check uk.ping6 500 0.002 1400 "$S6"
		# The guest runs the same engine: HTTP over IPv6 too.
		local body
		body=$(in_l timeout 20 curl -g -s --fail --max-time 10 "http://[$S6]/")
		if [ "$body" = "$HELLO" ]; then
			pass "uk.curl6 (curl -g 'http://[$S6]/': the 41-byte hello from the guest)"
		else
			fail uk.curl6 "curl -g http://[$S6]/: '$(head -c 80 <<<"$body")'"
		fi
		# And its UDP echo on port 7 over IPv6.
		local out
		if out=$(in_l timeout 60 python3 "$here/udp_echo.py" --dst "$S6" --count "$UK_UDP6_COUNT" \
			--max-size 1452 2>&1); then
			pass "uk.udp6_echo ($out)"
		else
			fail uk.udp6_echo "$out"
		fi
	else
		fail uk.ping6 "no answer to ping -6 $S6 within 30 s: $(grep -a skiff-uk "$WORK/uk.log" | tail -n 3 | tr '\n' ' ')"
	fi
	skt_stop_pid "$vm"
	teardown
}

start=$SECONDS
for d in "${devices[@]}"; do
	run_device "$d"
done
[ -n "${IPV6_UK:-}" ] && run_uk "$IPV6_UK"
echo "time: $((SECONDS - start)) s"
[ "$SKT_FAILED" -eq 0 ] || echo "logs: $WORK"
summary
