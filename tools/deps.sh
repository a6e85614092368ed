#!/usr/bin/env bash
# tools/deps.sh: the one list of Debian 12 packages skiff uses (to build, test, benchmark and
# `make run`), and what each is needed for.
#
#   tools/deps.sh           install whatever on the list is missing (as root; otherwise it only
#                           says what is missing)
#   tools/deps.sh --check   change nothing: every command, header, file and python module the
#                           list names must be there, and tools/depscan.py must find nothing
#                           the scripts and sources need that the list leaves out; the first
#                           gap stops it (exit 1) naming the command and its package.
#                           `make test` runs this first.
#   tools/deps.sh --list    print the list, one "PACKAGE KIND:NAME ..." line per package
#   tools/deps.sh --help
#
# KIND:NAME says how --check knows the package is really there:
#   cmd:NAME   an executable on PATH        inc:PATH   a header under /usr/include
#   lib:NAME   a library for -lNAME         py:MODULE  a module python3 imports
#   san:NAME   clang's -fsanitize=NAME runtime links  path:PATH  a file or folder that exists
# What Debian's required set holds (bash, coreutils, grep, sed, util-linux, apt, ...) needs no line.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

LIST='
build-essential      cmd:gcc cmd:cc cmd:make cmd:ar cmd:size cmd:strip cmd:nm cmd:objdump inc:stdio.h
clang                cmd:clang
libclang-rt-14-dev   san:fuzzer
llvm                 cmd:llvm-symbolizer
libcmocka-dev        inc:cmocka.h lib:cmocka
musl-dev             inc:x86_64-linux-musl/stdio.h path:/usr/include/x86_64-linux-musl path:/usr/lib/x86_64-linux-musl/libc.a
libxdp-dev           inc:xdp/libxdp.h inc:xdp/xsk.h lib:xdp
libbpf-dev           inc:bpf/libbpf.h inc:bpf/bpf.h lib:bpf
libpcap-dev          inc:pcap/pcap.h lib:pcap
libelf-dev           lib:elf
zlib1g-dev           lib:z
libssl-dev           inc:openssl/evp.h inc:openssl/ssl.h inc:openssl/err.h inc:openssl/pem.h inc:openssl/x509.h inc:openssl/rand.h inc:openssl/core_names.h lib:crypto lib:ssl
libbearssl-dev       inc:bearssl.h lib:bearssl
libwolfssl-dev       inc:wolfssl/options.h inc:wolfssl/ssl.h inc:wolfssl/wolfcrypt/chacha20_poly1305.h inc:wolfssl/wolfcrypt/hmac.h inc:wolfssl/wolfcrypt/hash.h inc:wolfssl/wolfcrypt/sha256.h inc:wolfssl/openssl/evp.h inc:wolfssl/openssl/pem.h inc:wolfssl/wolfcrypt/memory.h lib:wolfssl path:/usr/include/wolfssl path:/usr/lib/x86_64-linux-gnu/libwolfssl.a
libgnutls28-dev      inc:gnutls/gnutls.h inc:gnutls/crypto.h lib:gnutls
openssl              cmd:openssl
testssl.sh           cmd:testssl
iproute2             cmd:ip cmd:ss
iputils-ping         cmd:ping
iputils-arping       cmd:arping
radvd                cmd:radvd
tcpdump              cmd:tcpdump
ethtool              cmd:ethtool
procps               cmd:pgrep cmd:sysctl
kmod                 cmd:modinfo
python3              cmd:python3 py:ctypes py:fcntl py:hashlib py:select py:socket py:struct
python3-hpack        py:hpack
python3-h2           py:h2
apache2-utils        cmd:ab
wrk                  cmd:wrk
nghttp2-client       cmd:h2load cmd:nghttp
chromium             cmd:chromium
curl                 cmd:curl
prometheus           cmd:promtool
nginx                cmd:nginx
qemu-system-x86      cmd:qemu-system-x86_64
gnuplot-nox          cmd:gnuplot
strace               cmd:strace
help2man             cmd:help2man
groff-base           cmd:groff
systemd              cmd:systemd-analyze
podman               cmd:podman
runc                 cmd:runc
catatonit            cmd:catatonit
'

list() { printf '%s\n' "$LIST" | sed '/^[[:space:]]*$/d'; }
pkgs() { list | awk '{print $1}'; }

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
}

# check_item PACKAGE KIND:NAME: 0 if it is there, else print why and return 1.
check_item() {
	local pkg=$1 kind=${2%%:*} name=${2#*:}
	case $kind in
	cmd) command -v "$name" >/dev/null 2>&1 && return 0
	     echo "deps: command '$name' is missing: it comes from Debian package '$pkg' (run: tools/deps.sh)" ;;
	inc) [ -e "/usr/include/$name" ] || [ -e "/usr/include/x86_64-linux-gnu/$name" ] && return 0
	     echo "deps: header <$name> is missing: it comes from Debian package '$pkg' (run: tools/deps.sh)" ;;
	lib) [ -e "/usr/lib/x86_64-linux-gnu/lib$name.so" ] || [ -e "/usr/lib/x86_64-linux-gnu/lib$name.a" ] && return 0
	     echo "deps: library -l$name is missing: it comes from Debian package '$pkg' (run: tools/deps.sh)" ;;
	san) command -v clang >/dev/null 2>&1 && printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' |
		clang -x c - -fsanitize="$name" -o /dev/null 2>/dev/null && return 0
	     echo "deps: clang cannot link -fsanitize=$name: its runtime comes from Debian package '$pkg' (run: tools/deps.sh)" ;;
	# Debian's modules are Debian's python3's: another python3 first on PATH
	# (pyenv) does not see them, so /usr/bin/python3 is asked too.
	path) [ -e "$name" ] && return 0
	     echo "deps: $name is missing: it comes from Debian package '$pkg' (run: tools/deps.sh)" ;;
	py) command -v python3 >/dev/null 2>&1 && python3 -c "import $name" 2>/dev/null && return 0
	    [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import $name" 2>/dev/null && return 0
	     echo "deps: python3 module '$name' is missing: it comes from Debian package '$pkg' (run: tools/deps.sh)" ;;
	*) echo "deps: tools/deps.sh: unknown kind '$kind' in '$2' for $pkg"; return 2 ;;
	esac
	return 1
}

case ${1:-} in
-h|--help) usage; exit 0 ;;
--list) list; exit 0 ;;
--check)
	while read -r pkg items; do
		for it in $items; do
			check_item "$pkg" "$it" >&2 || exit 1
		done
	done < <(list)
	# Everything on the list is there; now, does the list hold everything that is needed?
	exec python3 "$here/depscan.py" ;;
'') ;;
*) echo "deps.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

missing=()
for p in $(pkgs); do
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
