#!/usr/bin/env bash
# fuzz.sh — run libFuzzer targets for a fixed time, two at a time.
#
#   FUZZ_TIME=N tests/fuzz.sh build/fuzz/fuzz_tcp build/fuzz/fuzz_udp ...
#
# Each target <dir>/fuzz_<name> keeps its corpus in <dir>/corpus/<name>
# (seeded from fuzz/seeds/<name>/ when present, read-only) and its output in
# <dir>/<name>.log; crash inputs land in <dir>/<name>-crash-*.  One line per
# target; the log tail is printed only on failure.  Exit status is non-zero
# if any target crashed.
set -u

FUZZ_TIME=${FUZZ_TIME:-60}
JOBS=${FUZZ_JOBS:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

if [ $# -eq 0 ]; then
	echo "usage: FUZZ_TIME=N $0 FUZZ_BIN..." >&2
	exit 2
fi
# A crash report names functions and lines only through llvm's symbolizer.
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
	sym=$(command -v llvm-symbolizer) || { echo "fuzz: llvm-symbolizer not found (Debian package llvm: run tools/deps.sh)" >&2; exit 2; }
	export ASAN_SYMBOLIZER_PATH=$sym
fi

run_one() {
	local bin=$1 name dir corpus seeds log
	name=$(basename "$bin")
	name=${name#fuzz_}
	dir=$(dirname "$bin")
	corpus=$dir/corpus/$name
	seeds=$ROOT/fuzz/seeds/$name
	log=$dir/$name.log
	mkdir -p "$corpus"
	local dirs=("$corpus")
	[ -d "$seeds" ] && dirs+=("$seeds")
	# -rss_limit_mb bounds a leak; -timeout catches a hang (parsers are
	# loop-bounded by their input, so a second is already generous).
	"$bin" -max_total_time="$FUZZ_TIME" -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$dir/$name-" \
		"${dirs[@]}" >"$log" 2>&1
	local rc=$?
	local runs
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
	if [ $rc -eq 0 ] && [ -n "$runs" ]; then
		echo "fuzz $name: ok ($runs runs)" >"$log.result"
	else
		{
			echo "fuzz $name: FAILED (exit $rc, log $log)"
			# The sanitizer's report and the saved input, not the whole log.
			{ grep -E -m1 -A12 'ERROR|runtime error' "$log" || tail -n 12 "$log"
			  grep 'Test unit written' "$log"; } | sed 's/^/    /'
		} >"$log.result"
		return 1
	fi
}

pids=()
logs=()
for bin in "$@"; do
	if [ ! -x "$bin" ]; then
		echo "fuzz $(basename "$bin"): FAILED (no such binary)"
		logs+=("")
		pids+=("")
		continue
	fi
	# Keep at most JOBS targets running.
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	name=$(basename "$bin")
	run_one "$bin" &
	pids+=($!)
	logs+=("$(dirname "$bin")/${name#fuzz_}.log")
done

fail=0
for i in "${!pids[@]}"; do
	[ -z "${pids[$i]}" ] && { fail=1; continue; }
	wait "${pids[$i]}" || fail=1
	cat "${logs[$i]}.result"
	rm -f "${logs[$i]}.result"
done
exit $fail
