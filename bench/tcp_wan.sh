#!/usr/bin/env bash
# tcp_wan.sh BIN [grid|relay-cpu] — make bench-tcp: skiff's TCP against
# Linux's through the same impairing relay (skiff impair), alternating at
# every repetition, medians of BENCH_TCP_REPS.
#
# Topology (tests/lib.sh skt_topo_relay packet; offloads off everywhere):
#   cli ns: vc0 198.18.0.1 — Linux, CUBIC: the fixed peer (tests/tcp_echo.py --cc):
#           an echo server (port 7007) and a sink (port 7009)
#   mid ns: vm0 ---- skiff impair --delay D --loss L (both directions) ---- vm1
#   srv ns: vs0 198.18.0.2 — the stack under test, one at a time:
#     skiff        skiff echo / skiff tcp-client --dev packet:vs0 (CUBIC;
#                  buffers sized by the path, --tcp-buf-max 4M)
#     skiff-bbr    the same with --tcp-cc bbr (skiff's BBR v1, paced)
#     skiff-fixed  the same with --tcp-buf-max 0: the fixed buffers of before
#     linux-cubic  tests/tcp_echo.py on vs0's kernel address, CUBIC or BBR
#     linux-bbr    per socket (TCP_CONGESTION: this kernel allows only reno
#                  and bbr in a namespace's sysctl)
# Roles, each an echo of BYTES with sha256 compared end to end, so the stack
# under test both sends and receives every byte:
#   server  cli's tcp_echo.py client -> the stack's echo server (port 7)
#   client  the stack's client (skiff tcp-client / tcp_echo.py client) ->
#           cli's tcp_echo.py server (port 7007)
#   send    one way, as issue 37 compares BBRs: the stack under test sends
#           BYTES to cli's sink (skiff tcp-client without --expect-echo /
#           tcp_echo.py send), which answers with the sha256 of what it
#           got, compared with the sender's.  The seconds are the sink's,
#           from accept to EOF, the same clock whichever stack sends.
#           The sink's kernel counters (cli's namespace, Tcp and TcpExt) are
#           kept per send run, those that moved: OUT/traces/*-send-REP.rcv
#           ("name delta" lines: TCPOFOQueue, TCPDSACKOldSent and
#           TCPDSACKOfoSent for the duplicates it got, PruneCalled, ...).
# Goodput = BYTES / seconds (one direction's payload).  The congestion
# control that matters is the sender's: the stack under test's in client and
# send, Linux's CUBIC in server (where skiff-bbr and linux-bbr only pace the
# echo back).  Retransmissions per
# mechanism: skiff's --stats counters; Linux's Tcp/TcpExt counters of srv's
# namespace (/proc/net/snmp, /proc/net/netstat) before and after.
#
# Parameters (environment):
#   BENCH_TCP_GRID    quick (default: bounded, about 6-8 minutes here) or full
#                     (the issue's grid, medians of 3: hours).  It sets the
#                     defaults of the next five; each can still be given.
#                              quick              full
#   BENCH_TCP_DELAYS  one-way delays in ms        "1 10 25 50"       "1 10 25 50"
#   BENCH_TCP_LOSSES  loss in % each way          "0 1"              "0 0.1 1 2"
#   BENCH_TCP_MIB     MiB per transfer, no loss   20                 20
#   BENCH_TCP_LOSSY_MIB  MiB per transfer, loss   4                  20
#   BENCH_TCP_REPS    repetitions (median)        1                  3
#   BENCH_TCP_STACKS  (default "skiff skiff-bbr skiff-fixed linux-cubic linux-bbr")
#   BENCH_TCP_ROLES   (default "server client send")
#   BENCH_TCP_TIMEOUT seconds per transfer        (default 300)
#   BENCH_TCP_SEED    the relay's base seed (default 1).  The relay restarts
#                     before every transfer with --seed from (base, delay,
#                     loss, rep, role): every stack of a repetition meets the
#                     same losses at the same frames of each direction, and
#                     each repetition other ones (the seed is in runs.tsv).
#                     Before 2026-12-06 one relay, seed 0, served a whole
#                     cell or job, so the first stack of each one met the same
#                     losses in every repetition and the others what followed
#   BENCH_TCP_IMPAIR  more of skiff impair's options for every cell's relay
#                     (default none), e.g. "--rate 100 --limit 400": a
#                     bottleneck with a drop-tail queue, where a sender's
#                     overshoot loses segments in bursts (a receiver then
#                     holds many holes at once), not one at random
#   BENCH_TCP_JOBS    K: run up to K jobs of the grid at once (default 1: every
#                     cell in turn, as before).  With K > 1 the grid has two
#                     phases.  Parallel: every cell not in BENCH_TCP_SERIAL is
#                     cut into jobs of one repetition and one role (the stacks
#                     still alternate inside each job), longest first (RTT x
#                     sqrt(loss), Mathis), each job a child of its own with its
#                     own three namespaces (skt-<its pid>-*), its own relay and
#                     its own subnet 198.18.N.0/24 (N = the job's number), under
#                     nice -n BENCH_TCP_NICE (default 10).  Serial, after it:
#                     the cells of BENCH_TCP_SERIAL one at a time, nothing else
#                     of the grid running, not niced, each under BENCH_TCP_LOCK.
#                     A paced sender (skiff-bbr) loses rate to late wake-ups
#                     under that load (2026-12-06, one way, 12 lossy cells:
#                     0.11-1.41x Linux BBR in 12 parallel jobs, 0.70-1.50x
#                     one cell at a time): measure it with JOBS=1, as
#                     bench/tcp_ab.sh does.
#   BENCH_TCP_SERIAL  "DELAY:LOSS ..." cells that run alone (default: every
#                     0 % cell, CPU-bound here, and every 1 ms cell).  At 1 ms
#                     a round trip is 2 ms and a wake-up late by a few ms under
#                     the parallel load costs a whole round: a stack in a user
#                     process (skiff) pays it, the kernel's stack does not
#                     (2026-12-06, 1 ms at 1-2 %, skiff against Linux CUBIC:
#                     0.54-0.64x in parallel, srtt 10-18 ms; 0.99-1.14x
#                     alone).  The rest are bound by delay and loss and use a
#                     few % of a core each
#   BENCH_TCP_LOCK    a lock file (e.g. /tmp/skiff-nettest.lock; default none).
#                     JOBS=1: taken once per grid cell (so other users of the
#                     namespaces wait at most one cell).  JOBS>1: taken only by
#                     the serial cells; the parallel jobs share nothing with
#                     other scripts (names from their own pids, no loopback)
#   BENCH_TCP_OUT     results folder (default bench/results/tcp-DATE)
#   BENCH_TCP_PCAP    1: capture every transfer at srv's vs0, headers only
#                     (96 bytes a frame), as OUT/pcap/DELAY-LOSS-STACK-ROLE-
#                     REP.pcap: both directions as the stack under test sees
#                     them (bench/tcp_pcap_flow.py sums them by interval).  Off by default
# Output: OUT/runs.tsv (every run, failures included), OUT/table.md and
# OUT/goodput.png (bench/tcp_wan_report.py); for every send run and
# skiff's client runs, OUT/traces/DELAY-LOSS-STACK-ROLE-REP.tsv, its
# connection every 10 ms:
# skiff's from tcp-client --tcp-trace (cwnd, ssthresh, pipe, windows, send
# buffer, RTT, pacing rate, bytes acked), Linux's from tcp_echo.py send
# --trace (TCP_INFO, what ss -ti shows: cwnd, ssthresh, pipe, RTT, pacing
# and delivery rates, bytes acked); and OUT/trace-DELAY-LOSS.png, the
# traces of each cell side by side (bench/tcp_trace_plot.py).
#
# relay-cpu: the relay's own cost, the old Python relay (SKT_RELAY=py)
# against skiff impair, alternating: BENCH_TCP_MIB (20) echoed to skiff echo
# through --delay 5 both ways, the relay's utime+stime from /proc/PID/stat.
# BENCH_TCP_RELAYS="c" runs only skiff impair, BENCH_TCP_RELAY_ARGS other
# impairments (e.g. "--rate 20": Python has no --rate).
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../tests/lib.sh"
SKT_SUITE=bench-tcp
export PYTHONDONTWRITEBYTECODE=1
TESTS=$here/../tests

BIN=${1:-}
MODE=${2:-grid}
[ -n "$BIN" ] && [ -x "$BIN" ] || { echo "usage: $0 path/to/skiff [grid|relay-cpu]" >&2; exit 2; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

GRID=${BENCH_TCP_GRID:-quick}
case $GRID in
quick) g_losses="0 1" g_lossy=4 g_reps=1 ;;
full) g_losses="0 0.1 1 2" g_lossy=20 g_reps=3 ;;
*) echo "BENCH_TCP_GRID: quick or full, not '$GRID'" >&2; exit 2 ;;
esac
DELAYS=${BENCH_TCP_DELAYS:-"1 10 25 50"}
LOSSES=${BENCH_TCP_LOSSES:-$g_losses}
MIB=${BENCH_TCP_MIB:-20}
LOSSY_MIB=${BENCH_TCP_LOSSY_MIB:-$g_lossy}
REPS=${BENCH_TCP_REPS:-$g_reps}
STACKS=${BENCH_TCP_STACKS:-"skiff skiff-bbr skiff-fixed linux-cubic linux-bbr"}
ROLES=${BENCH_TCP_ROLES:-"server client send"}
for s in $STACKS; do
	case $s in skiff | skiff-bbr | skiff-fixed | linux-cubic | linux-bbr) ;;
	*) echo "BENCH_TCP_STACKS: skiff, skiff-bbr, skiff-fixed, linux-cubic or linux-bbr, not '$s'" >&2; exit 2 ;;
	esac
done
for r in $ROLES; do
	case $r in server | client | send) ;;
	*) echo "BENCH_TCP_ROLES: server, client or send, not '$r'" >&2; exit 2 ;;
	esac
done
TMO=${BENCH_TCP_TIMEOUT:-300}
SEED=${BENCH_TCP_SEED:-1}
[[ $SEED =~ ^[0-9]+$ ]] || { echo "BENCH_TCP_SEED: a number, not '$SEED'" >&2; exit 2; }
JOBS=${BENCH_TCP_JOBS:-1}
NICE=${BENCH_TCP_NICE:-10}
if [ -z "${BENCH_TCP_SERIAL+x}" ]; then
	SERIAL=
	for d in $DELAYS; do
		for l in $LOSSES; do
			if [ "$l" = 0 ] || [ "$d" = 1 ]; then SERIAL+="$d:$l "; fi
		done
	done
else
	SERIAL=$BENCH_TCP_SERIAL
fi
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || { echo "BENCH_TCP_JOBS: a positive count, not '$JOBS'" >&2; exit 2; }
# A job's subnet (BENCH_TCP_NET, set by the parallel phase): 198.18.N.0/24
# inside its own namespaces, so no two jobs' addresses are alike even in
# captures or logs.
if [ -n "${BENCH_TCP_NET:-}" ]; then
	SKT_LINUX_IP=198.18.$BENCH_TCP_NET.1 SKT_SKIFF_IP=198.18.$BENCH_TCP_NET.2
fi
PHASE=${BENCH_TCP_PHASE:-serial}
OUT=${BENCH_TCP_OUT:-$here/results/tcp-$(date -u +%F)}
BYTES=$((MIB << 20))
PORT_C=7007
PORT_SINK=7009

# ---- one cell: a topology of its own, REPS x stacks x roles ----------------

WORK=
SK_PID= SRV_PID= CSRV_PID= SINK_PID= CAP_PID=
cell_cleanup() {
	skt_stop_pid "$CAP_PID"
	skt_stop_pid "$SK_PID"
	skt_stop_pid "$SRV_PID"
	skt_stop_pid "$CSRV_PID"
	skt_stop_pid "$SINK_PID"
	skt_cleanup
	[ -n "$WORK" ] && rm -rf "$WORK"
}

# cpu_ticks PID: utime + stime in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# ns_ext NS: "name value" per Tcp and TcpExt counter of NS's kernel.
ns_ext() {
	ip netns exec "$1" awk '/^(Tcp|TcpExt):/ { if (!($1 in h)) { h[$1] = 1; for (i = 2; i <= NF; i++) n[i] = $i }
		else for (i = 2; i <= NF; i++) print n[i], $i }' /proc/net/snmp /proc/net/netstat
}

# linux_ctrs NS: "retrans rto fast sack_rec tlp tlp_rec undo" of NS's kernel.
linux_ctrs() {
	ns_ext "$1" | awk '{ v[$1] = $2 }
		END { print v["RetransSegs"] + 0, v["TCPTimeouts"] + 0, v["TCPFastRetrans"] + 0,
			    v["TCPSackRecovery"] + 0, v["TCPLossProbes"] + 0,
			    v["TCPLossProbeRecovery"] + 0, v["TCPDSACKUndo"] + v["TCPSpuriousRTOs"] + 0 }'
}

# py_ready FILE PID: tests/tcp_echo.py server has said it listens (10 s at
# most; python starts slowly on a loaded machine).
py_ready() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q '^server: ready' "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# sink_lines: how many transfers the sink has reported so far.
sink_lines() { grep -c '^sink: ' "$WORK/sink.out"; }

# sink_line N: the sink's line for its transfer number N (its N-th line
# after "ready"; N = sink_lines before the transfer + 1, so a sender that
# never reached the sink shifts nothing); it prints just after closing, so
# wait up to 5 s.
sink_line() {
	local i l
	for ((i = 0; i < 100; i++)); do
		l=$(grep '^sink: ' "$WORK/sink.out" | sed -n "${1}p")
		[ -n "$l" ] && { echo "$l"; return 0; }
		sleep 0.05
	done
	echo "sink: no line for transfer $1"
}

# secs_of LINE: the seconds a transfer took, from either tool's line.
secs_of() {
	local l=$1
	if [[ $l =~ \ secs\ ([0-9.]+) ]]; then echo "${BASH_REMATCH[1]}"
	elif [[ $l =~ \ in\ ([0-9.]+)\ s ]]; then echo "${BASH_REMATCH[1]}"
	elif [[ $l =~ secs=([0-9.]+) ]]; then echo "${BASH_REMATCH[1]}"
	else echo 0; fi
}

# run_one STACK ROLE: one transfer; prints "ok secs rtx rto fast sack tlp tlprec undo relaycpu".
run_one() {
	local stack=$1 role=$2 line rc ok=0 c0 c1 t0 t1 relay_c=0 secs out= sink=
	local -a z=(0 0 0 0 0 0 0)
	ip -n "$SKT_NS_L" neigh flush dev vc0 2>/dev/null
	local sink_n=0
	[ "$role" = send ] && sink_n=$(($(sink_lines) + 1))
	if [[ $stack == skiff* ]]; then
		local -a tune=()
		[ "$stack" = skiff-fixed ] && tune=(--tcp-buf-max 0)
		[ "$stack" = skiff-bbr ] && tune=(--tcp-cc bbr)
		if [ "$role" = send ]; then
			# The run's window, flight and RTT over time (delay, loss and rep
			# are run_cell's).
			mkdir -p "$OUT/traces"
			t0=$(cpu_ticks "$SKT_RELAY_PID")
			out=$(ip netns exec "$SKT_NS_S" timeout $((TMO + 10)) "$BIN" tcp-client --dev packet:vs0 \
				--ip "$SKT_SKIFF_IP/24" --gw "$SKT_LINUX_IP" --connect "$SKT_LINUX_IP:$PORT_SINK" \
				--send-random "$BYTES" --timeout "$TMO" --stats "${tune[@]}" \
				--tcp-trace "$OUT/traces/$delay-$loss-$stack-$role-$rep.tsv" 2>&1)
			rc=$?
			t1=$(cpu_ticks "$SKT_RELAY_PID")
			# Its --stats counters beside the trace (a few KB).
			printf '%s\n' "$out" >"$OUT/traces/$delay-$loss-$stack-$role-$rep.stats"
			line=$(grep -m1 '^skiff tcp-client:' <<<"$out")
			sink=$(sink_line "$sink_n")
			local sent_hash
			sent_hash=$(sed -n 's/.*sha256_sent=\([0-9a-f]*\).*/\1/p' <<<"$line")
			[ $rc -eq 0 ] && [[ $line == *" failed=0 "* ]] && [ -n "$sent_hash" ] &&
				[[ $sink == "sink: got $BYTES sha256 $sent_hash "* ]] && ok=1
			line="$line | $sink"
		elif [ "$role" = server ]; then
			ip netns exec "$SKT_NS_S" "$BIN" echo --dev packet:vs0 --ip "$SKT_SKIFF_IP/24" \
				--gw "$SKT_LINUX_IP" --stats "${tune[@]}" >"$WORK/echo.out" 2>"$WORK/echo.err" &
			SK_PID=$!
			skt_wait_ready "$WORK/echo.out" "$SK_PID" 15 || { echo "0 0 0 0 0 0 0 0 0 0"; return; }
			t0=$(cpu_ticks "$SKT_RELAY_PID")
			line=$(ip netns exec "$SKT_NS_L" timeout $((TMO + 10)) python3 "$TESTS/tcp_echo.py" client \
				--host "$SKT_SKIFF_IP" --bytes "$BYTES" --seed 2 --cc cubic --timeout "$TMO" 2>&1)
			rc=$?
			t1=$(cpu_ticks "$SKT_RELAY_PID")
			kill -TERM "$SK_PID"; skt_wait_exit "$SK_PID" 10; SK_PID=
			[ $rc -eq 0 ] && [[ $line == *" MATCH"* ]] && ok=1
			out=$(cat "$WORK/echo.out")
			# Its --stats counters, as for the send runs (drops, recoveries).
			mkdir -p "$OUT/traces"
			printf '%s\n' "$out" >"$OUT/traces/$delay-$loss-$stack-$role-$rep.stats"
		else
			mkdir -p "$OUT/traces"
			t0=$(cpu_ticks "$SKT_RELAY_PID")
			out=$(ip netns exec "$SKT_NS_S" timeout $((TMO + 10)) "$BIN" tcp-client --dev packet:vs0 \
				--ip "$SKT_SKIFF_IP/24" --gw "$SKT_LINUX_IP" --connect "$SKT_LINUX_IP:$PORT_C" \
				--send-random "$BYTES" --expect-echo --timeout "$TMO" --stats "${tune[@]}" \
				--tcp-trace "$OUT/traces/$delay-$loss-$stack-$role-$rep.tsv" 2>&1)
			rc=$?
			t1=$(cpu_ticks "$SKT_RELAY_PID")
			line=$(grep -m1 '^skiff tcp-client:' <<<"$out")
			[ $rc -eq 0 ] && [[ $line == *" failed=0 "* ]] && ok=1
		fi
		local k v
		declare -A S=()
		while read -r k v _; do [[ $v =~ ^[0-9]+$ ]] && S[$k]=$v; done <<<"$out"
		z=("${S[tcp_retransmits]:-0}" "${S[tcp_rto_fires]:-0}" "${S[tcp_fast_retransmits]:-0}"
			"${S[tcp_sack_recoveries]:-0}" "${S[tcp_tlp_probes]:-0}" "${S[tcp_tlp_recoveries]:-0}"
			"${S[tcp_spurious_undos]:-0}")
	else
		local cc=${stack#linux-}
		ip -n "$SKT_NS_S" addr add "$SKT_SKIFF_IP/24" dev vs0
		read -ra c0 <<<"$(linux_ctrs "$SKT_NS_S")"
		if [ "$role" = server ]; then
			ip netns exec "$SKT_NS_S" python3 "$TESTS/tcp_echo.py" server --host "$SKT_SKIFF_IP" --port 7 \
				--cc "$cc" --timeout "$TMO" >"$WORK/lsrv.out" 2>&1 &
			SRV_PID=$!
			py_ready "$WORK/lsrv.out" "$SRV_PID" || { skt_stop_pid "$SRV_PID"; SRV_PID=; ip -n "$SKT_NS_S" addr flush dev vs0; echo "0 0 0 0 0 0 0 0 0 0"; return; }
			t0=$(cpu_ticks "$SKT_RELAY_PID")
			line=$(ip netns exec "$SKT_NS_L" timeout $((TMO + 10)) python3 "$TESTS/tcp_echo.py" client \
				--host "$SKT_SKIFF_IP" --bytes "$BYTES" --seed 2 --cc cubic --timeout "$TMO" 2>&1)
			rc=$?
			t1=$(cpu_ticks "$SKT_RELAY_PID")
			skt_stop_pid "$SRV_PID"; SRV_PID=
		elif [ "$role" = send ]; then
			# Its TCP_INFO every 10 ms, beside skiff's traces.
			mkdir -p "$OUT/traces"
			t0=$(cpu_ticks "$SKT_RELAY_PID")
			line=$(ip netns exec "$SKT_NS_S" timeout $((TMO + 10)) python3 "$TESTS/tcp_echo.py" send \
				--host "$SKT_LINUX_IP" --port "$PORT_SINK" --bytes "$BYTES" --seed 2 --cc "$cc" --timeout "$TMO" \
				--trace "$OUT/traces/$delay-$loss-$stack-$role-$rep.tsv" 2>&1)
			rc=$?
			t1=$(cpu_ticks "$SKT_RELAY_PID")
			sink=$(sink_line "$sink_n")
			[[ $sink == "sink: got $BYTES "* ]] || rc=1
			line="$line | $sink"
		else
			t0=$(cpu_ticks "$SKT_RELAY_PID")
			line=$(ip netns exec "$SKT_NS_S" timeout $((TMO + 10)) python3 "$TESTS/tcp_echo.py" client \
				--host "$SKT_LINUX_IP" --port "$PORT_C" --bytes "$BYTES" --seed 2 --cc "$cc" --timeout "$TMO" 2>&1)
			rc=$?
			t1=$(cpu_ticks "$SKT_RELAY_PID")
		fi
		[ $rc -eq 0 ] && [[ $line == *" MATCH"* ]] && ok=1
		read -ra c1 <<<"$(linux_ctrs "$SKT_NS_S")"
		for i in 0 1 2 3 4 5 6; do z[i]=$((c1[i] - c0[i])); done
		ip -n "$SKT_NS_S" addr flush dev vs0
		ip -n "$SKT_NS_L" neigh flush dev vc0 2>/dev/null
	fi
	# The send role's seconds are the sink's (the part after " | ").
	if [ "$role" = send ]; then secs=$(secs_of "$sink"); else secs=$(secs_of "$line"); fi
	echo "$line" >>"$WORK/lines.log"
	# A failure says why in the log (the cell's stderr).
	[ $ok = 1 ] || { echo "  FAILED $stack $role: $line"; [ -n "${out:-}" ] && tail -n 5 <<<"$out"; } >&2
	relay_c=$((t1 - t0))
	echo "$ok $secs ${z[*]} $relay_c"
}

# run_cell DELAY LOSS [REP]: the cell's repetitions (only REP if given).
run_cell() {
	local delay=$1 loss=$2 rep stack role r r0=1 r1=$REPS
	[ -n "${3:-}" ] && r0=$3 r1=$3
	# Under loss a transfer is slower by orders of magnitude: a smaller one
	# keeps the grid bounded (the MiB column says which).
	[ "$loss" != 0 ] && MIB=$LOSSY_MIB
	BYTES=$((MIB << 20))
	WORK=$(mktemp -d /tmp/skiff-bench-tcp.XXXXXX)
	trap cell_cleanup EXIT
	skt_cleanup_stale
	skt_topo_relay packet || { echo "cell $delay/$loss: topology failed" >&2; exit 1; }
	ip netns exec "$SKT_NS_L" python3 "$TESTS/tcp_echo.py" server --host "$SKT_LINUX_IP" --port "$PORT_C" \
		--cc cubic --timeout "$TMO" >"$WORK/csrv.out" 2>&1 &
	CSRV_PID=$!
	# The peer's echo server must listen before a job's first transfer (a
	# parallel job may start with the client role: refused otherwise).
	py_ready "$WORK/csrv.out" "$CSRV_PID" || { echo "cell $delay/$loss: peer's server not ready" >&2; exit 1; }
	if [[ " $ROLES " == *" send "* ]]; then
		ip netns exec "$SKT_NS_L" python3 "$TESTS/tcp_echo.py" sink --host "$SKT_LINUX_IP" --port "$PORT_SINK" \
			--cc cubic --timeout "$TMO" >"$WORK/sink.out" 2>&1 &
		SINK_PID=$!
		py_ready "$WORK/sink.out" "$SINK_PID" || { echo "cell $delay/$loss: peer's sink not ready" >&2; exit 1; }
	fi
	local -a args=(--delay "$delay")
	[ "$loss" != 0 ] && args+=(--loss "$loss")
	local -a impair_more
	read -r -a impair_more <<<"${BENCH_TCP_IMPAIR:-}"
	args+=("${impair_more[@]}")
	local hz seed
	hz=$(getconf CLK_TCK)
	for ((rep = r0; rep <= r1; rep++)); do
		for stack in $STACKS; do
			for role in $ROLES; do
				# A fresh relay per transfer, its losses drawn from the
				# repetition's seed (BENCH_TCP_SEED above).
				seed=$(printf '%s %s %s %s %s' "$SEED" "$delay" "$loss" "$rep" "$role" | cksum | cut -d' ' -f1)
				skt_relay_start "$WORK/relay.out" "${args[@]}" --seed "$seed" ||
					{ echo "cell $delay/$loss: relay failed" >&2; exit 1; }
				if [ -n "${BENCH_TCP_PCAP:-}" ]; then
					mkdir -p "$OUT/pcap"
					ip netns exec "$SKT_NS_S" tcpdump -Z root -i vs0 -s 96 -B 16384 --immediate-mode -U -w \
						"$OUT/pcap/$delay-$loss-$stack-$role-$rep.pcap" tcp 2>"$WORK/tcpdump.err" &
					CAP_PID=$!
					skt_wait_for 5 grep -q listening "$WORK/tcpdump.err" ||
						echo "  tcpdump not ready: $(head -c 200 "$WORK/tcpdump.err")" >&2
				fi
				# The receiver's side of a send: the peer's counters (duplicates,
				# out-of-order queueing, pruning) before and after, those that moved.
				[ "$role" = send ] && ns_ext "$SKT_NS_L" >"$WORK/rcv0"
				r=$(run_one "$stack" "$role")
				if [ "$role" = send ]; then
					mkdir -p "$OUT/traces"
					ns_ext "$SKT_NS_L" | awk 'NR == FNR { a[$1] = $2; next } $2 != a[$1] { print $1, $2 - a[$1] }' \
						"$WORK/rcv0" - >"$OUT/traces/$delay-$loss-$stack-$role-$rep.rcv"
				fi
				if [ -n "$CAP_PID" ]; then
					sleep 0.3 # the last frames into the file
					kill -INT "$CAP_PID" 2>/dev/null
					wait "$CAP_PID" 2>/dev/null
					CAP_PID=
				fi
				# shellcheck disable=SC2086
				set -- $r
				local gp
				local gp cpu row
				gp=$(awk -v b="$BYTES" -v s="$2" 'BEGIN { printf "%.3f", (s > 0 ? b / 1048576 / s : 0) }')
				cpu=$(awk -v rc="${10}" -v hz="$hz" -v s="$2" 'BEGIN { printf "%.1f", (s > 0 ? 100 * rc / hz / s : 0) }')
				row=$(printf '%s\t' "$delay" "$loss" "$stack" "$role" "$rep" "$MIB" "$1" "$2" "$gp" \
					"$3" "$4" "$5" "$6" "$7" "$8" "$9" "$cpu" "$seed")
				# One write of one line (O_APPEND, < PIPE_BUF): the parallel
				# jobs' rows never interleave.
				printf '%s%s\n' "$row" "$PHASE" >>"$OUT/runs.tsv"
				echo "  $delay ms $loss %: $stack $role rep $rep: ok=$1 ${gp} MiB/s rtx=$3 rto=$4 (relay $cpu% cpu)" >&2
				skt_relay_stop
				echo "  relay (seed $seed): $(tail -n 1 "$WORK/relay.out")" >&2
			done
		done
	done
}

# ---- the relay's cost: python against C -------------------------------------

relay_cpu() {
	local rep kind u0 s0 u1 s1 line secs hz
	hz=$(getconf CLK_TCK)
	WORK=$(mktemp -d /tmp/skiff-bench-tcp.XXXXXX)
	trap cell_cleanup EXIT
	skt_cleanup_stale
	skt_topo_relay packet || exit 1
	ip netns exec "$SKT_NS_S" "$BIN" echo --dev packet:vs0 --ip "$SKT_SKIFF_IP/24" --gw "$SKT_LINUX_IP" \
		>"$WORK/echo.out" 2>"$WORK/echo.err" &
	SK_PID=$!
	skt_wait_ready "$WORK/echo.out" "$SK_PID" 15 || exit 1
	echo "relay	rep	MiB	secs	MiB/s	utime_s	stime_s	cpu_s	cpu_pct	cpu_ms_per_MiB"
	for ((rep = r0; rep <= r1; rep++)); do
		for kind in ${BENCH_TCP_RELAYS:-py c}; do
			# shellcheck disable=SC2086  # split the options on purpose
			SKT_RELAY=$kind skt_relay_start "$WORK/relay-$kind.out" ${BENCH_TCP_RELAY_ARGS:---delay 5} || exit 1
			ip -n "$SKT_NS_L" neigh flush dev vc0 2>/dev/null
			read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$SKT_RELAY_PID/stat")
			line=$(ip netns exec "$SKT_NS_L" timeout $((TMO + 10)) python3 "$TESTS/tcp_echo.py" client \
				--host "$SKT_SKIFF_IP" --bytes "$BYTES" --seed 2 --timeout "$TMO" 2>&1)
			read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$SKT_RELAY_PID/stat")
			skt_relay_stop
			secs=$(secs_of "$line")
			[[ $line == *" MATCH"* ]] || echo "# $kind rep $rep: $line" >&2
			awk -v k="$kind" -v r="$rep" -v m="$MIB" -v s="$secs" -v u=$((u1 - u0)) -v st=$((s1 - s0)) \
				-v hz="$hz" 'BEGIN { c = (u + st) / hz; printf "%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\n",
					 k == "py" ? "tcp_impair.py" : "skiff impair", r, m, s, m / s, u / hz, st / hz,
					 c, 100 * c / s, 1000 * c / m }'
			echo "# $(tail -n 1 "$WORK/relay-$kind.out")" >&2
		done
	done
}

if [ "$MODE" = relay-cpu ]; then
	relay_cpu
	exit 0
fi
if [ "$MODE" = cell ]; then # internal: one cell (or one REP of it), under the caller's lock
	run_cell "$3" "$4" "${5:-}"
	exit 0
fi

mkdir -p "$OUT"
printf 'delay_ms\tloss_pct\tstack\trole\trep\tmib\tok\tsecs\tgoodput_mib_s\tretrans\trto\tfast_rtx\tsack_recoveries\ttlp_probes\ttlp_recoveries\tundos\trelay_cpu_pct\tseed\tphase\n' \
	>"$OUT/runs.tsv"
{
	echo "date: $(date -u '+%F %H:%M UTC')"
	echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), Linux $(uname -r)"
	echo "command: BENCH_TCP_GRID=$GRID BENCH_TCP_DELAYS='$DELAYS' BENCH_TCP_LOSSES='$LOSSES' BENCH_TCP_MIB=$MIB BENCH_TCP_LOSSY_MIB=$LOSSY_MIB BENCH_TCP_REPS=$REPS BENCH_TCP_STACKS='$STACKS' BENCH_TCP_ROLES='$ROLES' BENCH_TCP_TIMEOUT=$TMO BENCH_TCP_SEED=$SEED${BENCH_TCP_IMPAIR:+ BENCH_TCP_IMPAIR='$BENCH_TCP_IMPAIR'} BENCH_TCP_JOBS=$JOBS${SERIAL:+ BENCH_TCP_SERIAL='${SERIAL% }'} make bench-tcp"
	echo "skiff: ${BENCH_TCP_REV:-$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null)}"
} >"$OUT/meta.txt"
# The cells run as children: they get the grid as resolved here.
export BENCH_TCP_GRID=$GRID BENCH_TCP_DELAYS=$DELAYS BENCH_TCP_LOSSES=$LOSSES BENCH_TCP_MIB=$MIB \
	BENCH_TCP_LOSSY_MIB=$LOSSY_MIB BENCH_TCP_REPS=$REPS BENCH_TCP_STACKS=$STACKS BENCH_TCP_ROLES=$ROLES \
	BENCH_TCP_TIMEOUT=$TMO BENCH_TCP_SEED=$SEED BENCH_TCP_OUT=$OUT

# serial_cell D L: one whole cell, alone, under the lock if one is given.
serial_cell() {
	local tag=
	[ "$JOBS" -gt 1 ] && tag=" (alone)"
	echo "== cell: $1 ms one way, $2 % loss each way$tag" >&2
	if [ -n "${BENCH_TCP_LOCK:-}" ]; then
		BENCH_TCP_PHASE=serial flock "$BENCH_TCP_LOCK" "$0" "$BIN" cell "$1" "$2"
	else
		BENCH_TCP_PHASE=serial "$0" "$BIN" cell "$1" "$2"
	fi
}

if [ "$JOBS" -eq 1 ]; then
	for d in $DELAYS; do
		for l in $LOSSES; do serial_cell "$d" "$l"; done
	done
else
	# ---- parallel phase: (cell, rep, role) jobs, longest first ------------
	declare -a PIDS=()
	trap 'for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done' INT TERM
	mkdir -p "$OUT/jobs"
	jobs_list=$(for d in $DELAYS; do
		for l in $LOSSES; do
			[[ " $SERIAL " == *" $d:$l "* ]] && continue
			for ((r = 1; r <= REPS; r++)); do
				for role in $ROLES; do
					awk -v d="$d" -v l="$l" -v r="$r" -v role="$role" \
						'BEGIN { printf "%.6f %s %s %s %s\n", (2 * d + 0.2) * sqrt(l), d, l, r, role }'
				done
			done
		done
	done | sort -k1,1gr -k5,5)
	n=0 total=$(grep -c . <<<"$jobs_list")
	echo "== parallel phase: $total jobs, up to $JOBS at once (nice $NICE); serial after: ${SERIAL:-none}" >&2
	t_par=$(date +%s)
	while read -r _ d l r role; do
		[ -n "$d" ] || continue
		while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
		n=$((n + 1))
		echo "  job $n/$total: $d ms $l % rep $r $role (net 198.18.$(((n - 1) % 254 + 1)).0/24) at $(date -u +%T)" >&2
		BENCH_TCP_PHASE=parallel BENCH_TCP_NET=$(((n - 1) % 254 + 1)) BENCH_TCP_ROLES=$role \
			nice -n "$NICE" "$0" "$BIN" cell "$d" "$l" "$r" >"$OUT/jobs/$d-$l-$r-$role.log" 2>&1 &
		PIDS+=($!)
	done <<<"$jobs_list"
	wait
	trap - INT TERM
	echo "== parallel phase done in $(($(date +%s) - t_par)) s" >&2
	# ---- serial phase: the CPU-bound cells, alone -------------------------
	for c in $SERIAL; do serial_cell "${c%%:*}" "${c#*:}"; done
fi
python3 "$here/tcp_wan_report.py" "$OUT"
if [ -d "$OUT/traces" ]; then python3 "$here/tcp_trace_plot.py" "$OUT"; fi
