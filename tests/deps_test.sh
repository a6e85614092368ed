#!/usr/bin/env bash
# deps_test.sh — the list in tools/deps.sh cannot lose a package silently:
# for every package on it, the check as if that package were taken off the
# list must fail and name a need that the package met.  A package that
# nothing needs any more fails here too: take it off the list, or say what
# uses it.  tools/depscan.py --without-each answers for every package from
# one scan of the tree (what --without PACKAGE would say, one package a
# line: "PACKAGE RC FIRST-LINE"); a run per package read the whole tree
# again for each (40 s of CPU, 2 minutes on a busy machine).
set -u
case ${1:-} in
-h | --help)
	sed -n '2,9s/^# \{0,1\}//p' "$0"
	exit 0
	;;
esac
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=deps
python3 tools/depscan.py >/dev/null || fail list "tools/depscan.py fails on the full list"
out=$(python3 tools/depscan.py --without-each 2>&1)
each_rc=$?
declare -A rc_of first_of
while read -r p rc first; do
	[[ $rc =~ ^[0-9]+$ ]] || continue # depscan's own messages, not a verdict
	rc_of[$p]=$rc
	first_of[$p]=$first
done <<<"$out"
for pkg in $(tools/deps.sh --list | awk '{print $1}'); do
	if [ -z "${rc_of[$pkg]+set}" ]; then
		fail "$pkg" "tools/depscan.py --without-each gave no verdict for it (rc=$each_rc): $(tail -n1 <<<"$out")"
		continue
	fi
	rc=${rc_of[$pkg]}
	first=$(grep -m1 '^depscan: .* needs ' <<<"${first_of[$pkg]}")
	if [ "$rc" -eq 1 ] && [ -n "$first" ]; then
		pass "$pkg (${first#depscan: })"
	else
		fail "$pkg" "without it the check still passes (rc=$rc): is it still needed?"
	fi
done
summary
