#!/usr/bin/env bash
# tests/site.sh — issue 13's acceptance: a user's tree served byte-identical
# by every form, and a bad site archive refused at boot.
#
#   tests/site.sh [build/skiff] [build/skiff-uk.elf]
#
# The tree (tests/site_tool.py gen, fixed seed): 1,000 files with random
# names (spaces, '%', '+', UTF-8, ...) in nested folders up to 5 deep, sizes
# 0 B to 4 MiB (both included), ~190 MiB in all, plus an index.html, and
# what must not be served (dotfiles, a dot-directory, symbolic links).
# Checks, each PASS/FAIL, ending with "site: N passed, N failed":
#   vm            `skiff vm --root TREE --mem 512M -p PORT:80` (user
#                 networking, 127.0.0.1 only): every file's sha256 equal
#                 over 4 keep-alive connections (tests/site_tool.py fetch),
#                 "/" is index.html, the rest 404; "exit 0" to the
#                 shutdown-port: exit 0
#   vm-bad.*      archives made by `skiff vm --dry-run --root` (which leaves
#                 the archive and prints QEMU's command line), then broken:
#                 cut short, an entry's data_off past the end, two bodies
#                 overlapping, a name rewritten to hold "..", a bad magic:
#                 the guest stops at boot with
#                 "bad site archive" and the reason, exit 1 (QEMU's 3)
#   linux         `skiff serve --stack linux --root TREE` on 127.0.0.1: the
#                 same fetch; its RSS right after start and its open files
#                 with --sendfile off (the walk keeps none per file)
#   skiff         `skiff serve --stack skiff --dev tap:sk0` in a namespace
#                 of its own (tests/lib.sh skt_topo_tap; 198.18.0.0/24
#                 inside it, nothing in the root namespace): the same fetch
#   skiff.v6      the same server, given --ip6 2001:2::2/64 too (the
#                 namespace's sk0 2001:2::1/64; tests/lib.sh skt_family_up):
#                 the same fetch over IPv6, from http://[2001:2::2]/
#   sighup.*      on --stack linux with a small tree: a 4 MiB download held
#                 slow by the client (1 MiB/s) while its file is replaced
#                 and SIGHUP sent: the download gets the old bytes intact; a
#                 keep-alive connection opened before the SIGHUP is still
#                 served after it; new requests see the new tree (a new
#                 file, the replaced one's new bytes); once the download is
#                 done the old mapping is gone from /proc/PID/maps
#   truncate.*    on --stack skiff (TAP namespace): a 4 MiB file cut to
#                 100,000 bytes in place while a slow client downloads it:
#                 the server lives (SIGBUS past the new end is patched with
#                 zeros, files.truncated_pages > 0), the download ends at
#                 its promised length with the surviving bytes intact and
#                 every later page either the old bytes or zeros, and the
#                 next request is answered
# Every server and QEMU run is bounded by `timeout` and stopped by pid.
set -u
cd "$(dirname "$0")/.." || exit 2
SKIFF=$(readlink -f "${1:-build/skiff}")
IMG=$(readlink -f "${2:-build/skiff-uk.elf}")
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=site
export PYTHONDONTWRITEBYTECODE=1
WORK=$(mktemp -d /tmp/skiff-site-test.XXXXXX)
TREE=$WORK/tree
LOG=${SITE_LOG_DIR:-build/test-logs/site}
mkdir -p "$LOG"
PIDS=()

cleanup() {
	skt_kill_tree "${PIDS[@]}"
	skt_cleanup
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for f in "$SKIFF" "$IMG"; do
	[ -r "$f" ] || { fail setup "missing $f (make all)"; summary; exit 1; }
done
skt_need setup qemu-system-x86_64 python3 curl || { summary; exit 1; }

fetch() { # NAME URL [ns]
	local name=$1 url=$2 t0=$SECONDS
	shift 2
	if timeout 600 "$@" python3 tests/site_tool.py fetch "$url" "$TREE" >"$LOG/$name-fetch.log" 2>&1; then
		pass "$name ($(tail -n 1 "$LOG/$name-fetch.log"), $((SECONDS - t0)) s)"
	else
		fail "$name" "$(tail -n 4 "$LOG/$name-fetch.log" | tr '\n' ' ')"
	fi
}

if ! python3 tests/site_tool.py gen "$TREE" >"$LOG/gen.log" 2>&1; then
	fail gen "$(tail -n 2 "$LOG/gen.log")"
	summary
	exit 1
fi
pass "gen ($(cat "$LOG/gen.log"))"

# --- the unikernel -----------------------------------------------------------
HTTP_PORT=$(skt_free_port tcp)
CTL_PORT=$(skt_free_port udp)
timeout 400 "$SKIFF" vm --image "$IMG" --root "$TREE" --mem 512M -p "$HTTP_PORT:80" \
	-p "$CTL_PORT:9/udp" -- shutdown-port=9 exit-after=380 </dev/null >"$LOG/vm.log" 2>&1 &
VM=$!
PIDS+=("$VM")
if skt_wait_log "$LOG/vm.log" "skiff-uk: ready" 60; then
	fetch vm "http://127.0.0.1:$HTTP_PORT/"
	python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"exit 0", ("127.0.0.1", int(sys.argv[1])))' "$CTL_PORT"
	wait "$VM"
	rc=$?
	if [ "$rc" -eq 0 ] && grep -aq "skiff-uk: site: 1001 files" "$LOG/vm.log"; then
		pass "vm-exit (exit 0; $(grep -ao 'site: [0-9]* files, [0-9]* KiB' "$LOG/vm.log"))"
	else
		fail vm-exit "skiff vm exited $rc; see $LOG/vm.log"
	fi
else
	fail vm "no ready line in 60 s: $(grep -a 'skiff' "$LOG/vm.log" | tail -n 3 | tr '\n' ' ')"
fi

# --- bad archives stop the boot -------------------------------------------------
SMALL=$WORK/small
mkdir -p "$SMALL/d"
echo '<h1>small</h1>' >"$SMALL/index.html"
echo 'b{}' >"$SMALL/d/a.css"
head -c 5000 /dev/urandom >"$SMALL/d/z.bin"
# bad_boot NAME PYTHON-EDIT WANT: pack SMALL, edit the archive (python, the
# path in sys.argv[1]), boot it with the printed QEMU command line.
bad_boot() {
	local name=$1 edit=$2 want=$3 line ar rc
	line=$("$SKIFF" vm --dry-run --accel tcg --image "$IMG" --root "$SMALL" -- exit-after=30 2>"$LOG/bad-$name.pack")
	ar=$(sed -n 's/.* archive [0-9]* bytes in \(.*\)$/\1/p' "$LOG/bad-$name.pack")
	if [ -z "$ar" ] || [ ! -f "$ar" ]; then
		fail "vm-bad.$name" "no archive from --dry-run: $(tr '\n' ' ' <"$LOG/bad-$name.pack")"
		return
	fi
	if ! python3 -c "import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
$edit
open(p, 'wb').write(b)" "$ar"; then
		fail "vm-bad.$name" "could not edit the archive"
		rm -f "$ar"
		return
	fi
	local -a cmd
	read -ra cmd <<<"$line"
	timeout 60 "${cmd[@]}" </dev/null >"$LOG/bad-$name.log" 2>&1
	rc=$?
	rm -f "$ar"
	if [ "$rc" -eq 3 ] && grep -aq "^skiff-uk: bad site archive .*$want" "$LOG/bad-$name.log" &&
		grep -aq "not booting" "$LOG/bad-$name.log" && ! grep -aq "skiff-uk: ready" "$LOG/bad-$name.log"; then
		pass "vm-bad.$name ($(grep -ao 'bad site archive.*' "$LOG/bad-$name.log" | head -n 1 | tr -d '\r'))"
	else
		fail "vm-bad.$name" "QEMU status $rc (want 3, guest exit 1); $(grep -a 'skiff-uk' "$LOG/bad-$name.log" | tail -n 2 | tr '\n' ' ')"
	fi
}
# Offsets of the format (src/archive/site_archive.h): header 64 B, entries of 40.
bad_boot truncated 'del b[len(b) - 100:]' 'truncated'
bad_boot data-offset 'import struct; struct.pack_into("<Q", b, 64 + 40 + 8, (len(b) + 4096) // 64 * 64)' 'entry 1: data_off [0-9]* + data_len [0-9]* is outside the data area'
bad_boot overlap 'import struct; o = struct.unpack_from("<Q", b, 64 + 8)[0]; struct.pack_into("<Q", b, 64 + 40 + 8, o)' 'overlaps the previous body'
bad_boot name 'import struct; no = struct.unpack_from("<QI", b, 16)[0] + struct.unpack_from("<I", b, 64)[0]; b[no:no + 4] = b"/../"' 'entry 0: name is not a clean path'
bad_boot magic 'b[0:4] = b"XXXX"' 'bad magic'

# --- hosted: kernel sockets ---------------------------------------------------
# start_serve NAME ARGS... (sets SRV, SRV_LOG): listening line within 30 s.
start_serve() {
	local name=$1
	shift
	SRV_LOG=$LOG/$name.log
	timeout 600 "$@" >"$SRV_LOG" 2>&1 &
	SRV=$!
	PIDS+=("$SRV")
	skt_wait_log "$SRV_LOG" '^skiff serve: listening' 30
}
# The server itself (under timeout, maybe under ip netns exec).
server_pid() {
	skt_descendant "$1" skiff
}
stop_serve() {
	local name=$1
	kill -TERM "$(server_pid "$SRV")" 2>/dev/null
	if skt_wait_exit "$SRV" 10 && [ "$SKT_RC" -eq 0 ]; then
		pass "$name-exit (SIGTERM: exit 0)"
	else
		fail "$name-exit" "exit ${SKT_RC:-?}, or still running 10 s after SIGTERM"
		kill -KILL "$SRV" 2>/dev/null
	fi
}

PORT=$(skt_free_port tcp)
# --sendfile off: the walk's own footprint.  With sendfile (the default)
# the server keeps one descriptor per mapped file on top, up to a budget
# (docs/http.md), which tests/sendfile.sh covers.
if start_serve linux "$SKIFF" serve --stack linux --ip 127.0.0.1 --port "$PORT" --root "$TREE" \
	--sendfile off --stats; then
	p=$(server_pid "$SRV")
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status")
	fds=$(find "/proc/$p/fd" -mindepth 1 | wc -l)
	if [ "$rss" -lt $((64 * 1024)) ] && [ "$fds" -lt 32 ]; then
		pass "linux-start (RSS $((rss / 1024)) MiB, $fds open files; $(sed -n 's/.*root=[^ ]* //p' "$SRV_LOG"))"
	else
		fail linux-start "RSS $rss KiB (limit 64 MiB), $fds open files"
	fi
	fetch linux "http://127.0.0.1:$PORT/"
	stop_serve linux
else
	fail linux "did not start: $(tail -n 2 "$SRV_LOG")"
fi

# --- hosted: skiff's own stack on a TAP in a namespace ---------------------------
if [ "$(id -u)" -ne 0 ]; then
	fail skiff "needs root (network namespace, TAP)"
else
	skt_cleanup_stale
	skt_family 6
	if skt_topo_tap site sk0 >"$LOG/skiff-topo.log" 2>&1 && skt_family_up skiff >>"$LOG/skiff-topo.log" 2>&1; then
		if start_serve skiff ip netns exec "$SKT_NS_S" "$SKIFF" serve --stack skiff --dev tap:sk0 \
			--ip "$SKT_SKIFF_IP/24" "${SKT_SERVE6[@]}" --port 80 --root "$TREE" --stats; then
			fetch skiff "http://$SKT_SKIFF_IP/" ip netns exec "$SKT_NS_L"
			fetch skiff.v6 "http://$SKT_HOST/" ip netns exec "$SKT_NS_L"
			stop_serve skiff
		else
			fail skiff "did not start: $(tail -n 2 "$SRV_LOG")"
		fi
		skt_cleanup
	else
		fail skiff "cannot build the TAP namespace: $(tail -n 1 "$LOG/skiff-topo.log")"
	fi
fi

# verdicts NAME RC LOG: the client script's "PASS x: ..." / "FAIL x: ..."
# lines as NAME.x checks; a client that died without saying FAIL fails NAME.
verdicts() {
	local name=$1 rc=$2 log=$3 verdict rest
	while read -r verdict rest; do
		if [ "$verdict" = PASS ]; then
			pass "$name.$rest"
		elif [ "$verdict" = FAIL ]; then
			fail "$name.${rest%%:*}" "${rest#*: }"
		fi
	done <"$log"
	[ "$rc" -eq 0 ] || grep -q '^FAIL' "$log" || fail "$name" "client exit $rc: $(tail -n 3 "$log" | tr '\n' ' ')"
}

# --- a file cut short while mapped, on skiff's stack ------------------------------
TRN=$WORK/trunc
mkdir -p "$TRN"
head -c $((4 << 20)) /dev/urandom >"$TRN/big.bin"
cp "$TRN/big.bin" "$WORK/trunc.old"
echo 'alive' >"$TRN/a.txt"
if [ "$(id -u)" -ne 0 ]; then
	fail truncate "needs root (network namespace, TAP)"
elif skt_topo_tap trunc sk0 >"$LOG/trunc-topo.log" 2>&1; then
	if start_serve trunc ip netns exec "$SKT_NS_S" "$SKIFF" serve --stack skiff --dev tap:sk0 \
		--ip "$SKT_SKIFF_IP/24" --port 80 --root "$TRN" --stats; then
		timeout 60 ip netns exec "$SKT_NS_L" python3 - "$SKT_SKIFF_IP" "$TRN/big.bin" "$WORK/trunc.old" \
			>"$LOG/trunc-client.log" 2>&1 <<'PY'
import http.client, os, socket, sys, time
ip, path, old = sys.argv[1], sys.argv[2], open(sys.argv[3], "rb").read()
ok = True
def check(name, cond, detail=""):
    global ok
    print(("PASS " if cond else "FAIL ") + name + (": " + detail if detail else ""))
    ok = ok and cond
s = socket.create_connection((ip, 80), timeout=20)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = s.recv(32768)
os.truncate(path, 100000)  # in place, as `cp` over a file does
while True:
    x = s.recv(65536)
    if not x:
        break
    data += x
    time.sleep(len(x) / (8 << 20))
head, _, body = data.partition(b"\r\n\r\n")
check("promised-length", len(body) == len(old), f"{len(body)} of {len(old)} bytes")
check("surviving-bytes", body[:100000] == old[:100000])
# Every byte after the cut is the old one or zero.  Whole pages are the
# rule; the page holding the point up to which the server had copied into
# TCP's send buffer when the file was cut is old up to there and zero (the
# SIGBUS patch) after.  That point is page-aligned only while the send
# buffer is a multiple of a page: buffers that grow with cwnd
# (--tcp-buf-max) leave it anywhere, so a mixed page is allowed byte by
# byte, and counted.
bad, mixed = [], 0
for i in range(100000 // 4096 + 1, len(body) // 4096):
    p, o = body[i * 4096:(i + 1) * 4096], old[i * 4096:(i + 1) * 4096]
    if p in (o, bytes(4096)):
        continue
    if all(b == 0 or b == x for b, x in zip(p, o)):
        mixed += 1
    else:
        bad.append(i)
check("later-pages-old-or-zero", not bad, f"{len(bad)} pages neither, {mixed} mixed at the cut")
zeros = sum(1 for i in range(100000 // 4096 + 1, len(body) // 4096) if body[i * 4096:(i + 1) * 4096] == bytes(4096))
check("some-pages-zero", zeros > 0, f"{zeros} zero pages")
c = http.client.HTTPConnection(ip, 80, timeout=10)
c.request("GET", "/a.txt"); r = c.getresponse(); check("next-request", r.status == 200 and r.read() == b"alive\n")
sys.exit(0 if ok else 1)
PY
		verdicts truncate $? "$LOG/trunc-client.log"
		stop_serve trunc
		n=$(awk '$1 == "files.truncated_pages" {print $2}' "$SRV_LOG")
		if [ "${n:-0}" -gt 0 ]; then
			pass "truncate.counted (files.truncated_pages $n)"
		else
			fail truncate.counted "files.truncated_pages '${n:-}' in $SRV_LOG"
		fi
	else
		fail truncate "did not start: $(tail -n 2 "$SRV_LOG")"
	fi
	skt_cleanup
else
	fail truncate "cannot build the TAP namespace: $(tail -n 1 "$LOG/trunc-topo.log")"
fi

# --- SIGHUP: a new tree, without dropping anyone ---------------------------------
HUP=$WORK/hup
mkdir -p "$HUP"
# Larger than the kernel's largest send buffer (tcp_wmem's 4 MiB) plus the
# client's window: with 4 MiB the kernel once took the whole rest of the
# response before the check, and the old mapping was rightly gone already.
head -c $((12 << 20)) /dev/urandom >"$HUP/big.bin"
cp "$HUP/big.bin" "$WORK/big.old"
echo 'one' >"$HUP/a.txt"
PORT=$(skt_free_port tcp)
if start_serve hup "$SKIFF" serve --stack linux --ip 127.0.0.1 --port "$PORT" --root "$HUP"; then
	p=$(server_pid "$SRV")
	timeout 60 python3 - "$PORT" "$p" "$HUP" "$WORK/big.old" >"$LOG/hup-client.log" 2>&1 <<'PY'
import hashlib, http.client, os, signal, socket, sys, time
port, pid, root, old = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
ok = True
def check(name, cond, detail=""):
    global ok
    print(("PASS " if cond else "FAIL ") + name + (": " + detail if detail else ""))
    ok = ok and cond
def until(cond, secs):
    """Poll cond every 0.05 s for at most secs (what it waits for, no longer)."""
    end = time.monotonic() + secs
    while not cond() and time.monotonic() < end:
        time.sleep(0.05)
def fresh_get(path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path); r = c.getresponse(); body = r.read(); c.close()
    return r.status, body
# A keep-alive connection, used once before the SIGHUP.
ka = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
ka.request("GET", "/a.txt"); r = ka.getresponse(); check("before", r.read() == b"one\n")
# A download read at ~1 MiB/s: its response is queued before the SIGHUP.
s = socket.create_connection(("127.0.0.1", port), timeout=20)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = s.recv(65536)
# Replace the file (a new inode; the old one stays mapped) and add one.
os.unlink(os.path.join(root, "big.bin"))
with open(os.path.join(root, "big.bin"), "wb") as f:
    f.write(b"new big\n")
with open(os.path.join(root, "b.txt"), "wb") as f:
    f.write(b"two\n")
os.kill(pid, signal.SIGHUP)
# The reload runs on the server's 1 s timer: until a new connection finds
# the added file (at most 5 s; the checks below then say what is wrong).
until(lambda: fresh_get("/b.txt") == (200, b"two\n"), 5)
# New lookups see the new tree, on the old keep-alive connection too.
ka.request("GET", "/b.txt"); r = ka.getresponse(); check("keepalive-after-hup", r.status == 200 and r.read() == b"two\n", str(r.status))
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
c.request("GET", "/big.bin"); r = c.getresponse(); check("new-tree", r.read() == b"new big\n")
c.close()
deleted = lambda: sum(1 for l in open(f"/proc/{pid}/maps") if "big.bin (deleted)" in l)
check("old-mapped-while-in-flight", deleted() == 1, f"{deleted()} mappings of the old big.bin")
while True:
    time.sleep(0.02)
    x = s.recv(1 << 20 if len(data) > 6 << 20 else 65536)
    if not x:
        break
    data += x
    time.sleep(len(x) / (1 << 20))
head, _, body = data.partition(b"\r\n\r\n")
check("in-flight-intact", hashlib.sha256(body).digest() == hashlib.sha256(open(old, "rb").read()).digest(),
      f"{len(body)} bytes")
# The old tree is let go once nothing can point into it (the reload
# timer's next turns): until its mapping is gone, at most 3 s.
until(lambda: deleted() == 0, 3)
check("old-unmapped-after", deleted() == 0, f"{deleted()} mappings of the old big.bin")
ka.close()
sys.exit(0 if ok else 1)
PY
	verdicts sighup $? "$LOG/hup-client.log"
	if grep -q 'SIGHUP: root reloaded: files=3 ' "$SRV_LOG"; then
		pass "sighup.logged ($(grep -o 'SIGHUP: root reloaded.*' "$SRV_LOG"))"
	else
		fail sighup.logged "no reload line: $(tail -n 2 "$SRV_LOG" | tr '\n' ' ')"
	fi
	stop_serve hup
else
	fail sighup "did not start: $(tail -n 2 "$SRV_LOG")"
fi

summary
