#!/usr/bin/env bash
# bench/vm/bench.sh — issue 7: the skiff unikernel against a Linux guest
# that serves the same app, under identical QEMU settings (bench/vm/lib.sh).
#
#   bench/vm/bench.sh [--mode full|quick] [--reps N] [--dur S] [--net user|tap|both]
#                     [--guests "linux skiff [nginx]"] [--sizes "41 6000 102400 1048576"]
#                     [--big-loads "ab-k-c8 ab-c16"] [--big-net user|tap|both] [--out DIR]
#                     [--smp "1 2"] [--smp-reps N] [--smp-loads "..."] [--smp-only]
#
#   full  (make bench-vm)       3 repetitions, 6 s per load, user + tap; files on tap
#                               (about 20 min)
#   quick (make bench-vm-quick) 1 repetition, 3 s per load, user only (about 3 min)
#
# Per repetition and network backend: both guests are booted fresh, each
# must answer GET / with the same 41-byte body (correctness, before any
# measurement), both idle 10 s side by side while their QEMU processes' CPU
# time is read from /proc/PID/stat, then each load runs against one guest
# and then the other, the order flipping every repetition.  A guest that
# does not answer HTTP within the boot timeout is "unavailable" (today the
# unikernel answers UDP only): its rows say so and the rest goes on.
#
# Loads, from the host (or from inside the TAP's namespace), each bounded by
# time (-t / -d) and by `timeout`:
#   ab -k -c 1 | 8 | 64, ab -c 1 | 16 | 64, wrk -H 'Connection: close' -c 1000
#   (wrk --timeout 10s: its 2 s default counts TCG's SYN retransmits as errors)
# Each measured run follows an unmeasured warm-up of the same load
# (BENCH_VM_WARMUP_S, default 1 s; its output is kept as *.log.warmup).
# A run with any failed request, non-2xx answer or socket error is kept in
# runs.csv with status "failed" and left out of the medians.  Per run, beside
# req/s: the QEMU process's CPU (% of a host core, and µs per request) and the
# client's (ab's or wrk's user+system time, bash's `time`, % of one core; ab is
# one thread, so near 100% the client was the limit, not the guest).
#
# Body sizes (--sizes, or BENCH_VM_SIZES; default "41 6000 102400 1048576"):
#   41     the built-in "/" of both guests: the seven loads above, and idle.
#   other  one file each, in a tree written once per run under a temporary
#          directory with bench/http/bench.py's names and bytes (lib.sh
#          vmb_site_make), served by the unikernel with `skiff vm --root TREE`
#          and by the Linux guest from the same files in its initramfs
#          (`skiff serve --stack linux --root /site`).  After the 41-byte
#          loads both guests boot again with the tree; every file must come
#          back byte-identical (cmp) before anything is measured.  Only the
#          loads of --big-loads run (BENCH_VM_BIG_LOADS, default
#          "ab-k-c8 ab-c16", as make bench's BENCH_BIG_LOADS), on the
#          backends of --big-net (BENCH_VM_BIG_NETS; default tap when tap runs,
#          else user): they add about 2 min per repetition and backend.
#   --sizes 41 is the bench as it was; --sizes "6000 102400 1048576" the files only.
#
# More than one vCPU (--smp, or BENCH_VM_SMP; default "1 2" in full mode,
# off in quick mode; issue 17, seed 000 part two): after the rest, on a TAP
# only, each guest boots with `skiff vm --smp N` for each N (-smp N, -accel
# tcg,thread=multi; for N > 1 the TAP is created multi_queue and QEMU gets
# queues=N,vhost=off and mq=on,vectors=2N+2: multi-queue for both guests),
# --mem BENCH_VM_SMP_MEM (512M: the unikernel sizes a stack per vCPU) for
# every N, so only N changes.  The Linux guest's /init sets N combined
# channels (ETHTOOL_SCHANNELS) and runs N SO_REUSEPORT servers, one pinned
# per vCPU; the unikernel runs a stack per vCPU.  Each N > 1 guest must say
# so on its console ("N combined channels", "N queue pairs") or its rows
# are noted.  Order per repetition: skiff 1, Linux 1, skiff 2, Linux 2, ...,
# reversed on the next.  Loads: --smp-loads (BENCH_VM_SMP_LOADS, default the
# keep-alive loads and ab -c 16: "ab-k-c1 ab-k-c8 ab-k-c64 ab-c16"), each
# with an idle 10 s first; --smp-reps (BENCH_VM_SMP_REPS) repetitions,
# default 1 so that make bench-vm stays bounded (about 4 min at 6 s per
# load); BENCH_VM_SMP_REPS=3 is the full version.  Rows: net "tap-smp" in
# runs.csv with a vcpus column; results.md has the table with req/s, QEMU's
# CPU per request, the client's CPU and the host's (both cores) busy share.
# --smp-only: these rows and nothing else.
#
# Environment: BENCH_VM_SIZES, BENCH_VM_BIG_LOADS, BENCH_VM_BIG_NETS (as the
# options above); BENCH_VM_BOOT_S (60: the Linux guest must answer by then),
# BENCH_VM_UK_BOOT_S (30 full, 15 quick), BENCH_VM_WARMUP_S (1),
# BENCH_VM_BUDGET_S (loads past it are skipped; default the estimate + 25%);
# VMB_* of bench/vm/lib.sh (VMB_ACCEL=auto|kvm|tcg, the images).
#
# Output: bench/results/vm-YYYY-MM-DD-HHMMSS/ results.md, runs.csv, rps.png,
# meta.txt and logs/ (consoles, QEMU command lines, every tool's output).
set -u
cd "$(dirname "$0")/../.." || exit 2
MODE=full REPS="" DUR="" NETS="" GUESTS="linux skiff" OUT=""
SIZES=${BENCH_VM_SIZES:-41 6000 102400 1048576}
BIG_LOADS=${BENCH_VM_BIG_LOADS:-ab-k-c8 ab-c16}
BIG_NETS=${BENCH_VM_BIG_NETS:-}
SMP=${BENCH_VM_SMP-unset}
SMP_REPS=${BENCH_VM_SMP_REPS:-1}
SMP_LOADS=${BENCH_VM_SMP_LOADS:-ab-k-c1 ab-k-c8 ab-k-c64 ab-c16}
SMP_MEM=${BENCH_VM_SMP_MEM:-512M}
SMP_ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--mode) MODE=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--dur) DUR=$2; shift 2 ;;
	--net) NETS=$2; shift 2 ;;
	--guests) GUESTS=$2; shift 2 ;;
	--sizes) SIZES=$2; shift 2 ;;
	--big-loads) BIG_LOADS=$2; shift 2 ;;
	--big-net) BIG_NETS=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--smp) SMP=$2; shift 2 ;;
	--smp-reps) SMP_REPS=$2; shift 2 ;;
	--smp-loads) SMP_LOADS=$2; shift 2 ;;
	--smp-only) SMP_ONLY=1; shift ;;
	-h|--help) sed -n '2,/^set -u$/p' "$0" | sed '$d'; exit 0 ;;
	*) echo "bench-vm: unknown argument $1" >&2; exit 2 ;;
	esac
done
case $MODE in
full) REPS=${REPS:-3} DUR=${DUR:-6} NETS=${NETS:-both} UKB=30 ;;
quick) REPS=${REPS:-1} DUR=${DUR:-3} NETS=${NETS:-user} UKB=15 ;;
*) echo "bench-vm: --mode full|quick" >&2; exit 2 ;;
esac
if [ "$SMP" = unset ]; then
	SMP=""
	[ "$MODE" = full ] && SMP="1 2"
fi
for n in $SMP; do
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 16 ]; then
		echo "bench-vm: --smp: '$n' is not a vCPU count 1..16" >&2
		exit 2
	fi
done
[[ $SMP_REPS =~ ^[0-9]+$ ]] || { echo "bench-vm: --smp-reps: '$SMP_REPS' is not a number" >&2; exit 2; }
if [ -n "$SMP_ONLY" ]; then
	[ -n "$SMP" ] || { echo "bench-vm: --smp-only with no --smp" >&2; exit 2; }
	SIZES="" NETS="tap"
fi
[ "$NETS" = both ] && NETS="user tap"
[ "$BIG_NETS" = both ] && BIG_NETS="user tap"
if [ -z "$BIG_NETS" ]; then
	BIG_NETS=user
	[[ " $NETS " == *" tap "* ]] && BIG_NETS=tap
fi
for s in $SIZES; do
	if ! [[ $s =~ ^[0-9]+$ ]] || [ "$s" -eq 0 ]; then
		echo "bench-vm: --sizes: '$s' is not a byte count" >&2
		exit 2
	fi
done
BOOT_S=${BENCH_VM_BOOT_S:-60}         # the Linux guest must answer by then
UK_BOOT_S=${BENCH_VM_UK_BOOT_S:-$UKB}  # the unikernel, first repetition (later: 5 s if it did not answer)
BUDGET_S=${BENCH_VM_BUDGET_S:-}       # loads past it are skipped; default: the estimate + 25%
IDLE_S=10
WARMUP_S=${BENCH_VM_WARMUP_S:-1}       # an unmeasured run of the same load first
OUT=${OUT:-bench/results/vm-$(date +%Y-%m-%d-%H%M%S)}
LOGD=$OUT/logs
mkdir -p "$LOGD"
CSV=$OUT/runs.csv
BODY='Hello, world! This is skiff serving you.\n'
. bench/vm/lib.sh
T0=$SECONDS
say() { printf '[bench-vm %3dm%02ds] %s\n' $(((SECONDS - T0) / 60)) $(((SECONDS - T0) % 60)) "$*"; }
cleanup() { vmb_cleanup; [ -n "${SITE_WORK:-}" ] && rm -rf "$SITE_WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

need=("$VMB_SKIFF" "$VMB_UK" "$VMB_LINUX/vmlinuz" "$VMB_LINUX/initrd.img")
[[ " $GUESTS " == *" nginx "* ]] && need+=("$VMB_LINUX/initrd-nginx.img")
for f in "${need[@]}"; do
	[ -r "$f" ] || { echo "bench-vm: missing $f (make all linux-guest, linux-guest-nginx for nginx)" >&2; exit 2; }
done
for t in ab wrk curl qemu-system-x86_64 gnuplot python3; do
	command -v "$t" >/dev/null || { echo "bench-vm: $t missing (tools/deps.sh)" >&2; exit 2; }
done
ulimit -n 65536 2>/dev/null || ulimit -n 4096
HZ=$(getconf CLK_TCK)

# name|tool|concurrency|keepalive
LOADS=(
	"ab-k-c1|ab|1|1" "ab-k-c8|ab|8|1" "ab-k-c64|ab|64|1"
	"ab-c1|ab|1|0" "ab-c16|ab|16|0" "ab-c64|ab|64|0"
	"wrk-close-c1000|wrk|1000|0"
)
# The loads of the file sizes: BIG_LOADS, in LOADS' order.
BLOADS=()
for b in $BIG_LOADS; do
	found=""
	for spec in "${LOADS[@]}"; do [ "${spec%%|*}" = "$b" ] && found=$spec; done
	[ -n "$found" ] || { echo "bench-vm: --big-loads: unknown load $b (known: ${LOADS[*]%%|*})" >&2; exit 2; }
done
for spec in "${LOADS[@]}"; do [[ " $BIG_LOADS " == *" ${spec%%|*} "* ]] && BLOADS+=("$spec"); done
HAVE41="" FILES=()
for s in $SIZES; do
	if [ "$s" = 41 ]; then HAVE41=1; else FILES+=("$s"); fi
done

ACCEL=$(vmb_accel_name)
if [ "$ACCEL" = tcg ]; then
	if [ -e /sys/module/kvm_pvm ]; then WHY="TCG: /dev/kvm is PVM (kvm_pvm), slower than TCG"
	elif [ -e /dev/kvm ]; then WHY="TCG (VMB_ACCEL=$VMB_ACCEL)"
	else WHY="TCG: no /dev/kvm"; fi
else
	WHY="KVM (hardware: kvm_intel or kvm_amd)"
fi
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "mode=$MODE reps=$REPS dur=$DUR warmup=$WARMUP_S nets=$NETS guests=$GUESTS"
	echo "sizes=$SIZES big_loads=$BIG_LOADS big_nets=$BIG_NETS"
	echo "smp=$SMP smp_reps=$SMP_REPS smp_loads=$SMP_LOADS smp_mem=$SMP_MEM"
	echo "accel=$WHY"
	echo "cpu=$(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo) x $(nproc)"
	echo "host_kernel=$(uname -r)"
	echo "host_load=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "qemu=$(qemu-system-x86_64 --version | head -1)"
	echo "linux_kernel=$(cat "$VMB_LINUX/kernel.txt" 2>/dev/null)"
	echo "skiff_commit=$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo '+dirty')"
	echo "ab=ab $(ab -V | awk '/Version/{print $5}' | tr -d ,)"
	echo "wrk=$(wrk -v 2>&1 | head -1)"
} >"$OUT/meta.txt"
echo "rep,net,guest,load,tool,concurrency,keepalive,duration_s,requests,failed,rps,qemu_cpu_pct,status,note,max_latency_ms,body,qemu_us_req,client_cpu_pct,vcpus,host_cpu_pct" >"$CSV"
csv() { echo "$*" >>"$CSV"; }
# A row without a measurement (unavailable, skipped): csv_none REP NET GUEST LOAD BODY STATUS NOTE
csv_none() { csv "$1,$2,$3,$4,,,,$DUR,0,0,,,$6,$7,,$5,,,$RUN_VCPUS,"; }
RUN_VCPUS=1   # the vCPUs of the guest being measured (the --smp rows set it)
# The host's busy share of all its cores (user..steal over all), from /proc/stat.
host_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }

nguest=$(wc -w <<<"$GUESTS")
nnet=$(wc -w <<<"$NETS")
nbig=0
for n in $BIG_NETS; do [[ " $NETS " == *" $n "* ]] && nbig=$((nbig + 1)); done
[ ${#FILES[@]} = 0 ] && nbig=0
est=0
[ -n "$HAVE41" ] && est=$((REPS * nnet * (nguest * ${#LOADS[@]} * (DUR + WARMUP_S + 2) + IDLE_S + 15)))
# The file rows: a second boot of each guest (about 15 s under TCG), the checks, the loads.
est=$((est + REPS * nbig * (nguest * (20 + ${#FILES[@]} * ${#BLOADS[@]} * (DUR + WARMUP_S + 2)))))
# The --smp rows: per repetition, N and guest, a boot (the Linux guest takes
# ~15 s under TCG), the idle and the loads.
SLOADS=()
for b in $SMP_LOADS; do
	found=""
	for spec in "${LOADS[@]}"; do [ "${spec%%|*}" = "$b" ] && found=$spec; done
	[ -n "$found" ] || { echo "bench-vm: --smp-loads: unknown load $b (known: ${LOADS[*]%%|*})" >&2; exit 2; }
	SLOADS+=("$found")
done
nsmp=$(wc -w <<<"$SMP")
sguests=$(for g in $GUESTS; do [ "$g" = nginx ] || echo "$g"; done | tr '\n' ' ')
est=$((est + SMP_REPS * nsmp * $(wc -w <<<"$sguests") * (25 + IDLE_S + ${#SLOADS[@]} * (DUR + WARMUP_S + 2))))
BUDGET_S=${BUDGET_S:-$((est + est / 4))}
no41=""
[ -z "$HAVE41" ] && no41=", no 41-byte rows"
smpsay=""
[ -n "$SMP" ] && smpsay="; vCPUs {$SMP} x {$sguests} x {$SMP_LOADS} on a TAP, $SMP_REPS rep(s)"
say "mode $MODE: $REPS rep(s) x net {$NETS} x guests {$GUESTS} x ${#LOADS[@]} loads x ${DUR} s$no41; files {${FILES[*]}} x {$BIG_LOADS} on {$BIG_NETS}$smpsay; accel $ACCEL; about $((est / 60)) min; out $OUT"
SITE_WORK=""
if [ ${#FILES[@]} -gt 0 ] && [ "$nbig" -gt 0 ]; then
	SITE_WORK=$(mktemp -d /tmp/skiff-benchvm.XXXXXX)
	VMB_TMP=$SITE_WORK
	vmb_site_make "$SITE_WORK" "${FILES[@]}" || { echo "bench-vm: cannot write the tree" >&2; exit 1; }
	{
		echo "site=$(cd "$VMB_SITE_DIR" && for s in "${FILES[@]}"; do f=$(vmb_body_path "$s"); f=${f#/}; printf '%s %s %s; ' "$f" "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -c1-16)"; done)"
		echo "site_initrd=initrd.img ($(stat -c %s "$VMB_LINUX/initrd.img") bytes) + the tree's cpio ($(stat -c %s "$SITE_WORK/site-cpio.img") bytes)"
	} >>"$OUT/meta.txt"
fi

declare -A UNAVAIL=()   # "net guest" -> reason, once a guest is found not serving

# run_load REP NET GUEST QPID PORT LOADSPEC [BODY]   (BODY: bytes, default 41)
run_load() {
	local rep=$1 net=$2 guest=$3 qpid=$4 port=$5 spec=$6 body=${7:-41}
	local name tool conc ka url log c0 c1 t0 t1 rc req fail rps cpu status note maxl="" tag=""
	local TIMEFORMAT='%U %S' ccpu qus
	IFS='|' read -r name tool conc ka <<<"$spec"
	[ "$body" != 41 ] && tag=" ${body} B"
	if [ $((SECONDS - T0)) -gt "$BUDGET_S" ]; then
		csv_none "$rep" "$net" "$guest" "$name" "$body" skipped "time budget"
		say "rep $rep/$REPS $net $guest $name$tag: skipped (past the ${BUDGET_S} s budget)"
		return
	fi
	url=$(vmb_url "$net" "$port" "$(vmb_body_path "$body")")
	log=$LOGD/r$rep-$net-$guest-$name.log
	[ "$body" != 41 ] && log=$LOGD/r$rep-$net-$guest-$name-$body.log
	if [ "$WARMUP_S" -gt 0 ]; then
		# Warm-up, not measured (logged): the same load for WARMUP_S s.  It
		# absorbs the one-off stall that the first new connections after a
		# change of load meet under user networking (see docs/bench-vm.md).
		if [ "$tool" = ab ]; then
			local kw=()
			[ "$ka" = 1 ] && kw=(-k)
			vmb_in "$net" timeout 20 ab -r "${kw[@]}" -c "$conc" -t "$WARMUP_S" -n 1000000 "$url" >"$log.warmup" 2>&1
		else
			vmb_in "$net" timeout 20 wrk -t 2 -c "$conc" -d "${WARMUP_S}s" --timeout 10s -H 'Connection: close' "$url" >"$log.warmup" 2>&1
		fi
	fi
	local h0 h1 hcpu vtag=""
	[ "$net" = tap-smp ] && vtag=" ${RUN_VCPUS} vCPU"
	h0=$(host_ticks)
	c0=$(vmb_ticks "$qpid")
	t0=$(date +%s.%N)
	# `time` (TIMEFORMAT above) writes the client's user and system seconds.
	if [ "$tool" = ab ]; then
		local kopt=()
		[ "$ka" = 1 ] && kopt=(-k)
		{ time vmb_in "$net" timeout $((DUR + 30)) ab -r "${kopt[@]}" -c "$conc" -t "$DUR" -n 1000000 "$url" >"$log" 2>&1; } 2>"$log.time"
		rc=$?
		t1=$(date +%s.%N)
		req=$(awk '/^Complete requests:/{print $3}' "$log")
		fail=$(awk '/^Failed requests:/{f=$3} /^Non-2xx responses:/{n=$3} END{print f + n}' "$log")
		rps=$(awk '/^Requests per second:/{print $4}' "$log")
		maxl=$(awk '/^ *100% /{print $2}' "$log")
	else
		{ time vmb_in "$net" timeout $((DUR + 30)) wrk -t 2 -c "$conc" -d "${DUR}s" --timeout 10s -H 'Connection: close' "$url" >"$log" 2>&1; } 2>"$log.time"
		rc=$?
		t1=$(date +%s.%N)
		req=$(awk '/ requests in /{print $1}' "$log")
		fail=$(awk '/Socket errors:/{gsub(",", ""); s = $4 + $6 + $8 + $10} /Non-2xx or 3xx/{n = $5} END{print s + n}' "$log")
		rps=$(awk '/^Requests\/sec:/{print $2}' "$log")
		maxl=$(awk '/^ *Latency /{v = $4; f = 1; if (v ~ /us$/) f = 0.001; else if (v ~ /ms$/) f = 1; else if (v ~ /m$/) f = 60000; else if (v ~ /s$/) f = 1000; sub(/[a-z]+$/, "", v); printf "%.0f", v * f}' "$log")
	fi
	c1=$(vmb_ticks "$qpid")
	h1=$(host_ticks)
	hcpu=$(awk -v a="$h0" -v b="$h1" 'BEGIN{split(a, x, " "); split(b, y, " "); if (y[2] > x[2]) printf "%.0f", (y[1] - x[1]) * 100 / (y[2] - x[2])}')
	cpu=$(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v hz="$HZ" 'BEGIN{printf "%.0f", (b - a) * 100 / hz / (e - s)}')
	qus=$(awk -v a="$c0" -v b="$c1" -v n="${req:-0}" -v hz="$HZ" 'BEGIN{if (n > 0) printf "%.0f", (b - a) * 1e6 / hz / n}')
	ccpu=$(awk -v s="$t0" -v e="$t1" 'NF == 2 {printf "%.0f", ($1 + $2) * 100 / (e - s)}' "$log.time")
	status=ok note=""
	if [ "$rc" -ne 0 ] || [ -z "$req" ] || [ -z "$rps" ] || [ "${req:-0}" = 0 ]; then
		status=failed note="exit $rc"
	elif [ "${fail:-0}" != 0 ]; then
		status=failed note="$fail failed"
	fi
	if ! kill -0 "$qpid" 2>/dev/null; then status=failed note="guest died"; fi
	csv "$rep,$net,$guest,$name,$tool,$conc,$ka,$DUR,${req:-0},${fail:-0},${rps:-0},$cpu,$status,$note,$maxl,$body,$qus,$ccpu,$RUN_VCPUS,$hcpu"
	say "rep $rep/$( [ "$net" = tap-smp ] && echo "$SMP_REPS" || echo "$REPS") $net $guest$vtag $name$tag: ${rps:-?} req/s, ${req:-?} requests, ${fail:-?} failed, QEMU ${cpu}% of a core (${qus:-?} µs/req), client ${ccpu:-?}%, host ${hcpu:-?}% busy, slowest ${maxl:-?} ms${note:+ [$status: $note]}"
	sleep 1
}

live() { # live NET GUEST: boot it and check it; sets TP QP UP
	local net=$1 g=$2 t
	t=$BOOT_S
	[ "$g" = skiff ] && t=$UK_BOOT_S
	[ -n "${UNAVAIL[$net $g]:-}" ] && t=5
	vmb_start "$g" "$net" "${PORT[$g]}" "$LOGD/r$rep-$net-$g.console" || { say "$g: QEMU did not start"; return 1; }
	TP[$g]=$VMB_TPID QP[$g]=$VMB_QPID
	local b0=$SECONDS
	if vmb_wait_http "$net" "${PORT[$g]}" "$t" "$LOGD/r$rep-$net-$g.body"; then
		if printf "$BODY" | cmp -s - "$LOGD/r$rep-$net-$g.body"; then
			UP[$g]=1
			say "rep $rep/$REPS $net $g: HTTP up after $((SECONDS - b0)) s, body OK (41 bytes)"
		else
			UNAVAIL[$net $g]="wrong body"
			say "rep $rep/$REPS $net $g: WRONG BODY ($(wc -c <"$LOGD/r$rep-$net-$g.body") bytes): not measured"
		fi
	else
		[ -z "${UNAVAIL[$net $g]:-}" ] && UNAVAIL[$net $g]="no HTTP answer within $t s of boot"
		say "rep $rep/$REPS $net $g: unavailable (${UNAVAIL[$net $g]})"
	fi
}

live_site() { # live_site NET GUEST: boot it serving the tree; every file must match; sets TP QP UP
	local net=$1 g=$2 t s f
	t=$BOOT_S
	[ "$g" = skiff ] && t=$UK_BOOT_S
	[ -n "${UNAVAIL[site $net $g]:-}" ] && t=5
	VMB_ROOT=$VMB_SITE_DIR VMB_SITE_INITRD=$VMB_SITE_IMG \
		vmb_start "$g" "$net" "${PORT[$g]}" "$LOGD/r$rep-$net-$g-site.console" || { say "$g: QEMU did not start"; return 1; }
	TP[$g]=$VMB_TPID QP[$g]=$VMB_QPID
	local b0=$SECONDS
	f=$(vmb_body_path "${FILES[0]}")
	if ! vmb_wait_http "$net" "${PORT[$g]}" "$t" "$LOGD/r$rep-$net-$g-site.body" "$f"; then
		[ -z "${UNAVAIL[site $net $g]:-}" ] && UNAVAIL[site $net $g]="no answer for $f within $t s of boot"
		say "rep $rep/$REPS $net $g (files): unavailable (${UNAVAIL[site $net $g]})"
		return 0
	fi
	for s in "${FILES[@]}"; do
		f=$(vmb_body_path "$s")
		if ! vmb_in "$net" curl -s -f -m 60 -o "$LOGD/r$rep-$net-$g-site.body" "$(vmb_url "$net" "${PORT[$g]}" "$f")" ||
			! cmp -s "$VMB_SITE_DIR$f" "$LOGD/r$rep-$net-$g-site.body"; then
			UNAVAIL[site $net $g]="wrong body for $f ($(wc -c <"$LOGD/r$rep-$net-$g-site.body" 2>/dev/null || echo no) bytes)"
			say "rep $rep/$REPS $net $g (files): ${UNAVAIL[site $net $g]}: not measured"
			return 0
		fi
	done
	rm -f "$LOGD/r$rep-$net-$g-site.body"
	UP[$g]=1
	say "rep $rep/$REPS $net $g (files): HTTP up after $((SECONDS - b0)) s, ${#FILES[@]} file(s) byte-identical (${FILES[*]} B)"
}

# site_loads NET GUEST...: every file size x BLOADS, guests alternating per load.
site_loads() {
	local net=$1 s spec g
	shift
	for s in "${FILES[@]}"; do
		for spec in "${BLOADS[@]}"; do
			for g in "$@"; do
				if [ -n "${UP[$g]:-}" ]; then
					local port=${PORT[$g]}
					[ "$net" = tap ] && port=80
					run_load "$rep" "$net" "$g" "${QP[$g]}" "$port" "$spec" "$s"
				else
					csv_none "$rep" "$net" "$g" "${spec%%|*}" "$s" unavailable "${UNAVAIL[site $net $g]:-}"
				fi
			done
		done
	done
}

for ((rep = 1; rep <= REPS; rep++)); do
	for net in $NETS; do
		dofiles=""
		[ ${#FILES[@]} -gt 0 ] && [[ " $BIG_NETS " == *" $net "* ]] && dofiles=1
		[ -z "$HAVE41" ] && [ -z "$dofiles" ] && continue
		if [ "$net" = tap ]; then
			vmb_ns_down
			vmb_ns_up || { say "cannot create the TAP namespace: skipping tap"; vmb_ns_down; continue; }
		fi
		# Guest order flips every repetition.
		order=$GUESTS
		[ $((rep % 2)) = 0 ] && order=$(tr ' ' '\n' <<<"$GUESTS" | tac | tr '\n' ' ')
		declare -A TP=() QP=() PORT=() UP=()
		for g in $order; do PORT[$g]=$(vmb_free_tcp_port); done
		if [ "$net" = user ]; then
			if [ -n "$HAVE41" ]; then
				for g in $order; do live user "$g"; done
				# Idle: both guests side by side, no load, IDLE_S seconds.
				sleep 2
				declare -A I0=()
				for g in $order; do I0[$g]=$(vmb_ticks "${QP[$g]}"); done
				sleep "$IDLE_S"
				for g in $order; do
					pct=$(awk -v a="${I0[$g]}" -v b="$(vmb_ticks "${QP[$g]}")" -v hz="$HZ" -v s="$IDLE_S" 'BEGIN{printf "%.1f", (b - a) * 100 / hz / s}')
					kill -0 "${QP[$g]}" 2>/dev/null || pct=""
					csv "$rep,$net,$g,idle,none,0,0,$IDLE_S,0,0,,$pct,$([ -n "$pct" ] && echo ok || echo failed),,,41,,"
					say "rep $rep/$REPS $net $g: idle, QEMU ${pct:-?}% of a core over $IDLE_S s"
				done
				for spec in "${LOADS[@]}"; do
					for g in $order; do
						if [ -n "${UP[$g]:-}" ]; then
							run_load "$rep" "$net" "$g" "${QP[$g]}" "${PORT[$g]}" "$spec"
						else
							csv_none "$rep" "$net" "$g" "${spec%%|*}" 41 unavailable "${UNAVAIL[$net $g]:-}"
						fi
					done
				done
				for g in $order; do vmb_stop "${TP[$g]}"; done
			fi
			if [ -n "$dofiles" ]; then
				# The files: both guests again, booted with the tree, side by side.
				UP=()
				for g in $order; do PORT[$g]=$(vmb_free_tcp_port); live_site user "$g"; done
				# shellcheck disable=SC2086
				site_loads user $order
				for g in $order; do vmb_stop "${TP[$g]}"; done
			fi
		else
			# TAP: one guest at a time owns 198.18.0.2 on skvtap0, so each
			# guest runs its loads in turn (order flipping per repetition).
			for g in $order; do
				if [ -n "$HAVE41" ]; then
					live tap "$g"
					sleep 2
					i0=$(vmb_ticks "${QP[$g]}"); sleep "$IDLE_S"; i1=$(vmb_ticks "${QP[$g]}")
					pct=$(awk -v a="$i0" -v b="$i1" -v hz="$HZ" -v s="$IDLE_S" 'BEGIN{printf "%.1f", (b - a) * 100 / hz / s}')
					kill -0 "${QP[$g]}" 2>/dev/null || pct=""
					csv "$rep,$net,$g,idle,none,0,0,$IDLE_S,0,0,,$pct,$([ -n "$pct" ] && echo ok || echo failed),,,41,,"
					say "rep $rep/$REPS $net $g: idle, QEMU ${pct:-?}% of a core over $IDLE_S s"
					for spec in "${LOADS[@]}"; do
						if [ -n "${UP[$g]:-}" ]; then
							run_load "$rep" "$net" "$g" "${QP[$g]}" 80 "$spec"
						else
							csv_none "$rep" "$net" "$g" "${spec%%|*}" 41 unavailable "${UNAVAIL[$net $g]:-}"
						fi
					done
					vmb_stop "${TP[$g]}"
				fi
				if [ -n "$dofiles" ]; then
					unset "UP[$g]"
					live_site tap "$g"
					site_loads tap "$g"
					vmb_stop "${TP[$g]}"
				fi
			done
			vmb_ns_down
		fi
		unset TP QP PORT UP
		if ! grep -q ",$net,linux,[a-z0-9-]*,\(ab\|wrk\),.*,\(ok\|failed\)," "$CSV" && [[ " $GUESTS " == *" linux "* ]]; then
			say "the Linux guest never served HTTP on $net: see $LOGD/r$rep-$net-linux*.console"
			[ "$net" = user ] && exit 1
		fi
	done
done

# --- More than one vCPU: each guest at each N of SMP, on a TAP --------------
# smp_guest REP GUEST N: a namespace whose TAP is multi-queue when N > 1,
# the guest with --smp N --mem SMP_MEM, the body checked, its console
# checked for N queues, idle, then the loads.
smp_guest() {
	local rep=$1 g=$2 n=$3 net=tap-smp tag="$2-smp$3" t=$BOOT_S spec b0 pct i0 i1 why="" con
	RUN_VCPUS=$n
	[ "$g" = skiff ] && t=$UK_BOOT_S
	vmb_ns_down
	if ! VMB_TAP_MQ=$((n > 1 ? 1 : 0)) vmb_ns_up; then
		vmb_ns_down
		why="cannot create the TAP namespace"
	fi
	con=$LOGD/r$rep-$tag.console
	if [ -z "$why" ] && ! VMB_SMP=$n VMB_MEM=$SMP_MEM vmb_start "$g" tap 80 "$con"; then
		why="QEMU did not start"
	fi
	b0=$SECONDS
	if [ -z "$why" ] && ! vmb_wait_http tap 80 "$t" "$LOGD/r$rep-$tag.body"; then
		why="no HTTP answer within $t s of boot"
	elif [ -z "$why" ] && ! printf '%b' "$BODY" | cmp -s - "$LOGD/r$rep-$tag.body"; then
		why="wrong body"
	fi
	if [ -n "$why" ]; then
		say "rep $rep/$SMP_REPS smp $g $n vCPU: unavailable ($why)"
		for spec in "${SLOADS[@]}"; do csv_none "$rep" "$net" "$g" "${spec%%|*}" 41 unavailable "$why"; done
		[ -n "${VMB_TPID:-}" ] && vmb_stop "$VMB_TPID"
		vmb_ns_down
		RUN_VCPUS=1
		return
	fi
	# N > 1 must have N queues in the guest, or the row measures one queue.
	local note=""
	if [ "$n" -gt 1 ]; then
		if [ "$g" = linux ] && ! grep -aq "init: eth0: $n combined channels" "$con"; then
			note="no $n combined channels on the console"
		elif [ "$g" = skiff ] && ! grep -aq "$n queue pairs for $n vCPUs" "$con"; then
			note="no $n queue pairs on the console"
		fi
	fi
	say "rep $rep/$SMP_REPS smp $g $n vCPU: HTTP up after $((SECONDS - b0)) s, body OK$( [ -n "$note" ] && echo " [$note]")$(tr -d '\r' <"$con" | grep -a -m1 -o 'combined channels.*\|[0-9]* queue pairs for [0-9]* vCPUs' | sed 's/^/; /')"
	sleep 2
	i0=$(vmb_ticks "$VMB_QPID"); sleep "$IDLE_S"; i1=$(vmb_ticks "$VMB_QPID")
	pct=$(awk -v a="$i0" -v b="$i1" -v hz="$HZ" -v s="$IDLE_S" 'BEGIN{printf "%.1f", (b - a) * 100 / hz / s}')
	kill -0 "$VMB_QPID" 2>/dev/null || pct=""
	csv "$rep,$net,$g,idle,none,0,0,$IDLE_S,0,0,,$pct,$([ -n "$pct" ] && echo ok || echo failed),$note,,41,,,$n,"
	say "rep $rep/$SMP_REPS smp $g $n vCPU: idle, QEMU ${pct:-?}% of a core over $IDLE_S s"
	local qp=$VMB_QPID tp=$VMB_TPID
	for spec in "${SLOADS[@]}"; do run_load "$rep" "$net" "$g" "$qp" 80 "$spec"; done
	vmb_stop "$tp"
	vmb_ns_down
	RUN_VCPUS=1
}
if [ -n "$SMP" ]; then
	for ((rep = 1; rep <= SMP_REPS; rep++)); do
		seq=""
		for n in $SMP; do for g in $sguests; do seq+="$g:$n "; done; done
		[ $((rep % 2)) = 0 ] && seq=$(tr ' ' '\n' <<<"$seq" | tac | tr '\n' ' ')
		for gn in $seq; do smp_guest "$rep" "${gn%%:*}" "${gn##*:}"; done
		for n in $SMP; do
			for g in $sguests; do
				[ -r "$LOGD/r1-$g-smp$n.console.cmd" ] && [ "$rep" = 1 ] &&
					echo "qemu_smp${n}_$g=$(cat "$LOGD/r1-$g-smp$n.console.cmd")" >>"$OUT/meta.txt"
			done
		done
	done
fi

# Exact command lines, for docs/bench-vm.md.
{
	for net in $NETS; do
		for g in $GUESTS; do
			[ -r "$LOGD/r1-$net-$g.console.cmd" ] && echo "qemu_${net}_$g=$(cat "$LOGD/r1-$net-$g.console.cmd")"
			[ -r "$LOGD/r1-$net-$g-site.console.cmd" ] && echo "qemu_${net}_${g}_files=$(cat "$LOGD/r1-$net-$g-site.console.cmd")"
		done
	done
} >>"$OUT/meta.txt"
python3 bench/vm/report.py "$OUT" || { say "report failed"; exit 1; }
say "done in $(((SECONDS - T0) / 60))m$(((SECONDS - T0) % 60))s: $OUT/results.md, runs.csv, rps.png"
cat "$OUT/results.md"
