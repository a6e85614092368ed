# mk/unikernel.mk — build/skiff-uk.elf: the unikernel for QEMU/KVM (PVH boot).
#
# The core (CORE_SRC: the folders of CORE_DIRS in the Makefile) is
# compiled again, from the same files, with kernel flags into its own
# archive; nothing in it changes for the unikernel, which runs the same TCP
# engine, loop_skiff and HTTP server as `skiff serve --stack skiff`, with
# the same run loop (src/runner/runner.c).  The platform (src/plat/kvm:
# boot, memory, paging, traps, console, time, the park, PCI/MSI-X), the
# virtio transports (UK_DEV_SRC: finding the device on PCI or MMIO;
# src/dev/virtio_transport.c: their registers) and virtio-net driver
# (src/dev/virtio_net.c)
# and the application (UK_APP_SRC: src/uk/*.c, the main and its
# command line) complete it.  Linking the core as an
# archive pulls in only the objects the kernel uses.
#
#   make uk            build/skiff-uk.elf
#   make uk-clang      the same with clang, into build/clang (a warning check)
#   make vm-test       tests/vm.sh: boot under QEMU TCG, UDP echo, HTTP (curl,
#                      http.client, ab, bad requests), idle, faults
#   make vm-tls-test   tests/vm_tls.sh: HTTPS in the guest (BearSSL): curl,
#                      s_client -reconnect, python ssl, ab -f, wrk, bad input
#   make vm-proxy-test tests/vm_proxy.sh: the proxy image (build/skiff-proxy-uk.elf)
#                      in front of a Python upstream on the host's loopback
#   make vm-sites-test tests/vm_sites.sh: skiff vm --config, a copy of
#                      examples/sites.conf served by the guest (uk/uk_sites.c)
#   make vm-libc-test  tests/vm_libc.sh: examples/libc_check.c in the guest
#                      (musl) and hosted, every answer checked by Python
#   make run           (Makefile, tools/run.sh) serve http://127.0.0.1:8080/
#                      from the unikernel; mk/run.mk has run-hosted

UK_CC      ?= $(CC)
UK_BUILD   := $(BUILD)/uk
UK_ELF     := $(BUILD)/skiff-uk.elf
# The reverse proxy as a guest (uk/uk_proxy.c, its uk_app hooks):
# `skiff vm --proxy`, or --image build/skiff-proxy-uk.elf.
UK_PROXY_ELF := $(BUILD)/skiff-proxy-uk.elf
# -mno-red-zone: interrupts arrive on the kernel stack.
# -mgeneral-regs-only: no SSE state to save in interrupt handlers.
# -fno-pie/-fno-pic, mcmodel=kernel-free small model: linked at 1 MiB.
UK_CFLAGS  := -std=c11 $(WARN) -O2 -g -Isrc -ffreestanding -fno-pie -fno-pic \
	-fno-stack-protector -mno-red-zone -mgeneral-regs-only -fno-omit-frame-pointer \
	-fno-asynchronous-unwind-tables -fno-common -ffunction-sections -fdata-sections \
	$(if $(findstring clang,$(UK_CC)),,-fno-tree-loop-distribute-patterns) $(UK_EXTRA_CFLAGS)
UK_LDFLAGS := -nostdlib -static $(if $(findstring clang,$(UK_CC)),,-no-pie) -Wl,--build-id=none -Wl,-z,max-page-size=4096 \
	-Wl,--gc-sections -Wl,-z,noexecstack -Wl,-T,src/plat/kvm/kernel.ld

# HTTPS: the TLS stream layer (compiled with LOOP_TLS_FIXED: its pools
# come from the guest's memory, no malloc) and the BearSSL engine, linked
# with Debian's libbearssl.a (libbearssl-dev), the unikernel only; the
# hosted build keeps OpenSSL.  That archive is user-space code: it uses
# SSE (boot.S turns on OSFXSR/OSXMMEXCPT), the red zone (safe: interrupts
# are taken only in park.c's `sti; hlt`, compiled -mno-red-zone, and the
# handlers are -mgeneral-regs-only, so they touch no SSE state), a stack
# canary at %fs:0x28 (start.c points FS at one) and the fortified and
# system calls libc.c answers (__memcpy_chk, open -> -1, ...).
UK_TLS_SRC  := src/tls/tls_bearssl.c src/tls/loop_tls.c
BEARSSL_A   ?= $(shell gcc -print-file-name=libbearssl.a)
UK_TLS_LIBS  = $(BEARSSL_A)
UK_TLS_DEPS :=
UK_TLS_LDFLAGS :=
# UK_TLS=wolfssl (`make uk-tls13`: build/skiff-uk-tls13.elf, the same
# kernel built again into build/tls13): TLS 1.3 and 1.2 from Debian's
# libwolfssl.a (libwolfssl-dev) instead of BearSSL (tls/tls_wolfssl.h).
# wolfSSL is user-space code that needs a C library: the guest's musl
# (below: UK_LIBC_OBJ and libc.a, as an application image has), plus
# musl/fortify.c (glibc's checked functions it was built to call), the
# /dev/urandom of libc.c (its DRBG's seed, from RDSEED/RDRAND) and
# thread-local variables per vCPU (kernel.ld, musl/init.c).  Its engine
# and the buffers it uses are compiled as an application is (musl's
# headers, SSE); uk_sites.c picks it by UK_TLS_WOLFSSL.
ifeq ($(UK_TLS),wolfssl)
UK_TLS_SRC  := src/tls/loop_tls.c
UK_WOLF_SRC := src/tls/tls_wolfssl.c src/tls/tls_buf.c src/tls/tls_sni.c
UK_WOLF_OBJ := $(UK_WOLF_SRC:%.c=$(UK_BUILD)/wolf/%.o)
WOLFSSL_A   ?= /usr/lib/x86_64-linux-gnu/libwolfssl.a
UK_CFLAGS   += -DUK_TLS_WOLFSSL
UK_TLS_LIBS  = $(UK_WOLF_OBJ) $(UK_LIBC_OBJ) $(WOLFSSL_A) $(MUSL_LIBC) $(UK_LIBGCC)
UK_TLS_DEPS  = $(UK_WOLF_OBJ) $(UK_LIBC_OBJ)
UK_TLS_LDFLAGS = $(UK_LIBC_LDFLAGS)
endif
# src/uk/uk_proxy*.c: the proxy image's own objects (below), not the kernel's.
UK_PROXY_SRC := $(filter src/uk/uk_proxy%.c,$(UK_APP_SRC))
UK_PLAT_SRC := $(filter-out %_test.c,$(wildcard src/plat/kvm/*.c)) $(UK_DEV_SRC) src/dev/virtio_transport.c src/dev/virtio_net.c \
	$(filter-out $(UK_PROXY_SRC),$(UK_APP_SRC)) $(UK_TLS_SRC)
UK_ASM_SRC  := $(wildcard src/plat/kvm/*.S)
UK_PLAT_OBJ := $(UK_PLAT_SRC:%.c=$(UK_BUILD)/%.o) $(UK_ASM_SRC:%.S=$(UK_BUILD)/%.o)
$(UK_TLS_SRC:%.c=$(UK_BUILD)/%.o): UK_CFLAGS += -DLOOP_TLS_FIXED
UK_CORE_OBJ := $(CORE_SRC:%.c=$(UK_BUILD)/%.o)

.PHONY: uk uk-clang vm-test vm-tls-test vm-proxy-test vm-sites-test vm-libc-test
uk: $(UK_ELF) $(UK_PROXY_ELF)
# Part of `make all`: it needs only gcc/clang and binutils, like the rest.
all: $(UK_ELF) $(UK_PROXY_ELF)

$(UK_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(UK_CC) $(UK_CFLAGS) -MMD -MP -c $< -o $@

$(UK_BUILD)/%.o: %.S
	@mkdir -p $(dir $@)
	$(UK_CC) $(UK_CFLAGS) -MMD -MP -c $< -o $@

$(UK_BUILD)/libcore.a: $(UK_CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The core's archive the kernel links: its own, or (uk-tls13, below) the
# BearSSL kernel's, the same files compiled with the same flags.
UK_CORE_A ?= $(UK_BUILD)/libcore.a
$(UK_ELF): $(UK_PLAT_OBJ) $(UK_CORE_A) src/plat/kvm/kernel.ld
	$(UK_CC) $(UK_CFLAGS) $(UK_LDFLAGS) $(UK_TLS_LDFLAGS) -o $@ $(UK_PLAT_OBJ) $(UK_CORE_A) $(UK_TLS_LIBS)
	@size $@ | tail -1 | awk '{printf "uk: %s text %d data %d bss %d\n", "$@", $$1, $$2, $$3}'

$(UK_PROXY_ELF): $(UK_PROXY_SRC:%.c=$(UK_BUILD)/%.o) $(UK_PLAT_OBJ) $(UK_BUILD)/libcore.a src/plat/kvm/kernel.ld
	$(UK_CC) $(UK_CFLAGS) $(UK_LDFLAGS) -o $@ $(UK_PLAT_OBJ) $(UK_PROXY_SRC:%.c=$(UK_BUILD)/%.o) \
	  $(UK_BUILD)/libcore.a $(BEARSSL_A)
	@size $@ | tail -1 | awk '{printf "uk: %s text %d data %d bss %d\n", "$@", $$1, $$2, $$3}'

# An application of examples/ (http/app.h) as a guest: this kernel and the
# application's object, whose skiff_app replaces the static server
# (uk/uk_main.c).  `skiff vm --image build/examples/NAME-uk.elf`.
#
# An application is ordinary C and gets a C library: Debian's musl
# (musl-dev), its static libc.a last on the line, so only the members the
# application (or another member) needs are linked, and src/plat/kvm/musl/
# (UK_LIBC_OBJ: musl's start-up, the system calls it makes, its heap).
# The kernel's own objects come first, so where both define a symbol the
# kernel's wins and musl's member is never pulled: memcpy, memmove,
# memset, memcmp, strlen, strcmp, strncmp, strchr (libc.c: the word
# copies measured under TCG, the same in every image), __errno_location
# (per vCPU), __stack_chk_fail, open/read/close.  The application's
# object is compiled with musl's headers and -D_GNU_SOURCE (as the hosted
# build is), hosted (no -ffreestanding) and
# with SSE (doubles, printf's %f); the kernel around it stays as it is.
# skiff-uk.elf and the proxy image link none of this.
MUSL_INC   ?= /usr/include/x86_64-linux-musl
MUSL_LIBC  ?= /usr/lib/x86_64-linux-musl/libc.a
UK_LIBGCC  := $(shell $(UK_CC) -print-libgcc-file-name)
UK_APP_CFLAGS := $(filter-out -ffreestanding -mgeneral-regs-only,$(UK_CFLAGS)) \
	-D_GNU_SOURCE -nostdinc -isystem $(MUSL_INC) -isystem $(shell $(UK_CC) -print-file-name=include)
UK_LIBC_SRC := $(filter-out %_test.c,$(wildcard src/plat/kvm/musl/*.c))
UK_LIBC_OBJ := $(UK_LIBC_SRC:%.c=$(UK_BUILD)/%.o) $(UK_BUILD)/src/plat/kvm/musl/entry.o
UK_APP_LINK := $(UK_PLAT_OBJ) $(UK_LIBC_OBJ)
# musl's heap under one lock for every vCPU (src/plat/kvm/musl/heap_lock.c):
# each reference to these, in every object and libc.a member, goes to its
# __wrap_ there.  On every link of UK_LIBC_OBJ (without them it does not link).
UK_LIBC_WRAP := malloc calloc realloc free aligned_alloc malloc_usable_size \
	__libc_malloc __libc_calloc __libc_free
UK_LIBC_LDFLAGS := $(foreach f,$(UK_LIBC_WRAP),-Wl,--wrap=$(f))
UK_APP_LIBS := $(UK_BUILD)/libcore.a $(BEARSSL_A) $(MUSL_LIBC) $(UK_LIBGCC)

$(UK_ELF): $(UK_TLS_DEPS)
# wolfSSL's headers only (a link to /usr/include/wolfssl): with musl's
# headers first and no glibc header in reach.
$(UK_BUILD)/wolfinc/wolfssl:
	@mkdir -p $(dir $@)
	ln -sfn /usr/include/wolfssl $@
$(UK_BUILD)/wolf/%.o: %.c | $(UK_BUILD)/wolfinc/wolfssl
	@mkdir -p $(dir $@)
	$(UK_CC) $(UK_APP_CFLAGS) -I$(UK_BUILD)/wolfinc -DTLS_WOLFSSL_NO_FILES -MMD -MP -c $< -o $@

# The TLS 1.3 image: this kernel built again with UK_TLS=wolfssl: its
# platform, application and TLS objects (uk_sites.c picks the engine by
# UK_TLS_WOLFSSL) into build/tls13; the core, which no file of reads
# UK_TLS_WOLFSSL (checked here), is the BearSSL kernel's libcore.a rather
# than the same 80 files compiled again (a third of the image's build).
UK_TLS13_ELF := $(BUILD)/skiff-uk-tls13.elf
.PHONY: uk-tls13 vm-tls13-test
uk-tls13: $(UK_TLS13_ELF)
$(UK_TLS13_ELF): $(UK_BUILD)/libcore.a FORCE
	@! grep -l UK_TLS_WOLFSSL $(addsuffix /*.[ch],$(CORE_DIRS)) src/plat/*.h || \
	  { echo "uk-tls13: the core files above read UK_TLS_WOLFSSL: build/tls13 needs a core of its own" >&2; exit 1; }
	@$(MAKE) --no-print-directory UK_TLS=wolfssl BUILD=$(BUILD)/tls13 UK_CORE_A=$(UK_BUILD)/libcore.a $(BUILD)/tls13/skiff-uk.elf
	@cmp -s $(BUILD)/tls13/skiff-uk.elf $@ || cp $(BUILD)/tls13/skiff-uk.elf $@

$(UK_BUILD)/examples/%.o: examples/%.c
	@mkdir -p $(dir $@)
	$(UK_CC) $(UK_APP_CFLAGS) -MMD -MP -c $< -o $@

EXAMPLE_UK := $(patsubst examples/%.c,$(BUILD)/examples/%-uk.elf,$(wildcard examples/*.c)) \
	$(patsubst examples/%,$(BUILD)/examples/%-uk.elf,$(EXAMPLE_DIRS))
.PHONY: examples-uk
examples-uk: $(EXAMPLE_UK)
examples: $(EXAMPLE_UK)
$(BUILD)/examples/%-uk.elf: $(UK_BUILD)/examples/%.o $(UK_APP_LINK) $(UK_BUILD)/libcore.a src/plat/kvm/kernel.ld
	@mkdir -p $(dir $@)
	$(UK_CC) $(UK_CFLAGS) $(UK_LDFLAGS) $(UK_LIBC_LDFLAGS) -o $@ $(UK_APP_LINK) $< $(UK_APP_LIBS)
	@size $@ | tail -1 | awk '{printf "uk: %s text %d data %d bss %d\n", "$@", $$1, $$2, $$3}'

# A folder of examples/ (mk/examples.mk): every file's object, one image.
EXAMPLE_DIR_UK := $(patsubst examples/%,$(BUILD)/examples/%-uk.elf,$(EXAMPLE_DIRS))
EXAMPLE_DIR_UK_OBJ := $(patsubst %.c,$(UK_BUILD)/%.o,$(wildcard $(addsuffix /*.c,$(EXAMPLE_DIRS))))
$(EXAMPLE_DIR_UK): $(BUILD)/examples/%-uk.elf: $(EXAMPLE_DIR_UK_OBJ) $(UK_APP_LINK) $(UK_BUILD)/libcore.a src/plat/kvm/kernel.ld
	@mkdir -p $(dir $@)
	$(UK_CC) $(UK_CFLAGS) $(UK_LDFLAGS) $(UK_LIBC_LDFLAGS) -o $@ $(UK_APP_LINK) $(patsubst %.c,$(UK_BUILD)/%.o,$(wildcard examples/$*/*.c)) $(UK_APP_LIBS)
	@size $@ | tail -1 | awk '{printf "uk: %s text %d data %d bss %d\n", "$@", $$1, $$2, $$3}'

.SECONDARY: $(patsubst examples/%.c,$(UK_BUILD)/examples/%.o,$(wildcard examples/*.c examples/*/*.c))

# `make app APP="a.c b.c"` (mk/examples.mk) builds the guest too, after the
# Linux program: build/app/NAME-uk.elf, each file compiled with musl's
# headers into build/uk/app/NAME/.
.PHONY: app-uk
app-uk: $(UK_APP_LINK) $(UK_BUILD)/libcore.a src/plat/kvm/kernel.ld
	@test -n "$(APP)" || { echo "$(APP_USAGE)" >&2; exit 2; }
	@rm -rf $(UK_BUILD)/app/$(APP_NAME) && mkdir -p $(UK_BUILD)/app/$(APP_NAME) $(BUILD)/app
	@set -e; i=0; for f in $(APP); do i=$$((i + 1)); \
	  o=$(UK_BUILD)/app/$(APP_NAME)/$$i-$$(basename $$f .c).o; \
	  echo "$(UK_CC) $(UK_APP_CFLAGS) -c $$f -o $$o"; \
	  $(UK_CC) $(UK_APP_CFLAGS) -c $$f -o $$o; done
	$(UK_CC) $(UK_CFLAGS) $(UK_LDFLAGS) $(UK_LIBC_LDFLAGS) -o $(BUILD)/app/$(APP_NAME)-uk.elf \
	  $(UK_APP_LINK) $(UK_BUILD)/app/$(APP_NAME)/*.o $(UK_APP_LIBS)
	@echo "app: $(BUILD)/app/$(APP_NAME)-uk.elf (the image)"

uk-clang:
	$(MAKE) --no-print-directory UK_CC=clang BUILD=$(BUILD)/clang uk

vm-test: $(UK_ELF) $(BUILD)/skiff
	tests/vm.sh $(BUILD)/skiff $(UK_ELF)

vm-tls-test: $(UK_ELF) $(BUILD)/skiff
	tests/vm_tls.sh $(BUILD)/skiff $(UK_ELF)

vm-tls13-test: $(UK_TLS13_ELF) $(BUILD)/skiff
	tests/vm_tls13.sh $(BUILD)/skiff $(UK_TLS13_ELF) $(UK_ELF)

vm-proxy-test: $(UK_PROXY_ELF) $(BUILD)/skiff
	tests/vm_proxy.sh $(BUILD)/skiff $(UK_PROXY_ELF)

vm-sites-test: $(UK_ELF) $(BUILD)/skiff
	tests/vm_sites.sh $(BUILD)/skiff $(UK_ELF)

vm-libc-test: $(UK_ELF) $(BUILD)/skiff $(BUILD)/examples/libc_check $(BUILD)/examples/libc_check-uk.elf
	tests/vm_libc.sh $(BUILD)/skiff $(BUILD)/examples $(UK_ELF)

-include $(shell find $(UK_BUILD) -name '*.d' 2>/dev/null)
