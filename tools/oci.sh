#!/usr/bin/env bash
# tools/oci.sh [BUILD]: the OCI image of hosted skiff (`make oci`), built from this machine's
# files alone: no base image is pulled from anywhere.
#
#   BUILD/oci/root/            the image's whole file system, assembled here:
#     usr/bin/skiff              BUILD/skiff, stripped of its debug sections
#     usr/lib/skiff/*.elf        the unikernel images (`skiff vm` looks in ../lib/skiff)
#     lib*/...                   exactly the shared libraries `ldd BUILD/skiff` names, at the
#                                paths it names them by, and the dynamic loader
#     etc/passwd, etc/group      root and skiff (65532), the user the image runs as
#     etc/skiff/sites.conf       a default sites file (deploy/oci/sites.conf): *:8080 answers
#                                /healthz; mount your own over /etc/skiff
#   localhost/skiff:latest     the image, imported into podman's store (podman import of the
#                              root as one layer): entry point /usr/bin/skiff, command
#                              `serve --config /etc/skiff/sites.conf`, user 65532:65532
#   BUILD/skiff-oci.tar        the same image as an OCI archive (podman save --format oci-archive)
#
# Environment: OCI_IMAGE (the name, default localhost/skiff:latest), OCI_REVISION (the
# org.opencontainers.image.revision label; make oci passes git describe's).
# It prints the image's size.  podman runs with deploy/podman/containers.conf (CONTAINERS_CONF),
# whatever the machine's own configuration says; the image goes to podman's default store.
# Root (podman's system store).  Needs podman (tools/deps.sh).
set -euo pipefail
case ${1:-} in
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
esac
cd "$(dirname "$0")/.."
BUILD=${1:-build}
IMAGE=${OCI_IMAGE:-localhost/skiff:latest}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/deploy/podman/containers.conf}
UID_SKIFF=65532

die() { echo "oci.sh: $*" >&2; exit 1; }
command -v podman >/dev/null || die "podman is missing (Debian package podman; run tools/deps.sh)"
for f in "$BUILD/skiff" "$BUILD/skiff-uk.elf" "$BUILD/skiff-proxy-uk.elf"; do
	[ -f "$f" ] || die "$f is missing (build it first: make)"
done

root=$BUILD/oci/root
rm -rf --one-file-system "$root"
mkdir -p "$root"/usr/bin "$root"/usr/lib/skiff "$root"/etc/skiff

strip --strip-debug -o "$root/usr/bin/skiff" "$BUILD/skiff"
# The guest images keep their symbols (a guest's fault report names functions by them); only
# the debug sections go.
for elf in skiff-uk.elf skiff-proxy-uk.elf; do
	strip --strip-debug -o "$root/usr/lib/skiff/$elf" "$BUILD/$elf"
done

# Every library the loader would map, under the name the binary asks for (the soname, as ldd
# prints it), holding the file that name resolves to here.  Lines are "NAME => PATH (ADDR)" or,
# for the loader itself, "PATH (ADDR)"; linux-vdso has no file.
n=0
while read -r path; do
	[ -n "$path" ] || continue
	mkdir -p "$root$(dirname "$path")"
	cp -L "$path" "$root$path"
	n=$((n + 1))
done < <(ldd "$BUILD/skiff" | awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }')
[ "$n" -gt 1 ] || die "ldd $BUILD/skiff named no libraries (is it a dynamic executable?)"

printf 'root:x:0:0:root:/root:/sbin/nologin\nskiff:x:%d:%d:skiff:/nonexistent:/sbin/nologin\n' \
	$UID_SKIFF $UID_SKIFF >"$root/etc/passwd"
printf 'root:x:0:\nskiff:x:%d:\n' $UID_SKIFF >"$root/etc/group"
cp deploy/oci/sites.conf "$root/etc/skiff/sites.conf"
# Owned by root and read-only to skiff: the server writes nothing in its own image.
chmod -R go-w "$root"

# One layer, byte for byte the same from the same files: names sorted, times and owners fixed.
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$BUILD/oci/root.tar" .

# The revision label: make oci passes the tree's (git describe, mk/install.mk's VERSION).
rev=${OCI_REVISION:-unknown}
old=$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
podman import -q \
	--change 'ENTRYPOINT ["/usr/bin/skiff"]' \
	--change 'CMD ["serve", "--config", "/etc/skiff/sites.conf"]' \
	--change "USER $UID_SKIFF:$UID_SKIFF" \
	--change 'EXPOSE 8080/tcp' \
	--change 'STOPSIGNAL SIGTERM' \
	--change 'LABEL org.opencontainers.image.title=skiff' \
	--change "LABEL org.opencontainers.image.revision=$rev" \
	"$BUILD/oci/root.tar" "$IMAGE" >/dev/null
# The image the name held before, now nameless: removed, so that rebuilding leaves nothing behind
# (kept if a container still uses it).
new=$(podman image inspect --format '{{.Id}}' "$IMAGE")
if [ -n "$old" ] && [ "$old" != "$new" ]; then
	podman rmi "$old" >/dev/null 2>&1 || true
fi
rm -f "$BUILD/skiff-oci.tar"
podman save -q --format oci-archive -o "$BUILD/skiff-oci.tar" "$IMAGE"

size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
echo "oci.sh: $IMAGE: $((size / 1024)) KiB ($n libraries); $BUILD/skiff-oci.tar: $(($(stat -c %s "$BUILD/skiff-oci.tar") / 1024)) KiB"
