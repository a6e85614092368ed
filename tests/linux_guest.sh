#!/usr/bin/env bash
# tests/linux_guest.sh — the Linux benchmark guest of bench-vm (issue 7)
# boots under QEMU (TCG unless hardware KVM) with the same settings as the
# skiff unikernel, and `skiff serve --stack linux` inside it answers GET /
# through user networking's hostfwd on 127.0.0.1 with the 41-byte body.
#
#   tests/linux_guest.sh [build/vm/linux]     (make linux-guest-test)
#
# Checks, PASS/FAIL each, ending with "linux-guest: N passed, N failed":
#   boot   curl gets an answer within LINUX_GUEST_BOOT_S (default 90) s
#   body   the body is exactly "Hello, world! This is skiff serving you.\n"
#   keep   ab -k: 200 requests on one connection, none failed
#   close  ab: 100 requests, a new connection each, none failed
#   idle   the idle guest's QEMU uses under 30% of a host core over 5 s
#   files  bench-vm's files (6000 B, 100 KiB, 1 MiB; lib.sh vmb_site_make):
#          the Linux guest booted with the tree in its initramfs and the
#          unikernel booted with `skiff vm --root` of the same tree (as
#          bench.sh boots them) each return every file byte-identical (cmp)
# Bounded: every command under `timeout`; QEMU is killed by pid at exit.
set -u
cd "$(dirname "$0")/.." || exit 2
VMB_LINUX=${1:-build/vm/linux}
LOG=${VM_LOG_DIR:-build/test-logs/linux-guest}
BOOT_S=${LINUX_GUEST_BOOT_S:-90}
mkdir -p "$LOG"
VMB_LIFETIME=300
. bench/vm/lib.sh # and, through it, tests/lib.sh
trap vmb_cleanup EXIT INT TERM
SKT_SUITE=linux-guest

for f in "$VMB_SKIFF" "$VMB_UK" "$VMB_LINUX/vmlinuz" "$VMB_LINUX/initrd.img"; do
	[ -r "$f" ] || { fail setup "missing $f (make linux-guest)"; summary; exit 1; }
done
skt_need setup qemu-system-x86_64 python3 curl || { summary; exit 1; }
PORT=$(vmb_free_tcp_port)
URL=http://127.0.0.1:$PORT/
t0=$SECONDS
if ! vmb_start linux user "$PORT" "$LOG/console.log"; then
	fail boot "QEMU did not start; see $LOG/console.log"
elif vmb_wait_http user "$PORT" "$BOOT_S" "$LOG/body"; then
	pass "boot (HTTP after $((SECONDS - t0)) s, accel $(vmb_accel_name))"
	if printf 'Hello, world! This is skiff serving you.\n' | cmp -s - "$LOG/body"; then
		pass "body (41 bytes, as expected)"
	else
		fail body "got $(wc -c <"$LOG/body") bytes: $(head -c 80 "$LOG/body" | tr '\n' ' ')"
	fi
	for t in "keep:-k -n 200 -c 1" "close:-n 100 -c 4"; do
		name=${t%%:*}
		# shellcheck disable=SC2086
		timeout 60 ab -r ${t#*:} "$URL" >"$LOG/ab-$name.log" 2>&1
		rc=$?
		done_n=$(awk '/^Complete requests:/{print $3}' "$LOG/ab-$name.log")
		bad=$(awk '/^Failed requests:/{print $3}' "$LOG/ab-$name.log")
		non2xx=$(awk '/^Non-2xx responses:/{print $3}' "$LOG/ab-$name.log")
		want=$(echo "${t#*:}" | awk '{for (i = 1; i < NF; i++) if ($i == "-n") print $(i + 1)}')
		if [ "$rc" -eq 0 ] && [ "${done_n:-0}" = "$want" ] && [ "${bad:-1}" = 0 ] && [ -z "$non2xx" ]; then
			pass "$name (ab ${t#*:}: $(awk '/^Requests per second:/{print $4}' "$LOG/ab-$name.log") req/s, 0 failed)"
		else
			fail "$name" "ab rc $rc, complete ${done_n:-?}, failed ${bad:-?}, non-2xx ${non2xx:-0}; see $LOG/ab-$name.log"
		fi
	done
	hz=$(getconf CLK_TCK)
	c0=$(vmb_ticks "$VMB_QPID"); sleep 5; c1=$(vmb_ticks "$VMB_QPID")
	pct=$(((c1 - c0) * 100 / (5 * hz)))
	if [ "$pct" -lt 30 ]; then pass "idle (QEMU used ${pct}% of a core over 5 s)"
	else fail idle "QEMU used ${pct}% of a core while the guest idles"; fi
else
	fail boot "no HTTP answer in $BOOT_S s; see $LOG/console.log"
fi
vmb_stop "$VMB_TPID"

# files: the tree of bench.sh's larger bodies, in both guests.
SITE_WORK=$(mktemp -d /tmp/skiff-lgtest.XXXXXX)
trap 'vmb_cleanup; rm -rf "$SITE_WORK"' EXIT INT TERM
VMB_TMP=$SITE_WORK
if ! vmb_site_make "$SITE_WORK" 6000 102400 1048576; then
	fail files "vmb_site_make could not write the tree and initramfs"
else
	for g in linux skiff; do
		PORT=$(vmb_free_tcp_port)
		t0=$SECONDS
		bad=""
		if ! VMB_ROOT=$VMB_SITE_DIR VMB_SITE_INITRD=$VMB_SITE_IMG vmb_start "$g" user "$PORT" "$LOG/console-files-$g.log"; then
			bad="QEMU did not start"
		elif ! vmb_wait_http user "$PORT" "$BOOT_S" "$LOG/files-$g.body" /x6000.bin; then
			bad="no answer for /x6000.bin in $BOOT_S s; see $LOG/console-files-$g.log"
		else
			for s in 6000 102400 1048576; do
				f=$(vmb_body_path "$s")
				if ! timeout 90 curl -s -f -m 60 -o "$LOG/files-$g.body" "http://127.0.0.1:$PORT$f"; then
					bad="GET $f failed"
				elif ! cmp -s "$VMB_SITE_DIR$f" "$LOG/files-$g.body"; then
					bad="$f: $(wc -c <"$LOG/files-$g.body") bytes, not the tree's $s"
				fi
				[ -n "$bad" ] && break
			done
		fi
		vmb_stop "$VMB_TPID"
		if [ -z "$bad" ]; then pass "files ($g guest: 6000 B, 100 KiB, 1 MiB byte-identical, $((SECONDS - t0)) s)"
		else fail files "$g guest: $bad"; fi
	done
fi
summary
