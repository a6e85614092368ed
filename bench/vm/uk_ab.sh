#!/usr/bin/env bash
# bench/vm/uk_ab.sh — two skiff-uk.elf images alternating on the same small
# loads (issue 32: the guest's words moved from http/server.c to the sites
# runtime), under QEMU with user networking on 127.0.0.1 only.
#
#   bench/vm/uk_ab.sh OLD_ELF NEW_ELF REPS OUT.csv [SKIFF]
#
# Each repetition boots each image once (the order flips every repetition:
# old first on odd ones) with `skiff vm --root` over a two-file tree (a
# 3-byte index.html and a 6,000-byte file, made here), warms it up with
# 2,000 keep-alive requests, then runs ab -k -c 8 -n 30000 on the small
# file, ab -c 8 -n 3000 (a connection each), ab -k -c 8 -n 20000 on the
# 6,000-byte one, and ends the guest through its shutdown port.  Each row
# of OUT.csv: rep, img (old|new), load, requests/s, failed, and the QEMU
# process's CPU time (user + system) per request in microseconds.  Run it
# under the network lock (flock /tmp/skiff-nettest.lock); on a host
# without KVM it is TCG, and the figures are TCG's.
set -u
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
	usage
	exit 0
fi
if [ $# -lt 4 ]; then
	usage >&2
	exit 2
fi
OLD=$1 NEW=$2 REPS=$3 OUT=$4
SKIFF=${5:-build/skiff}
for f in "$OLD" "$NEW" "$SKIFF"; do
	[ -e "$f" ] || { echo "uk_ab: $f: not found" >&2; exit 2; }
done
command -v ab >/dev/null || { echo "uk_ab: ab (apache2-utils) is missing" >&2; exit 2; }
TREE=$(mktemp -d "${TMPDIR:-/tmp}/skiff-ukab.XXXXXX")
trap 'rm -rf "$TREE"' EXIT
echo hi >"$TREE/index.html"
head -c 6000 /dev/urandom >"$TREE/f6000.bin"
PORT=${UK_AB_PORT:-18931} CTL=${UK_AB_CTL:-18932}
qpid() { pgrep -P "$1" -f qemu-system-x86 | head -1; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
echo "rep,img,load,rps,failed,qemu_us_per_req" >"$OUT"
run_one() { # IMAGE LABEL REP
	local img=$1 lab=$2 rep=$3 vm q
	"$SKIFF" vm --accel tcg --image "$img" --root "$TREE" -p "$PORT:80" -p "$CTL:9/udp" -- \
		shutdown-port=9 exit-after=300 >"$TREE/vm-$lab.log" 2>&1 &
	vm=$!
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT/index.html" && break
		sleep 0.2
	done
	ab -q -k -n 2000 -c 8 "http://127.0.0.1:$PORT/index.html" >/dev/null 2>&1
	q=$(qpid "$vm")
	local load name args t0 t1 res n
	for load in "k-c8-small:-k -n 30000 -c 8 http://127.0.0.1:$PORT/index.html" \
		"close-c8-small:-n 3000 -c 8 http://127.0.0.1:$PORT/index.html" \
		"k-c8-6000:-k -n 20000 -c 8 http://127.0.0.1:$PORT/f6000.bin"; do
		name=${load%%:*} args=${load#*:}
		t0=$(ticks "$q")
		# shellcheck disable=SC2086 # args is ab's words
		res=$(ab -q $args 2>&1)
		t1=$(ticks "$q")
		n=$(awk '/^Complete requests:/ {print $3}' <<<"$res")
		echo "$rep,$lab,$name,$(awk '/^Requests per second:/ {print $4}' <<<"$res"),$(awk '/^Failed requests:/ {print $3}' <<<"$res"),$(awk -v a="$t0" -v b="$t1" -v n="${n:-0}" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.1f", n ? (b-a)/hz*1e6/n : 0}')" >>"$OUT"
	done
	python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", ("127.0.0.1", int(sys.argv[1])))' "$CTL"
	wait "$vm"
}
for rep in $(seq "$REPS"); do
	if [ $((rep % 2)) = 1 ]; then
		run_one "$OLD" old "$rep"; run_one "$NEW" new "$rep"
	else
		run_one "$NEW" new "$rep"; run_one "$OLD" old "$rep"
	fi
done
