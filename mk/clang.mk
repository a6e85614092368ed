# mk/clang.mk — `make clang-check`: everything `make all` and the unit
# tests compile, again with clang, warnings as errors, into build/clang.
#
# The hosted C files (build/skiff's, the examples' Linux programs, the unit
# tests) are checked with -fsyntax-only: clang's warnings, -Wuninitialized
# and -Wsometimes-uninitialized included, come from its front end (Sema),
# which -fsyntax-only runs whole; code generation and the link add none
# for them (the link is the same ld on the same libraries as gcc's build,
# and fuzz-build links the core and the TLS engines with clang).  The
# preprocessor sees what an -O0 compile sees (OPT: no __OPTIMIZE__).  Half
# the CPU of compiling and linking them at -O0: `make -j2 clang-check
# OPT=-O0` from an empty build/clang, the unikernel's ~40 s included, took
# 121 s of CPU before and 86 s after on the 2-core machine (2026-12-05).
#
# The unikernel images (build/clang/skiff-uk.elf, skiff-proxy-uk.elf and
# the examples' -uk.elf) are built whole, at their own -O2 (UK_CFLAGS):
# their inline asm is checked by clang's integrated assembler only when
# code is generated, -mgeneral-regs-only's ban on SSE registers too, and
# their link with -nostdlib shows a helper call clang emits that the
# kernel lacks.
.PHONY: clang-check clang-syntax
clang-check:
	$(MAKE) --no-print-directory CC=clang BUILD=$(BUILD)/clang clang-syntax \
	  $(patsubst $(BUILD)/%,$(BUILD)/clang/%,$(UK_ELF) $(UK_PROXY_ELF) $(EXAMPLE_UK))

CLANG_SYNTAX_SRC := $(CORE_SRC) $(HOST_SRC) src/cmd/main.c src/cmd/app_main.c $(TEST_SRC) \
	$(EXAMPLE_SRC) $(wildcard $(addsuffix /*.c,$(EXAMPLE_DIRS)))
CLANG_SYNTAX := $(CLANG_SYNTAX_SRC:%.c=$(BUILD)/syntax/%.ok)
clang-syntax: $(CLANG_SYNTAX)
	@echo "clang-check: $(words $(CLANG_SYNTAX)) hosted files pass clang -fsyntax-only $(WARN)"
$(BUILD)/syntax/%.ok: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -fsyntax-only -MMD -MP -MF $@.d -MT $@ $<
	@touch $@
