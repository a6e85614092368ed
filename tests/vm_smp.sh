#!/usr/bin/env bash
# tests/vm_smp.sh — the unikernel with more than one vCPU (issue 17):
# `skiff vm --smp N` under multi-threaded TCG.
#
#   tests/vm_smp.sh [build/skiff] [build/skiff-uk.elf]
#
# Checks, each reported PASS/FAIL, ending with "vm-smp: N passed, N failed":
#   smp-args    --smp 0, 17, x, 2x and '' exit 2 with the message; --smp 2's
#               QEMU line has -smp 2 and -accel tcg,thread=multi; --smp 1's
#               line is the one `skiff vm` gave before --smp (-smp 1, -accel tcg)
#   smp-boot    --smp 2 (user networking): the guest finds 2 CPUs in the
#               MADT, prints "cpu 1 up" and "cpus: 2 up", is ready, and
#               exit-after ends it with exit 0
#   smp-boot4   the same with --smp 4: "cpus: 4 up"
#   smp-idle    the --smp 2 guest idle (both vCPUs halted, the AP with no
#               timer armed): QEMU's CPU time over 5 s stays under 3% of a core
# Every QEMU run is bounded by `timeout` and stopped by pid on exit.  User
# networking only: the traffic stays inside QEMU and 127.0.0.1.
# Run it under flock /tmp/skiff-nettest.lock (tests/run-all.sh does).
set -u
cd "$(dirname "$0")/.." || exit 2
SKIFF=${1:-build/skiff}
IMG=${2:-build/skiff-uk.elf}
LOG=${VM_LOG_DIR:-build/test-logs/vm-smp}
mkdir -p "$LOG"
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=vm-smp
PIDS=()
cleanup() {
	skt_kill_tree "${PIDS[@]}"
	skt_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for f in "$SKIFF" "$IMG"; do
	[ -r "$f" ] || { fail setup "missing $f (make all uk)"; summary; exit 1; }
done
skt_need setup qemu-system-x86_64 || { summary; exit 1; }

# --- the option ---------------------------------------------------------------
bad=""
for v in 0 17 x 2x ""; do
	"$SKIFF" vm --smp "$v" --image "$IMG" --dry-run >/dev/null 2>"$LOG/args.err"
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -q -- "--smp wants a number of vCPUs 1..16, not '$v'" "$LOG/args.err"; then
		bad="$bad '$v'(exit $rc)"
	fi
done
line2=$("$SKIFF" vm --smp 2 --accel tcg --image "$IMG" --dry-run 2>/dev/null)
line1=$("$SKIFF" vm --smp 1 --accel tcg --image "$IMG" --dry-run 2>/dev/null)
line0=$("$SKIFF" vm --accel tcg --image "$IMG" --dry-run 2>/dev/null)
if [ -n "$bad" ]; then
	fail smp-args "not refused with exit 2 and the message:$bad"
elif [[ "$line2" != *" -smp 2 "* || "$line2" != *" -accel tcg,thread=multi "* ]]; then
	fail smp-args "--smp 2 gave: $line2"
elif [[ "$line1" != "$line0" || "$line1" != *" -smp 1 "* || "$line1" != *" -accel tcg "* ]]; then
	fail smp-args "--smp 1 changed the QEMU line: $line1"
else
	pass "smp-args (bad values exit 2; --smp 2: -smp 2 -accel tcg,thread=multi; --smp 1 unchanged)"
fi

# --- boot: every CPU up ---------------------------------------------------------
boot() { # NAME N
	local name=$1 n=$2 i
	timeout 90 "$SKIFF" vm --smp "$n" --accel tcg --image "$IMG" -- exit-after=3 \
		</dev/null >"$LOG/$name.log" 2>&1
	local rc=$? miss=""
	for ((i = 1; i < n; i++)); do
		grep -aq "skiff-uk: cpu $i up" "$LOG/$name.log" || miss="$miss $i"
	done
	if [ "$rc" -eq 0 ] && [ -z "$miss" ] && grep -aq "skiff-uk: cpus: $n in the MADT" "$LOG/$name.log" &&
		grep -aq "skiff-uk: cpus: $n up" "$LOG/$name.log" && grep -aq "skiff-uk: ready" "$LOG/$name.log" &&
		grep -aq "skiff-uk: exit 0" "$LOG/$name.log"; then
		pass "$name ($n CPUs up: $(grep -a 'skiff-uk: cpu [0-9]* up' "$LOG/$name.log" | sed 's/skiff-uk: //' | paste -sd, -))"
	else
		fail "$name" "exit $rc, CPUs not up:${miss:- none}; see $LOG/$name.log"
	fi
}
boot smp-boot 2
boot smp-boot4 4

# --- idle: halted vCPUs cost the host nothing -----------------------------------
timeout 90 "$SKIFF" vm --smp 2 --accel tcg --image "$IMG" -- exit-after=30 \
	</dev/null >"$LOG/idle.log" 2>&1 &
VM=$!
PIDS+=("$VM")
for ((i = 0; i < 300; i++)); do
	grep -aq "skiff-uk: ready" "$LOG/idle.log" && break
	sleep 0.1
done
sleep 1 # past the boot's last work
QEMU=$(skt_descendant "$VM" qemu-system-x86)
if [ -n "$QEMU" ] && [ -r "/proc/$QEMU/stat" ] && grep -aq "skiff-uk: cpus: 2 up" "$LOG/idle.log"; then
	ticks() { awk '{print $14 + $15}' "/proc/$QEMU/stat"; }
	hz=$(getconf CLK_TCK)
	c0=$(ticks); sleep 5; c1=$(ticks)
	# in hundredths of a percent of one core
	pct100=$(( (c1 - c0) * 10000 / (5 * hz) ))
	shown=$(awk -v p="$pct100" 'BEGIN{printf "%.2f", p / 100}')
	if [ "$pct100" -lt 300 ]; then
		pass "smp-idle (2 vCPUs halted: QEMU pid $QEMU used ${shown}% of a core over 5 s)"
	else
		fail smp-idle "QEMU used ${shown}% of a core over 5 s with both vCPUs meant to be halted"
	fi
else
	fail smp-idle "no QEMU with 2 CPUs up under skiff vm; see $LOG/idle.log"
fi
skt_kill_tree "$VM"
wait "$VM" 2>/dev/null
PIDS=()

summary
