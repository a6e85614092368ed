#!/usr/bin/env bash
# bench/tls_engines.sh BIN [REPS] — skiff serve's server CPU per TLS 1.3
# handshake, full and resumed, on each hosted engine (--tls-engine openssl
# and gnutls), alternating the engines at every repetition (default 5).
#
# On loopback only (127.0.0.1, --stack linux: the TLS engine's cost is the
# same on either stack, and loopback needs no namespace), bounded loads:
#   full     ab -q -f TLS1.3 -n $TLSE_N -c $TLSE_C (no -k): one full
#            handshake per request;
#   resumed  openssl s_time -tls1_3 -reuse -www / -time $TLSE_TIME: one
#            full handshake, then every connection resumes its session.
# The server is pinned to CPU $TLSE_SERVER_CPU (default 1), the clients to
# $TLSE_CLIENT_CPU (0).  Server CPU is the process's utime+stime
# (/proc/PID/stat) over the load, divided by the handshakes the server
# counted (tls.handshakes, tls.resumed from --stats at SIGTERM): per
# handshake, whatever the client managed.  A run whose loads failed
# (ab's failed requests, fewer resumed handshakes than connections) is
# printed as such and its figure kept apart.
#
# Prints one line per run, then per engine and load the median of the runs
# (µs of server CPU per handshake) with the lowest and highest run.  The
# certificate (ECDSA P-256) is made at start and removed at exit.
set -u
BIN=${1:-}
REPS=${2:-5}
if [ -z "$BIN" ] || [ "$BIN" = -h ] || [ "$BIN" = --help ]; then
	sed -n '2,21p' "$0"
	[ -n "$BIN" ]
	exit $?
fi
N=${TLSE_N:-4000}
C=${TLSE_C:-4}
TIME=${TLSE_TIME:-5}
SCPU=${TLSE_SERVER_CPU:-1}
CCPU=${TLSE_CLIENT_CPU:-0}
PORT=${TLSE_PORT:-28080}
TPORT=${TLSE_TLS_PORT:-28443}
HZ=$(getconf CLK_TCK)
for t in ab openssl curl taskset; do
	command -v $t >/dev/null || { echo "tls_engines: $t is missing" >&2; exit 1; }
done
WORK=$(mktemp -d /tmp/skiff-tlse.XXXXXX)
SRV=
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$WORK"' EXIT
openssl req -x509 -nodes -days 2 -subj "/CN=skiff-bench" -addext "subjectAltName=IP:127.0.0.1" \
	-newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$WORK/k.pem" -out "$WORK/c.pem" \
	>"$WORK/openssl.log" 2>&1 || { echo "tls_engines: openssl req failed" >&2; exit 1; }

cpu() { # the server's utime+stime, in jiffies
	awk '{print $14 + $15}' "/proc/$SRV/stat"
}

# run ENGINE: one server, both loads; prints "ENGINE full US resumed US (...)".
run() {
	local eng=$1 c0 c1 c2 out failed conns h r log=$WORK/srv-$1.log
	taskset -c "$SCPU" "$BIN" serve --stack linux --ip 127.0.0.1 --port "$PORT" \
		--tls-port "$TPORT" --tls-cert "$WORK/c.pem" --tls-key "$WORK/k.pem" \
		--tls-engine "$eng" --stats >"$log" 2>&1 &
	SRV=$!
	for _ in $(seq 50); do
		curl -sf --cacert "$WORK/c.pem" -o /dev/null "https://127.0.0.1:$TPORT/" && break
		sleep 0.1
	done
	taskset -c "$CCPU" ab -q -f TLS1.3 -n 200 -c "$C" "https://127.0.0.1:$TPORT/" >/dev/null 2>&1
	c0=$(cpu)
	out=$(taskset -c "$CCPU" timeout 120 ab -q -f TLS1.3 -n "$N" -c "$C" "https://127.0.0.1:$TPORT/" 2>&1)
	c1=$(cpu)
	failed=$(sed -n 's/^Failed requests: *//p' <<<"$out")
	local rps
	rps=$(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' <<<"$out")
	out=$(taskset -c "$CCPU" timeout $((TIME + 30)) openssl s_time -connect "127.0.0.1:$TPORT" \
		-tls1_3 -reuse -www / -time "$TIME" -CAfile "$WORK/c.pem" 2>&1)
	c2=$(cpu)
	conns=$(grep -oE '^[0-9]+ connections in' <<<"$out" | tail -1 | cut -d' ' -f1)
	kill -TERM "$SRV"
	wait "$SRV"
	SRV=
	h=$(sed -n 's/^tls.handshakes //p' "$log")
	r=$(sed -n 's/^tls.resumed //p' "$log")
	# handshakes of the full load: all but curl's, the warm-up's and s_time's
	local full=$N res=${conns:-0}
	awk -v e="$eng" -v c0="$c0" -v c1="$c1" -v c2="$c2" -v n="$full" -v m="$res" -v hz="$HZ" \
		-v f="${failed:-?}" -v rps="${rps:-?}" -v h="${h:-?}" -v r="${r:-?}" 'BEGIN {
		fu = (c1 - c0) * 1e6 / hz / n; ru = m > 0 ? (c2 - c1) * 1e6 / hz / m : 0;
		ok = (f == "0" && m > 0 && r + 0 >= m) ? "ok" : "FAILED";
		printf "%s full %.1f resumed %.1f (%s; ab: %d handshakes, %s failed, %s/s, %d jiffies; " \
			"s_time: %d resumed connections, %d jiffies; server tls.handshakes=%s resumed=%s)\n",
			e, fu, ru, ok, n, f, rps, c1 - c0, m, c2 - c1, h, r }'
}

echo "tls_engines: $BIN, $REPS repetitions alternating, ab -n $N -c $C, s_time -time $TIME," \
	"server CPU $SCPU, clients CPU $CCPU, $(date -u '+%F %H:%M UTC')"
ENGINES=(openssl gnutls)
for ((i = 0; i < REPS; i++)); do
	if ((i % 2)); then order=(gnutls openssl); else order=(openssl gnutls); fi
	for e in "${order[@]}"; do run "$e"; done
done | tee "$WORK/runs.txt"
echo
echo "server CPU per handshake, µs: median of the ok runs [lowest-highest]; runs failed"
for e in "${ENGINES[@]}"; do
	for k in full resumed; do
		# "ENGINE full US resumed US (...)": fields 3 and 5
		grep "^$e .*[(]ok;" "$WORK/runs.txt" | awk -v k="$k" '{print k == "full" ? $3 : $5}' |
			sort -n | awk -v e="$e" -v k="$k" -v bad="$(grep -c "^$e .*[(]FAILED;" "$WORK/runs.txt")" '
			{ v[NR] = $1 } END {
				if (NR == 0) { printf "%-8s %-8s no ok run, %d failed\n", e, k, bad; exit }
				m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
				printf "%-8s %-8s %7.1f [%.1f-%.1f] of %d runs, %d failed\n", e, k, m, v[1], v[NR], NR, bad }'
	done
done
