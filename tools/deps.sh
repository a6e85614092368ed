#!/usr/bin/env bash
# Install the Debian 12 packages skiff needs, if any is missing.  Run as root
# on a fresh machine; otherwise it only says what is missing.
set -euo pipefail
PKGS=(build-essential clang libclang-rt-14-dev llvm libcmocka-dev libxdp-dev libbpf-dev
      libpcap-dev libelf-dev zlib1g-dev iproute2 iputils-ping iputils-arping python3
      procps util-linux kmod ethtool apache2-utils wrk nghttp2-client curl qemu-system-x86 nginx gnuplot-nox)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing Debian packages: ${missing[*]} (run as root to install them)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
