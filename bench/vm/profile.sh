#!/usr/bin/env bash
# bench/vm/profile.sh — where the Linux guest spends a request (issue 7).
#
#   bench/vm/profile.sh [SECONDS]          (make profile-vm; default 8)
#
# Boots the Linux guest from initrd-perf.img (skiff serve --stack linux plus
# perf) under the benchmark's QEMU settings, with one more forward: UDP
# 127.0.0.1:P -> guest port 9, the control port of bench/vm/init.c.  Then:
#   1. for `ab -k -c 1` and `ab -c 1`: the guest's /proc/stat, softirqs,
#      interrupts, TCP counters and the server's CPU time before and after,
#      printed per request (bench/vm/profile.py);
#   2. `perf record -a -g` inside the guest during `ab -k -c 1`, and its
#      report from the guest's console.  Under TCG there is no PMU: perf
#      falls back to the cpu-clock software event (timer sampling).
# Output: bench/results/vm-profile-DATE/{profile.txt,perf-report.txt,console.log}
set -u
cd "$(dirname "$0")/../.." || exit 2
DUR=${1:-8}
OUT=bench/results/vm-profile-$(date +%Y-%m-%d-%H%M%S)
mkdir -p "$OUT"
. bench/vm/lib.sh
trap vmb_cleanup EXIT
trap 'exit 130' INT TERM
[ -r "$VMB_LINUX/initrd-perf.img" ] || { echo "profile: make linux-guest-perf first" >&2; exit 2; }
PORT=$(vmb_free_tcp_port)
UPORT=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
VMB_EXTRA_FWD=$UPORT:9/udp
vmb_start perf user "$PORT" "$OUT/console.log" || exit 1
vmb_wait_http user "$PORT" 90 "$OUT/body" || { echo "profile: no HTTP answer; see $OUT/console.log"; exit 1; }
echo "profile: guest up; $(cat "$OUT/console.log.cmd")" | tee "$OUT/profile.txt"
python3 bench/vm/profile.py "$PORT" "$UPORT" "$DUR" | tee -a "$OUT/profile.txt"

echo "profile: perf record -a -g inside the guest for $DUR s during ab -k -c 1"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5); s.sendto(("perf %s" % sys.argv[2]).encode(), ("127.0.0.1", int(sys.argv[1]))); print(s.recv(100).decode().strip())' "$UPORT" "$DUR"
timeout $((DUR + 30)) ab -k -c 1 -t "$DUR" -n 1000000 "http://127.0.0.1:$PORT/" >"$OUT/ab-perf.log" 2>&1
end=$((SECONDS + 180))
until grep -aq "init: perf report end" "$OUT/console.log" || [ "$SECONDS" -gt "$end" ]; do sleep 1; done
# perf colours its lines on a console: strip the escapes.
sed -n '/init: perf report begin/,/init: perf report end/p' "$OUT/console.log" |
	sed 's/\x1b\[[0-9;]*m//g' >"$OUT/perf-report.txt"
echo "profile: ab -k -c 1 under perf: $(awk '/^Requests per second/{print $4}' "$OUT/ab-perf.log") req/s"
idle=$(awk '/native_safe_halt/{gsub("%", "", $1); s += $1} END{print s + 0}' "$OUT/perf-report.txt")
echo "profile: ${idle}% of the samples are the idle loop (native_safe_halt); the rest, top 40:"
grep -a -v '^#' "$OUT/perf-report.txt" | grep -a '%' | grep -av native_safe_halt | head -40
echo "profile: $OUT"
