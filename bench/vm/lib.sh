# shellcheck shell=bash
# bench/vm/lib.sh — QEMU guests for bench/vm/bench.sh and tests/linux_guest.sh
# (sourced, not run).
#
# Both guests get the QEMU command line that `skiff vm --dry-run` prints
# (machine, accelerator, -cpu, 1 vCPU, 256 MiB, virtio-net-pci with
# disable-legacy=on, user networking with hostfwd on 127.0.0.1 or a TAP),
# so their settings are identical by construction; the Linux guest only
# swaps -kernel for Debian's kernel plus -initrd and -append.
#
# Network safety: user networking binds 127.0.0.1 only; the TAP backend
# lives in a namespace skt-<pid>-vmbench built by tests/lib.sh (its rules:
# 198.18.0.0/15, nothing in the root namespace, stale ones removed) and
# removed again.  Every QEMU runs under `timeout` and is killed by pid at exit.
#
# Files (bench.sh's larger bodies): vmb_site_make writes one tree and a
# Linux initramfs holding it; while VMB_ROOT and VMB_SITE_INITRD are set
# (e.g. `VMB_ROOT=... VMB_SITE_INITRD=... vmb_start ...`), the skiff guest
# boots with `skiff vm --root VMB_ROOT` and the Linux guest with that
# initramfs, whose server runs with `--root /site`: the same bytes in both.

# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib.sh"

VMB_SKIFF=${VMB_SKIFF:-build/skiff}
VMB_UK=${VMB_UK:-build/skiff-uk.elf}
VMB_LINUX=${VMB_LINUX:-build/vm/linux}
VMB_ACCEL=${VMB_ACCEL:-auto}
VMB_LIFETIME=${VMB_LIFETIME:-1500}  # hard bound on one QEMU's life, seconds
# Guest arguments of the skiff unikernel (after `--`), per backend.
VMB_UK_ARGS_USER=${VMB_UK_ARGS_USER:-}
VMB_UK_ARGS_TAP=${VMB_UK_ARGS_TAP:-ip=198.18.0.2/24 gw=198.18.0.1}
VMB_LINUX_APPEND=${VMB_LINUX_APPEND:-console=ttyS0 quiet}
VMB_TAP_HOST=$SKT_LINUX_IP
VMB_TAP_GUEST=$SKT_SKIFF_IP
VMB_ROOT=${VMB_ROOT:-}               # skiff guest: serve this tree (skiff vm --root)
VMB_SITE_INITRD=${VMB_SITE_INITRD:-} # Linux guest: this initramfs instead of initrd.img
VMB_TMP=${VMB_TMP:-${TMPDIR:-/tmp}}  # where `skiff vm --dry-run --root` leaves its archive
VMB_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# vCPUs and RAM of the next vmb_start (bench.sh's 1-vs-2 rows, issue 17):
# VMB_SMP=N gives both guests `skiff vm --smp N` (-smp N, multi-threaded
# TCG, and on a TAP queues=N,vhost=off + mq=on,vectors=2N+2, so the TAP
# must then be multi-queue: VMB_TAP_MQ=1 at vmb_ns_up); VMB_MEM, --mem.
VMB_SMP=${VMB_SMP:-1}
VMB_MEM=${VMB_MEM:-}
VMB_TAP_MQ=${VMB_TAP_MQ:-0}
VMB_NS=""
VMB_QEMU_PIDS=()   # the `timeout` wrappers; QEMU is their child

vmb_free_tcp_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# vmb_qemu_argv GUEST NET PORT : sets QARGV.  GUEST linux|nginx|skiff, NET user|tap.
# linux, nginx, perf: Debian's kernel with initrd.img (skiff serve --stack
# linux), initrd-nginx.img (Debian's nginx, make linux-guest-nginx) or
# initrd-perf.img (skiff serve plus perf, make linux-guest-perf).
# VMB_EXTRA_FWD=HOST:GUEST/PROTO adds one more user-net forward (profile.sh).
vmb_qemu_argv() {
	local guest=$1 net=$2 port=$3 words i img ukargs=()
	local netopt=(-p "$port:80")
	[ "$net" = tap ] && netopt=(--net tap:skvtap0)
	[ "$VMB_SMP" != 1 ] && netopt+=(--smp "$VMB_SMP")
	[ -n "$VMB_MEM" ] && netopt+=(--mem "$VMB_MEM")
	if [ "$guest" = skiff ]; then
		img=$VMB_UK
		if [ "$net" = tap ]; then read -ra ukargs <<<"$VMB_UK_ARGS_TAP"; else read -ra ukargs <<<"$VMB_UK_ARGS_USER"; fi
	else
		img=$VMB_LINUX/vmlinuz
	fi
	[ "$net" = user ] && [ -n "${VMB_EXTRA_FWD:-}" ] && netopt+=(-p "$VMB_EXTRA_FWD")
	# --dry-run packs the archive into VMB_TMP and leaves it for QEMU: the
	# caller removes VMB_TMP (bench.sh uses a directory of its own).
	[ "$guest" = skiff ] && [ -n "$VMB_ROOT" ] && netopt+=(--root "$VMB_ROOT")
	words=$(TMPDIR=$VMB_TMP "$VMB_SKIFF" vm --dry-run --accel "$VMB_ACCEL" --image "$img" "${netopt[@]}" -- "${ukargs[@]}") || return 1
	read -ra w <<<"$words"
	QARGV=()
	for ((i = 0; i < ${#w[@]}; i++)); do
		case ${w[i]} in
		-append) # the last option: everything after it is the command line
			QARGV+=(-append "${w[*]:i+1}")
			break ;;
		*) QARGV+=("${w[i]}") ;;
		esac
	done
	if [ "$guest" != skiff ]; then
		local append=$VMB_LINUX_APPEND initrd=$VMB_LINUX/initrd.img
		[ "$guest" = nginx ] && initrd=$VMB_LINUX/initrd-nginx.img
		[ "$guest" = perf ] && initrd=$VMB_LINUX/initrd-perf.img
		[ "$guest" = linux ] && [ -n "$VMB_SITE_INITRD" ] && initrd=$VMB_SITE_INITRD
		[ "$net" = tap ] && append+=" guest_ip=$VMB_TAP_GUEST/24 guest_gw=$VMB_TAP_HOST"
		QARGV+=(-initrd "$initrd" -append "$append")
	fi
}

# The accelerator the command line uses, e.g. "tcg".
vmb_accel_name() {
	"$VMB_SKIFF" vm --dry-run --accel "$VMB_ACCEL" --image "$VMB_LINUX/vmlinuz" | awk '{for (i = 1; i < NF; i++) if ($i == "-accel") print $(i + 1)}'
}

# vmb_ns_up : namespace skt-PID-vmbench with TAP skvtap0 = 198.18.0.1/24;
# with VMB_TAP_MQ=1 the TAP is multi-queue (`--smp N` opens N queues on it;
# QEMU with one queue refuses that kind, so --smp 1 needs VMB_TAP_MQ=0).
vmb_ns_up() {
	skt_cleanup_stale
	if [ "$VMB_TAP_MQ" = 1 ]; then
		SKT_NS_L=$(skt_ns_name vmbench)
		skt_ns_add "$SKT_NS_L" || return 1
		ip -n "$SKT_NS_L" tuntap add dev skvtap0 mode tap multi_queue || return 1
		ip -n "$SKT_NS_L" addr add "$SKT_LINUX_IP/24" dev skvtap0 || return 1
		ip -n "$SKT_NS_L" link set skvtap0 up || return 1
	else
		skt_topo_tap vmbench skvtap0 || return 1
	fi
	VMB_NS=$SKT_NS_L
}

vmb_ns_down() {
	[ -n "$VMB_NS" ] && skt_ns_del "$VMB_NS"
	VMB_NS=""
}

# vmb_in NET CMD... : run CMD on the host side of backend NET.
vmb_in() {
	local net=$1
	shift
	case $net in tap*) ip netns exec "$VMB_NS" "$@" ;; *) "$@" ;; esac
}

# vmb_url NET PORT [PATH]   (PATH default "/")
vmb_url() {
	local path=${3:-/}
	case $1 in tap*) echo "http://$VMB_TAP_GUEST$path" ;; *) echo "http://127.0.0.1:$2$path" ;; esac
}

# vmb_body_path SIZE: the path of a SIZE-byte body, as bench/http/bench.py
# names it (41: the built-in "/").
vmb_body_path() {
	case $1 in 41) echo / ;; 600) echo /x600.txt ;; *) echo "/x$1.bin" ;; esac
}

# vmb_site_make WORK SIZE... : WORK/site holds one file per SIZE (41 is
# skipped: it is the built-in "/"), named and filled as bench/http/bench.py
# does (body_path, body_bytes), so the VM rows serve the hosted bench's
# bytes.  WORK/initrd-site.img is initrd.img followed by a second gzip'ed
# cpio archive with /site (the same files) and /server.cmd
# (`/skiff serve --stack linux --port 80 --root /site`, read by /init): the
# kernel unpacks concatenated archives in order, so the Linux guest is the
# one of `make linux-guest` plus the tree.  Sets VMB_SITE_DIR and
# VMB_SITE_IMG (for VMB_ROOT and VMB_SITE_INITRD).
vmb_site_make() {
	local work=$1 s
	shift
	rm -rf "$work/site" "$work/site-cpio.d"
	mkdir -p "$work/site" "$work/site-cpio.d"
	for s in "$@"; do
		[ "$s" = 41 ] && continue
		# A clean environment: bench.py reads BENCH_* at import.
		env -i PATH="$PATH" PYTHONDONTWRITEBYTECODE=1 python3 -c '
import os, sys
sys.path.insert(0, sys.argv[1])
import bench
size = int(sys.argv[3])
with open(os.path.join(sys.argv[2], bench.body_path(size).lstrip("/")), "wb") as f:
    f.write(bench.body_bytes(size))
' "$VMB_HERE/../http" "$work/site" "$s" || return 1
		[ -s "$work/site$(vmb_body_path "$s")" ] || { echo "vmb_site_make: no file for size $s" >&2; return 1; }
	done
	cp -a "$work/site" "$work/site-cpio.d/site"
	printf '%s\n' /skiff serve --stack linux --port 80 --root /site >"$work/site-cpio.d/server.cmd"
	python3 "$VMB_HERE/mkcpio.py" "$work/site-cpio.img" "$work/site-cpio.d" || return 1
	cat "$VMB_LINUX/initrd.img" "$work/site-cpio.img" >"$work/initrd-site.img" || return 1
	# shellcheck disable=SC2034 # read by the scripts that source this file
	VMB_SITE_DIR=$work/site VMB_SITE_IMG=$work/initrd-site.img
}

# vmb_start GUEST NET PORT LOG : boots in the background; sets VMB_TPID
# (the timeout wrapper) and VMB_QPID (QEMU itself).
vmb_start() {
	local guest=$1 net=$2 port=$3 log=$4 i
	vmb_qemu_argv "$guest" "$net" "$port" || return 1
	local a line=""
	for a in "${QARGV[@]}"; do
		[[ $a == *" "* ]] && a="'$a'"
		line+="${line:+ }$a"
	done
	echo "$line" >"$log.cmd"
	if [ "$net" = tap ]; then
		ip -n "$VMB_NS" neigh flush dev skvtap0 2>/dev/null
		timeout "$VMB_LIFETIME" ip netns exec "$VMB_NS" "${QARGV[@]}" </dev/null >"$log" 2>&1 &
	else
		timeout "$VMB_LIFETIME" "${QARGV[@]}" </dev/null >"$log" 2>&1 &
	fi
	VMB_TPID=$!
	VMB_QEMU_PIDS+=("$VMB_TPID")
	VMB_QPID=""
	for ((i = 0; i < 50; i++)); do
		VMB_QPID=$(pgrep -P "$VMB_TPID" | head -1)
		[ -n "$VMB_QPID" ] && [ "$(cat /proc/"$VMB_QPID"/comm 2>/dev/null)" = qemu-system-x86 ] && return 0
		sleep 0.1
	done
	# ip netns exec execs QEMU in place, so the child is QEMU once it runs.
	[ -n "$VMB_QPID" ]
}

# vmb_wait_http NET PORT SECONDS BODYFILE [PATH] : 0 once GET PATH (default /)
# answers 200.
vmb_wait_http() {
	local net=$1 port=$2 secs=$3 out=$4 path=${5:-/} end
	end=$((SECONDS + secs))
	while [ "$SECONDS" -lt "$end" ]; do
		if vmb_in "$net" curl -s -f -m 2 -o "$out" "$(vmb_url "$net" "$port" "$path")" 2>/dev/null; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}

# CPU ticks (user + system) of a process.
vmb_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# vmb_stop TPID : end one guest (its timeout wrapper passes SIGTERM on).
vmb_stop() {
	local t=$1 q i
	q=$(pgrep -P "$t" 2>/dev/null)
	kill "$t" 2>/dev/null
	[ -n "$q" ] && kill "$q" 2>/dev/null
	for ((i = 0; i < 30; i++)); do
		kill -0 "$t" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$q" ] && kill -9 "$q" 2>/dev/null
	wait "$t" 2>/dev/null
	return 0
}

vmb_cleanup() {
	local t
	for t in "${VMB_QEMU_PIDS[@]}"; do
		kill -0 "$t" 2>/dev/null && vmb_stop "$t"
	done
	vmb_ns_down
}
