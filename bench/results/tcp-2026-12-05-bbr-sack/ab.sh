#!/usr/bin/env bash
# ab.sh BINDIR OUTDIR REPS "DELAYS": A/B of BINDIR/skiff-old against
# BINDIR/skiff-new, alternating at every delay and repetition, one
# bench/tcp_wan.sh run per binary and delay (1 and 2 % loss, 8 MiB, one
# way: skiff sends); skiff-bbr and skiff (CUBIC) for both, Linux BBR
# after the new binary's run.  One hold of /tmp/skiff-nettest.lock per
# repetition.  Run from the worktree's top.
set -u
bindir=$1 out=$2 reps=$3 delays=$4
mkdir -p "$out"
for rep in $(seq 1 "$reps"); do
	flock /tmp/skiff-nettest.lock bash -c '
	for d in '"$delays"'; do
		for b in old new; do
			st="skiff-bbr skiff"; [ $b = new ] && st="skiff-bbr skiff linux-bbr"
			env BENCH_TCP_DELAYS=$d BENCH_TCP_LOSSES="1 2" BENCH_TCP_LOSSY_MIB=8 BENCH_TCP_REPS=1 \
				BENCH_TCP_ROLES=send BENCH_TCP_STACKS="$st" BENCH_TCP_OUT='"$out"'/$b-$d-'"$rep"' \
				bench/tcp_wan.sh '"$bindir"'/skiff-$b >'"$out"'/$b-$d-'"$rep"'.log 2>&1
			echo "$(date -u +%T) $b d=$d rep='"$rep"' rc=$?"
		done
	done'
done
echo ALLDONE
