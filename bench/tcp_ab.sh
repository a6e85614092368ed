#!/usr/bin/env bash
# tcp_ab.sh BINDIR OUTDIR REPS "DELAYS" — A/B of skiff binaries at a
# distance, one way (skiff sends, Linux receives: how issue 37 compares
# BBRs) or in another of bench/tcp_wan.sh's roles (AB_ROLE), through
# bench/tcp_wan.sh.
#
# For each repetition, each delay and each BIN of AB_BINS in turn (so the
# binaries alternate at every delay and repetition), one run of
#   BENCH_TCP_DELAYS=DELAY BENCH_TCP_LOSSES=AB_LOSSES
#   BENCH_TCP_LOSSY_MIB=AB_MIB BENCH_TCP_REPS=1 BENCH_TCP_ROLES=AB_ROLE
#   BENCH_TCP_STACKS=AB_STACKS bench/tcp_wan.sh BINDIR/skiff-BIN
# into OUTDIR/BIN-DELAY-REP (its log beside it, BIN-DELAY-REP.log); Linux
# (AB_LINUX) is added to the stacks of one binary's run, AB_LINUX_WITH's,
# so every repetition has it in the same minute as the skiff runs.  The
# relay's seed is the repetition's number (BENCH_TCP_SEED): in a repetition
# every binary and Linux meet the same losses, and each repetition other
# ones (before 2026-12-06 every run met seed 0's).  Each run
# holds AB_LOCK for itself only (AB_LOCK_EACH): other users of the
# namespaces wait at most one run.  bench/tcp_ab.py OUTDIR makes the tables;
# bench/tcp_trace_plot.py OUTDIR draws the runs' connection traces (skiff's
# beside Linux BBR's, OUTDIR/trace-DELAY-LOSS.png).  Run from the top of a
# worktree (it uses that worktree's bench/ and tests/).
#
# Parameters (environment):
#   AB_BINS        the binaries' suffixes, the first the baseline   "old new"
#   AB_STACKS      skiff's stacks per run           "skiff-bbr skiff"
#                  (skiff is CUBIC: it does not move at 2 % loss, and at
#                  50 ms 2 % one 8 MiB transfer takes ~90 s; leave it out
#                  when only BBR changed)
#   AB_LINUX_WITH  the binary whose runs add AB_LINUX (default: the last
#                  of AB_BINS; "none": no Linux runs)
#   AB_LINUX       the Linux stack of those runs    linux-bbr
#                  (linux-cubic beside skiff's CUBIC)
#   AB_ROLE        bench/tcp_wan.sh's role: send, server or client  send
#                  (server: a Linux client's bytes through skiff's echo)
#   AB_LOSSES      loss in % each way               "1 2"
#   AB_MIB         MiB per transfer                 8
#   AB_FIRST_REP   the first repetition's number    1
#   AB_STOP_AT     epoch seconds: no run starts after it (0: none)
#   AB_LOCK        the lock file                    /tmp/skiff-nettest.lock
#   AB_LOCK_EACH   run: the lock for each run (default); rep: for each
#                  repetition (a few minutes: fewer waits when the lock is
#                  much in demand); none: not taken (the caller holds it)
set -u -o pipefail
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case ${1:-} in -h|--help) usage; exit 0;; esac
[ $# -eq 4 ] || { usage >&2; exit 2; }
bindir=$1 out=$2 reps=$3 delays=$4
bins=${AB_BINS:-"old new"}
stacks=${AB_STACKS:-"skiff-bbr skiff"}
linux_with=${AB_LINUX_WITH:-${bins##* }}
linux=${AB_LINUX:-linux-bbr}
role=${AB_ROLE:-send}
case $role in send|server|client) ;; *) echo "tcp_ab.sh: AB_ROLE is send, server or client" >&2; exit 2;; esac
case $linux in linux-bbr|linux-cubic) ;; *) echo "tcp_ab.sh: AB_LINUX is linux-bbr or linux-cubic" >&2; exit 2;; esac
losses=${AB_LOSSES:-"1 2"}
mib=${AB_MIB:-8}
first=${AB_FIRST_REP:-1}
stop=${AB_STOP_AT:-0}
lock=${AB_LOCK:-/tmp/skiff-nettest.lock}
for b in $bins; do
	case $b in *-*) echo "tcp_ab.sh: a binary's name has no '-': $b" >&2; exit 2;; esac
	[ -x "$bindir/skiff-$b" ] || { echo "tcp_ab.sh: no $bindir/skiff-$b" >&2; exit 2; }
done
each=${AB_LOCK_EACH:-run}
case $each in run|rep|none) ;; *) echo "tcp_ab.sh: AB_LOCK_EACH is run, rep or none" >&2; exit 2;; esac
mkdir -p "$out"
if [ "$each" = rep ]; then
	for rep in $(seq "$first" $((first + reps - 1))); do
		flock "$lock" env AB_FIRST_REP="$rep" AB_LOCK_EACH=none "$0" "$bindir" "$out" 1 "$delays" |
			grep -v '^ALLDONE$'
	done
	echo ALLDONE
	exit 0
fi
runlock=(flock "$lock")
[ "$each" = none ] && runlock=()
for rep in $(seq "$first" $((first + reps - 1))); do
	for d in $delays; do
		for b in $bins; do
			if [ "$stop" -gt 0 ] && [ "$(date +%s)" -gt "$stop" ]; then
				echo "$(date -u +%T) stop: $b d=$d rep=$rep skipped"
				continue
			fi
			st=$stacks
			[ "$b" = "$linux_with" ] && st="$st $linux"
			"${runlock[@]}" env BENCH_TCP_DELAYS="$d" BENCH_TCP_LOSSES="$losses" BENCH_TCP_SEED="$rep" \
				BENCH_TCP_LOSSY_MIB="$mib" BENCH_TCP_REPS=1 BENCH_TCP_ROLES="$role" \
				BENCH_TCP_STACKS="$st" BENCH_TCP_OUT="$out/$b-$d-$rep" \
				bench/tcp_wan.sh "$bindir/skiff-$b" >"$out/$b-$d-$rep.log" 2>&1
			echo "$(date -u +%T) $b d=$d rep=$rep rc=$?"
		done
	done
done
echo ALLDONE
