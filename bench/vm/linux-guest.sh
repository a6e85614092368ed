#!/usr/bin/env bash
# bench/vm/linux-guest.sh — build the Linux benchmark guest (issue 7):
#
#   bench/vm/linux-guest.sh OUTDIR SERVE_STATIC INIT_STATIC
#
# OUTDIR/vmlinuz     Debian's kernel, from the package that KERNEL_PKG
#                    (default linux-image-cloud-amd64) depends on, fetched
#                    with `apt-get download` and unpacked with dpkg-deb -x
#                    into OUTDIR/pkg: nothing is installed on the host.
# OUTDIR/initrd.img  gzip'ed cpio (newc): /init = INIT_STATIC (bench/vm/init.c),
#                    /skiff = SERVE_STATIC (skiff serve, static), and the
#                    modules virtio_net needs, from the same package, with
#                    their dependencies (modinfo), in load order.
# OUTDIR/kernel.txt  the package name and version, for the results.
# OUTDIR/initrd-nginx.img  with NGINX=1: the same, serving with Debian's nginx
#                    (bench/vm/nginx.conf) instead of skiff serve.
# OUTDIR/initrd-perf.img   with PERF=1: skiff serve plus perf (profile.sh).
set -euo pipefail
OUT=$1 SERVE=$2 INIT=$3
KERNEL_PKG=${KERNEL_PKG:-linux-image-cloud-amd64}
MODULES=(virtio_pci virtio_net)
mkdir -p "$OUT/deb"

# The versioned image package behind the meta package.
image_pkg() { apt-cache depends "$KERNEL_PKG" 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'; }
PKG=$(image_pkg || true)
if [ -z "$PKG" ]; then
	echo "linux-guest: apt-get update (no package list for $KERNEL_PKG yet)"
	apt-get update -qq
	PKG=$(image_pkg)
fi
[ -n "$PKG" ] || { echo "linux-guest: cannot resolve $KERNEL_PKG" >&2; exit 1; }
DEB=$(ls "$OUT"/deb/"${PKG}"_*.deb 2>/dev/null | head -1 || true)
if [ -z "$DEB" ]; then
	echo "linux-guest: apt-get download $PKG"
	# _apt cannot write into a root-owned build folder: that warning is noise.
	(cd "$OUT/deb" && apt-get download "$PKG" 2>&1 | grep -v "unsandboxed" || true)
	DEB=$(ls "$OUT"/deb/"${PKG}"_*.deb 2>/dev/null | head -1 || true)
	[ -n "$DEB" ] || { echo "linux-guest: download of $PKG failed" >&2; exit 1; }
fi
rm -rf "$OUT/pkg"
dpkg-deb -x "$DEB" "$OUT/pkg"
KVER=$(ls "$OUT/pkg/lib/modules" | head -1)
cp "$OUT/pkg/boot/vmlinuz-$KVER" "$OUT/vmlinuz"
echo "$PKG $(dpkg-deb -f "$DEB" Version) ($KVER)" >"$OUT/kernel.txt"
MODDIR="$OUT/pkg/lib/modules/$KVER"

# Module files, dependencies first.
declare -A seen=()
ORDER=()
modfile() { find "$MODDIR/kernel" -name "$1.ko" -o -name "${1//_/-}.ko" | head -1; }
add_mod() {
	local m=${1//-/_} f d
	[ -n "${seen[$m]:-}" ] && return 0
	seen[$m]=1
	f=$(modfile "$m")
	if [ -z "$f" ]; then
		grep -q "/$m.ko\$" "$MODDIR/modules.builtin" 2>/dev/null && return 0
		echo "linux-guest: module $m not found in $PKG" >&2
		exit 1
	fi
	for d in $(modinfo -F depends "$f" | tr ',' ' '); do add_mod "$d"; done
	ORDER+=("$f")
}
for m in "${MODULES[@]}"; do add_mod "$m"; done

ST="$OUT/initrd.d"
rm -rf "$ST"
mkdir -p "$ST/modules" "$ST/dev" "$ST/proc" "$ST/sys" "$ST/tmp"
install -m 0755 "$INIT" "$ST/init"
install -m 0755 "$SERVE" "$ST/skiff"
strip "$ST/init" "$ST/skiff"
: >"$ST/modules/order"
for f in "${ORDER[@]}"; do
	cp "$f" "$ST/modules/"
	echo "/modules/$(basename "$f")" >>"$ST/modules/order"
done
python3 "$(dirname "$0")/mkcpio.py" "$OUT/initrd.img" "$ST" \
	--node dev/console:c:5:1:0600 --node dev/null:c:1:3:0666
echo "linux-guest: $(cat "$OUT/kernel.txt"); modules: $(tr '\n' ' ' <"$ST/modules/order")"
echo "linux-guest: $OUT/vmlinuz $(stat -c %s "$OUT/vmlinuz") bytes, $OUT/initrd.img $(stat -c %s "$OUT/initrd.img") bytes"

# add_libs BINARY: the shared libraries BINARY links, into the staging tree.
add_libs() {
	local lib
	for lib in $(ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		mkdir -p "$ST$(dirname "$lib")"
		cp -L "$lib" "$ST$lib"
	done
}

# The perf variant (PERF=1), for bench/vm/profile.sh: skiff serve as above
# plus the host's /usr/bin/perf (Debian's linux-perf) and its libraries.
if [ "${PERF:-0}" = 1 ]; then
	PST="$OUT/initrd-perf.d"
	rm -rf "$PST"
	cp -a "$ST" "$PST"
	ST0=$ST ST=$PST
	mkdir -p "$ST/usr/bin"
	cp -L /usr/bin/perf "$ST/usr/bin/perf"
	add_libs /usr/bin/perf
	python3 "$(dirname "$0")/mkcpio.py" "$OUT/initrd-perf.img" "$ST" \
		--node dev/console:c:5:1:0600 --node dev/null:c:1:3:0666
	echo "linux-guest: $OUT/initrd-perf.img $(stat -c %s "$OUT/initrd-perf.img") bytes"
	ST=$ST0
fi

# The nginx variant (NGINX=1): the same initramfs plus Debian's nginx (the
# host's installed /usr/sbin/nginx, from tools/deps.sh) with the shared
# libraries it links, bench/vm/nginx.conf, and /server.cmd naming it.
if [ "${NGINX:-0}" = 1 ]; then
	NX=/usr/sbin/nginx
	[ -x "$NX" ] || { echo "linux-guest: $NX missing (apt-get install nginx)" >&2; exit 1; }
	mkdir -p "$ST/usr/sbin" "$ST/etc/nginx" "$ST/var/log/nginx" "$ST/var/lib/nginx" "$ST/run" "$ST/var/lock"
	cp "$NX" "$ST/usr/sbin/nginx"
	add_libs "$NX"
	cp "$(dirname "$0")/nginx.conf" "$ST/etc/nginx/nginx.conf"
	printf 'root:x:0:0:root:/:/init\nnobody:x:65534:65534:nobody:/:/init\n' >"$ST/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$ST/etc/group"
	printf '%s\n' /usr/sbin/nginx -c /etc/nginx/nginx.conf >"$ST/server.cmd"
	python3 "$(dirname "$0")/mkcpio.py" "$OUT/initrd-nginx.img" "$ST" \
		--node dev/console:c:5:1:0600 --node dev/null:c:1:3:0666
	echo "linux-guest: $OUT/initrd-nginx.img $(stat -c %s "$OUT/initrd-nginx.img") bytes ($("$NX" -v 2>&1))"
fi
