# mk/benchvm.mk — issue 7: the skiff unikernel against a Linux guest that
# serves the same app, under the same QEMU settings (bench/vm/).
#
#   make linux-guest     build/vm/linux/{vmlinuz,initrd.img}: Debian's kernel
#                        (apt-get download + dpkg-deb -x, nothing installed)
#                        and an initramfs whose /init (bench/vm/init.c)
#                        loads virtio_net, sets 10.0.2.15/24 and runs
#                        `skiff serve --stack linux --port 80`, linked static
#   make linux-guest-test  tests/linux_guest.sh: boot it under TCG, curl the body
#   make bench-vm        six ab loads + wrk -c 1000 on the 41-byte body, then
#                        files of 6000 B, 100 KiB and 1 MiB (the unikernel
#                        from --root, the Linux guest from the same tree in
#                        its initramfs) at ab -k -c 8 and ab -c 16 on TAP;
#                        both guests alternating, 3 repetitions:
#                        bench/results/vm-DATE/{results.md,runs.csv,rps.png}
#                        BENCH_VM_SIZES, BENCH_VM_BIG_LOADS, BENCH_VM_BIG_NETS
#                        choose (bench/vm/bench.sh --help); then both guests
#                        at 1 and 2 vCPUs on a TAP, multi-queue for 2
#                        (issue 17): the keep-alive loads and ab -c 16, one
#                        repetition (BENCH_VM_SMP_REPS=3 for the full
#                        version, BENCH_VM_SMP="" to leave them out)
#   make bench-vm-quick  the same, short and one repetition, user networking
#                        only (development)
#
# The guest's server is built from the same objects as build/skiff
# (serve.c, the sites runtime, loop_host/loop_linux.c, the core), minus the devices
# whose libraries (libxdp, libpcap, ...) an initramfs has no use for, and
# with a main that offers only `serve` (bench/vm/guest_main.c).  bind(2) is
# wrapped (--wrap=bind) so that the copies /init runs with more than one
# vCPU share port 80 through SO_REUSEPORT (guest_main.c says how).

VM_BUILD       := $(BUILD)/vm
VM_SERVE_OBJ   := $(BUILD)/obj/bench/vm/guest_main.o \
	$(addprefix $(BUILD)/obj/src/,cmd/serve.o host/serve_files.o host/cli.o \
	loop_host/loop_linux.o loop/timerq.o elog/elog.o) \
	$(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/plat/linux/*.c))
VM_LINUX       := $(VM_BUILD)/linux
KERNEL_PKG     ?= linux-image-cloud-amd64

.PHONY: linux-guest linux-guest-test bench-vm bench-vm-quick

# The host archive comes last: the linker takes from it only what the serve
# objects need beyond the list (a new helper file, say), never a device that
# needs libxdp or libpcap unless serve.c itself calls one.
$(VM_BUILD)/skiff-serve-static: $(VM_SERVE_OBJ) $(BUILD)/libskiff-host.a $(BUILD)/libskiff-core.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -static -Wl,--wrap=bind -o $@ $^

$(VM_BUILD)/init: bench/vm/init.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -static -o $@ $<

$(VM_LINUX)/initrd.img: $(VM_BUILD)/skiff-serve-static $(VM_BUILD)/init \
		bench/vm/linux-guest.sh bench/vm/mkcpio.py
	KERNEL_PKG=$(KERNEL_PKG) bench/vm/linux-guest.sh $(VM_LINUX) $(VM_BUILD)/skiff-serve-static $(VM_BUILD)/init

$(VM_LINUX)/vmlinuz: $(VM_LINUX)/initrd.img

linux-guest: $(VM_LINUX)/initrd.img

linux-guest-test: linux-guest
	tests/linux_guest.sh $(VM_LINUX)

bench-vm: deps all linux-guest
	bench/vm/bench.sh --mode full

bench-vm-quick: deps all linux-guest
	bench/vm/bench.sh --mode quick

# Optional: the same guest serving with Debian's nginx (bench/vm/nginx.conf);
# bench/vm/bench.sh --guests "linux skiff nginx" measures it too.
.PHONY: linux-guest-nginx
linux-guest-nginx: $(VM_LINUX)/initrd-nginx.img
$(VM_LINUX)/initrd-nginx.img: $(VM_BUILD)/skiff-serve-static $(VM_BUILD)/init \
		bench/vm/linux-guest.sh bench/vm/mkcpio.py bench/vm/nginx.conf
	NGINX=1 KERNEL_PKG=$(KERNEL_PKG) bench/vm/linux-guest.sh $(VM_LINUX) $(VM_BUILD)/skiff-serve-static $(VM_BUILD)/init

# bench/vm/profile.sh: where the Linux guest spends a request (/proc
# counters, and perf inside the guest from initrd-perf.img).
.PHONY: linux-guest-perf profile-vm
linux-guest-perf: $(VM_LINUX)/initrd-perf.img
$(VM_LINUX)/initrd-perf.img: $(VM_BUILD)/skiff-serve-static $(VM_BUILD)/init \
		bench/vm/linux-guest.sh bench/vm/mkcpio.py
	PERF=1 KERNEL_PKG=$(KERNEL_PKG) bench/vm/linux-guest.sh $(VM_LINUX) $(VM_BUILD)/skiff-serve-static $(VM_BUILD)/init
profile-vm: all linux-guest-perf
	bench/vm/profile.sh

# bench/vm/profile_uk.sh: what a request costs the emulator in the skiff
# unikernel (guest counters per request, QEMU's CPU), variants alternating.
.PHONY: profile-uk
profile-uk: deps all
	bench/vm/profile_uk.sh
