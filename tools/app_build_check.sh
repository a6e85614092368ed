#!/usr/bin/env bash
# tools/app_build_check.sh BUILD — `make app` as docs/app.md tells a user
# to run it (`make check`'s app-build step; no root, no network):
#   several   APP="examples/links/links.c examples/links/store.c" with
#             APP_NAME: BUILD/app/NAME and NAME-uk.elf, and --help names NAME
#   one form  a file calling a function musl lacks (glibc's
#             gnu_get_libc_version): `make app` fails on the image and the
#             Linux program is built all the same; `make app-host` alone
#             succeeds, and the program answers --help
# Prints one line per check and "app-build: N passed, N failed".
set -u
BUILD=${1:-build}
MAKE=${MAKE:-make}
HERE=$(cd "$(dirname "$0")/.." && pwd)
cd "$HERE" || exit 2
pass=0 failn=0
ok() { pass=$((pass + 1)); echo "PASS app-build.$1 $2"; }
bad() { failn=$((failn + 1)); echo "FAIL app-build.$1 $2"; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/skiff-appbuild.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL

name=check-links-$$
if $MAKE --no-print-directory BUILD="$BUILD" app APP="examples/links/links.c examples/links/store.c" \
	APP_NAME="$name" >"$WORK/links.log" 2>&1 && [ -x "$BUILD/app/$name" ] && [ -s "$BUILD/app/$name-uk.elf" ] &&
	"$BUILD/app/$name" --help | head -n 1 | grep -q "^usage: $name "; then
	ok several "two files: $BUILD/app/$name and $name-uk.elf, usage: $name"
else
	bad several "$(tail -n 3 "$WORK/links.log" | tr '\n' ' ')"
fi
rm -f "$BUILD/app/$name" "$BUILD/app/$name-uk.elf"

name=check-glibc-$$
cat >"$WORK/$name.c" <<'C'
/* Hosted only: musl has no gnu_get_libc_version. */
#include <gnu/libc-version.h>
#include <string.h>

#include "http/app.h"

static int version(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	const char *v = gnu_get_libc_version();
	return http_app_send(r, 200, v, strlen(v));
}
static const struct http_app_route routes[] = {{HTTP_GET, "/", false, version, NULL}};
const struct http_app_def skiff_app = {.routes = routes, .nroutes = 1, .name = "glibc"};
C
$MAKE --no-print-directory BUILD="$BUILD" app APP="$WORK/$name.c" >"$WORK/glibc.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ -x "$BUILD/app/$name" ] && [ ! -e "$BUILD/app/$name-uk.elf" ] &&
	"$BUILD/app/$name" --help >/dev/null; then
	ok hosted-first "make app exit $rc (the image: $(grep -m 1 -o 'gnu/libc-version.h[^"]*' "$WORK/glibc.log" | head -c 60)), the Linux program built"
else
	bad hosted-first "make app exit $rc; $(ls "$BUILD/app/$name"* 2>&1 | tr '\n' ' ')"
fi
rm -f "$BUILD/app/$name"
if $MAKE --no-print-directory BUILD="$BUILD" app-host APP="$WORK/$name.c" >"$WORK/host.log" 2>&1 &&
	[ -x "$BUILD/app/$name" ] && [ ! -e "$BUILD/app/$name-uk.elf" ]; then
	ok app-host "make app-host: the Linux program only"
else
	bad app-host "$(tail -n 3 "$WORK/host.log" | tr '\n' ' ')"
fi
rm -f "$BUILD/app/$name"
rm -rf "$BUILD/uk/app/$name" "$BUILD/uk/app/check-links-$$"
echo "app-build: $pass passed, $failn failed"
[ $failn -eq 0 ]
