# tests/vm_lib.sh — what the unikernel's QEMU scripts (vm_tls.sh,
# vm_tls13.sh, vm_proxy.sh) share, sourced after tests/lib.sh: the log
# folder, the processes and the throwaway certificates removed on exit,
# booting a guest in the background, and its shutdown port's "exit 0".
# shellcheck shell=bash

# vm_init NAME: LOG (build/test-logs/NAME, or VM_LOG_DIR), SKT_SUITE NAME,
# PIDS (killed on exit with their children) and CERTS, a temporary folder
# removed on exit.
vm_init() {
	LOG=${VM_LOG_DIR:-build/test-logs/$1}
	mkdir -p "$LOG"
	# shellcheck disable=SC2034  # read by tests/lib.sh's summary
	SKT_SUITE=$1
	export PYTHONDONTWRITEBYTECODE=1
	PIDS=()
	CERTS=$(mktemp -d "${TMPDIR:-/tmp}/skiff-${1//-/}.XXXXXX")
	trap vm_cleanup EXIT
	trap 'exit 130' INT TERM
}

vm_cleanup() {
	skt_kill_tree "${PIDS[@]}"
	rm -rf "$CERTS"
}

# vm_need_files HINT FILE...: each readable, else a failed setup saying
# HINT (how to build it) and exit 1.
vm_need_files() {
	local hint=$1 f
	shift
	for f; do
		[ -r "$f" ] || { fail setup "missing $f ($hint)"; summary; exit 1; }
	done
}

# vm_mkcert NAME ec|rsa: $CERTS/NAME.crt and .key, self-signed for
# localhost and 127.0.0.1 (ECDSA P-256 or RSA 2048), a day long; openssl's
# words in $LOG/openssl-NAME.log.
vm_mkcert() {
	local k=(-newkey ec -pkeyopt ec_paramgen_curve:P-256)
	[ "$2" = rsa ] && k=(-newkey rsa:2048)
	openssl req -x509 "${k[@]}" -nodes -keyout "$CERTS/$1.key" -out "$CERTS/$1.crt" -days 1 \
		-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>"$LOG/openssl-$1.log"
}

# vm_boot NAME TIMEOUT [skiff vm args] -- [guest words]: `skiff vm` of
# $IMG under TCG with the script's VM_ARGS, in the background, logged to
# $LOG/NAME.log; VM is its pid (in PIDS).
vm_boot() {
	local name=$1 t=$2
	shift 2
	: >"$LOG/$name.log"
	timeout "$t" "$SKIFF" vm "${VM_ARGS[@]}" --accel tcg --image "$IMG" "$@" </dev/null >"$LOG/$name.log" 2>&1 &
	VM=$!
	PIDS+=("$VM")
}

# vm_say_exit PORT: "exit 0" to the guest's shutdown port (UDP, 127.0.0.1).
vm_say_exit() {
	python3 -c "import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'exit 0', ('127.0.0.1', int(sys.argv[1])))" "$1"
}

# vm_testssl PORT MIN: testssl.sh --vulnerable against the guest's HTTPS on
# 127.0.0.1:PORT (QEMU's forward; --nodns none: no look-up leaves the
# host), the invocation and rule of tests/tls.sh's hosted check: a pass
# when no line says VULNERABLE or "NOT ok", at least MIN say "not
# vulnerable", and testssl got to its "Done" line (a run cut short by the
# timeout fails).  Its words in $LOG/testssl.log; the line gives its time.
# 600 s at most.  Measured 2026-12-05 under TCG on the 2-core host while
# other helpers' runs loaded it (load 8-10): 85 s (BearSSL) and 115 s
# (wolfSSL) alone, 135 s and 296 s inside the phases, of which QEMU used
# under 1 s of CPU; ~110 s of the 296 went before testssl's "Start" line
# (its own start-up, forking openssl on the host).  The time is testssl's,
# not the guest's: on a quieter host (11:05), BearSSL 42.5 s, testssl's own
# CPU 36.4 s (user 16.9, system 19.5), QEMU's 0.5 s; wolfSSL 39 s (11:20).
vm_testssl() {
	local t0=$SECONDS okn vul
	timeout 600 testssl --quiet --color 0 --warnings off --nodns none --vulnerable "127.0.0.1:$1" \
		</dev/null >"$LOG/testssl.log" 2>&1
	okn=$(grep -c 'not vulnerable' "$LOG/testssl.log")
	vul=$(grep -E 'VULNERABLE|NOT ok' "$LOG/testssl.log" | head -n 3 | tr -s ' ' | tr '\n' ' ')
	if [ -z "$vul" ] && [ "$okn" -ge "$2" ] && grep -q '^ Done ' "$LOG/testssl.log"; then
		pass "testssl (--vulnerable in $((SECONDS - t0)) s: $okn checks not vulnerable, none vulnerable)"
	else
		fail testssl "in $((SECONDS - t0)) s: not vulnerable $okn (want >= $2); vulnerable: ${vul:-none}; $(grep -c '^ Done ' "$LOG/testssl.log") Done line; see $LOG/testssl.log"
	fi
}
