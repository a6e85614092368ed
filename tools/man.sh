#!/usr/bin/env bash
# tools/man.sh BIN OUTDIR VERSION: the man pages, made from --help with help2man.
#
#   OUTDIR/skiff.1          `skiff --help`: the commands, what DEV can be, the
#                           files an install puts in place (FILES), SEE ALSO
#   OUTDIR/skiff-CMD.1      `skiff CMD --help`, one per command that skiff --help lists
#
# The commands come from `BIN --help` (its "commands:" list, the one table in
# src/cmd/main.c), so a new command gets its page without an edit here.  Every
# one must answer --help with status 0 and a "usage: skiff CMD" first line: one
# that does not stops this with status 1, naming it (`make install` and
# tests/install.sh fail with it).
#
# help2man reads a one-line "Usage:" for SYNOPSIS; our usage blocks are
# "usage:" with indented continuation lines, so the page's program is a small
# wrapper (OUTDIR/.bin/skiff-CMD) that joins the block into one line; the
# rest of the text goes through as printed.  Nothing is run but BIN.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: tools/man.sh BIN OUTDIR VERSION" >&2; exit 2; }
bin=$(readlink -f "$1") out=$2 version=$3
[ -x "$bin" ] || { echo "man.sh: $1 is not an executable (build it first: make)" >&2; exit 1; }
command -v help2man >/dev/null || { echo "man.sh: help2man is missing (Debian package help2man; run tools/deps.sh)" >&2; exit 1; }
mkdir -p "$out/.bin"

# wrapper NAME ARGS...: OUTDIR/.bin/NAME runs `BIN ARGS... --help` with the
# usage block on one line.  help2man calls it with --help only (the version
# comes from --version-string), so anything else is refused.
wrapper() {
	local name=$1 w
	shift
	w=$out/.bin/$name
	{
		printf '#!/usr/bin/env bash\n# made by tools/man.sh for help2man\nset -o pipefail\n'
		printf '[ "$*" = --help ] || { echo "%s: only --help" >&2; exit 2; }\n' "$name"
		printf '%q ' "$bin" "$@"
		printf -- '--help | awk -f %q\n' "$out/.bin/join.awk"
	} >"$w"
	chmod 755 "$w"
}

cat >"$out/.bin/join.awk" <<'EOF'
# The first paragraph (the usage block) on one line, "Usage:" first.
NR == 1 { sub(/^usage:/, "Usage:"); u = $0; next }
u != "" && /^[ \t]+[^ \t]/ { sub(/^[ \t]+/, " "); u = u $0; next }
u != "" { print u; u = "" }
{ print }
END { if (u != "") print u }
EOF

# page_ok NAME: help2man made OUTDIR/NAME.1 with a synopsis and a description.
page_ok() {
	grep -q '^\.SH SYNOPSIS' "$out/$1.1" && grep -q '^\.SH DESCRIPTION' "$out/$1.1" ||
		{ echo "man.sh: $out/$1.1 has no SYNOPSIS or DESCRIPTION: help2man did not get the --help text" >&2; exit 1; }
}

# The commands and their one-line summaries, from the binary's own list.
mapfile -t cmds < <("$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print } on && /^$/ { exit }')
[ ${#cmds[@]} -gt 0 ] || { echo "man.sh: '$bin --help' lists no commands" >&2; exit 1; }

# see_also PAGE: the SEE ALSO list of PAGE: every other page.
see_also() {
	local sep="" name
	for name in skiff $(printf '%s\n' "${cmds[@]}" | awk '{ print "skiff-" $1 }'); do
		[ "$name" = "$1" ] && continue
		printf '%s.BR %s (1)' "$sep" "${name//-/\\-}"
		sep=$',\n'
	done
	echo
}

# skiff.1: the overview, with the installed files and the unit.
cat >"$out/.skiff.h2m" <<EOF
[FILES]
.TP
.I PREFIX/lib/skiff/skiff\-uk.elf
the unikernel image; \fBskiff vm\fR finds it there from \fIPREFIX/bin/skiff\fR
(\fI../lib/skiff\fR from the binary's directory) when no \fB\-\-image\fR is given
.TP
.I PREFIX/lib/systemd/system/skiff@.service
the systemd unit: \fBsystemctl start skiff@NAME\fR runs \fBskiff $\fISKIFF_ARGS\fR from
.I /etc/skiff/NAME.env
as an unprivileged dynamic user with only CAP_NET_RAW and CAP_NET_ADMIN
.TP
.I /etc/skiff/example.env
an example of such a file
[SEE ALSO]
$(see_also skiff)
.PP
docs/operations.md, "Install and capabilities", says which device needs which capability.
EOF
wrapper skiff
help2man --no-info --no-discard-stderr --version-string="skiff $version" \
	--name="an event-driven TCP/IP stack and HTTP/1.1 server" \
	--include="$out/.skiff.h2m" --output="$out/skiff.1" "$out/.bin/skiff"
page_ok skiff

for line in "${cmds[@]}"; do
	read -r c summary <<<"$line"
	# The whole text, then its first line: `| head -n 1` under pipefail
	# fails once a help text outgrows one pipe write (4 KiB: serve's did),
	# head having closed the pipe on the writer.
	help=$("$bin" "$c" --help 2>&1) || help=
	first=${help%%$'\n'*}
	if [ -z "$help" ] || [[ $first != "usage: skiff $c"* ]]; then
		echo "man.sh: 'skiff $c --help' fails or prints no 'usage: skiff $c' line (got: ${first:-nothing})" >&2
		exit 1
	fi
	"$bin" "$c" --help >/dev/null || { echo "man.sh: 'skiff $c --help' exits non-zero" >&2; exit 1; }
	printf '[SEE ALSO]\n%s\n' "$(see_also "skiff-$c")" >"$out/.skiff-$c.h2m"
	wrapper "skiff-$c" "$c"
	help2man --no-info --no-discard-stderr --version-string="skiff-$c $version" \
		--source="skiff $version" --name="$summary" \
		--include="$out/.skiff-$c.h2m" --output="$out/skiff-$c.1" "$out/.bin/skiff-$c"
	page_ok "skiff-$c"
done
echo "man.sh: $((${#cmds[@]} + 1)) pages in $out"
