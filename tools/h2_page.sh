#!/usr/bin/env bash
# tools/h2_page.sh ROOT BASE — the page of issue 33's page load: 60 small
# assets, ROOT/page/a01.css ... a60.css (500 to 3,200 bytes of base64 text,
# a ten-size pattern six times over: 500 + 300 * ((i - 1) % 10) bytes), and
# ROOT/page/index.html, a page whose head links all 60 as stylesheets and
# whose body's last script writes how many of them the browser loaded
# (document.styleSheets.length, run after every stylesheet in the head:
# a script waits for them) into <p id="sheets">.  Prints the 60 assets'
# URLs, BASE/page/aNN.css, one a line, in order.
#
# Used by bench/h2.sh (the page load, h2load -i) and tests/h2_chromium.sh
# (headless Chromium over HTTP/2).  The bytes are random each run.
set -eu
case ${1:-} in -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# = 2 ] || { echo "usage: tools/h2_page.sh ROOT BASE (--help)" >&2; exit 2; }
ROOT=$1 BASE=$2
mkdir -p "$ROOT/page"
links=
for i in $(seq 1 60); do
	f=$(printf 'a%02d.css' "$i")
	n=$((500 + 300 * ((i - 1) % 10)))
	head -c "$n" /dev/urandom | base64 -w 76 | head -c "$n" >"$ROOT/page/$f"
	links="$links<link rel=\"stylesheet\" href=\"$f\">
"
	echo "$BASE/page/$f"
done
cat >"$ROOT/page/index.html" <<EOF
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>skiff h2 page</title>
$links</head>
<body><h1>skiff h2 page</h1>
<p id="sheets">none</p>
<script>document.getElementById("sheets").textContent = "stylesheets " + document.styleSheets.length;</script>
</body></html>
EOF
