# skiff — plain GNU make.  `make` builds build/skiff; `make test` runs every
# check; `make run` the main job.  See README.md.

CC      ?= gcc
BUILD   ?= build
OPT     ?= -O2
SAN     ?=
CFLAGS  ?=
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASE_CFLAGS := -std=c11 $(WARN) $(OPT) -g -D_GNU_SOURCE -Isrc $(SAN) $(CFLAGS)
LDLIBS  := -lxdp -lbpf -lpcap -lelf -lz -lssl -lcrypto -lgnutls -l:libwolfssl.a -lm
TEST_LDLIBS := -lcmocka -l:libbearssl.a

# The layers are folders (tools/layers.txt: which may include which;
# `make check-layers`).  The freestanding core is a set of whole folders:
# no OS headers, no clock, no syscalls.  src/runner is the run loop's turn
# (it calls the platform through plat/plat.h only); src/loop the loop API
# with its skiff backend; src/conf the options module that the hosted
# commands and the unikernel parse their command lines with; src/h2
# HTTP/2's frames and HPACK (pure parse/emit, below the HTTP engine);
# src/archive the site archive's reader, which the unikernel runs on an untrusted image
# and the fuzzer drives; src/router the router of a configuration file's
# sites on the HTTP engine.
CORE_DIRS := src/base src/wire src/h2 src/ring src/net src/runner src/loop src/http src/switch \
	src/conf src/archive src/router
CORE_SRC  := $(filter-out %_test.c,$(wildcard $(addsuffix /*.c,$(CORE_DIRS))))
# Hosted folders: devices, the Linux platform, the error log (src/elog),
# the loop's hosted backends (src/loop_host: epoll, and loop_fake, the
# test double that unit tests, fuzzers and bench/ link from this archive;
# a program that does not use it does not get it), TLS on OpenSSL, the
# hosted runtime (src/host) and the commands (src/cmd).  Not hosted: the
# unikernel's runtime (src/uk/*.c) and
# the virtio transports' discovery (src/dev/virtio_pci*.c, on plat/kvm's
# PCI and MMU; src/dev/virtio_mmio*.c, on its MMU); mk/unikernel.mk builds
# those.
HOST_DIRS := src/dev src/plat/linux src/elog src/loop_host src/tls src/host src/cmd
UK_APP_SRC := $(wildcard src/uk/*.c)
UK_DEV_SRC := $(wildcard src/dev/virtio_pci*.c src/dev/virtio_mmio*.c)
HOST_SRC  := $(filter-out %_test.c src/cmd/main.c src/cmd/app_main.c $(UK_APP_SRC) $(UK_DEV_SRC),\
	$(wildcard $(addsuffix /*.c,$(HOST_DIRS))))
TEST_SRC  := $(wildcard src/*/*_test.c src/*/*/*_test.c)
FUZZ_SRC  := $(wildcard fuzz/fuzz_*.c)
BENCH_SRC := $(wildcard bench/bench_*.c)

CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/obj/%.o)
HOST_OBJ := $(HOST_SRC:%.c=$(BUILD)/obj/%.o)
# src/<layer>/<name>_test.c -> build/test/<layer>_<name>_test (layer keeps names unique)
test_bin = $(BUILD)/test/$(subst /,_,$(patsubst src/%.c,%,$(1)))
TEST_BIN := $(foreach t,$(TEST_SRC),$(call test_bin,$(t)))
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all test unit run fuzz fuzz-build check-freestanding clang-check asan deps \
	bench-ring integration clean help
.DEFAULT_GOAL := all

all: $(BUILD)/skiff

help:
	@echo "The two commands (each installs what is missing first, with tools/deps.sh):"
	@echo "  make run           build the unikernel and boot it under QEMU (KVM if hardware-backed,"
	@echo "                     else TCG), serving the demo site/ (ROOT=DIR: yours) on"
	@echo "                     http://127.0.0.1:8080/ until Ctrl-C (RUN_PORT)"
	@echo "  make test          every check (tests/run-all.sh, as root): dependency check, build,"
	@echo "                     freestanding, clang, unit, integration, http, ops, metrics, http-diff,"
	@echo "                     tls, vm, vm-tls, site, linux-guest, switch, load, tcp, install, the"
	@echo "                     ASan+UBSan passes and a fuzz smoke, side by side (TEST_SLOTS);"
	@echo "                     ends 'summary: N passed, N failed'.  PHASES=\"http tls\": only those"
	@echo "                     (and what they need); tests/run-all.sh --list names every phase"
	@echo "The fast tier:"
	@echo "  make check         under 3 minutes, no root (mk/check.mk): the build, the freestanding and"
	@echo "                     layer checks, the unit tests, the fuzz corpora replayed, the docs'"
	@echo "                     links and command-line page, every code example in docs/ built and run"
	@echo "Building:"
	@echo "  make               build/skiff (and build/skiff-uk.elf)"
	@echo "  make uk            build/skiff-uk.elf, the unikernel;  make uk-clang: the same with clang"
	@echo "  make examples      build/examples/NAME and NAME-uk.elf: the applications on src/http/app.h"
	@echo "  make app APP=\"a.c b.c\"  an application from anywhere, one file or more: build/app/a (the"
	@echo "                     Linux program), then build/app/a-uk.elf (the image); APP_NAME=N names it N;"
	@echo "                     make app-host / make app-uk: one form only (docs/app.md)"
	@echo "  make asan          build/asan: the hosted programs and unit tests with ASan+UBSan;  make clang-check: with clang"
	@echo "  make deps          install the Debian packages in tools/deps.sh that are missing"
	@echo "  make clean"
	@echo "Installing (mk/install.mk):"
	@echo "  make install       PREFIX=/usr/local DESTDIR=: the binary, lib/skiff/skiff-uk.elf, man pages"
	@echo "                     (help2man), skiff@.service and /etc/skiff/example.env;  make uninstall"
	@echo "  make install-test  tests/install.sh: install into a temporary DESTDIR, check it, serve"
	@echo "                     HTTP as nobody with only CAP_NET_RAW and CAP_NET_ADMIN on tap and packet"
	@echo "Deploying (mk/oci.mk, docs/deploy.md):"
	@echo "  make oci           localhost/skiff:latest in podman and build/skiff-oci.tar: the binary, the"
	@echo "                     unikernel images and their libraries only, user 65532, no base image"
	@echo "  make deploy-test   tests/deploy.sh: the image and deploy/kubernetes/ on podman (127.0.0.1)"
	@echo "Testing (root: namespaces, TAP, AF_PACKET, AF_XDP, QEMU):"
	@echo "  make unit          the cmocka unit tests"
	@echo "  make check-freestanding  the core compiles with no OS headers"
	@echo "  make check-layers  every #include in src/ points down a layer (tools/layers.txt)"
	@echo "  make integration   tests/integration.sh: ping, UDP, ARP, malformed frames on tap/packet/xdp"
	@echo "  make dev-smoke     tests/dev_smoke.sh: each device alone (no stack) against arping and ping"
	@echo "  make app-test      tests/app.sh: links, hello, echo, kv on --stack linux, skiff (tap/packet/xdp), skiff vm"
	@echo "  make http-test     tests/http.sh;  make vm-test: tests/vm.sh;  make switch-test: tests/switch.sh"
	@echo "  make vm-tls-test   tests/vm_tls.sh: HTTPS in the unikernel (BearSSL, TLS 1.2)"
	@echo "  make ops-test      tests/ops.sh: access log, drain (SIGTERM), reload (SIGHUP), error log; both stacks"
	@echo "  make metrics-test  tests/metrics.sh: --metrics (promtool) and skiff stat, both stacks"
	@echo "  make site-test     tests/site.sh: a 1,000-file tree byte-identical from skiff vm --root and both stacks"
	@echo "  make http-diff-test  tests/http_diff.sh: static file semantics against nginx, both stacks and the unikernel"
	@echo "  make load-test     tests/load.sh;  make linux-guest-test: tests/linux_guest.sh"
	@echo "  make fuzz          every fuzz target for FUZZ_TIME seconds (default 60)"
	@echo "Running:"
	@echo "  make run-hosted    skiff serve --stack skiff on a TAP in a namespace it creates and removes"
	@echo "Benchmarks (results under bench/results/ or docs/):"
	@echo "  make bench         skiff against nginx and Linux sockets, alternating, medians (~10 min)"
	@echo "  make bench-quick   the same, short (development only)"
	@echo "  make bench-cost    docs/cost.md: what a request costs, stage by stage"
	@echo "  make bench-parse   the HTTP head parser alone, ns per parse"
	@echo "  make bench-tls     HTTPS: skiff on each TLS engine against nginx/OpenSSL, handshakes and req/s"
	@echo "  make bench-tls-libs  OpenSSL and GnuTLS (skiff's engines), wolfSSL and GnuTLS alone: TLS 1.3 handshakes and records in cycles"
	@echo "  make bench-tls-engines  bench-tls's handshakes alone: server core CPU per full and resumed TLS 1.3 handshake, nginx and each engine"
	@echo "  make bench-ring    ring and checksum costs in cycles"
	@echo "  make bench-proxy   skiff proxy against nginx proxy_cache in front of nginx, cache hits/misses"
	@echo "                     (bench/proxy.sh; BENCH_PROXY_SKIFF=PATH, BENCH_QUICK=1)"
	@echo "  make bench-tcp     skiff's TCP against Linux's (CUBIC, BBR) through skiff impair: delay x loss"
	@echo "                     grid (BENCH_TCP_GRID=quick, ~7 min; full: medians, hours; BENCH_TCP_*: bench/tcp_wan.sh)"
	@echo "                     make bench-tcp-relay: the relay's CPU"
	@echo "  make bench-switch  the switch: pktgen and kernel-free HTTP;  make bench-switch-http"
	@echo "  make bench-vm      the unikernel against a Linux guest under QEMU, 41 B, files, 1 vs 2 vCPUs (~25 min); bench-vm-quick"
	@echo "  make bench-bigtree skiff serve --root on a 2 GiB tree: RSS at start, every file intact"
	@echo "  make profile-vm    where the Linux guest spends a request"
	@echo "  make profile-uk    what a request costs the emulator in the unikernel (counters)"

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libskiff-core.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libskiff-host.a: $(HOST_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/skiff: $(BUILD)/obj/src/cmd/main.o $(BUILD)/libskiff-host.a $(BUILD)/libskiff-core.a
	$(CC) $(BASE_CFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests (cmocka), one binary per test file.
define TEST_RULE
$(call test_bin,$(1)): $(1) $(BUILD)/libskiff-host.a $(BUILD)/libskiff-core.a
	@mkdir -p $(BUILD)/test
	$(CC) $(BASE_CFLAGS) -MMD -MP -MF $$@.d -o $$@ $(1) $$(filter %.a,$$^) $(TEST_LDLIBS) $(LDLIBS)
endef
$(foreach t,$(TEST_SRC),$(eval $(call TEST_RULE,$(t))))

unit: $(TEST_BIN)
	@fail=0; for t in $(TEST_BIN); do echo "== $$t"; $$t || fail=1; done; exit $$fail

# Compile every core file with -ffreestanding against the compiler's own
# headers only: an #include of any OS or libc header fails here.
FREESTANDING_INC := $(shell $(CC) -print-file-name=include)
check-freestanding:
	@for f in $(CORE_SRC); do \
	  $(CC) -std=c11 $(WARN) -ffreestanding -fno-builtin -nostdinc -isystem $(FREESTANDING_INC) \
	    -Isrc -fsyntax-only $$f || exit 1; done
	@echo "freestanding: $(words $(CORE_SRC)) core files compile with no OS headers"

# clang-check, the same build with clang: mk/clang.mk.

# The hosted programs and the unit tests: the unikernel images take no
# sanitizer (UK_CFLAGS), so `all`'s guests would only be built again.
asan:
	$(MAKE) --no-print-directory BUILD=$(BUILD)/asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  $(BUILD)/asan/skiff $(patsubst $(BUILD)/%,$(BUILD)/asan/%,$(EXAMPLE_BIN) $(TEST_BIN))

# Fuzz targets: fuzz/fuzz_<name>.c, built with clang's libFuzzer and the
# whole core, with checksum verification off (SK_FUZZING).  The core (and
# the hosted pieces some targets drive: the fake loop, the TLS engines) is
# compiled once, with libFuzzer's coverage but not its main
# (fuzzer-no-link), into one archive; each target compiles its own file and
# links what it uses from it.  (Each target used to compile the whole core
# again: 24 times the same work, most of the fuzz phase's time.)
FUZZ_BASE_CFLAGS := -std=c11 -g -O1 -Isrc -D_GNU_SOURCE -DSK_FUZZING -fno-sanitize-recover=all
FUZZ_CFLAGS := $(FUZZ_BASE_CFLAGS) -fsanitize=fuzzer,address,undefined
FUZZ_OBJ_CFLAGS := $(FUZZ_BASE_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined
FUZZ_BIN := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
# The run loop (runner/runner.c) is the one core file that calls the platform
# (plat_now, plat_park); no target drives it, so it stays out of the link.
FUZZ_CORE := $(filter-out src/runner/runner.c,$(CORE_SRC))
FUZZ_LIBSRC := $(FUZZ_CORE) src/loop_host/loop_fake.c src/tls/tls_openssl.c src/tls/tls_testcert.c \
	src/tls/tls_gnutls.c src/tls/tls_buf.c src/tls/tls_sni.c src/tls/tls_host.c \
	src/tls/tls_bearssl.c src/tls/tls_wolfssl.c
FUZZ_LIBOBJ := $(FUZZ_LIBSRC:%.c=$(BUILD)/fuzz/obj/%.o)
$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_OBJ_CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/fuzz/libfuzzcore.a: $(FUZZ_LIBOBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/fuzz/%: fuzz/%.c $(BUILD)/fuzz/libfuzzcore.a
	clang $(FUZZ_CFLAGS) -MMD -MP -MF $@.d -o $@ $< $(BUILD)/fuzz/libfuzzcore.a \
	  -l:libbearssl.a -lssl -lcrypto -lgnutls -l:libwolfssl.a -lm
.SECONDARY: $(FUZZ_LIBOBJ)
fuzz-build: $(FUZZ_BIN)
FUZZ_TIME ?= 60
fuzz: $(FUZZ_BIN)
	@FUZZ_TIME=$(FUZZ_TIME) tests/fuzz.sh $(FUZZ_BIN)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libskiff-host.a $(BUILD)/libskiff-core.a
	@mkdir -p $(BUILD)/bench
	$(CC) $(BASE_CFLAGS) -o $@ $^ $(LDLIBS)
# The unikernel's TLS engine, measured hosted on a real CPU.
$(BUILD)/bench/bench_tls_bearssl: bench/bench_tls_bearssl.c $(BUILD)/libskiff-host.a $(BUILD)/libskiff-core.a
	@mkdir -p $(BUILD)/bench
	$(CC) $(BASE_CFLAGS) -o $@ $^ -l:libbearssl.a $(LDLIBS)
# The libraries skiff's OpenSSL engine is weighed against (docs/cost.md,
# "TLS libraries"), each in a process of its own: wolfSSL linked statically
# (Debian's libwolfssl.a), GnuTLS on nettle.
$(BUILD)/bench/bench_tls_wolfssl: bench/bench_tls_wolfssl.c bench/bench_tls_mem.h bench/bench_report.h
	@mkdir -p $(BUILD)/bench
	$(CC) $(BASE_CFLAGS) -o $@ $< -l:libwolfssl.a -lm -lpthread
$(BUILD)/bench/bench_tls_gnutls: bench/bench_tls_gnutls.c bench/bench_tls_mem.h bench/bench_report.h
	@mkdir -p $(BUILD)/bench
	$(CC) $(BASE_CFLAGS) -o $@ $< -lgnutls
bench-ring: deps $(BUILD)/bench/bench_ring
	$(BUILD)/bench/bench_ring

deps:
	@tools/deps.sh

integration: all
	tests/integration.sh $(BUILD)/skiff

test: deps
	@tests/run-all.sh

# ROOT=DIR serves DIR; without it the demo site in site/ (ROOT= : the
# built-in 41-byte hello).
ROOT ?= site
run: deps all
	@RUN_ROOT=$(ROOT) tools/run.sh $(BUILD)/skiff

clean:
	rm -rf $(BUILD)

# Parts with their own build rules (the unikernel, ...) keep them in mk/*.mk.
-include $(wildcard mk/*.mk)

-include $(shell find $(BUILD)/obj $(BUILD)/test $(BUILD)/bench $(BUILD)/fuzz $(BUILD)/syntax -name '*.d' 2>/dev/null)
