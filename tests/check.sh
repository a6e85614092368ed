#!/usr/bin/env bash
# tests/check.sh BIN — `skiff check FILE` (src/cmd/check.c) on the corpus
# of configuration files in tests/conf/ (docs/config.md).
#
# Each file's first line says what skiff check must answer:
#   tests/conf/good/NAME.conf   "# expect: ok (N sites, M listeners)": exit 0,
#                               "skiff: FILE: configuration ok (...)" on stdout,
#                               nothing on stderr
#   tests/conf/bad/NAME.conf    "# expect: LINE:COL MESSAGE": exit 1, nothing on
#                               stdout, "FILE:LINE:COL: ...MESSAGE..." on stderr
#                               (MESSAGE a substring of the parser's message)
# The files name relative paths (sites/a, certs/a.crt, logs/); they are
# copied into a work folder that holds them: two folders with an
# index.html, two certificates made here with openssl (and a file that is
# no certificate), a logs/ folder.  The good files are checked from another
# working folder (their paths relative to the file's folder, joined by the
# parser); the bad ones from their own folder, so the messages name the
# paths as written.  Then the command line: --help (exit 0), no FILE, two
# FILEs, an unknown option (exit 2), a file that is not there (exit 1).
#
# No network, no root.  Prints "PASS name" / "FAIL name: why", ends with
# "check: N passed, N failed"; exits non-zero if anything failed.
set -u
usage() {
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
	exit "${1:-2}"
}
case ${1:-} in
-h | --help) usage 0 ;;
"") usage ;;
esac
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$BIN" ] || { echo "check.sh: $1 is not an executable" >&2; exit 2; }
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=check
skt_need tools openssl || { summary; exit 1; }

WORK=$(mktemp -d /tmp/skiff-check.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# The tree the files name, in each of good/ and bad/.
for d in good bad; do
	mkdir -p "$WORK/$d/sites/a" "$WORK/$d/sites/b" "$WORK/$d/certs" "$WORK/$d/logs"
	echo a >"$WORK/$d/sites/a/index.html"
	echo b >"$WORK/$d/sites/b/index.html"
	echo "not a certificate" >"$WORK/$d/certs/bad.crt"
	cp tests/conf/"$d"/*.conf "$WORK/$d/"
done
for n in a b; do
	if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=$n.test" -keyout "$WORK/good/certs/$n.key" -out "$WORK/good/certs/$n.crt" \
		>/dev/null 2>&1; then
		fail setup "openssl could not make a certificate"
		summary
		exit 1
	fi
	cp "$WORK/good/certs/$n".* "$WORK/bad/certs/"
done

# expect FILE: the text after "# expect: " on its first line.
expect() {
	local first
	IFS= read -r first <"$1"
	case $first in
	"# expect: "*) printf '%s' "${first#\# expect: }" ;;
	*) return 1 ;;
	esac
}

ngood=0
for f in tests/conf/good/*.conf; do
	name=good/$(basename "$f" .conf)
	want=$(expect "$f") || { fail "$name" "no '# expect: ok ...' first line"; continue; }
	path=$WORK/good/$(basename "$f")
	# From another folder: the paths in the file are the file folder's.
	out=$(cd / && "$BIN" check "$path" 2>"$WORK/err")
	rc=$?
	err=$(cat "$WORK/err")
	if [ $rc -ne 0 ]; then
		fail "$name" "exit $rc: $err"
	elif [ "$out" != "skiff: $path: configuration $want" ]; then
		fail "$name" "stdout '$out', expected 'skiff: $path: configuration $want'"
	elif [ -n "$err" ]; then
		fail "$name" "stderr not empty: $err"
	else
		pass "$name" "$want"
	fi
	ngood=$((ngood + 1))
done

nbad=0
for f in tests/conf/bad/*.conf; do
	name=bad/$(basename "$f" .conf)
	want=$(expect "$f") || { fail "$name" "no '# expect: LINE:COL MESSAGE' first line"; continue; }
	lc=${want%% *}
	msg=${want#* }
	base=$(basename "$f")
	out=$(cd "$WORK/bad" && "$BIN" check "$base" 2>"$WORK/err")
	rc=$?
	err=$(cat "$WORK/err")
	if [ $rc -ne 1 ]; then
		fail "$name" "exit $rc (expected 1): $out $err"
	elif [ -n "$out" ]; then
		fail "$name" "stdout not empty: $out"
	elif [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
		fail "$name" "expected one line on stderr: $err"
	elif [[ $err != "$base:$lc: "* ]]; then
		fail "$name" "'$err' does not start with '$base:$lc: '"
	elif [[ $err != *"$msg"* ]]; then
		fail "$name" "'$err' does not say '$msg'"
	else
		pass "$name" "$lc"
	fi
	nbad=$((nbad + 1))
done
[ $ngood -ge 3 ] && [ $nbad -ge 30 ] && pass corpus "$ngood good files, $nbad bad files" ||
	fail corpus "$ngood good files, $nbad bad files: fewer than the corpus holds (3, 30)"

# A hosted check's message from another folder names the joined path.
out=$(cd / && "$BIN" check "$WORK/bad/files_missing.conf" 2>&1)
[[ $out == "$WORK/bad/files_missing.conf:4:5: "*"files $WORK/bad/sites/nothere: "* ]] &&
	pass joined_path || fail joined_path "$out"

# The command line.
out=$("$BIN" check --help 2>&1)
rc=$?
[ $rc -eq 0 ] && [[ $out == "usage: skiff check"* ]] && pass help || fail help "exit $rc: $out"
"$BIN" --help | grep -q '^  check ' && pass listed || fail listed "skiff --help does not list check"
cli() { # cli NAME RC PATTERN ARGS...
	local name=$1 want=$2 pat=$3 out rc
	shift 3
	out=$(cd "$WORK/good" && "$BIN" check "$@" 2>&1)
	rc=$?
	if [ $rc -eq "$want" ] && [[ $out == *"$pat"* ]]; then
		pass "cli/$name"
	else
		fail "cli/$name" "exit $rc (expected $want): $out"
	fi
}
cli no_file 2 "skiff check: give the configuration FILE to check"
cli two_files 2 "one FILE only" minimal.conf sites.conf
cli unknown_option 2 "unknown option '--frob'" --frob minimal.conf
cli missing 1 "skiff check: nothere.conf: No such file or directory" nothere.conf
cli folder 1 "skiff check: sites: Is a directory" sites
cli dashdash 0 "configuration ok" -- minimal.conf

summary
