#!/usr/bin/env bash
# /tmp/bbr-ab.sh OLD NEW OUTDIR REPS DELAYS: alternate old/new per delay and repetition,
# one lock hold per repetition.
old=$1 new=$2 out=$3 reps=$4 delays=$5
cd /work/wt-bbr
for rep in $(seq 1 "$reps"); do
  flock /tmp/skiff-nettest.lock bash -c '
    for d in '"$delays"'; do
      for b in '"$old $new"'; do
        st="skiff-bbr"; [ "$b" = '"$new"' ] && st="skiff-bbr linux-bbr"
        env BENCH_TCP_DELAYS=$d BENCH_TCP_LOSSES="1 2" BENCH_TCP_LOSSY_MIB=8 BENCH_TCP_REPS=1 \
          BENCH_TCP_ROLES=send BENCH_TCP_STACKS="$st" BENCH_TCP_OUT='"$out"'/$b-$d-'"$rep"' \
          bench/tcp_wan.sh /tmp/bbrbin/skiff-$b >'"$out"'/$b-$d-'"$rep"'.log 2>&1
        echo "$(date -u +%T) $b d=$d rep='"$rep"' rc=$?"
      done
    done'
done
echo ALLDONE
