# mk/examples.mk — the applications in examples/ on http/app.h.
#
#   make examples        build/examples/NAME for every examples/NAME.c: a
#                        Linux program with skiff serve's stack options
#                        (src/cmd/app_cli.c), main from src/cmd/app_main.c
#   make app-test        tests/app.sh on them
#
# An application outside the tree builds the same way (docs/app.md):
#   make -C SKIFF app APP=/path/to/myapp.c
#     -> SKIFF/build/app/myapp and SKIFF/build/app/myapp-uk.elf (mk/unikernel.mk)

EXAMPLE_SRC := $(wildcard examples/*.c)
EXAMPLE_BIN := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRC))
APP_LINK := $(BUILD)/obj/src/cmd/app_main.o $(BUILD)/libskiff-host.a $(BUILD)/libskiff-core.a

.PHONY: examples app app-test
examples: $(EXAMPLE_BIN)
# Part of `make all` (and so of `make asan` and `make clang-check`): an API
# change that breaks an example breaks the build.
all: examples

# tests/app.sh: kv, echo and hello on --stack linux and skiff (tap, packet,
# xdp); root, under the network-test lock.
app-test: examples
	tests/app.sh $(BUILD)/examples

$(BUILD)/examples/%: examples/%.c $(APP_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -MMD -MP -MF $@.d -o $@ $< $(APP_LINK) $(LDLIBS)

# One application from anywhere: APP=path/to/name.c.
APP ?=
app: $(APP_LINK)
	@test -n "$(APP)" || { echo "usage: make app APP=path/to/app.c" >&2; exit 2; }
	@mkdir -p $(BUILD)/app
	$(CC) $(BASE_CFLAGS) -o $(BUILD)/app/$(basename $(notdir $(APP))) $(APP) $(APP_LINK) $(LDLIBS)
	@echo "app: $(BUILD)/app/$(basename $(notdir $(APP)))"

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
