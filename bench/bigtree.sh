#!/usr/bin/env bash
# bench/bigtree.sh BIN [GIB] — issue 13's large-tree check (`make
# bench-bigtree`; not part of `make test`: it writes GIB GiB to disk).
#
# Writes a tree of GIB GiB (default 2) of real random bytes: 1 MiB to 4 MiB
# files in 32 folders, plus 2,000 small ones (under the 16 KiB that
# serve_files.c copies instead of mapping), under BIGTREE_DIR (default
# /var/tmp; refuses to start with less than GIB + 2 GiB free there).  Then
# `BIN serve --stack linux --root TREE` on 127.0.0.1, and reports:
#   start    RSS right after the listening line (want < 64 MiB), open files
#   fetch    every file over 4 keep-alive connections, sha256 equal
#            (tests/site_tool.py fetch), the time and MiB/s
#   after    RSS after the whole tree went out, split into RssAnon (the
#            heap: stays small) and RssFile (the mapped page cache, which
#            the kernel reclaims under pressure; not the heap)
# Exit 0 only if start RSS < 64 MiB and every file matched.  The tree is
# deleted on exit, whatever happened.  Traffic: 127.0.0.1 only.
set -u
BIN=${1:-build/skiff}
GIB=${2:-2}
HERE=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(readlink -f "$BIN")
BASE=${BIGTREE_DIR:-/var/tmp}
[ -x "$BIN" ] || { echo "bigtree: no $BIN (make)" >&2; exit 2; }
avail=$(df -Pk "$BASE" | awk 'NR == 2 {print $4}')
if [ "$avail" -lt $(((GIB + 2) << 20)) ]; then
	echo "bigtree: $BASE has $((avail >> 20)) GiB free; $((GIB + 2)) GiB needed" >&2
	exit 1
fi
TREE=$(mktemp -d "$BASE/skiff-bigtree.XXXXXX")
SRV=
# shellcheck disable=SC2317  # called from the EXIT trap
finish() {
	[ -n "$SRV" ] && kill -TERM "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	rm -rf "$TREE"
	echo "bigtree: $TREE removed"
}
trap finish EXIT
trap 'exit 130' INT TERM

t0=$SECONDS
python3 - "$TREE" "$GIB" <<'PY'
import os, random, sys
root, gib = sys.argv[1], int(sys.argv[2])
rng = random.Random(2026)
want = gib << 30
total = n = 0
for i in range(2000):
    d = os.path.join(root, "small", f"s{i % 20:02d}")
    os.makedirs(d, exist_ok=True)
    size = rng.randint(0, 16383)
    with open(os.path.join(d, f"f{i:05d}.txt"), "wb") as f:
        f.write(os.urandom(size))
    total += size; n += 1
i = 0
while total < want:
    d = os.path.join(root, f"dir{i % 32:02d}")
    os.makedirs(d, exist_ok=True)
    size = min(rng.randint(1 << 20, 4 << 20), want - total)
    with open(os.path.join(d, f"big{i:05d}.bin"), "wb") as f:
        f.write(os.urandom(size))
    total += size; n += 1; i += 1
print(f"bigtree: wrote {n} files, {total} bytes ({total / (1 << 30):.2f} GiB)")
PY
echo "bigtree: tree written in $((SECONDS - t0)) s at $TREE ($(du -sh "$TREE" | cut -f1) on disk)"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LOG=$TREE.log
"$BIN" serve --stack linux --ip 127.0.0.1 --port "$PORT" --root "$TREE" >"$LOG" 2>&1 &
SRV=$!
t0=$(date +%s.%N)
for ((i = 0; i < 600; i++)); do
	grep -q '^skiff serve: listening' "$LOG" && break
	kill -0 "$SRV" 2>/dev/null || break
	sleep 0.1
done
t1=$(date +%s.%N)
if ! grep -q '^skiff serve: listening' "$LOG"; then
	echo "bigtree: FAIL: serve did not start: $(tail -n 3 "$LOG")"
	rm -f "$LOG"
	exit 1
fi
ok=0
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$SRV/status")
fds=$(find "/proc/$SRV/fd" -mindepth 1 | wc -l)
echo "bigtree: start: $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}') s to listening; RSS $((rss / 1024)) MiB ($rss KiB); $fds open files; $(sed -n 's/.*root=[^ ]* //p' "$LOG")"
if [ "$rss" -lt $((64 * 1024)) ]; then echo "bigtree: PASS start RSS < 64 MiB"; else echo "bigtree: FAIL start RSS >= 64 MiB"; ok=1; fi
t0=$(date +%s.%N)
if python3 "$HERE/tests/site_tool.py" fetch "http://127.0.0.1:$PORT/" "$TREE"; then
	t1=$(date +%s.%N)
	bytes=$(du -sb "$TREE" | cut -f1)
	echo "bigtree: PASS fetch in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s ($(awk -v a="$t0" -v b="$t1" -v n="$bytes" 'BEGIN {printf "%.0f", n / (b - a) / 1048576}') MiB/s, client and server on 2 cores)"
else
	echo "bigtree: FAIL fetch"
	ok=1
fi
echo "bigtree: after: $(grep -E '^(VmRSS|RssAnon|RssFile)' "/proc/$SRV/status" | tr -s ' \t' ' ' | tr '\n' ';' )"
rm -f "$LOG"
exit $ok
