#!/usr/bin/env bash
# deps_test.sh — the list in tools/deps.sh cannot lose a package silently:
# for every package on it, tools/depscan.py --without PACKAGE (the check as
# if that package were taken off the list) must fail and name a need that
# the package met.  A package that nothing needs any more fails here too:
# take it off the list, or say what uses it.
set -u
cd "$(dirname "$0")/.."
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=deps
python3 tools/depscan.py >/dev/null || fail list "tools/depscan.py fails on the full list"
for pkg in $(tools/deps.sh --list | awk '{print $1}'); do
	out=$(python3 tools/depscan.py --without "$pkg" 2>&1)
	rc=$?
	first=$(grep -m1 '^depscan: .* needs ' <<<"$out")
	if [ "$rc" -eq 1 ] && [ -n "$first" ]; then
		pass "$pkg (${first#depscan: })"
	else
		fail "$pkg" "without it the check still passes (rc=$rc): is it still needed?"
	fi
done
summary
