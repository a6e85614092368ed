#!/usr/bin/env bash
# ab.sh BINDIR OUTDIR REPS "DELAYS": A/B of BINDIR/skiff-<bin> for each bin
# of AB_BINS (default "old new"), alternating at every delay and
# repetition, one bench/tcp_wan.sh run per binary and delay (1 and 2 %
# loss, 8 MiB, one way: skiff sends); skiff-bbr and skiff (CUBIC) for
# each, Linux BBR after the `new` binary's run.  One hold of
# /tmp/skiff-nettest.lock per repetition; repetitions numbered from
# AB_FIRST_REP (default 1).  Run from the worktree's top.  (The
# tcp-2026-12-05-bbr-sack folder's ab.sh with the two variables added,
# and AB_STOP_AT, epoch seconds: no run starts after it.)
set -u
bindir=$1 out=$2 reps=$3 delays=$4
bins=${AB_BINS:-"old new"}
first=${AB_FIRST_REP:-1}
stop=${AB_STOP_AT:-0}
mkdir -p "$out"
for rep in $(seq "$first" $((first + reps - 1))); do
	flock /tmp/skiff-nettest.lock bash -c '
	for d in '"$delays"'; do
		for b in '"$bins"'; do
			[ '"$stop"' -gt 0 ] && [ "$(date +%s)" -gt '"$stop"' ] && { echo "$(date -u +%T) stop: $b d=$d skipped"; continue; }
			st="skiff-bbr skiff"; [ $b = new ] && st="skiff-bbr skiff linux-bbr"
			env BENCH_TCP_DELAYS=$d BENCH_TCP_LOSSES="1 2" BENCH_TCP_LOSSY_MIB=8 BENCH_TCP_REPS=1 \
				BENCH_TCP_ROLES=send BENCH_TCP_STACKS="$st" BENCH_TCP_OUT='"$out"'/$b-$d-'"$rep"' \
				bench/tcp_wan.sh '"$bindir"'/skiff-$b >'"$out"'/$b-$d-'"$rep"'.log 2>&1
			echo "$(date -u +%T) $b d=$d rep='"$rep"' rc=$?"
		done
	done'
done
echo ALLDONE
