# shellcheck shell=bash
# lib.sh — shared helpers for skiff's namespace tests (tests/integration.sh,
# tools/run.sh).  Source it; it defines functions only (plus SKT_* defaults).
#
# Safety rules these helpers enforce:
#   - every namespace is named "skt-<pid of the creating script>-<role>";
#     skt_cleanup_stale removes leftovers whose creating pid is dead;
#   - addresses come from 198.18.0.0/15 only and are only ever set inside
#     namespaces created here: nothing is added in the root namespace (veth
#     pairs are created directly inside their namespaces);
#   - skt_cleanup (call it from a trap on EXIT INT TERM) stops the skiff
#     processes started here, by pid, and deletes this run's namespaces.

# shellcheck disable=SC2034  # used by the scripts that source this file
{
SKT_PREFIX=${SKT_PREFIX:-skt}
SKT_LINUX_IP=198.18.0.1
SKT_SKIFF_IP=198.18.0.2
SKT_PLEN=${SKT_PLEN:-24}

SKT_NAMESPACES=()  # created by this run, deleted by skt_cleanup
SKT_PIDS=()        # processes started by this run, stopped by skt_cleanup
SKT_RC=            # exit status set by skt_wait_exit
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
	local ns=$1 i
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
	local ns=$1 ifn=$2 here
	here=$(dirname "${BASH_SOURCE[0]}")
	if command -v ethtool >/dev/null 2>&1; then
		ip netns exec "$ns" ethtool -K "$ifn" tx off rx off tso off gso off gro off >/dev/null 2>&1 ||
			ip netns exec "$ns" ethtool -K "$ifn" tx off rx off tso off gso off >/dev/null 2>&1
	else
		ip netns exec "$ns" python3 "$here/offload_off.py" "$ifn"
	fi
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
