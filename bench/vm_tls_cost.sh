#!/usr/bin/env bash
# bench/vm_tls_cost.sh — what a full TLS handshake costs QEMU under TCG
# (issue 35: "a TLS 1.3 full handshake costs no more QEMU CPU than today's
# TLS 1.2 one"): the BearSSL image over TLS 1.2 against the wolfSSL image
# (make uk-tls13) over TLS 1.3 and 1.2, alternating, REPS rounds.
#
#   bench/vm_tls_cost.sh [build/skiff] [build/skiff-uk.elf] [build/skiff-uk-tls13.elf]
#   VM_TLS_N=300 VM_TLS_REPS=3 (defaults)
#
# Each run boots the image (one vCPU, --accel tcg, --mem 512M, an ECDSA
# P-256 certificate made here), waits 3 s, then runs
# `ab -f TLS1.x -n N -c 1 https://localhost:PORT/` (N new connections, each
# a full handshake and one GET of the 41-byte page), reading the QEMU
# process's CPU time (utime + stime, /proc/PID/stat) around it, and the
# same for an idle stretch as long as ab took, which is subtracted.
# Prints one line per run and the median per engine, in ms of QEMU CPU per
# handshake.  Run under flock /tmp/skiff-nettest.lock (QEMU, timing).
set -u
cd "$(dirname "$0")/.." || exit 2
SKIFF=${1:-build/skiff}
BEAR=${2:-build/skiff-uk.elf}
WOLF=${3:-build/skiff-uk-tls13.elf}
N=${VM_TLS_N:-300}
REPS=${VM_TLS_REPS:-3}
T=$(mktemp -d "${TMPDIR:-/tmp}/skiff-vmtlscost.XXXXXX")
VM=
trap '[ -n "$VM" ] && kill "$VM" 2>/dev/null; rm -rf "$T"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/k" -out "$T/c" -days 1 \
	-subj /CN=localhost -addext subjectAltName=DNS:localhost 2>/dev/null || exit 1
port() { python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
qemu_of() { # the qemu process under skiff vm's pid
	local p=$1 c
	for _ in 1 2 3 4; do
		c=$(pgrep -P "$p" | head -1)
		[ -z "$c" ] && break
		p=$c
		[ "$(cat /proc/$p/comm 2>/dev/null)" = qemu-system-x86 ] && break
	done
	echo "$p"
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
run() { # run NAME IMAGE VERSION
	local https ctl q t0 t1 i0 i1 w0 w1 wall
	https=$(port) ctl=$(port)
	timeout 600 "$SKIFF" vm --accel tcg --mem 512M --image "$2" --tls-cert "$T/c" --tls-key "$T/k" \
		-p "$https:443" -p "$ctl:9/udp" -- shutdown-port=9 exit-after=590 </dev/null >"$T/log" 2>&1 &
	VM=$!
	for _ in $(seq 600); do grep -aq 'skiff-uk: ready' "$T/log" && break; sleep 0.1; done
	sleep 3
	q=$(qemu_of "$VM")
	w0=$(date +%s.%N) t0=$(ticks "$q")
	ab -f "TLS$3" -n "$N" -c 1 "https://localhost:$https/" >"$T/ab" 2>&1
	t1=$(ticks "$q") w1=$(date +%s.%N)
	wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$w0" "$w1")
	i0=$(ticks "$q")
	sleep "$wall"
	i1=$(ticks "$q")
	python3 -c "import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'exit 0', ('127.0.0.1', int(sys.argv[1])))" "$ctl"
	wait "$VM"
	VM=
	local done failed
	done=$(awk '/^Complete requests:/{print $3}' "$T/ab") failed=$(awk '/^Failed requests:/{print $3}' "$T/ab")
	python3 - "$1" "$3" "$N" "$HZ" "$t0" "$t1" "$i0" "$i1" "$wall" "$done" "$failed" <<'PY'
import sys
name, ver, n, hz, t0, t1, i0, i1, wall, done, failed = sys.argv[1:]
n, hz = int(n), int(hz)
busy, idle = (int(t1) - int(t0)) / hz, (int(i1) - int(i0)) / hz
per = (busy - idle) / n * 1000
print(f"run|{name}|TLS{ver}|{per:.2f} ms/handshake|busy {busy:.2f} s idle {idle:.2f} s over {float(wall):.2f} s|"
      f"{done} done {failed} failed")
PY
}
for r in $(seq "$REPS"); do
	run bearssl "$BEAR" 1.2
	run wolfssl "$WOLF" 1.3
	run wolfssl "$WOLF" 1.2
done | tee "$T/runs"
python3 - "$T/runs" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split("|")
    rows.setdefault((f[1], f[2]), []).append(float(f[3].split()[0]))
for (eng, ver), v in rows.items():
    print(f"median|{eng}|{ver}|{statistics.median(v):.2f} ms of QEMU CPU per full handshake|runs {' '.join(f'{x:.2f}' for x in v)}")
PY
