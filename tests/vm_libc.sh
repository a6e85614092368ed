#!/usr/bin/env bash
# tests/vm_libc.sh — the C library an application gets in the unikernel
# (Debian's musl, src/plat/kvm/musl/; docs/unikernel.md "A C library"),
# and the same source hosted on glibc.
#
#   tests/vm_libc.sh [build/skiff] [build/examples] [build/skiff-uk.elf]
#
# examples/libc_check.c answers GET /libc/SEED with the results of
# snprintf (%d %s %x %f %e %g, widths, truncation), strtol/strtoul (ends,
# bases, overflow and errno), qsort (ints and strings), gmtime_r/strftime,
# time and clock_gettime, a malloc/realloc/free loop over 64 slots up to
# 256 KiB (contents checked in place) and malloc(2^40) -> NULL/ENOMEM, and
# memcpy of every size 0..4096 (guards checked) then memmove of every size
# in one buffer, overlapping; then strtod, sscanf, bsearch, calloc (zeroed),
# getentropy and an fopen that must fail.  tests/libc_check.py computes every answer
# from SEED in Python and compares.  Checks, each PASS/FAIL, ending with
# "vm-libc: N passed, N failed":
#   core-free     build/skiff-uk.elf (no application) links none of musl
#                 nor the glue (no __init_libc, musl_syscall_entry, vfprintf)
#   heap-wrapped  every application image (EX/*-uk.elf): nothing calls into
#                 musl's allocator but the heap lock's wrappers
#                 (tests/heap_wrapped.py over objdump's call graph)
#   hosted-SEED   build/examples/libc_check --stack linux on 127.0.0.1
#   guest-boot    the image boots under QEMU TCG (skiff vm --smp 2) and
#                 serves; the second vCPU came up (its own thread block,
#                 musl_ap: "cpu 1 up")
#   guest-SEED    the image's answer for seeds 0, one random, 2^64-1
#   guest-stdout  printf+fflush(stdout) in the guest reached the console
#                 (writev to fd 1)
#   guest-400     a seed that is not a number: 400 (strtoull's end and errno)
#   guest-enosys  fopen in the guest reached open(2), which answered ENOSYS
#                 (the console's line for system call 2)
#   heap-stress   the image booted with heap-stress=3 on --smp 2
#                 (src/plat/kvm/musl/heap_stress.c): both vCPUs allocate,
#                 check, resize, swap and free blocks through the heap lock
#                 for 3 s; "heap-stress: ok", exit 0, both vCPUs did steps
#                 and the lock was found held at least once (they overlapped)
#   heap-unlocked the same with heap-stress=3,unlocked (musl's own calls past
#                 the lock, as the heap was before it): it must fail (a
#                 block's bytes wrong, a vCPU halted by musl's heap check, a
#                 CPU exception or a hang), or the test could not tell
# Traffic goes to 127.0.0.1 only (QEMU's user network, the hosted server's
# loopback port); QEMU is bounded by `timeout` and stopped by pid on exit.
set -u
case "${1:-}" in
-h | --help)
	sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac
cd "$(dirname "$0")/.." || exit 2
SKIFF=${1:-build/skiff}
EX=${2:-build/examples}
CORE=${3:-build/skiff-uk.elf}
LOG=${VM_LOG_DIR:-build/test-logs/vm-libc}
mkdir -p "$LOG"
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=vm-libc
PIDS=()
cleanup() {
	skt_kill_tree "${PIDS[@]}"
	skt_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for f in "$SKIFF" "$EX/libc_check" "$EX/libc_check-uk.elf" "$CORE"; do
	[ -r "$f" ] || { fail setup "missing $f (make all)"; summary; exit 1; }
done
skt_need setup qemu-system-x86_64 python3 curl nm objdump || { summary; exit 1; }



# One seed against a server: the body to a file, then the Python check.
check_seed() { # NAME PORT SEED
	local body=$LOG/$1.body out
	if ! curl -s --max-time 120 -o "$body" "http://127.0.0.1:$2/libc/$3"; then
		fail "$1" "curl failed"
		return
	fi
	out=$(python3 tests/libc_check.py "$3" "$body" 2>&1)
	if [ $? = 0 ]; then
		pass "$1 ($(grep -c '^ok' <<<"$out") lines agree with Python; $(grep '^ok clock' <<<"$out" | sed 's/^ok //'))"
	else
		fail "$1" "$(grep -v '^ok' <<<"$out" | head -5)"
	fi
}

SEEDS=(0 "$(python3 -c 'import random; print(random.getrandbits(64))')" 18446744073709551615)

# ---- the core: none of the C library in an image without an application ----
syms=$(nm "$CORE" | grep -cw '__init_libc\|musl_syscall_entry\|vfprintf\|musl_boot')
if [ "$syms" = 0 ] && nm "$EX/libc_check-uk.elf" | grep -qw __init_libc; then
	pass "core-free ($(basename "$CORE") has no musl symbol; libc_check-uk.elf has __init_libc)"
else
	fail core-free "$syms musl/glue symbols in $CORE"
fi

# ---- every application image: musl's heap only behind the lock ----
if out=$(python3 tests/heap_wrapped.py "$EX"/*-uk.elf 2>&1); then
	pass "heap-wrapped ($(wc -l <<<"$out") images; $(grep libc_check-uk <<<"$out" | sed 's/.*: \([0-9]* callers[^)]*)\).*/\1/'))"
else
	fail heap-wrapped "$(grep -v '^ok' <<<"$out" | head -3)"
fi

# ---- hosted (glibc) ----
HP=$(skt_free_port)
"$EX/libc_check" --stack linux --port "$HP" >"$LOG/hosted.log" 2>&1 &
PIDS+=($!)
for ((i = 0; i < 50; i++)); do
	curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$HP/libc/1" && break
	sleep 0.1
done
for s in "${SEEDS[@]}"; do
	check_seed "hosted-$s" "$HP" "$s"
done
skt_kill_tree "${PIDS[@]}"
PIDS=()

# ---- the guest (musl) ----
GP=$(skt_free_port)
timeout 600 "$SKIFF" vm --accel tcg --smp 2 --image "$EX/libc_check-uk.elf" -p "$GP:80" \
	>"$LOG/guest.log" 2>&1 </dev/null &
PIDS+=($!)
if skt_wait_log "$LOG/guest.log" 'skiff-uk: ready' 90 && grep -aq 'skiff-uk: cpu 1 up' "$LOG/guest.log"; then
	pass "guest-boot (2 vCPUs up)"
	for s in "${SEEDS[@]}"; do
		check_seed "guest-$s" "$GP" "$s"
	done
	if skt_wait_log "$LOG/guest.log" "libc_check: seed ${SEEDS[1]} answered" 5; then
		pass "guest-stdout (the app's printf on the console)"
	else
		fail guest-stdout "no 'libc_check: seed ${SEEDS[1]} answered' in $LOG/guest.log"
	fi
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 "http://127.0.0.1:$GP/libc/12x")
	if [ "$code" = 400 ]; then
		pass "guest-400"
	else
		fail guest-400 "GET /libc/12x answered $code"
	fi
	if grep -aq 'system call 2 is not offered (ENOSYS)' "$LOG/guest.log"; then
		pass "guest-enosys (fopen -> open(2) -> ENOSYS)"
	else
		fail guest-enosys "no ENOSYS line for open (2) in $LOG/guest.log"
	fi
	enosys=$(grep -a 'is not offered (ENOSYS)' "$LOG/guest.log" | sed 's/.*system call \([0-9]*\).*/\1/' | tr '\n' ' ')
	skt_log "vm-libc: system calls answered ENOSYS in the guest: ${enosys:-none}"
else
	fail guest-boot "no ready line: $(tail -5 "$LOG/guest.log")"
fi
skt_kill_tree "${PIDS[@]}"
PIDS=()

# ---- both vCPUs on musl's heap at once (heap-stress=S) ----
heap_run() { # NAME WORD: the guest's exit code in RC, its console in $LOG/NAME.log
	timeout 60 "$SKIFF" vm --accel tcg --smp 2 --image "$EX/libc_check-uk.elf" -- "$2" \
		>"$LOG/$1.log" 2>&1 </dev/null
	RC=$?
}
heap_run heap-stress heap-stress=3
hl=$LOG/heap-stress.log
waits=$(sed -n 's/.*heap lock taken [0-9]* times, \([0-9]*\) of them after a wait.*/\1/p' "$hl")
steps1=$(sed -n 's/.*heap-stress: cpu 1: \([0-9]*\) steps.*/\1/p' "$hl")
if [ "$RC" = 0 ] && grep -aq 'heap-stress: ok (locked): 2 vCPUs' "$hl" &&
	[ "${steps1:-0}" -gt 0 ] && [ "${waits:-0}" -gt 0 ]; then
	pass "heap-stress ($(sed -n 's/.*heap-stress: ok (locked): //p' "$hl" | tr -d '\r'); cpu 1 $steps1 steps; the lock waited $waits times)"
else
	fail heap-stress "exit $RC, cpu 1 steps ${steps1:-none}, lock waits ${waits:-none}: $(grep -a 'heap-stress' "$hl" | tail -3)"
fi
heap_run heap-unlocked heap-stress=3,unlocked
hl=$LOG/heap-unlocked.log
if grep -aq 'heap-stress: ok' "$hl" || [ "$RC" = 0 ]; then
	fail heap-unlocked "exit $RC: the heap without the lock passed ($(grep -a 'overlaps' "$hl" | sed 's/.*; //' | tr '\n\r' '  ')): the test cannot tell"
else
	how=$(grep -a -m1 -o 'heap-stress: FAILED.*\|EXCEPTION vector [0-9]*' "$hl" | tr -d '\r')
	[ "$RC" = 124 ] && how="the guest hung (musl halted every vCPU)"
	pass "heap-unlocked (it fails without the lock: exit $RC, ${how:-see $hl})"
fi
summary
