# mk/examples.mk — the applications in examples/ on http/app.h.
#
#   make examples        build/examples/NAME for every examples/NAME.c and
#                        every folder examples/NAME/ of C files (one
#                        program: examples/links/): a Linux program with
#                        skiff serve's stack options (src/cmd/app_cli.c),
#                        main from src/cmd/app_main.c; and NAME-uk.elf, the
#                        image (mk/unikernel.mk)
#   make app-test        tests/app.sh on them
#
# An application outside the tree builds the same way (docs/app.md):
#   make -C SKIFF app APP="/path/to/a.c /path/to/b.c" [APP_NAME=name]
#     -> SKIFF/build/app/NAME and SKIFF/build/app/NAME-uk.elf, NAME the
#        first file's name without .c unless APP_NAME says otherwise
#   make -C SKIFF app-host APP=...   the Linux program only
#   make -C SKIFF app-uk APP=...     the image only (mk/unikernel.mk)
# `make app` is app-host, then app-uk: the Linux program is built even when
# the image cannot be (a call the guest's libc lacks), and make still fails.

EXAMPLE_SRC := $(wildcard examples/*.c)
EXAMPLE_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard examples/*/*.c))))
EXAMPLE_BIN := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRC)) \
	$(patsubst examples/%,$(BUILD)/examples/%,$(EXAMPLE_DIRS))
APP_LINK := $(BUILD)/obj/src/cmd/app_main.o $(BUILD)/libskiff-host.a $(BUILD)/libskiff-core.a

.PHONY: examples app app-host app-test
examples: $(EXAMPLE_BIN)
# Part of `make all` (and so of `make asan` and `make clang-check`): an API
# change that breaks an example breaks the build.
all: examples

# tests/app.sh: kv, echo, hello and links on --stack linux and skiff (tap,
# packet, xdp) and as images; root, under the network-test lock.
app-test: examples
	tests/app.sh $(BUILD)/examples

$(BUILD)/examples/%: examples/%.c $(APP_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -MMD -MP -MF $@.d -o $@ $< $(APP_LINK) $(LDLIBS)

# A folder of C files is one program, named for the folder (each folder's
# program depends on every folder's files: there are few).
EXAMPLE_DIR_BIN := $(patsubst examples/%,$(BUILD)/examples/%,$(EXAMPLE_DIRS))
$(EXAMPLE_DIR_BIN): $(BUILD)/examples/%: $(wildcard $(addsuffix /*.[ch],$(EXAMPLE_DIRS))) $(APP_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -MMD -MP -MF $@.d -o $@ $(wildcard examples/$*/*.c) $(APP_LINK) $(LDLIBS)

# One application from anywhere: APP="path/to/a.c [b.c ...]".
APP ?=
APP_NAME ?= $(basename $(notdir $(firstword $(APP))))
APP_USAGE := usage: make app|app-host|app-uk APP=\"a.c [b.c ...]\" [APP_NAME=name]
app: app-host app-uk
app-host: $(APP_LINK)
	@test -n "$(APP)" || { echo "$(APP_USAGE)" >&2; exit 2; }
	@mkdir -p $(BUILD)/app
	$(CC) $(BASE_CFLAGS) -o $(BUILD)/app/$(APP_NAME) $(APP) $(APP_LINK) $(LDLIBS)
	@echo "app: $(BUILD)/app/$(APP_NAME) (the Linux program)"

-include $(wildcard $(BUILD)/examples/*.d)

# examples/sites.conf's certificates (issue 32): a test CA-less pair per
# site, made here (no private key is committed; .gitignore keeps them out).
#   make example-certs   examples/sites/certs/{a,b}.{crt,key}, for a.test
#                        and b.test, ECDSA P-256, self-signed, 30 days
EXAMPLE_CERTS := $(foreach s,a b,examples/sites/certs/$(s).crt)
.PHONY: example-certs
example-certs: $(EXAMPLE_CERTS)
examples/sites/certs/%.crt:
	@mkdir -p $(dir $@)
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
		-subj "/CN=$*.test" -addext "subjectAltName=DNS:$*.test" \
		-keyout examples/sites/certs/$*.key -out $@ 2>/dev/null
