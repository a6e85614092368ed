#!/usr/bin/env bash
# bench/vm/profile_uk.sh — what one request costs the emulator in the skiff
# unikernel (issue 20), counted by the guest, beside QEMU's own CPU time.
#
#   bench/vm/profile_uk.sh [-n N] [-r REPS] [--nets "user tap"]
#                          [--variants "default flags spin0 spin100"]
#   (make profile-uk)
#
# For each repetition, backend (user networking, TAP) and load (ab -k -c 1,
# ab -c 1), every variant boots once, in turn (alternating, so a noisy
# machine hits all of them alike):
#   default    no guest words: VIRTIO_F_EVENT_IDX suppresses doorbells and
#              interrupts, the spin is learned from the gaps (runner/spin.h);
#   flags      guest word no-event-idx: the virtqueue flags instead;
#   spin0      spin-us=0: park as soon as a turn finds nothing;
#   spin100    spin-us=100: the fixed 100 us spin (the default before).
# The guest runs with `stats shutdown-port=9`; after ab the UDP datagram
# "exit 0" stops it and it prints its counters.  Per request, from the
# guest: doorbells (virtio.notifies, each an MMIO write the emulator traps),
# interrupts taken (irq.virtio_net, irq.timer), LAPIC deadline writes
# (timer.loads), halts (cpu.hlts), parks and frame wake-ups (loop.*), frames
# each way; from the host: QEMU's utime+stime per request (all of its
# threads, /proc/PID/stat) and ab's req/s.  The few curl probes of the boot
# wait are in the counters too (< 0.1% at the default N).
# Output: a table per backend and load (medians over REPS), and the raw rows
# in bench/results/vm-profile-uk-DATE/{rows.csv,table.txt}.
set -u
cd "$(dirname "$0")/../.." || exit 2
N=5000
REPS=3
NETS="user tap"
VARIANTS="default flags spin0 spin100"
usage() {
	sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'
}
while [ $# -gt 0 ]; do
	case $1 in
	-n) N=$2; shift 2 ;;
	-r) REPS=$2; shift 2 ;;
	--nets) NETS=$2; shift 2 ;;
	--variants) VARIANTS=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "profile_uk: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
case $N in '' | *[!0-9]*) echo "profile_uk: -n wants a number" >&2; exit 2 ;; esac
case $REPS in '' | *[!0-9]* | 0) echo "profile_uk: -r wants a number >= 1" >&2; exit 2 ;; esac
for v in $VARIANTS; do
	case $v in default | flags | spin0 | spin100) ;; *) echo "profile_uk: unknown variant '$v'" >&2; exit 2 ;; esac
done
for n in $NETS; do
	case $n in user | tap) ;; *) echo "profile_uk: unknown backend '$n'" >&2; exit 2 ;; esac
done
OUT=bench/results/vm-profile-uk-$(date +%Y-%m-%d-%H%M%S)
mkdir -p "$OUT"
. bench/vm/lib.sh
trap vmb_cleanup EXIT
trap 'exit 130' INT TERM
skt_need profile-uk ab qemu-system-x86_64 || exit 1
[ -r "$VMB_UK" ] || { echo "profile_uk: no $VMB_UK (make uk)" >&2; exit 2; }
ACCEL=$(vmb_accel_name)
case " $NETS " in *" tap "*) vmb_ns_up || { echo "profile_uk: TAP namespace failed" >&2; exit 1; } ;; esac

ticks() { # utime+stime of a process, in clock ticks
	awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0
}

echo "rep,net,load,variant,req_s,failed,qemu_us_per_req,counters" >"$OUT/rows.csv"
HZ=$(getconf CLK_TCK)
for ((rep = 1; rep <= REPS; rep++)); do
	for net in $NETS; do
		for load in k-c1 c1; do
			for variant in $VARIANTS; do
				words="stats shutdown-port=9"
				case $variant in
				flags) words+=" no-event-idx" ;;
				spin0) words+=" spin-us=0" ;;
				spin100) words+=" spin-us=100" ;;
				esac
				log=$OUT/$rep-$net-$load-$variant.log
				port=$(vmb_free_tcp_port)
				uport=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
				VMB_UK_ARGS_TAP="ip=$VMB_TAP_GUEST/24 gw=$VMB_TAP_HOST $words"
				VMB_UK_ARGS_USER=$words
				VMB_EXTRA_FWD=$uport:9/udp # user networking only
				vmb_start skiff "$net" "$port" "$log" || { echo "profile_uk: boot failed: $log" >&2; exit 1; }
				vmb_wait_http "$net" "$port" 90 "$OUT/body" || { echo "profile_uk: no HTTP answer; see $log" >&2; exit 1; }
				ka=""
				[ "$load" = k-c1 ] && ka=-k
				t0=$(ticks "$VMB_QPID")
				vmb_in "$net" timeout 300 ab $ka -c 1 -n "$N" "$(vmb_url "$net" "$port")" >"$log.ab" 2>&1
				t1=$(ticks "$VMB_QPID")
				if [ "$net" = tap ]; then
					vmb_in tap python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", (sys.argv[1], 9))' "$VMB_TAP_GUEST"
				else
					python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", ("127.0.0.1", int(sys.argv[1])))' "$uport"
				fi
				for ((i = 0; i < 100; i++)); do
					kill -0 "$VMB_TPID" 2>/dev/null || break
					sleep 0.1
				done
				rps=$(awk '/^Requests per second/{print $4}' "$log.ab")
				failed=$(awk '/^Failed requests/{print $3}' "$log.ab")
				[ -n "$rps" ] || { echo "profile_uk: ab failed; see $log.ab" >&2; exit 1; }
				qus=$(( (t1 - t0) * 1000000 / HZ / N ))
				counters=$(grep -aE '^(virtio|cpu|irq|timer|loop|dev|http)\.[a-z_0-9]+ [0-9]+' "$log" | tr -d '\r' | tr ' \n' '= ' )
				echo "$rep,$net,$load,$variant,$rps,$failed,$qus,$counters" >>"$OUT/rows.csv"
				echo "profile_uk: rep $rep $net ab$ka -c 1: $variant $rps req/s, failed $failed, QEMU $qus us/req"
			done
		done
	done
done
python3 - "$OUT/rows.csv" "$N" "$ACCEL" <<'EOF' | tee "$OUT/table.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
n, accel = int(sys.argv[2]), sys.argv[3]
show = [("req/s", None), ("failed", None), ("QEMU us/req", None),
        ("doorbells (virtio.notifies)", "virtio.notifies"),
        ("doorbells skipped", "virtio.notify_skipped"),
        ("interrupts: virtio-net", "irq.virtio_net"), ("interrupts: timer", "irq.timer"),
        ("LAPIC deadline writes", "timer.loads"), ("halts", "cpu.hlts"),
        ("parks", "loop.parks"), ("frame wake-ups", "loop.wakeups_frame"),
        ("frames in", "dev.rx_frames"), ("frames out", "dev.tx_frames")]
bad = [r for r in rows if r["failed"] != "0"]
groups = {}
for r in rows:
    c = dict(kv.split("=", 1) for kv in r["counters"].split() if "=" in kv)
    reqs = int(c.get("http.requests", n)) or n
    g = groups.setdefault((r["net"], r["load"]), {}).setdefault(r["variant"], [])
    vals = {"req/s": float(r["req_s"]), "failed": float(r["failed"] or 0),
            "QEMU us/req": float(r["qemu_us_per_req"])}
    for label, key in show:
        if key:
            vals[label] = int(c.get(key, 0)) / reqs
    g.append(vals)
print(f"accelerator: {accel}; {n} requests per run; medians of {len(rows) // max(1, len(groups) * len(next(iter(groups.values()))))} runs; per request unless named")
for (net, load), var in groups.items():
    names = list(var)
    print(f"\n{net} ab {'-k ' if load == 'k-c1' else ''}-c 1")
    print("| per request | " + " | ".join(names) + " |")
    print("|---|" + "--:|" * len(names))
    for label, _ in show:
        cells = []
        for v in names:
            m = statistics.median(x[label] for x in var[v])
            cells.append(f"{m:,.0f}" if label in ("req/s", "failed", "QEMU us/req") else f"{m:.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
if bad:
    print(f"\n{len(bad)} run(s) had failed requests: those numbers are void")
    sys.exit(1)
EOF
