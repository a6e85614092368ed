# shellcheck shell=bash
# lib.sh — the test kit every test script sources (tests/*.sh, tools/run.sh,
# bench/vm/lib.sh): one way to report checks and one way to build the
# namespaces, TAPs and veth pairs they run in.  It defines functions only
# (plus SKT_* defaults); sourcing it changes nothing.
#
# Reporting: pass NAME [DETAIL...] and fail NAME WHY print "PASS ..." /
# "FAIL NAME: WHY" and count; summary prints "$SKT_SUITE: N passed, N
# failed" (tests/run-all.sh greps that line) and fails if anything failed.
# skt_need CHECK TOOL... counts a FAIL for each tool not installed: a test
# that cannot run is a failure, never a skip.
#
# Topologies (each sets the SKT_NS_* / SKT_IF_* names below):
#   skt_topo_tap [ROLE [IF]]  one namespace; a persistent TAP (sk0) whose
#                             kernel side is 198.18.0.1/24; skiff opens
#                             tap:IF in the same namespace.
#   skt_topo_veth OFF SRV     namespaces cli and srv joined by a veth pair:
#                             cli's vc0 is 198.18.0.1/24, skiff (or a Linux
#                             server, SRV=its address) has srv's vs0.
#   skt_topo_relay KIND       cli - mid - skiff: mid bridges vm0 (veth to
#                             cli's vc0) with X, or relays them through
#                             skiff impair (skt_relay_start); X is a
#                             TAP sk0 in mid (KIND tap) or vm1, a veth to
#                             srv's vs0 (KIND packet or xdp).
#
# skiff serve under clients (skt_serve_*; tests/http.sh, smp.sh, metrics.sh,
# ops.sh, tls.sh): one topology per target (linux, skiff:tap, skiff:packet,
# skiff:xdp), start and wait until it listens and answers, stop by a signal
# and judge the exit; on the callers' BIN, WORK, TGT, NS_C/NS_S, SERVE,
# SRV_PID and SRV_LOG (see "skiff serve on a target" below).  skt_targets
# reads the targets asked for; skt_work_traps cleans up on exit and keeps
# WORK's logs when a check failed.
# Waiting: skt_wait_for SECONDS CMD... polls CMD every 0.05 s, so that no
# sleep is longer than what it waits for (skt_listens: a TCP port
# listening); skt_wait_exit, skt_wait_ready.
#
# Address family (skt_family, skt_family_up): the same checks over IPv4 or
# IPv6 (SKT_FAMILY=6 in the environment): clients dial SKT_SRV / SKT_HOST,
# 2001:2::1 -> 2001:2::2 over v6, 198.18.0.1 -> 198.18.0.2 over v4.
#
# Safety rules these helpers enforce:
#   - every namespace is named "skt-<pid of the creating script>-<role>";
#     skt_cleanup_stale removes leftovers whose creating pid is dead;
#   - addresses come from 198.18.0.0/15 (IPv6: 2001:2::/48) only and are only ever set inside
#     namespaces created here: nothing is added in the root namespace (veth
#     pairs and TAPs are created directly inside their namespaces);
#   - skt_cleanup (call it from a trap on EXIT INT TERM) stops the skiff
#     processes started here, by pid, and deletes this run's namespaces.

# shellcheck disable=SC2034  # used by the scripts that source this file
{
SKT_PREFIX=skt
SKT_LINUX_IP=198.18.0.1
SKT_SKIFF_IP=198.18.0.2
SKT_PLEN=${SKT_PLEN:-24}
# IPv6 (issue 18): 2001:2::/48 only (RFC 5180's benchmarking range, our
# 198.18.0.0/15's counterpart), only on interfaces inside our namespaces.
SKT_LINUX_IP6=2001:2::1
SKT_SKIFF_IP6=2001:2::2

# Set by skt_family (the address family a script's checks run over):
SKT_FAMILY=${SKT_FAMILY:-4} # 4 or 6: the environment's choice, then skt_family's
SKT_SRV=          # the server's address as a client dials it (198.18.0.2, 2001:2::2)
SKT_CLI=          # the client's address as the server sees it (198.18.0.1, 2001:2::1)
SKT_HOST=         # the server in a URL or HOST:PORT (198.18.0.2, [2001:2::2])
SKT_SERVE6=()     # skt_family_up: skiff's extra stack arguments (--ip6 ...)

SKT_SUITE="test"  # the summary line's name (set it after sourcing): "http", "tcp", ...
SKT_SCOPE=        # when set, check names print as SCOPE/NAME (http.sh: the target)
SKT_PASSED=0
SKT_FAILED=0

SKT_NAMESPACES=() # created by this run, deleted by skt_cleanup
SKT_PIDS=()       # processes started by this run, stopped by skt_cleanup
SKT_RC=           # exit status set by skt_wait_exit

# Set by the skt_topo_* builders:
SKT_NS_L=         # the namespace of the Linux peer (clients, ping, ...)
SKT_IF_L=         # the Linux peer's interface (198.18.0.1/24)
SKT_NS_S=         # the namespace skiff (or the server) runs in
SKT_IF_S=         # the interface skiff opens there (tap:sk0, packet:vs0, ...)
SKT_NS_M=         # skt_topo_relay: the middle namespace
SKT_RELAY_A=      # skt_topo_relay: mid's two bridged/relayed ports
SKT_RELAY_B=
SKT_RELAY_PID=    # the running tcp_impair.py, if any
}
SKT_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ---- reporting --------------------------------------------------------

pass() {
	SKT_PASSED=$((SKT_PASSED + 1))
	printf 'PASS %s%s\n' "${SKT_SCOPE:+$SKT_SCOPE/}" "$*"
}

# fail NAME WHY: WHY on one line (newlines become spaces).
fail() {
	local why=${2:-}
	SKT_FAILED=$((SKT_FAILED + 1))
	printf 'FAIL %s%s: %s\n' "${SKT_SCOPE:+$SKT_SCOPE/}" "$1" "${why//$'\n'/ }"
}

# The last line of a test script; its status is the script's verdict.
summary() {
	printf '%s: %d passed, %d failed\n' "$SKT_SUITE" "$SKT_PASSED" "$SKT_FAILED"
	[ "$SKT_FAILED" -eq 0 ]
}

# skt_need CHECK TOOL...: a FAIL (CHECK: 'TOOL' not found) per missing tool;
# returns 1 if any is missing.
skt_need() {
	local check=$1 t rc=0
	shift
	for t in "$@"; do
		if ! command -v "$t" >/dev/null 2>&1; then
			fail "$check" "'$t' not found (tools/deps.sh installs it)"
			rc=1
		fi
	done
	return $rc
}

# skt_devices KIND...: the device kinds a script was asked for (default:
# tap packet xdp) into SKT_DEVICES; an unknown kind is the caller's usage
# error (its usage(), which exits 2).
skt_devices() {
	local d
	SKT_DEVICES=("$@")
	[ ${#SKT_DEVICES[@]} -gt 0 ] || SKT_DEVICES=(tap packet xdp)
	for d in "${SKT_DEVICES[@]}"; do
		case $d in tap | packet | xdp) ;; *) echo "$0: unknown device kind '$d'" >&2; usage ;; esac
	done
}

skt_log() { printf '%s\n' "$*" >&2; }

# The namespace name for ROLE in this run.
skt_ns_name() { printf '%s-%s-%s' "$SKT_PREFIX" "$$" "$1"; }

# Remove "skt-<pid>-*" namespaces whose <pid> no longer runs (a crashed run).
# Processes still inside such a namespace are leftovers of that run: they
# get SIGTERM (then SIGKILL) by pid before the namespace goes.
skt_cleanup_stale() {
	local ns pid rest p
	while read -r ns _; do
		[[ $ns == "$SKT_PREFIX"-* ]] || continue
		rest=${ns#"$SKT_PREFIX"-}
		pid=${rest%%-*}
		[[ $pid =~ ^[0-9]+$ ]] || continue
		if [ "$pid" != "$$" ] && ! kill -0 "$pid" 2>/dev/null; then
			skt_log "cleanup: removing stale namespace $ns (pid $pid is gone)"
			for p in $(ip netns pids "$ns" 2>/dev/null); do
				kill -TERM "$p" 2>/dev/null
			done
			sleep 0.2
			for p in $(ip netns pids "$ns" 2>/dev/null); do
				kill -KILL "$p" 2>/dev/null
			done
			ip netns del "$ns" 2>/dev/null
		fi
	done < <(ip netns list 2>/dev/null)
}

# skt_ns_add NAME: create the namespace (NAME from skt_ns_name), bring lo up,
# turn IPv6 off (no router solicitations or DAD noise on the wire).
# Not in a $(...) subshell: it records NAME for skt_cleanup.
skt_ns_add() {
	local ns=$1
	ip netns add "$ns" || return 1
	SKT_NAMESPACES+=("$ns")
	ip -n "$ns" link set lo up
	# shellcheck disable=SC2016  # $k is for the inner sh
	ip netns exec "$ns" sh -c 'for k in all default; do
		echo 1 > /proc/sys/net/ipv6/conf/$k/disable_ipv6; done' 2>/dev/null
	return 0
}

skt_ns_del() {
	local ns=$1 i p
	for p in $(ip netns pids "$ns" 2>/dev/null); do
		kill -TERM "$p" 2>/dev/null
	done
	ip netns del "$ns" 2>/dev/null
	for i in "${!SKT_NAMESPACES[@]}"; do
		[ "${SKT_NAMESPACES[$i]}" = "$ns" ] && unset 'SKT_NAMESPACES[i]'
	done
	return 0
}

# Stop what this run started, delete this run's namespaces.  Idempotent.
skt_cleanup() {
	local p ns
	skt_stop_pid "$SKT_RELAY_PID"
	SKT_RELAY_PID=
	for p in "${SKT_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${SKT_PIDS[@]}"; do
		if ! skt_wait_exit "$p" 3; then
			kill -KILL "$p" 2>/dev/null
			wait "$p" 2>/dev/null
		fi
	done
	SKT_PIDS=()
	for ns in "${SKT_NAMESPACES[@]}"; do
		skt_ns_del "$ns"
	done
	SKT_NAMESPACES=()
}

# Turn off checksum and segmentation offloads on IF inside NS, so Linux puts
# complete checksums in every frame it sends.  ethtool if present, else a
# small SIOCETHTOOL helper.
skt_offloads_off() {
	local ns=$1 ifn=$2
	if command -v ethtool >/dev/null 2>&1; then
		ip netns exec "$ns" ethtool -K "$ifn" tx off rx off tso off gso off gro off >/dev/null 2>&1 ||
			ip netns exec "$ns" ethtool -K "$ifn" tx off rx off tso off gso off >/dev/null 2>&1
	else
		ip netns exec "$ns" python3 "$SKT_HERE/offload_off.py" "$ifn"
	fi
}

# ---- topologies -------------------------------------------------------
# The pieces first, then the three shapes the tests use.  Each returns 1 at
# the first step that fails; the caller reports it and calls skt_cleanup.

# skt_tap NS IF [ADDR/PLEN]: a persistent TAP IF inside NS, up, with ADDR on
# its kernel side.  Persistent, so the address stays while skiff restarts
# and skiff's first gratuitous ARP lands.
# SKT_TAP_MQ=1: a multi-queue TAP (serve --workers opens one queue each).
skt_tap() {
	local ns=$1 ifn=$2 addr=${3:-}
	# shellcheck disable=SC2046  # the word is wanted split off when empty
	ip -n "$ns" tuntap add dev "$ifn" mode tap $([ -n "${SKT_TAP_MQ:-}" ] && echo multi_queue) || return 1
	if [ -n "$addr" ]; then ip -n "$ns" addr add "$addr" dev "$ifn" || return 1; fi
	ip -n "$ns" link set "$ifn" up
}

# skt_veth NS_A IF_A NS_B IF_B: a veth pair, created with each end already in
# its namespace (nothing in the root namespace, even for a moment); down.
# SKT_VETH_QUEUES=N: N rx and N tx queues on each end (serve --workers on
# xdp: one AF_XDP socket per queue).
skt_veth() {
	local q=()
	[ -n "${SKT_VETH_QUEUES:-}" ] && q=(numrxqueues "$SKT_VETH_QUEUES" numtxqueues "$SKT_VETH_QUEUES")
	ip -n "$1" link add "$2" "${q[@]}" type veth peer name "$4" "${q[@]}" netns "$3"
}

# skt_topo_tap [ROLE [IF]]: namespace ROLE (default tap) with the TAP IF
# (default sk0), 198.18.0.1/24 on the kernel side.  Linux and skiff share
# the namespace: SKT_NS_L = SKT_NS_S, SKT_IF_L = SKT_IF_S = IF.
skt_topo_tap() {
	local ns
	ns=$(skt_ns_name "${1:-tap}")
	SKT_NS_L=$ns SKT_NS_S=$ns SKT_IF_L=${2:-sk0} SKT_IF_S=${2:-sk0}
	skt_ns_add "$ns" || return 1
	skt_tap "$ns" "$SKT_IF_L" "$SKT_LINUX_IP/24"
}

# skt_topo_veth OFFLOADS SRV_ADDR: namespaces cli (SKT_NS_L, vc0 with
# 198.18.0.1/24) and srv (SKT_NS_S, vs0) joined by a veth pair, both ends
# up.  OFFLOADS off: checksum/segmentation offloads off on both ends, so
# Linux sends complete checksums and MTU-sized frames (what skiff on
# packet/xdp needs); on: as Linux sets them.  SRV_ADDR (ADDR/PLEN, or
# empty): vs0's address in Linux, for a Linux server; empty when skiff
# owns vs0.
skt_topo_veth() {
	local offloads=$1 srv_addr=${2:-}
	SKT_NS_L=$(skt_ns_name cli) SKT_NS_S=$(skt_ns_name srv) SKT_IF_L=vc0 SKT_IF_S=vs0
	skt_ns_add "$SKT_NS_L" || return 1
	skt_ns_add "$SKT_NS_S" || return 1
	skt_veth "$SKT_NS_L" vc0 "$SKT_NS_S" vs0 || return 1
	if [ "$offloads" = off ]; then
		skt_offloads_off "$SKT_NS_L" vc0 || return 1
		skt_offloads_off "$SKT_NS_S" vs0 || return 1
	fi
	ip -n "$SKT_NS_L" addr add "$SKT_LINUX_IP/24" dev vc0 || return 1
	if [ -n "$srv_addr" ]; then ip -n "$SKT_NS_S" addr add "$srv_addr" dev vs0 || return 1; fi
	ip -n "$SKT_NS_L" link set vc0 up || return 1
	ip -n "$SKT_NS_S" link set vs0 up
}

# skt_topo_relay KIND: tests/tcp.sh's three namespaces, offloads off on
# every veth/TAP end:
#   cli (SKT_NS_L): vc0 198.18.0.1/24
#     | veth
#   mid (SKT_NS_M): vm0 ---- br0, or skiff impair ---- X
#   KIND tap:         X = the TAP sk0; skiff runs in mid (SKT_NS_S = SKT_NS_M)
#   KIND packet, xdp: X = vm1, a veth to srv (SKT_NS_S), whose vs0 skiff owns
# SKT_RELAY_A/B name vm0 and X.  It starts bridged (a clean wire).
skt_topo_relay() {
	local kind=$1 i
	SKT_NS_L=$(skt_ns_name cli) SKT_NS_M=$(skt_ns_name mid) SKT_IF_L=vc0
	SKT_RELAY_A=vm0
	skt_ns_add "$SKT_NS_L" || return 1
	skt_ns_add "$SKT_NS_M" || return 1
	skt_veth "$SKT_NS_L" vc0 "$SKT_NS_M" vm0 || return 1
	if [ "$kind" = tap ]; then
		SKT_NS_S=$SKT_NS_M SKT_IF_S=sk0 SKT_RELAY_B=sk0
		skt_tap "$SKT_NS_M" sk0 || return 1
	else
		SKT_NS_S=$(skt_ns_name srv) SKT_IF_S=vs0 SKT_RELAY_B=vm1
		skt_ns_add "$SKT_NS_S" || return 1
		skt_veth "$SKT_NS_M" vm1 "$SKT_NS_S" vs0 || return 1
		skt_offloads_off "$SKT_NS_S" vs0 || return 1
		ip -n "$SKT_NS_S" link set vs0 up || return 1
	fi
	skt_offloads_off "$SKT_NS_L" vc0 || return 1
	for i in vm0 "$SKT_RELAY_B"; do
		skt_offloads_off "$SKT_NS_M" "$i" || return 1
	done
	ip -n "$SKT_NS_M" link add br0 type bridge forward_delay 0 stp_state 0 || return 1
	for i in vm0 "$SKT_RELAY_B"; do
		ip -n "$SKT_NS_M" link set "$i" master br0 || return 1
		ip -n "$SKT_NS_M" link set "$i" up || return 1
	done
	ip -n "$SKT_NS_M" link set br0 up || return 1
	ip -n "$SKT_NS_L" addr add "$SKT_LINUX_IP/24" dev vc0 || return 1
	ip -n "$SKT_NS_L" link set vc0 up
}

# skt_relay_start LOG ARGS...: take mid's two ports off the bridge and
# relay frames between them through `skiff impair` ARGS (both directions
# impaired; src/cmd/impair.c), the skiff binary being SKT_RELAY_BIN
# (default: the calling script's $BIN).  SKT_RELAY=py runs the old
# tests/tcp_impair.py instead (same flags and output lines; kept to compare
# the relays' cost, bench/bench_tcp.sh).  Returns 1 if it is not ready
# within 2.5 s, with the ports back on the bridge.
skt_relay_start() {
	local log=$1 i
	shift
	skt_relay_stop
	for i in "$SKT_RELAY_A" "$SKT_RELAY_B"; do ip -n "$SKT_NS_M" link set "$i" nomaster; done
	if [ "${SKT_RELAY:-c}" = py ]; then
		ip netns exec "$SKT_NS_M" python3 "$SKT_HERE/tcp_impair.py" --a "$SKT_RELAY_A" \
			--b "$SKT_RELAY_B" "$@" >"$log" 2>&1 &
	else
		ip netns exec "$SKT_NS_M" "${SKT_RELAY_BIN:-$BIN}" impair --a "$SKT_RELAY_A" --b "$SKT_RELAY_B" \
			"$@" >"$log" 2>&1 &
	fi
	SKT_RELAY_PID=$!
	for ((i = 0; i < 50; i++)); do
		grep -q 'relay: ready' "$log" 2>/dev/null && return 0
		sleep 0.05
	done
	skt_relay_stop
	return 1
}

# skt_relay_stop: stop the relay, if one runs, and put mid's ports back on
# the bridge; the Linux peer forgets its neighbours (a clean restart).
skt_relay_stop() {
	local i
	[ -n "$SKT_RELAY_PID" ] || return 0
	skt_stop_pid "$SKT_RELAY_PID"
	SKT_RELAY_PID=
	for i in "$SKT_RELAY_A" "$SKT_RELAY_B"; do ip -n "$SKT_NS_M" link set "$i" master br0; done
	ip -n "$SKT_NS_L" neigh flush dev "$SKT_IF_L" 2>/dev/null
	return 0
}

# ---- address family ---------------------------------------------------
# One switch for every client/server script: the same checks over IPv4 or
# IPv6.  A script calls skt_family FAMILY once (its FAMILY variable, e.g.
# tests/tls.sh's SKT_FAMILY), builds its topology as before, then calls
# skt_family_up KIND; every client is pointed at SKT_SRV / SKT_HOST.

# skt_family [FAMILY]: 4 or 6 (default: SKT_FAMILY from the environment,
# else 4; anything else: status 1) into SKT_FAMILY, SKT_SRV, SKT_CLI and
# SKT_HOST.
skt_family() {
	case ${1:-$SKT_FAMILY} in
	4) SKT_FAMILY=4 SKT_SRV=$SKT_SKIFF_IP SKT_CLI=$SKT_LINUX_IP SKT_HOST=$SKT_SKIFF_IP ;;
	6) SKT_FAMILY=6 SKT_SRV=$SKT_SKIFF_IP6 SKT_CLI=$SKT_LINUX_IP6 SKT_HOST="[$SKT_SKIFF_IP6]" ;;
	*) return 1 ;;
	esac
}

# skt_v6_on NS IF ADDR/LEN: IPv6 on for IF (skt_ns_add turns it off), no
# DAD or router solicitations of Linux's own, and ADDR usable at once.
skt_v6_on() {
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=0" "net.ipv6.conf.$2.accept_dad=0" \
		"net.ipv6.conf.$2.router_solicitations=0" &&
		ip -n "$1" -6 addr add "$3" dev "$2" nodad
}

# skt_family_up KIND: after a skt_topo_*, the family's addresses.  Over
# IPv6 the client's interface (SKT_NS_L's SKT_IF_L) gets SKT_CLI/64, and
# the server SKT_SRV/64: on SKT_IF_S in Linux for KIND linux (a Linux
# server there), as SKT_SERVE6=(--ip6 SKT_SRV/64) for KIND skiff.  Over
# IPv4 nothing changes (the topology has the addresses); SKT_SERVE6=().
skt_family_up() {
	SKT_SERVE6=()
	[ "$SKT_FAMILY" = 6 ] || return 0
	skt_v6_on "$SKT_NS_L" "$SKT_IF_L" "$SKT_CLI/64" || return 1
	if [ "$1" = linux ]; then
		skt_v6_on "$SKT_NS_S" "$SKT_IF_S" "$SKT_SRV/64"
	else
		SKT_SERVE6=(--ip6 "$SKT_SRV/64")
	fi
}

# skt_neigh_flush NS IF: forget IF's neighbours of both families (a
# restarted skiff has a new random MAC).
skt_neigh_flush() {
	ip -n "$1" neigh flush dev "$2" 2>/dev/null
	ip -n "$1" -6 neigh flush dev "$2" 2>/dev/null
	return 0
}

# ---- processes --------------------------------------------------------

# skt_stop_pid PID: SIGTERM, then SIGKILL after 3 s; nothing if PID is empty.
skt_stop_pid() {
	[ -n "${1:-}" ] || return 0
	kill -TERM "$1" 2>/dev/null
	skt_wait_exit "$1" 3 || { kill -KILL "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
	return 0
}

# skt_stop_counters CHECK PID OUT ERR: SIGTERM to a skiff command started
# with --stats, then its "NAME VALUE" counter lines from OUT into the
# caller's associative array ST (declare -A ST at the top of the script).
# Passes CHECK on exit 0 with at least one counter; fails it otherwise (a
# process still running after 10 s is killed).  Status 0 on pass.
skt_stop_counters() {
	local check=$1 pid=$2 out=$3 err=$4 k v n=0
	ST=()
	kill -TERM "$pid" 2>/dev/null
	if ! skt_wait_exit "$pid" 10; then
		fail "$check" "still running 10 s after SIGTERM"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 1
	fi
	while read -r k v _; do
		[[ $k =~ ^[A-Za-z0-9_.]+$ && $v =~ ^[0-9]+$ ]] && { ST[$k]=$v; n=$((n + 1)); }
	done <"$out"
	if [ "$SKT_RC" != 0 ] || [ "$n" -eq 0 ]; then
		fail "$check" "exit $SKT_RC (want 0), $n counters; stderr: $(tail -n 3 "$err" | tr '\n' ' ')"
		return 1
	fi
	pass "$check (exit 0, $n counters)"
}

# skt_sum_counters RE: SUM_TOTAL = the sum of the ST counters whose names
# match RE; SUM_DETAIL = the nonzero ones, " name=value ...".
skt_sum_counters() {
	local re=$1 k total=0
	SUM_DETAIL=
	for k in "${!ST[@]}"; do
		if [[ $k =~ $re ]]; then
			total=$((total + ST[$k]))
			[ "${ST[$k]}" -gt 0 ] && SUM_DETAIL+=" $k=${ST[$k]}"
		fi
	done
	SUM_TOTAL=$total
}

# skt_reasons_check NAME OUTPUT GROUPS [every]: a malformed-frame tool's
# "... kinds: kind=N ..." OUTPUT against ST.  GROUPS names an array of
# "kind kind ... : counter counter ..."; each group's counters must sum to
# at least 95% of its kinds (a counter may also collect other kinds: random
# bytes land anywhere).  "every": a group none of whose kinds was sent
# fails too.
skt_reasons_check() {
	local name=$1 out=$2 every=${4:-} g kinds ctrs k c want have short=""
	local -n groups=$3
	declare -A sent_kind=()
	for k in ${out##*kinds: }; do sent_kind[${k%%=*}]=${k#*=}; done
	for g in "${groups[@]}"; do
		kinds=${g%% : *} ctrs=${g#* : } want=0 have=0
		for k in $kinds; do want=$((want + ${sent_kind[$k]:-0})); done
		for c in $ctrs; do have=$((have + ${ST[$c]:-0})); done
		[ -n "$every" ] && [ "$want" -eq 0 ] && short+=" [$kinds] none sent;"
		[ $((have * 100)) -ge $((want * 95)) ] || short+=" [$kinds] sent $want, [$ctrs] counted $have;"
	done
	if [ -z "$short" ]; then pass "$name (each kind counted under its reason)"; else fail "$name" "short:$short"; fi
}

# skt_descendants PID: PID's children, grandchildren, ... (e.g. timeout ->
# ip netns exec -> skiff, or timeout -> skiff vm -> QEMU), parents first.
skt_descendants() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do
		echo "$c"
		skt_descendants "$c"
	done
}

# skt_descendant PID COMM: the first descendant of PID whose /proc comm is
# COMM (e.g. qemu-system-x86, skiff); status 1 if none.
skt_descendant() {
	local p
	for p in $(skt_descendants "$1"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && { echo "$p"; return 0; }
	done
	return 1
}

# skt_kill_tree PID...: each PID and its descendants, deepest first.
skt_kill_tree() {
	local p c
	for p in "$@"; do
		for c in $(skt_descendants "$p" | tac); do kill "$c" 2>/dev/null; done
		kill "$p" 2>/dev/null
	done
}

# skt_wait_exit PID SECONDS: wait for PID (a child of this shell) to exit;
# sets SKT_RC to its exit status and returns 0, or returns 1 if it still
# runs.  Not in a $(...) subshell (wait only sees this shell's children).
skt_wait_exit() {
	local pid=$1 secs=$2 i rc
	SKT_RC=
	for ((i = 0; i < secs * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		return 1
	fi
	wait "$pid" 2>/dev/null
	rc=$?
	# shellcheck disable=SC2034  # read by the caller
	SKT_RC=$rc
	return 0
}

# skt_wait_ready FILE PID SECONDS: wait until FILE holds the ready line.
# Returns 1 if PID died or the time ran out.
skt_wait_ready() {
	local file=$1 pid=$2 secs=$3 i
	for ((i = 0; i < secs * 20; i++)); do
		grep -q '^skiff echo: ready' "$file" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# The MAC from the ready line (mac=XX:..), or the first MAC-looking word.
skt_ready_mac() {
	local line
	line=$(grep -m1 '^skiff echo: ready' "$1")
	if [[ $line =~ mac=([0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}) ]]; then
		printf '%s\n' "${BASH_REMATCH[1]}"
	elif [[ $line =~ ([0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}) ]]; then
		printf '%s\n' "${BASH_REMATCH[1]}"
	fi
}

# skt_wait_for SECONDS CMD...: run CMD every 0.05 s until it succeeds
# (status 0) or SECONDS (a decimal like 2.5 is fine) have passed (status 1).
# For what can be polled -- a line in a log, a port, a file -- instead of a
# fixed sleep that is either too short on a loaded machine or too long
# everywhere else.
skt_wait_for() {
	local secs=$1 i n
	shift
	n=$(awk -v s="$secs" 'BEGIN { printf "%d", s * 20 + 0.5 }')
	for ((i = 0; i <= n; i++)); do
		"$@" && return 0
		[ "$i" -lt "$n" ] && sleep 0.05
	done
	return 1
}

# skt_free_port [tcp|udp]: a port on 127.0.0.1 that is free now (the
# kernel's pick; tcp when not said; STREAM/SOCK_STREAM and DGRAM/SOCK_DGRAM
# are read as tcp and udp).  Another process may take it before the caller
# binds it: for test ports, never for anything that must not collide.
skt_free_port() {
	python3 -c 'import socket, sys
k = sys.argv[1].lower().replace("sock_", "")
t = socket.SOCK_DGRAM if k in ("udp", "dgram") else socket.SOCK_STREAM
s = socket.socket(socket.AF_INET, t)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])' "${1:-tcp}"
}

# skt_log_has FILE PATTERN: a line of FILE (read as text, even with binary
# bytes in it, as a serial console has) matches the basic regex PATTERN.
skt_log_has() { grep -aq -- "$2" "$1" 2>/dev/null; }

# skt_wait_log FILE PATTERN SECONDS: skt_log_has within SECONDS (status 0),
# else status 1.
skt_wait_log() { skt_wait_for "$3" skt_log_has "$1" "$2"; }

# skt_listens PORT [PREFIX...]: a TCP socket listens on PORT, as `ss` run
# after PREFIX sees it (e.g. ip netns exec NS; none: this namespace).
skt_listens() {
	local port=$1 filter out
	shift
	filter="( sport = :$port )"
	out=$("$@" ss -Hltn "$filter" 2>/dev/null)
	[ -n "$out" ]
}

# ---- skiff serve on a target ------------------------------------------
# The start/stop code of the scripts that run `skiff serve` under clients
# (tests/http.sh, smp.sh, metrics.sh, ops.sh, tls.sh).  They work on the
# caller's variables, which those scripts all name alike:
#   reads  BIN (skiff), WORK (the log folder), TGT (the target), URL (what
#          a client first fetches), SERVE_WRAP (optional: a command and its
#          words put before BIN, e.g. setpriv ...)
#   sets   NS_C, NS_S, IF_C (the clients' and the server's namespaces, the
#          clients' interface), SERVE (serve's stack arguments), SRV_PID,
#          SRV_LOG ($WORK/TARGET-NAME.log: stdout and stderr), STOP_MS
#
# skt_targets "TARGET..." ARG...: the targets a script was asked for (ARGs;
#   none: all of the first word's, in its order) into TARGETS; one not in
#   the list is the caller's usage error (its usage(), which exits 2).
# skt_work_traps KEEP WHAT: on exit (INT: status 130, TERM: 143)
#   skt_cleanup, then WORK is removed if nothing failed and the variable
#   named KEEP (e.g. HTTP_KEEP_LOGS; "" for none) is empty, or else kept
#   with a line "SUITE: WHAT kept in WORK".
# skt_serve_target ADDR: the topology of TGT -- linux (veth cli/srv with
#   ADDR/24 on srv's vs0 in Linux, offloads on), skiff:tap (one namespace,
#   a TAP; multi-queue with SKT_TAP_MQ=1), skiff:packet or skiff:xdp (veth,
#   offloads off, skiff owns vs0; SKT_VETH_QUEUES=N queues) -- then the
#   family's addresses (skt_family_up) and SERVE: --stack linux, or
#   --stack skiff --dev KIND:IF --ip ADDR/24 (and --ip6 over IPv6).
# skt_client_sysctls: many short connections from one client address
#   (tcp_tw_reuse, ports 1024-65000) in NS_C.
# skt_serve_launch NAME ARGS...: `BIN serve SERVE... ARGS...` in NS_S, in
#   the background, logged to SRV_LOG; SRV_PID joins SKT_PIDS.
# skt_serve_listening [SECONDS]: until the "skiff serve: listening" line
#   (default 10 s); 1 if the server died or the time ran out.
# skt_serve_answer SECONDS CURL-ARGS...: forget NS_C's neighbours (a
#   restarted skiff has a new random MAC), then curl CURL-ARGS (the URL
#   among them) from NS_C every 0.1 s until it answers; 1 if the server
#   died or SECONDS ran out.
# skt_serve_start NAME ARGS...: the three above, a failed NAME.start said
#   (no listening line in 10 s, or no answer to curl URL in 5 s).
# skt_serve_stop SIGNAL SECONDS: SIGNAL to SRV_PID, wait; 0 with SKT_RC
#   and STOP_MS (how long it took) once it exited, 1 (killed) if it still
#   ran after SECONDS.
# skt_serve_exit CHECK SIGNAL SECONDS: skt_serve_stop, failing CHECK if it
#   did not exit in time or exited non-zero (with the log's last lines);
#   status 0 on a clean exit (the caller passes CHECK, maybe after more).
# skt_serve_tail: SRV_LOG's last 3 lines that are not counters, one line.
# skt_idle_ticks SECONDS: the CPU ticks (utime+stime, /proc/SRV_PID/stat)
#   the server used over SECONDS, after a 1 s settle; into IDLE_TICKS, and
#   the clock's ticks a second into IDLE_HZ.  Status 0 under 1 % of a core.

skt_targets() {
	local all t
	read -r -a all <<<"$1"
	shift
	TARGETS=("$@")
	[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${all[@]}")
	for t in "${TARGETS[@]}"; do
		[[ " ${all[*]} " == *" $t "* ]] || { echo "$0: unknown target '$t'" >&2; usage; }
	done
}

skt_work_traps() {
	SKT_KEEP_VAR=$1 SKT_KEEP_WHAT=$2
	trap skt_work_exit EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
skt_work_exit() {
	local keep=
	skt_cleanup
	[ -n "$SKT_KEEP_VAR" ] && keep=${!SKT_KEEP_VAR:-}
	if [ "$SKT_FAILED" -eq 0 ] && [ -z "$keep" ]; then
		rm -rf "$WORK"
	else
		echo "$SKT_SUITE: $SKT_KEEP_WHAT kept in $WORK"
	fi
}

skt_serve_target() {
	local addr=$1
	skt_cleanup_stale
	case $TGT in
	linux) skt_topo_veth on "$addr/24" ;;
	skiff:tap) skt_topo_tap tap sk0 ;;
	skiff:packet | skiff:xdp) skt_topo_veth off "" ;;
	*) return 1 ;;
	esac || return 1
	NS_C=$SKT_NS_L NS_S=$SKT_NS_S IF_C=$SKT_IF_L
	case $TGT in
	linux) SERVE=(--stack linux) ;;
	*) SERVE=(--stack skiff --dev "${TGT#skiff:}:$SKT_IF_S" --ip "$addr/24") ;;
	esac
	skt_family_up "${TGT%%:*}" || return 1
	SERVE+=("${SKT_SERVE6[@]}")
}

skt_client_sysctls() {
	ip netns exec "$NS_C" sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse;
		echo "1024 65000" > /proc/sys/net/ipv4/ip_local_port_range'
}

skt_serve_launch() {
	local name=$1
	shift
	SRV_LOG=$WORK/${TGT/:/-}-$name.log
	# shellcheck disable=SC2086 # SERVE_WRAP: a command and its words
	ip netns exec "$NS_S" ${SERVE_WRAP:-} "$BIN" serve "${SERVE[@]}" "$@" >"$SRV_LOG" 2>&1 &
	SRV_PID=$!
	SKT_PIDS+=("$SRV_PID")
}

# skt_serve_up: the listening line is there, or the server is gone (no
# use waiting longer); skt_serve_listening's poll.
skt_serve_up() { grep -q '^skiff serve: listening' "$SRV_LOG" 2>/dev/null || ! kill -0 "$SRV_PID" 2>/dev/null; }
skt_serve_listening() {
	skt_wait_for "${1:-10}" skt_serve_up
	grep -q '^skiff serve: listening' "$SRV_LOG" 2>/dev/null
}

skt_serve_answer() {
	local secs=$1 i
	shift
	skt_neigh_flush "$NS_C" "$IF_C"
	for ((i = 0; i < secs * 10; i++)); do
		timeout 10 ip netns exec "$NS_C" curl -s -o /dev/null --max-time 1 "$@" && return 0
		kill -0 "$SRV_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

skt_serve_start() {
	local name=$1
	shift
	skt_serve_launch "$name" "$@"
	if ! skt_serve_listening 10; then
		fail "$name.start" "server did not come up: $(skt_serve_tail)"
		return 1
	fi
	skt_serve_answer 5 "$URL" && return 0
	fail "$name.start" "listening, but no answer to curl within 5 s: $(skt_serve_tail)"
	return 1
}

skt_serve_stop() {
	local sig=$1 secs=$2 t0 i
	t0=$(date +%s%N)
	kill "-$sig" "$SRV_PID" 2>/dev/null
	if ! skt_wait_exit "$SRV_PID" "$secs"; then
		kill -KILL "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
		SKT_RC=
	fi
	STOP_MS=$((($(date +%s%N) - t0) / 1000000))
	for i in "${!SKT_PIDS[@]}"; do
		[ "${SKT_PIDS[$i]}" = "$SRV_PID" ] && unset 'SKT_PIDS[i]'
	done
	[ -n "$SKT_RC" ]
}

skt_serve_exit() {
	local check=$1 sig=$2 secs=$3
	if ! skt_serve_stop "$sig" "$secs"; then
		fail "$check" "still running $secs s after SIG$sig"
		return 1
	fi
	if [ "$SKT_RC" -ne 0 ]; then
		fail "$check" "exit status $SKT_RC: $(skt_serve_tail)"
		return 1
	fi
	return 0
}

skt_serve_tail() { grep -v '^[a-z_.0-9]* [0-9]*$' "$SRV_LOG" | tail -n 3 | tr '\n' ' '; }

skt_idle_ticks() {
	local secs=$1 t0 t1
	IDLE_HZ=$(getconf CLK_TCK)
	sleep 1 # the load's last connections close
	t0=$(awk '{print $14 + $15}' "/proc/$SRV_PID/stat")
	sleep "$secs" # the window measured: nothing to poll
	t1=$(awk '{print $14 + $15}' "/proc/$SRV_PID/stat")
	IDLE_TICKS=$((t1 - t0))
	[ $((IDLE_TICKS * 100)) -lt $((IDLE_HZ * secs)) ]
}

# skt_chromium_dom SECS URL PROFILE DOM ERR: headless Chromium loads URL
# and dumps the DOM its scripts leave into DOM (its stderr into ERR),
# bounded by timeout SECS; returns Chromium's exit status (124: the
# timeout).  No sandbox (it refuses to run as root with one), PROFILE as
# its own fresh profile, a self-signed certificate taken, and nothing of
# its own on the network: no background fetches or updates, and every name
# but localhost resolving to nothing.  The caller runs it in a network
# namespace of its own (unshare -n) as well (tests/h2_chromium.sh,
# tests/vm_h2.sh).
skt_chromium_dom() {
	local secs=$1 url=$2 profile=$3 dom=$4 err=$5
	timeout "$secs" chromium --headless=new --no-sandbox --disable-gpu --ignore-certificate-errors \
		--user-data-dir="$profile" --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --disable-default-apps --disable-extensions \
		--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE localhost" \
		--dump-dom "$url" >"$dom" 2>"$err"
}

# skt_check_bin BIN: a clear message when the binary is missing.
skt_check_bin() {
	local bin=$1
	if [ -z "$bin" ]; then
		skt_log "usage: $0 path/to/skiff"
		return 1
	fi
	if [ ! -x "$bin" ]; then
		skt_log "$0: '$bin' is not an executable file (build it first: make)"
		return 1
	fi
	if [ "$(id -u)" -ne 0 ]; then
		skt_log "$0: needs root (network namespaces, TAP, AF_PACKET, AF_XDP)"
		return 1
	fi
	if ! command -v ip >/dev/null 2>&1; then
		skt_log "$0: needs 'ip' (iproute2)"
		return 1
	fi
	return 0
}
