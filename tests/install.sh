#!/usr/bin/env bash
# tests/install.sh [BUILD] — `make install` into a temporary DESTDIR, then the
# installed binary serving HTTP as an unprivileged user with exactly
# CAP_NET_RAW and CAP_NET_ADMIN, as skiff@.service runs it.
#
#   files     make install PREFIX=/usr/local DESTDIR=TMP puts the binary, the
#             unikernel and the proxy image, one man page per command (and skiff.1), the unit and
#             example.env in place, with no DESTDIR path written into them
#   man       every page renders with groff -man, no warnings (-ww)
#   unit      its capabilities, user and ProtectSystem are the promised ones;
#             systemd-analyze verify reports nothing
#   vm        the installed `skiff vm` finds the installed image by default, and
#             `skiff vm --proxy` the installed proxy image
#   tap, packet
#             setpriv --reuid=nobody with those two capabilities (inheritable,
#             ambient, bounding; nothing else): curl gets 200 and the file's
#             bytes; the process really runs as nobody with caps 0x3000;
#             SIGTERM ends it with 0.  The same without capabilities must
#             fail, naming the one it lacks (so the capabilities are what
#             make it work): the TAP is owned by root, so attaching takes
#             CAP_NET_ADMIN, and creating one (a name that does not exist)
#             too
#   xdp       with the same two it must fail and say CAP_SYS_ADMIN (docs/operations.md:
#             "Install and capabilities")
#   uninstall leaves no file behind
#
# systemd is not PID 1 in CI's chroot: the unit is checked with
# systemd-analyze and run the way it would run it, with setpriv.
# /dev/net/tun: udev's default rules make it 0666 on a normal host; here it
# may be the kernel's 0600, so the runs see a 0666 node bound over it inside
# a mount namespace of their own (the host's node is not touched).
# Root, for the namespaces; run under flock /tmp/skiff-nettest.lock.
set -u
cd "$(dirname "$0")/.."
# shellcheck source=tests/lib.sh
. tests/lib.sh
SKT_SUITE=install
BUILD=${1:-build}
PREFIX=/usr/local
CAPS=+net_raw,+net_admin

usage() { echo "usage: $0 [BUILD]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "$0: needs root (namespaces, setpriv)" >&2; exit 2; }
skt_need tools help2man groff systemd-analyze setpriv curl ip unshare || { summary; exit 1; }

TMP=$(mktemp -d /tmp/skiff-install.XXXXXX)
# nobody must reach the installed binary and the served files.
chmod 755 "$TMP"
DEST=$TMP/root
cleanup() {
	skt_cleanup
	rm -rf --one-file-system "$TMP"
}
trap cleanup EXIT INT TERM
skt_cleanup_stale

# ---- files ------------------------------------------------------------
if ! make -s --no-print-directory install BUILD="$BUILD" PREFIX=$PREFIX DESTDIR="$DEST" >"$TMP/make.log" 2>&1; then
	fail files "make install failed: $(tail -n 5 "$TMP/make.log")"
	summary
	exit 1
fi
BIN=$DEST$PREFIX/bin/skiff
UNIT=$DEST$PREFIX/lib/systemd/system/skiff@.service
ENVF=$DEST/etc/skiff/example.env
MAN=$DEST$PREFIX/share/man/man1
want=("755 $BIN" "644 $DEST$PREFIX/lib/skiff/skiff-uk.elf" "644 $DEST$PREFIX/lib/skiff/skiff-proxy-uk.elf" "644 $UNIT" "644 $ENVF" "644 $MAN/skiff.1")
mapfile -t cmds < <("$BUILD/skiff" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
for c in "${cmds[@]}"; do want+=("644 $MAN/skiff-$c.1"); done
missing=""
for w in "${want[@]}"; do
	f=${w#* }
	[ -f "$f" ] && [ "$(stat -c %a "$f")" = "${w%% *}" ] || missing+=" $f (want mode ${w%% *})"
done
nfiles=$(find "$DEST" -type f | wc -l)
if [ -z "$missing" ] && [ ${#cmds[@]} -ge 5 ] && [ "$nfiles" -eq ${#want[@]} ]; then
	pass "files (${#want[@]}: binary, images, unit, example.env, ${#cmds[@]} + 1 man pages)"
else
	fail files "missing or wrong:${missing:- none}; ${#cmds[@]} commands; $nfiles files installed, want ${#want[@]}"
fi
if cmp -s "$BIN" "$BUILD/skiff" && cmp -s "$DEST$PREFIX/lib/skiff/skiff-uk.elf" "$BUILD/skiff-uk.elf"; then
	pass "files.same (binary and image are the built ones)"
else
	fail files.same "installed binary or image differs from $BUILD's"
fi
if grep -rl "$TMP" "$DEST" >/dev/null 2>&1; then
	fail files.paths "DESTDIR written into: $(grep -rl "$TMP" "$DEST" | tr '\n' ' ')"
else
	pass "files.paths (no DESTDIR path inside any installed file)"
fi

# ---- man --------------------------------------------------------------
bad=""
for f in "$MAN"/skiff*.1; do
	warn=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
	[ -z "$warn" ] || bad+=" $(basename "$f"): $warn"
done
# Rendered wide and with spaces squeezed, so that no line break or
# justification splits what is looked for.
render() { groff -man -Tascii -P-cbou -rLL=250n "$1" 2>/dev/null | tr -s ' '; }
serve_txt=$(render "$MAN/skiff-serve.1")
top_txt=$(render "$MAN/skiff.1")
if [ -z "$bad" ] && grep -q '^SYNOPSIS' <<<"$serve_txt" && grep -q -- '--keepalive-timeout' <<<"$serve_txt" &&
	grep -q 'skiff-serve - HTTP/1.1 server' <<<"$serve_txt" && grep -q 'skiff@.service' <<<"$top_txt"; then
	pass "man (every page renders without warnings; skiff-serve(1) has its synopsis and options)"
else
	fail man "${bad:-skiff-serve.1 or skiff.1 lacks its NAME, SYNOPSIS, options or FILES}"
fi

# ---- unit -------------------------------------------------------------
key() { sed -n "s/^$1=//p" "$UNIT"; }
if [ "$(key ExecStart)" = "$PREFIX/bin/skiff \$SKIFF_ARGS" ] && [ "$(key DynamicUser)" = yes ] &&
	[ "$(key AmbientCapabilities)" = "CAP_NET_RAW CAP_NET_ADMIN" ] &&
	[ "$(key CapabilityBoundingSet)" = "CAP_NET_RAW CAP_NET_ADMIN" ] &&
	[ "$(key ProtectSystem)" = strict ] && [ "$(key EnvironmentFile)" = "/etc/skiff/%i.env" ] &&
	[ -z "$(grep -E '^(User|Group|AmbientCapabilities|CapabilityBoundingSet)=' "$UNIT" | sort | uniq -d)" ] &&
	grep -q '^SKIFF_ARGS=serve ' "$ENVF"; then
	pass "unit.keys (DynamicUser, the two capabilities, ProtectSystem=strict, ExecStart from SKIFF_ARGS)"
else
	fail unit.keys "$(grep -E '^(ExecStart|DynamicUser|AmbientCapabilities|CapabilityBoundingSet|ProtectSystem|EnvironmentFile)=' "$UNIT" | tr '\n' ' ')"
fi
# verify checks the ExecStart binary exists, so a copy points it at the
# DESTDIR one; otherwise it is the installed unit.  Unknown keys are only
# warnings (exit 0), so any output fails.
sed "s|^ExecStart=$PREFIX/bin/skiff|ExecStart=$BIN|" "$UNIT" >"$TMP/skiff@check.service"
out=$(cd "$TMP" && systemd-analyze verify --man=no "$TMP/skiff@check.service" 2>&1)
rc=$?
if [ $rc -eq 0 ] && [ -z "$out" ]; then
	pass "unit.verify (systemd-analyze verify: nothing to report)"
else
	fail unit.verify "rc=$rc: $out"
fi

# ---- vm: the installed binary finds the installed image ---------------
out=$("$BIN" vm --dry-run 2>&1)
if grep -q -- "-kernel $DEST$PREFIX/lib/skiff/skiff-uk.elf" <<<"$out"; then
	pass "vm.image (skiff vm boots $PREFIX/lib/skiff/skiff-uk.elf by default)"
else
	fail vm.image "$(tail -n 2 <<<"$out")"
fi
out=$("$BIN" vm --proxy --dry-run 2>&1)
if grep -q -- "-kernel $DEST$PREFIX/lib/skiff/skiff-proxy-uk.elf" <<<"$out"; then
	pass "vm.proxy-image (skiff vm --proxy boots $PREFIX/lib/skiff/skiff-proxy-uk.elf)"
else
	fail vm.proxy-image "$(tail -n 2 <<<"$out")"
fi

# ---- unprivileged runs ------------------------------------------------
WWW=$TMP/www
mkdir -p "$WWW" "$TMP/dev"
token="skiff install test $$ $(date +%s%N)"
printf '%s\n' "$token" >"$WWW/hello.txt"
chmod 755 "$WWW" "$TMP/dev"
chmod 644 "$WWW/hello.txt"

# run_as LOG CAPS NS ARGS...: the installed skiff as nobody/nogroup with
# CAPS (e.g. +net_raw,+net_admin; empty: none) as its inheritable, ambient
# and bounding sets, in NS, with a 0666 /dev/net/tun of its own; in the
# background, the pid in RUN_PID (exec all the way: it is skiff's pid).
run_as() {
	local log=$1 caps=$2 ns=$3 set=-all
	shift 3
	[ -n "$caps" ] && set=-all,$caps
	# shellcheck disable=SC2016  # expanded by the inner shell
	unshare --mount --propagation private sh -c '
		mount -t tmpfs -o mode=755,size=64k tmpfs "$1" && mknod -m 666 "$1/tun" c 10 200 &&
		mount --bind "$1/tun" /dev/net/tun || exit 97
		shift
		exec "$@"' sh "$TMP/dev" \
		ip netns exec "$ns" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps="$set" ${caps:+--ambient-caps="$caps"} --bounding-set="$set" --no-new-privs \
		"$BIN" "$@" >"$log" 2>&1 &
	RUN_PID=$!
}

# wait_listen LOG PID: the listening line within 10 s.
wait_listen() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q '^skiff serve: listening' "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# serve_check KIND NS_SERVER NS_CLIENT DEV: the positive run.
serve_check() {
	local kind=$1 nss=$2 nsc=$3 dev=$4 log=$TMP/$1.log code st uid
	run_as "$log" "$CAPS" "$nss" serve --dev "$dev" --ip "$SKT_SKIFF_IP/24" --port 80 --root "$WWW"
	local pid=$RUN_PID
	SKT_PIDS+=("$pid")
	if ! wait_listen "$log" "$pid"; then
		fail "$kind.serve" "not listening: $(tail -n 3 "$log" | tr '\n' ' ')"
		skt_stop_pid "$pid"
		return
	fi
	st=/proc/$pid/status
	uid=$(awk '/^Uid:/ { print $2 "/" $3 "/" $4 }' "$st")
	caps=$(awk '/^Cap(Prm|Eff|Bnd|Amb):/ { printf "%s=%s ", $1, $2 }' "$st")
	if [ "$uid" = "65534/65534/65534" ] && [ "$caps" = "CapPrm:=0000000000003000 CapEff:=0000000000003000 CapBnd:=0000000000003000 CapAmb:=0000000000003000 " ] &&
		[ "$(cat "/proc/$pid/comm")" = skiff ]; then
		pass "$kind.identity (skiff as uid 65534, capabilities 0x3000 = CAP_NET_ADMIN|CAP_NET_RAW, nothing else)"
	else
		fail "$kind.identity" "uid=$uid $caps comm=$(cat "/proc/$pid/comm" 2>/dev/null)"
	fi
	code=$(ip netns exec "$nsc" curl -s -m 5 -o "$TMP/$kind.body" -w '%{http_code}' "http://$SKT_SKIFF_IP/hello.txt")
	if [ "$code" = 200 ] && cmp -s "$TMP/$kind.body" "$WWW/hello.txt"; then
		pass "$kind.http (curl: 200 and the file's $(wc -c <"$WWW/hello.txt") bytes)"
	else
		fail "$kind.http" "code=$code body=$(head -c 80 "$TMP/$kind.body" 2>/dev/null)"
	fi
	kill -TERM "$pid"
	if skt_wait_exit "$pid" 10 && [ "$SKT_RC" = 0 ]; then
		pass "$kind.stop (SIGTERM: exit 0)"
	else
		fail "$kind.stop" "exit ${SKT_RC:-none: still running}"
		skt_stop_pid "$pid"
	fi
}

# deny_check NAME CAPS NS DEV WANT: the run must fail (exit non-zero within
# 10 s) with WANT in its error.
deny_check() {
	local name=$1 caps=$2 ns=$3 dev=$4 want=$5 log=$TMP/$1.log
	run_as "$log" "$caps" "$ns" serve --dev "$dev" --ip "$SKT_SKIFF_IP/24" --port 80
	local pid=$RUN_PID
	SKT_PIDS+=("$pid")
	if ! skt_wait_exit "$pid" 10; then
		fail "$name" "still running with ${caps:-no capabilities}: $(tail -n 2 "$log" | tr '\n' ' ')"
		skt_stop_pid "$pid"
	elif [ "$SKT_RC" != 0 ] && [ "$SKT_RC" != 97 ] && grep -q -- "$want" "$log"; then
		pass "$name (${caps:-no capabilities}: exit $SKT_RC, \"$(grep -o -- "$want.\{0,40\}" "$log" | head -n 1)\")"
	else
		fail "$name" "exit $SKT_RC, want non-zero and '$want': $(tail -n 2 "$log" | tr '\n' ' ')"
	fi
}

# tap: a persistent TAP sk0 (kernel side 198.18.0.1/24, up) owned by root.
# The kernel lets anyone who can open /dev/net/tun attach to a persistent
# TAP that has no owner, and its owner always; anyone else needs
# CAP_NET_ADMIN, as does creating a TAP (tap:sk9, which does not exist).
NS_T=$(skt_ns_name tap)
if skt_ns_add "$NS_T" && ip -n "$NS_T" tuntap add dev sk0 mode tap user 0 &&
	ip -n "$NS_T" addr add "$SKT_LINUX_IP/24" dev sk0 && ip -n "$NS_T" link set sk0 up; then
	serve_check tap "$NS_T" "$NS_T" tap:sk0
	deny_check tap.denied "" "$NS_T" tap:sk0 "TUNSETIFF: Operation not permitted (needs CAP_NET_ADMIN)"
	deny_check tap.create-denied "" "$NS_T" tap:sk9 "TUNSETIFF: Operation not permitted (needs CAP_NET_ADMIN)"
else
	fail tap.topology "could not build the TAP namespace"
fi
skt_cleanup

# packet and xdp: cli's vc0 (198.18.0.1/24) and srv's vs0, which skiff owns.
if skt_topo_veth off; then
	serve_check packet "$SKT_NS_S" "$SKT_NS_L" "packet:$SKT_IF_S"
	deny_check packet.denied "" "$SKT_NS_S" "packet:$SKT_IF_S" "needs CAP_NET_RAW"
	deny_check xdp.denied "$CAPS" "$SKT_NS_S" "xdp:$SKT_IF_S" "CAP_SYS_ADMIN"
else
	fail veth.topology "could not build the veth namespaces"
fi
skt_cleanup

# ---- uninstall --------------------------------------------------------
if make -s --no-print-directory uninstall BUILD="$BUILD" PREFIX=$PREFIX DESTDIR="$DEST" >"$TMP/un.log" 2>&1 &&
	[ -z "$(find "$DEST" -type f)" ]; then
	pass "uninstall (no file left under DESTDIR)"
else
	fail uninstall "$(tail -n 3 "$TMP/un.log") left: $(find "$DEST" -type f | tr '\n' ' ')"
fi
summary
