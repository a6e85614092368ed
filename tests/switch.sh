#!/usr/bin/env bash
# tests/switch.sh [SKIFF] — acceptance tests of `skiff switch` (shared-memory
# ports, learning, drops, dead peers) with pktgen and echo hosts attached as
# switch:NAME/PORT.  No network namespace and no kernel interface: every frame
# stays inside the switch's memory.  Each test runs its own switch (a name
# with this script's pid in it), every process is started here and stopped
# here by pid, and the memfds and abstract sockets die with the processes.
# Prints "PASS name" / "FAIL name: why", then "switch: N passed, N failed";
# exits non-zero on a failure.  Bounded: every wait has a timeout.
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SKT_SUITE=switch
SKIFF=$(realpath "${1:-build/skiff}")
TMP=$(mktemp -d /tmp/skiff-switch-test.XXXXXX)
ID=skt$$
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# bg LOG CMD... : start CMD in the background, output to $TMP/LOG; pid in BG.
bg() {
	local log=$1
	shift
	"$@" >"$TMP/$log" 2>&1 &
	BG=$!
	PIDS+=("$BG")
}

# wait_for LOG REGEX [SECONDS]: until LOG matches, or fail after SECONDS.
wait_for() {
	local i
	for ((i = 0; i < ${3:-5} * 20; i++)); do
		grep -qE "$2" "$TMP/$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "  (timeout waiting for '$2' in $1:)" >&2
	sed 's/^/    /' "$TMP/$1" >&2
	return 1
}

# stop PID [SIGNAL]: signal it and wait (at most 5 s, then SIGKILL).
stop() {
	local i
	kill -CONT "$1" 2>/dev/null
	kill "-${2:-TERM}" "$1" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# val LOG KEY: the last "KEY VALUE" line's value (0 if none).
val() { awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }' "$TMP/$1"; }
# sumf LOG MODE FIELD: a field of pktgen's summary line.
sumf() {
	sed -nE "s/^pktgen: $2 summary .*$3=([0-9.]+).*/\1/p" "$TMP/$1" | tail -1
}
# cls LOG CLASS: a count from pktgen rx's classes line.
cls() { sed -nE "s/^pktgen: rx classes .*$2=([0-9]+).*/\1/p" "$TMP/$1" | tail -1; }

start_switch() { # NAME LOG [options]
	local name=$1 log=$2
	shift 2
	bg "$log" "$SKIFF" switch "$name" --stats "$@"
	SW=$BG
	wait_for "$log" "ready"
}

# (a) pktgen tx on port 0 -> pktgen rx on port 1: every frame either arrives
# or is counted as a drop at the switch.
test_port_to_port() {
	local n=$ID-a count=2000000 txn rxn drops swrx swtx
	start_switch "$n" a.sw --ports 4 || { fail port_to_port "switch did not start"; return; }
	bg a.rx "$SKIFF" pktgen --dev "switch:$n/1" rx
	local rx=$BG
	wait_for a.rx ready || { fail port_to_port "rx did not attach"; stop "$SW"; return; }
	timeout 30 "$SKIFF" pktgen --dev "switch:$n/0" tx --count $count >"$TMP/a.tx" 2>&1
	sleep 0.5
	stop "$rx" INT
	stop "$SW"
	txn=$(sumf a.tx tx frames) rxn=$(sumf a.rx rx frames)
	drops=$(val a.sw port.1.drop_full) swrx=$(val a.sw port.0.rx_frames)
	swtx=$(val a.sw port.1.tx_frames)
	echo "  tx $txn, switch took $swrx, delivered $swtx, dropped (ring full) $drops," \
		"rx $rxn ($(sumf a.rx rx mpps) Mpps)"
	if [ "${txn:-0}" != $count ] || [ "$swrx" != $count ]; then
		fail port_to_port "sent ${txn:-?}, switch took $swrx, want $count"
	elif [ "${rxn:-0}" -le 0 ] || [ "$rxn" != "$swtx" ] || [ $((rxn + drops)) != $count ]; then
		fail port_to_port "rx $rxn + drops $drops != $count (switch delivered $swtx)"
	else
		pass port_to_port
	fi
}

# (b) Two echo hosts talk unicast through the switch; a third port sees the
# broadcasts and the flooded unknown unicast, and none of their unicast.
test_learning() {
	local n=$ID-b ma=02:00:00:5e:00:11 mb=02:00:00:5e:00:22 mm=02:00:00:5e:00:33
	start_switch "$n" b.sw --ports 4 || { fail learning "switch did not start"; return; }
	bg b.mon "$SKIFF" pktgen --dev "switch:$n/2" rx --mac $mm
	local mon=$BG a= b=
	# The monitor reads before the hosts start: their announcements are
	# broadcasts it must see (once, under load, it attached after them and
	# A, knowing B's MAC, sent no ARP request: no broadcast seen at all).
	if wait_for b.mon ready; then
		bg b.A "$SKIFF" echo --dev "switch:$n/0" --ip 198.18.1.1/24 --mac $ma --stats
		a=$BG
		bg b.B "$SKIFF" echo --dev "switch:$n/1" --ip 198.18.1.2/24 --mac $mb --stats
		b=$BG
	fi
	if [ -z "$a" ] || ! wait_for b.A ready || ! wait_for b.B ready; then
		fail learning "a host did not attach"
		stop "$mon"; stop "$a"; stop "$b"; stop "$SW"
		return
	fi
	sleep 0.3 # the hosts' announcements have taught the switch their MACs
	# From port 3: UDP echo requests to A that claim to come from B's
	# address.  A answers B: an ARP request (broadcast), B's ARP reply to A
	# and the echoes to B (unicast), and B's ICMP port unreachables back
	# to A (unicast: nothing listens on B's port 9).
	timeout 10 "$SKIFF" pktgen --dev "switch:$n/3" tx --count 300 --mac 02:00:00:5e:00:44 \
		--dst-mac $ma --src-ip 198.18.1.2 --dst-ip 198.18.1.1 --dport 7 --sport 9 \
		>"$TMP/b.tx1" 2>&1
	sleep 0.3
	# And 50 frames to a MAC nobody has: flooded, the monitor must see them.
	timeout 10 "$SKIFF" pktgen --dev "switch:$n/3" tx --count 50 --mac 02:00:00:5e:00:44 \
		--dst-mac 02:00:00:5e:00:99 >"$TMP/b.tx2" 2>&1
	sleep 0.3
	stop "$mon" INT
	stop "$a"
	stop "$b"
	stop "$SW"
	local other me bc a_udp b_noport b_in a_in
	other=$(cls b.mon ucast_other) me=$(cls b.mon ucast_me) bc=$(cls b.mon bcast)
	a_udp=$(val b.A udp.rx) b_noport=$(val b.B udp.no_port)
	b_in=$(val b.sw port.1.tx_frames) a_in=$(val b.sw port.0.tx_frames)
	echo "  monitor: bcast $bc, unicast to others ${other:-?}, to it ${me:-?};" \
		"A got $a_in frames (udp.rx $a_udp), B got $b_in (udp.no_port $b_noport)"
	if [ "$a_udp" -le 0 ] || [ "$b_noport" -le 0 ]; then
		fail learning "the hosts did not talk (A udp.rx $a_udp, B udp.no_port $b_noport)"
	elif [ "${bc:-0}" -lt 1 ]; then
		fail learning "the monitor saw no broadcast"
	elif [ "${other:-x}" != 50 ] || [ "${me:-x}" != 0 ]; then
		fail learning "the monitor saw ${other:-?} unicast frames for others, want exactly the 50 flooded"
	else
		pass learning
	fi
}

# (c) A stopped reader (SIGSTOP) does not stall the switch: the other port
# keeps receiving, the sender is never blocked, the drops are counted.
test_stopped_reader() {
	local n=$ID-c
	start_switch "$n" c.sw --ports 4 || { fail stopped_reader "switch did not start"; return; }
	# One after the other: port 1 then sees port 2's announcement (+1 below).
	bg c.rx1 "$SKIFF" pktgen --dev "switch:$n/1" rx
	local r1=$BG
	wait_for c.rx1 ready
	bg c.rx2 "$SKIFF" pktgen --dev "switch:$n/2" rx
	local r2=$BG
	wait_for c.rx1 ready && wait_for c.rx2 ready ||
		{ fail stopped_reader "rx did not attach"; stop "$r1"; stop "$r2"; stop "$SW"; return; }
	bg c.tx timeout 20 "$SKIFF" pktgen --dev "switch:$n/0" tx --duration 3
	local tx=$BG
	sleep 0.5
	kill -STOP "$r2"
	wait "$tx"
	sleep 0.3
	kill -USR1 "$SW" # counters while port 2 is still stopped
	sleep 0.3
	local d2_stopped
	d2_stopped=$(val c.sw port.2.drop_full)
	kill -CONT "$r2"
	sleep 0.5 # let it read what waited in its ring
	stop "$r2" INT
	stop "$r1" INT
	stop "$SW"
	local txn r1n r2n d1 t1 t2 took
	txn=$(sumf c.tx tx frames) r1n=$(sumf c.rx1 rx frames) r2n=$(sumf c.rx2 rx frames)
	d1=$(val c.sw port.1.drop_full) t1=$(val c.sw port.1.tx_frames)
	t2=$(val c.sw port.2.tx_frames) took=$(val c.sw port.0.rx_frames)
	echo "  tx $txn; port 1 got $r1n (+$d1 dropped); stopped port 2 got $r2n," \
		"dropped $d2_stopped while stopped"
	if [ "${txn:-0}" -le 0 ] || [ "$took" != "$txn" ]; then
		fail stopped_reader "the sender was held back (sent ${txn:-?}, switch took $took)"
	elif [ "$d2_stopped" -le 0 ]; then
		fail stopped_reader "no drops counted for the stopped port"
	# (+1: port 2's pktgen announces itself with one broadcast frame.)  Not
	# compared: port 1's count against port 2's.  On a loaded machine port
	# 1's reader process is starved of CPU, not held by port 2: ci-fresh at
	# c194b5c saw 10.3 M delivered + 36.3 M dropped on its full ring against
	# port 2's 11.5 M, every frame accounted for.
	elif [ "${r1n:-0}" != "$t1" ] || [ $((r1n + d1)) != $((txn + 1)) ] || [ "$r1n" -le 0 ]; then
		fail stopped_reader "the running port got $r1n (+$d1 drops) of $txn, stopped one $t2"
	elif [ "${r2n:-x}" != "$t2" ]; then
		fail stopped_reader "the stopped port, resumed, read $r2n of $t2 delivered"
	else
		pass stopped_reader
	fi
}

# (d) SIGKILL a port's process: the switch frees the port at once, carries
# on, refuses a second owner while a new process holds the port.
test_killed_port() {
	local n=$ID-d
	start_switch "$n" d.sw --ports 4 || { fail killed_port "switch did not start"; return; }
	bg d.rx1 "$SKIFF" pktgen --dev "switch:$n/1" rx
	local r1=$BG
	wait_for d.rx1 ready || { fail killed_port "rx did not attach"; stop "$SW"; return; }
	timeout 10 "$SKIFF" pktgen --dev "switch:$n/0" tx --count 100000 >"$TMP/d.tx1" 2>&1
	kill -KILL "$r1"
	wait "$r1" 2>/dev/null
	if ! wait_for d.sw "port 1 detached" 3; then
		fail killed_port "the switch did not free port 1"
		stop "$SW"
		return
	fi
	bg d.rx2 "$SKIFF" pktgen --dev "switch:$n/1" rx
	local r2=$BG
	wait_for d.rx2 ready || { fail killed_port "could not re-attach port 1"; stop "$SW"; return; }
	local busy=0
	timeout 5 "$SKIFF" pktgen --dev "switch:$n/1" rx --duration 1 >"$TMP/d.busy" 2>&1 || busy=$?
	timeout 10 "$SKIFF" pktgen --dev "switch:$n/0" tx --count 100000 >"$TMP/d.tx2" 2>&1
	sleep 0.3
	stop "$r2" INT
	kill -0 "$SW" 2>/dev/null
	local alive=$?
	stop "$SW"
	local got
	got=$(sumf d.rx2 rx frames)
	echo "  after the kill: the new owner got ${got:-?} frames; a second owner: $(head -c 120 "$TMP/d.busy")"
	if [ $alive != 0 ]; then
		fail killed_port "the switch died"
	elif [ "${got:-0}" -le 0 ]; then
		fail killed_port "the new owner of port 1 received nothing"
	elif [ $busy = 0 ] || ! grep -q "in use" "$TMP/d.busy"; then
		fail killed_port "a second process could take port 1 while it is held"
	elif [ "$(val d.sw port.1.attaches)" != 2 ]; then
		fail killed_port "port 1 attaches $(val d.sw port.1.attaches), want 2"
	else
		pass killed_port
	fi
}

# wait_detached LOG PORT N: until the switch has logged port PORT detached N
# times (a port is free again only then; attaching earlier says "in use").
wait_detached() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c "port $2 detached" "$TMP/$1")" -ge "$3" ] && return 0
		sleep 0.05
	done
	echo "  (timeout waiting for port $2 to detach a ${3}th time)" >&2
	return 1
}

# ping_run LOG PORT IP MAC SIZE DST: 20 echo requests of SIZE payload bytes
# from a `skiff ping` host on PORT; true when all 20 came back in time with
# the payload intact (skiff ping compares each reply byte for byte and
# exits 0 only then) and the output agrees: 20 clean reply lines, 0% loss.
ping_run() {
	local log=$1 port=$2 ip=$3 mac=$4 size=$5 dst=$6 rc good
	timeout 30 "$SKIFF" ping --dev "switch:$PING_SW/$port" --ip "$ip" --mac "$mac" \
		-c 20 -i 5 -s "$size" -W 2 "$dst" >"$TMP/$log" 2>&1
	rc=$?
	good=$(grep -cE "^$size bytes from $dst: icmp_seq=[0-9]+ time=[0-9.]+ ms\$" "$TMP/$log")
	echo "  $dst from $ip, -s $size: $(grep -m1 'transmitted' "$TMP/$log" || echo "exit $rc: $(tail -n 1 "$TMP/$log")")"
	[ $rc = 0 ] && [ "$good" = 20 ] && grep -q '^20 transmitted, 20 received, 0% loss, rtt' "$TMP/$log"
}

# (e0) The two skiff hosts ping each other, both directions, with skiff's
# own ICMP on both ends: B (`skiff ping`) pings A (`skiff echo`), then the
# roles swap on the same ports, addresses and MACs.  Sizes: the default 56,
# 1400 and a full 1500-byte MTU (1472).  Each run is a new process on the
# port, so the next waits for the switch to free it.
test_ping() {
	local n=$ID-f ma=02:00:00:5e:00:a1 mb=02:00:00:5e:00:b2 ok=1 host replies
	local ipa=198.18.4.1 ipb=198.18.4.2
	PING_SW=$n
	start_switch "$n" f.sw --ports 4 || { fail two_hosts.ping "switch did not start"; return; }
	bg f.A "$SKIFF" echo --dev "switch:$n/0" --ip $ipa/24 --mac $ma --stats
	host=$BG
	if ! wait_for f.A ready; then
		fail two_hosts.ping "echo host A did not attach"
		stop "$host"; stop "$SW"
		return
	fi
	ping_run f.b1 1 $ipb/24 $mb 56 $ipa || ok=0
	wait_detached f.sw 1 1 && ping_run f.b2 1 $ipb/24 $mb 1400 $ipa || ok=0
	stop "$host"
	replies=$(val f.A icmp.echo_replies)
	# Swap: B answers on port 1, A pings it from port 0.
	if wait_detached f.sw 0 1 && wait_detached f.sw 1 2; then
		bg f.B "$SKIFF" echo --dev "switch:$n/1" --ip $ipb/24 --mac $mb --stats
		host=$BG
		if wait_for f.B ready; then
			ping_run f.a1 0 $ipa/24 $ma 56 $ipb || ok=0
			wait_detached f.sw 0 2 && ping_run f.a2 0 $ipa/24 $ma 1472 $ipb || ok=0
		else
			ok=0
		fi
		stop "$host"
		replies="$replies / $(val f.B icmp.echo_replies)"
	else
		ok=0
	fi
	stop "$SW"
	echo "  echo replies sent by A / B: $replies"
	if [ $ok = 1 ] && [ "$replies" = "40 / 40" ]; then
		pass two_hosts.ping
	else
		fail two_hosts.ping "a ping run lost or changed replies (A / B answered $replies of 40 / 40)"
	fi
}

# (e) Two skiff hosts on the switch, each with skiff's own TCP/IP: A runs
# `skiff echo` (TCP echo on port 7), B sends it 100 MiB with `skiff
# tcp-client --expect-echo`, which compares the SHA-256 of what went and
# what came back.  Then HTTP both ways of the loop API: `skiff serve --stack
# skiff` on A's port and `skiff load` on B's, 0 failed requests.  The two
# hosts resolve each other by ARP (request and reply, one each way) and
# carry TCP in both directions; their ICMP echo both ways is in (e0).
test_two_hosts() {
	local n=$ID-e line sent recv
	start_switch "$n" e.sw --ports 4 || { fail two_hosts "switch did not start"; return; }
	bg e.A "$SKIFF" echo --dev "switch:$n/0" --ip 198.18.3.1/24 --stats
	local a=$BG
	if ! wait_for e.A ready; then
		fail two_hosts.tcp_100MiB "echo host did not attach"
		stop "$a"; stop "$SW"
		return
	fi
	timeout 120 "$SKIFF" tcp-client --dev "switch:$n/1" --ip 198.18.3.2/24 \
		--connect 198.18.3.1:7 --send-random 100M --expect-echo --timeout 100 \
		>"$TMP/e.cli" 2>&1
	local rc=$?
	stop "$a"
	line=$(grep -m1 '^skiff tcp-client:' "$TMP/e.cli")
	sent=$(sed -nE 's/.*sha256_sent=([0-9a-f]+).*/\1/p' <<<"$line")
	recv=$(sed -nE 's/.*sha256_received=([0-9a-f]+).*/\1/p' <<<"$line")
	echo "  ${line:-no result line: $(tail -n 2 "$TMP/e.cli" | tr '\n' ' ')}"
	if [ $rc -ne 0 ] || [ -z "$sent" ] || [ "$sent" != "$recv" ] ||
		! grep -q "received=$((100 * 1024 * 1024)) " <<<"$line"; then
		fail two_hosts.tcp_100MiB "exit $rc, hashes ${sent:-?} / ${recv:-?}"
	else
		pass two_hosts.tcp_100MiB
	fi
	bg e.srv "$SKIFF" serve --stack skiff --dev "switch:$n/0" --ip 198.18.3.1/24 --port 80
	local srv=$BG
	if ! wait_for e.srv '^skiff serve: listening'; then
		fail two_hosts.http "server did not start"
	elif timeout 60 "$SKIFF" load http://198.18.3.1/ -c 8 -n 20000 -k --timeout 10 \
		--dev "switch:$n/1" --ip 198.18.3.2/24 >"$TMP/e.load" 2>&1 &&
		timeout 60 "$SKIFF" load http://198.18.3.1/ -c 8 -n 2000 --timeout 10 \
			--dev "switch:$n/1" --ip 198.18.3.2/24 >>"$TMP/e.load" 2>&1; then
		pass "two_hosts.http ($(grep -c 'failed=0 ' "$TMP/e.load") runs, 0 failed)"
	else
		fail two_hosts.http "$(grep -E 'FAILED|requests ' "$TMP/e.load" | head -n 2 | tr '\n' ' ')"
	fi
	stop "$srv"
	stop "$SW"
}

# (e6) The same two hosts over IPv6 (issue 18): neighbour discovery and DAD
# through the switch's multicast flooding, then `skiff ping -6` 20 x 1400 B
# from B to A, 20 MiB of TCP echo over IPv6 (tcp-client --connect
# [2001:2:0:5::1]:7 --expect-echo), and HTTP over IPv6 with skiff's stack on
# both ends (serve --ip6, load http://[2001:2:0:5::1]/ --ip6, keep-alive and
# close), 0 failed.  2001:2::/48 addresses, only inside the switch's memory.
test_two_hosts6() {
	local n=$ID-g a6=2001:2:0:5::1 b6=2001:2:0:5::2 line sent recv rc
	local b=(--ip 198.18.5.2/24 --ip6 $b6/64)
	start_switch "$n" g.sw --ports 4 || { fail two_hosts6 "switch did not start"; return; }
	bg g.A "$SKIFF" echo --dev "switch:$n/0" --ip 198.18.5.1/24 --ip6 $a6/64 --stats
	local a=$BG
	if ! wait_for g.A "^skiff: ip6 $a6 usable" 10; then
		fail two_hosts6.ping6 "echo host A never had $a6 usable"
		stop "$a"; stop "$SW"
		return
	fi
	timeout 60 "$SKIFF" ping -6 --dev "switch:$n/1" "${b[@]}" -c 20 -i 5 -s 1400 -W 2 $a6 \
		>"$TMP/g.ping" 2>&1
	rc=$?
	echo "  $(grep -m1 transmitted "$TMP/g.ping" || tail -n 1 "$TMP/g.ping")"
	if [ $rc -eq 0 ] && grep -q '^20 transmitted, 20 received, 0% loss' "$TMP/g.ping"; then
		pass two_hosts6.ping6
	else
		fail two_hosts6.ping6 "exit $rc: $(tail -n 2 "$TMP/g.ping" | tr '\n' ' ')"
	fi
	timeout 120 "$SKIFF" tcp-client --dev "switch:$n/1" "${b[@]}" --connect "[$a6]:7" \
		--send-random 20M --expect-echo --timeout 100 >"$TMP/g.cli" 2>&1
	rc=$?
	line=$(grep -m1 '^skiff tcp-client:' "$TMP/g.cli")
	sent=$(sed -nE 's/.*sha256_sent=([0-9a-f]+).*/\1/p' <<<"$line")
	recv=$(sed -nE 's/.*sha256_received=([0-9a-f]+).*/\1/p' <<<"$line")
	echo "  ${line:-no result line: $(tail -n 2 "$TMP/g.cli" | tr '\n' ' ')}"
	if [ $rc -ne 0 ] || [ -z "$sent" ] || [ "$sent" != "$recv" ] ||
		! grep -q "received=$((20 * 1024 * 1024)) " <<<"$line"; then
		fail two_hosts6.tcp6_20MiB "exit $rc, hashes ${sent:-?} / ${recv:-?}"
	else
		pass two_hosts6.tcp6_20MiB
	fi
	stop "$a"
	bg g.srv "$SKIFF" serve --stack skiff --dev "switch:$n/0" --ip 198.18.5.1/24 --ip6 $a6/64 --port 80
	local srv=$BG
	if ! wait_for g.srv "^skiff: ip6 $a6 usable" 10; then
		fail two_hosts6.http6 "server never had $a6 usable"
	elif timeout 60 "$SKIFF" load "http://[$a6]/" -c 8 -n 20000 -k --timeout 10 \
		--dev "switch:$n/1" "${b[@]}" >"$TMP/g.load" 2>&1 &&
		timeout 60 "$SKIFF" load "http://[$a6]/" -c 8 -n 2000 --timeout 10 \
			--dev "switch:$n/1" "${b[@]}" >>"$TMP/g.load" 2>&1 &&
		[ "$(grep -c 'summary requests=[0-9]* ok=[0-9]* failed=0 ' "$TMP/g.load")" = 2 ]; then
		pass "two_hosts6.http6 (keep-alive and close, 0 failed: $(grep -o 'rps=[0-9.]*' "$TMP/g.load" | tr '\n' ' '))"
	else
		fail two_hosts6.http6 "$(grep -E '^skiff load' "$TMP/g.load" | head -n 3 | tr '\n' ' ')"
	fi
	stop "$srv"
	stop "$SW"
}

# (w) `skiff serve --workers 2` on one port (issue 17): each worker attaches
# queue i of 2 of port 0, the switch steers each flow to one queue with
# wire/flow_hash.h.  The peer is skiff load on port 1 (the switch has no
# kernel interface: ab and wrk cannot reach it; skiff load runs the same
# loads, -k -n 20000 -c 64 and -n 4000 -c 16, and counts failures the same
# way).  Both workers' http.requests grow, each accepts at least a quarter
# of the connections, the switch's per-queue counters agree, the server
# costs under 1% of a core idle over 5 s; then `skiff echo --workers 2` on
# the same port echoes 10 MiB intact; a host asking for another queue count
# of a held port is refused.
test_workers() {
	local n=$ID-w srv pid hz t0 t1 ticks r0 r1 c0 c1 total q0 q1
	start_switch "$n" w.sw --ports 4 || { fail workers "switch did not start"; return; }
	bg w.srv "$SKIFF" serve --stack skiff --dev "switch:$n/0" --ip 198.18.6.1/24 --port 80 \
		--workers 2 --stats
	srv=$BG
	if ! wait_for w.srv '^skiff serve: listening.* workers=2' 10; then
		fail workers.serve "no 'listening ... workers=2' line"
		stop "$srv"; stop "$SW"
		return
	fi
	# Both queues attached; another queue count on the held port: refused,
	# by name.
	timeout 5 "$SKIFF" pktgen --dev "switch:$n/0" rx --duration 1 >"$TMP/w.busy" 2>&1
	if ! grep -q "port 0 queue 0 of 2 attached" "$TMP/w.sw" ||
		! grep -q "port 0 queue 1 of 2 attached" "$TMP/w.sw"; then
		fail workers.attach "queues 0 and 1 of 2 not both attached"
	elif ! grep -q "in use with 2 queues, not 1" "$TMP/w.busy"; then
		fail workers.attach "a 1-queue attach to the 2-queue port: $(head -c 160 "$TMP/w.busy")"
	else
		pass "workers.attach (queues 0 and 1 of 2; a 1-queue attach refused)"
	fi
	if timeout 90 "$SKIFF" load http://198.18.6.1/ -c 64 -n 20000 -k --timeout 10 \
		--dev "switch:$n/1" --ip 198.18.6.2/24 >"$TMP/w.load" 2>&1 &&
		timeout 90 "$SKIFF" load http://198.18.6.1/ -c 16 -n 4000 --timeout 10 \
			--dev "switch:$n/1" --ip 198.18.6.2/24 >>"$TMP/w.load" 2>&1 &&
		[ "$(grep -c 'summary requests=[0-9]* ok=[0-9]* failed=0 ' "$TMP/w.load")" = 2 ]; then
		pass "workers.load (-k c64 n20000 and close c16 n4000, 0 failed: $(grep -o 'rps=[0-9.]*' "$TMP/w.load" | tr '\n' ' '))"
	else
		fail workers.load "$(grep -E '^skiff load' "$TMP/w.load" | head -n 3 | tr '\n' ' ')"
	fi
	# Idle: each worker parks on its own eventfd.
	pid=$srv hz=$(getconf CLK_TCK)
	sleep 1
	t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	sleep 5
	t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	ticks=$((t1 - t0))
	if [ $((ticks * 100)) -lt $((hz * 5)) ]; then
		pass "workers.idle_cpu ($ticks ticks of $((hz * 5)) in 5 s, 2 workers)"
	else
		fail workers.idle_cpu "$ticks ticks in 5 s (limit under $((hz * 5 / 100)))"
	fi
	# SIGINT, not TERM: a drain waits for FINs to the load's connections,
	# whose stack left with its process (nothing will ever ACK them), past
	# stop's 5 s; the counters are printed at exit either way.
	stop "$srv" INT
	kill -USR1 "$SW"
	sleep 0.3
	r0=$(val w.srv worker0.http.requests) r1=$(val w.srv worker1.http.requests)
	c0=$(val w.srv worker0.http.conns_accepted) c1=$(val w.srv worker1.http.conns_accepted)
	total=$(val w.srv http.conns_accepted)
	q0=$(val w.sw port.0.q0.tx_frames) q1=$(val w.sw port.0.q1.tx_frames)
	echo "  requests $r0 / $r1, connections $c0 / $c1 of $total; switch to queue 0 / 1: $q0 / $q1 frames"
	if [ "$r0" -eq 0 ] || [ "$r1" -eq 0 ]; then
		fail workers.spread "a worker served nothing: requests $r0 / $r1"
	elif [ "$total" -lt $((64 + 4000)) ] || [ $((c0 + c1)) -ne "$total" ]; then
		fail workers.spread "connections $c0 + $c1, sum $total (want the sum, >= 4064)"
	elif [ $((c0 * 4)) -lt "$total" ] || [ $((c1 * 4)) -lt "$total" ]; then
		fail workers.spread "a worker got under a quarter of $total connections: $c0 / $c1"
	elif [ "$q0" -eq 0 ] || [ "$q1" -eq 0 ] || [ "$(val w.sw port.0.drop_no_queue)" != 0 ]; then
		fail workers.spread "switch queues got $q0 / $q1 frames, drop_no_queue $(val w.sw port.0.drop_no_queue)"
	else
		pass "workers.spread (requests $r0 / $r1, connections $c0 / $c1 of $total)"
	fi
	# The port is free again once both queues are gone; echo --workers 2.
	if ! wait_for w.sw "port 0 queue 1 of 2 detached" 3 || ! wait_for w.sw "port 0 queue 0 of 2 detached" 3; then
		fail workers.echo "the switch did not free both queues"
		stop "$SW"
		return
	fi
	bg w.echo "$SKIFF" echo --dev "switch:$n/0" --ip 198.18.6.1/24 --workers 2 --stats
	local e=$BG line sent recv rc
	if wait_for w.echo ready 10; then
		timeout 60 "$SKIFF" tcp-client --dev "switch:$n/1" --ip 198.18.6.2/24 \
			--connect 198.18.6.1:7 --send-random 10M --expect-echo --timeout 50 \
			>"$TMP/w.cli" 2>&1
		rc=$?
		line=$(grep -m1 '^skiff tcp-client:' "$TMP/w.cli")
		sent=$(sed -nE 's/.*sha256_sent=([0-9a-f]+).*/\1/p' <<<"$line")
		recv=$(sed -nE 's/.*sha256_received=([0-9a-f]+).*/\1/p' <<<"$line")
		if [ $rc -eq 0 ] && [ -n "$sent" ] && [ "$sent" = "$recv" ]; then
			pass "workers.echo (10 MiB echoed by a 2-worker echo host)"
		else
			fail workers.echo "exit $rc: ${line:-$(tail -n 2 "$TMP/w.cli" | tr '\n' ' ')}"
		fi
	else
		fail workers.echo "echo --workers 2 did not attach"
	fi
	stop "$e"
	stop "$SW"
}

# (v) A client of port protocol version 1 (a 16-byte hello, no queue
# fields) is refused with both versions named, and gets no port.
test_old_hello() {
	local n=$ID-v out
	start_switch "$n" v.sw --ports 2 || { fail old_hello "switch did not start"; return; }
	out=$(timeout 10 python3 - "$n" <<'PY' 2>&1
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(5)
s.connect(b"\0skiff-switch/" + sys.argv[1].encode())
s.send(struct.pack("<4I", 0x736b7370, 1, 0, 0))
msg, anc, flags, addr = s.recvmsg(256, 64)
magic, version, status, _, size = struct.unpack_from("<IIiIQ", msg)
text = msg[24:].split(b"\0")[0].decode()
print("version=%d status=%d fds=%d msg=%s" % (version, status, len(anc), text))
PY
)
	stop "$SW"
	echo "  $out"
	if grep -q "version=2 status=71 fds=0 msg=.*version 1, this switch speaks 2" <<<"$out" &&
		! grep -q "port 0 attached" "$TMP/v.sw"; then
		pass old_hello
	else
		fail old_hello "a version-1 hello: '$out'"
	fi
}

# Nothing left behind: the switches' abstract sockets are gone, and
# attaching to a switch that is not running says so.
test_cleanup() {
	local left msg
	left=$(grep -c "@skiff-switch/$ID-" /proc/net/unix)
	msg=$("$SKIFF" pktgen --dev "switch:$ID-none/0" rx 2>&1)
	if [ "$left" != 0 ]; then
		fail cleanup "$left switch sockets left"
	elif ! grep -q "no switch" <<<"$msg"; then
		fail cleanup "attaching to no switch: '$msg'"
	else
		pass cleanup
	fi
}

test_port_to_port
test_learning
test_stopped_reader
test_killed_port
test_ping
test_two_hosts
test_two_hosts6
test_workers
test_old_hello
test_cleanup
summary
