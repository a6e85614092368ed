# mk/check.mk — `make check`: the fast tier, without root, in minutes.
#
#   make check          the steps below, one after the other (each one runs
#                       its own work in parallel: -j given or not, it uses
#                       every core); a line "check: STEP PASS|FAIL" each and
#                       "check: N passed, N failed" at the end; exit status
#                       non-zero if any step failed
#   make check-STEP     one step alone (check-unit, check-fuzz-replay, ...)
#
# The steps:
#   build          `make all`: build/skiff, the unikernel images, the examples
#   freestanding   `make check-freestanding`: the core with no OS headers
#   layers         `make check-layers` (mk/layers.mk): no include up a layer
#   unit           every unit test but those that need root (none today, see
#                  CHECK_UNIT_ROOT), in parallel, one line each and a total
#   fuzz-replay    every fuzz target over its committed corpus (fuzz/seeds/
#                  NAME/, and fuzz/corpus/NAME/ if one is committed), built
#                  with gcc, ASan+UBSan and fuzz/replay_main.c instead of
#                  libFuzzer: no clang build, no mutation (`make fuzz` does that)
#   cli-doc        tools/cli_doc.sh --check: the command-line page matches the
#                  options table
#   doc-links      tools/doc_links.py: no dead link in the docs
#   doc-examples   tools/doc_examples.py: every C example in docs/*.md and in
#                  the public headers built with `make app` and run on
#                  --stack linux on 127.0.0.1, answering what the page says
#   app-build      tools/app_build_check.sh: `make app` with several files
#                  and APP_NAME; the Linux program built when the image
#                  cannot link; `make app-host` alone
# Nothing here needs root, a namespace, a TAP device or QEMU: those are
# `make test`'s (tests/run-all.sh, as root), which runs the build, the
# freestanding check and every unit test, and fuzzes the same corpora with
# libFuzzer; each step here runs alone as `make check-STEP` for a phase.
# A step whose tool is not in the tree (cli-doc, doc-links) prints ABSENT and
# counts neither way.

.PHONY: check check-build check-unit check-fuzz-replay check-cli-doc check-doc-links \
	check-doc-examples check-app-build check-fuzz-build check-unit-build
CHECK_STEPS := build freestanding layers unit fuzz-replay cli-doc doc-links doc-examples app-build
CHECK_DIR := $(BUILD)/check
# Parallel inside each step even for a plain `make check`; a -j the user
# gave wins.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CHECK_J = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(CHECK_JOBS))

# First everything the steps build, in one graph with -k, so both cores
# stay busy across what would otherwise be each step's serial tail; a
# compile error there is reported again, and counted, by its own step.
check:
	@t0=$$(date +%s); pass=0; fail=0; failed=; \
	echo "== check: building (make -k all, the unit tests, the fuzz replays)"; \
	$(MAKE) --no-print-directory -k $(CHECK_J) all $(CHECK_UNIT_BIN) $(CHECK_FUZZ_BIN) || \
	  echo "check: some of the build failed; the steps below say which"; \
	for s in $(CHECK_STEPS); do \
	  s0=$$(date +%s); echo "== check: $$s"; \
	  if $(MAKE) --no-print-directory $(CHECK_J) check-$$s; then \
	    case $$s in cli-doc|doc-links) [ -f $(CHECK_DIR)/$$s.absent ] && { echo "check: $$s ABSENT"; continue; } ;; esac; \
	    pass=$$((pass + 1)); echo "check: $$s PASS ($$(( $$(date +%s) - s0 )) s)"; \
	  else \
	    fail=$$((fail + 1)); failed="$$failed $$s"; echo "check: $$s FAIL ($$(( $$(date +%s) - s0 )) s)"; \
	    if [ $$s = build ]; then echo "check: the build failed; the other steps need it: stopping"; break; fi; \
	  fi; \
	done; \
	echo "check: $$pass passed, $$fail failed$${failed:+ (failed:$$failed)} in $$(( $$(date +%s) - t0 )) s"; \
	[ $$fail -eq 0 ]

check-build: all

# ---- unit: the cmocka tests in parallel ----
# Unit tests that need root (a TAP device, a namespace, CAP_NET_RAW) run only
# in `make test`, whose `unit` phase runs them all as root; `make check`
# leaves them out by this list and says so.  Empty: on 2026-12-03 every one
# of the 55 binaries passed as nobody (setpriv --reuid=nobody --regid=nogroup
# --clear-groups, `make check` in a fresh clone owned by nobody).  A test that starts to need root goes here, by its
# build/test name (e.g. dev_dev_test), never silently.
CHECK_UNIT_ROOT :=
# The slowest first, so the parallel run does not end on them alone.
CHECK_UNIT_SLOW := net_tcp_pair_test tls_tls_bearssl_test http_parser_test tls_tls_openssl_test
CHECK_UNIT_BIN := $(filter-out $(addprefix $(BUILD)/test/,$(CHECK_UNIT_ROOT)),$(TEST_BIN))
CHECK_UNIT_BIN := $(filter $(addprefix $(BUILD)/test/,$(CHECK_UNIT_SLOW)),$(CHECK_UNIT_BIN)) \
	$(filter-out $(addprefix $(BUILD)/test/,$(CHECK_UNIT_SLOW)),$(CHECK_UNIT_BIN))
CHECK_UNIT_RES := $(patsubst $(BUILD)/test/%,$(CHECK_DIR)/unit/%.result,$(CHECK_UNIT_BIN))

# Each run writes NAME.log and NAME.result ("ok" or "FAILED ...") and never
# fails itself, so every test runs; check-unit counts the results.
$(CHECK_DIR)/unit/%.result: $(BUILD)/test/% FORCE
	@mkdir -p $(dir $@)
	@rm -f $@; if $< >$(CHECK_DIR)/unit/$*.log 2>&1; then \
	  echo "unit $*: ok ($$(grep -c '^\[       OK \]' $(CHECK_DIR)/unit/$*.log) tests)" | tee $@; \
	else \
	  echo "unit $*: FAILED (exit $$?, log $(CHECK_DIR)/unit/$*.log)" | tee $@; fi

check-unit-build: $(CHECK_UNIT_BIN)
check-unit: check-unit-build
	@$(MAKE) --no-print-directory $(CHECK_J) $(CHECK_UNIT_RES)
	@ok=$$(cat $(CHECK_UNIT_RES) | grep -c ': ok'); bad=$$(cat $(CHECK_UNIT_RES) | grep -c ': FAILED'); \
	for r in $(CHECK_UNIT_RES); do grep -q ': FAILED' $$r || continue; \
	  cat $$r; l=$${r%.result}.log; { grep -E -A8 '^\[  (FAILED|ERROR) |ERROR|Assert|runtime error' $$l || tail -n 12 $$l; } | head -n 30 | sed 's/^/    /'; done; \
	echo "unit: $$ok passed, $$bad failed$(if $(CHECK_UNIT_ROOT), ($(words $(CHECK_UNIT_ROOT)) left for make test as they need root: $(CHECK_UNIT_ROOT)),; none left for make test (CHECK_UNIT_ROOT is empty))"; \
	[ $$bad -eq 0 ] && [ $$ok -eq $(words $(CHECK_UNIT_RES)) ]

# ---- fuzz-replay: the corpora through every target, once ----
# gcc with ASan+UBSan and SK_FUZZING (checksums not verified, as under
# libFuzzer), the objects of the core and of the hosted pieces the targets
# need compiled once into one archive; each target links only what it uses.
# -O0: a third less compile time than -O1, and the replay's few thousand
# inputs run in a second either way.
CHECK_FUZZ_CFLAGS := -std=c11 -g -O0 -Isrc -D_GNU_SOURCE -DSK_FUZZING \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# (By name under any folder: the layers may move them.)
CHECK_FUZZ_LIBSRC := $(or $(FUZZ_CORE),$(filter-out %/runner.c,$(CORE_SRC))) \
	$(sort $(wildcard $(addprefix src/*/,loop_fake.c tls_openssl.c tls_testcert.c tls_bearssl.c \
	  tls_gnutls.c tls_buf.c tls_sni.c tls_host.c tls_wolfssl.c)))
CHECK_FUZZ_LIBOBJ := $(CHECK_FUZZ_LIBSRC:%.c=$(CHECK_DIR)/fobj/%.o)
CHECK_FUZZ_BIN := $(patsubst fuzz/%.c,$(CHECK_DIR)/fuzz/%,$(FUZZ_SRC))
CHECK_FUZZ_RES := $(addsuffix .result,$(CHECK_FUZZ_BIN))

$(CHECK_DIR)/fobj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CHECK_FUZZ_CFLAGS) -MMD -MP -c $< -o $@
$(CHECK_DIR)/libfuzz.a: $(CHECK_FUZZ_LIBOBJ)
	@rm -f $@
	ar rcs $@ $^
$(CHECK_DIR)/fuzz/fuzz_%: fuzz/fuzz_%.c $(CHECK_DIR)/fobj/fuzz/replay_main.o $(CHECK_DIR)/libfuzz.a
	@mkdir -p $(dir $@)
	$(CC) $(CHECK_FUZZ_CFLAGS) -MMD -MP -MF $@.d -o $@ $< $(CHECK_DIR)/fobj/fuzz/replay_main.o \
	  $(CHECK_DIR)/libfuzz.a -l:libbearssl.a -lssl -lcrypto -lgnutls -l:libwolfssl.a -lm
.SECONDARY: $(CHECK_FUZZ_LIBOBJ) $(CHECK_DIR)/fobj/fuzz/replay_main.o

# A target with no corpus at all fails: a replay of nothing proves nothing.
$(CHECK_DIR)/fuzz/%.result: $(CHECK_DIR)/fuzz/% FORCE
	@n=$*; n=$${n#fuzz_}; dirs=; \
	for d in fuzz/seeds/$$n fuzz/corpus/$$n; do [ -d $$d ] && dirs="$$dirs $$d"; done; \
	rm -f $@; \
	if [ -z "$$dirs" ]; then echo "fuzz-replay $$n: FAILED (no fuzz/seeds/$$n/)" | tee $@; \
	elif out=$$(ASAN_OPTIONS=detect_leaks=1 $< $$dirs 2>$(CHECK_DIR)/fuzz/$*.log); then \
	  echo "fuzz-replay $$n: ok ($${out#*: })" | tee $@; \
	else echo "fuzz-replay $$n: FAILED (exit $$?, log $(CHECK_DIR)/fuzz/$*.log)" | tee $@; fi

check-fuzz-build: $(CHECK_FUZZ_BIN)
check-fuzz-replay: check-fuzz-build
	@$(MAKE) --no-print-directory $(CHECK_J) $(CHECK_FUZZ_RES)
	@ok=$$(cat $(CHECK_FUZZ_RES) | grep -c ': ok'); bad=$$(cat $(CHECK_FUZZ_RES) | grep -c ': FAILED'); \
	for r in $(CHECK_FUZZ_RES); do grep -q ': FAILED' $$r || continue; \
	  cat $$r; l=$${r%.result}.log; \
	  { grep -E -m1 -B1 -A12 'ERROR|runtime error' $$l || tail -n 12 $$l; } | sed 's/^/    /'; done; \
	echo "fuzz-replay: $$ok targets passed, $$bad failed"; \
	[ $$bad -eq 0 ] && [ $$ok -eq $(words $(CHECK_FUZZ_RES)) ]

# ---- the docs ----
# The two tools come from other work on the docs; until each is in the
# tree its step says ABSENT (the marker file tells `check` not to count it).
check-cli-doc:
	@mkdir -p $(CHECK_DIR); rm -f $(CHECK_DIR)/cli-doc.absent
	@if [ -f tools/cli_doc.sh ]; then tools/cli_doc.sh --check; \
	else echo "cli-doc: tools/cli_doc.sh is not in this tree"; touch $(CHECK_DIR)/cli-doc.absent; fi
check-doc-links:
	@mkdir -p $(CHECK_DIR); rm -f $(CHECK_DIR)/doc-links.absent
	@if [ -f tools/doc_links.py ]; then python3 tools/doc_links.py; \
	else echo "doc-links: tools/doc_links.py is not in this tree"; touch $(CHECK_DIR)/doc-links.absent; fi

# `make app` per example, as docs/app.md tells a user: the hosted program
# and the unikernel image (compiled and linked; booting it is `make test`'s).
check-doc-examples: $(APP_LINK)
	@MAKE="$(MAKE)" tools/doc_examples.py --build $(BUILD)

check-app-build: $(APP_LINK)
	@MAKE="$(MAKE)" tools/app_build_check.sh $(BUILD)

.PHONY: FORCE
FORCE:

-include $(wildcard $(CHECK_DIR)/fobj/*/*.d $(CHECK_DIR)/fobj/*/*/*.d $(CHECK_DIR)/fuzz/*.d)
