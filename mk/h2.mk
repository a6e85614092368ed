# mk/h2.mk — HTTP/2's wire layer (src/h2) against another implementation:
# `make hpack-interop` builds tests/hpack_peer.c (skiff's HPACK on stdin and
# stdout) and runs tests/hpack_interop.py, which pairs it with python3-hpack
# both ways (the hpack-interop phase of `make test`; no root, no network).
.PHONY: hpack-interop
# python3-hpack and python3-h2 put their modules where Debian's python3 looks;
# a python3 earlier on PATH (pyenv, a venv) does not see them, so the interop
# scripts run under /usr/bin/python3 when it exists (as tools/deps.sh checks).
DEB_PYTHON3 ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
$(BUILD)/test/hpack_peer: tests/hpack_peer.c $(BUILD)/libskiff-core.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -MMD -MP -MF $@.d -o $@ $< $(BUILD)/libskiff-core.a

hpack-interop: $(BUILD)/test/hpack_peer
	$(DEB_PYTHON3) tests/hpack_interop.py $(BUILD)/test/hpack_peer

# `make h2-interop` builds tests/h2_peer.c (skiff's HTTP/2 engine, src/h2/conn.h,
# on a 127.0.0.1 socket with a small handler) and runs tests/h2_interop.py
# against it with python3-h2 as the client, then curl --http2-prior-knowledge,
# nghttp and h2load (the h2-interop phase of `make test`; 127.0.0.1, no root).
.PHONY: h2-interop
$(BUILD)/test/h2_peer: tests/h2_peer.c $(BUILD)/libskiff-core.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -MMD -MP -MF $@.d -o $@ $< $(BUILD)/libskiff-core.a

h2-interop: $(BUILD)/test/h2_peer
	$(DEB_PYTHON3) tests/h2_interop.py $(BUILD)/test/h2_peer

# `make h2-serve` runs tests/h2_serve.py: HTTP/2 through the real server
# (http/app.c's sessions and streams): `skiff serve --root`, the echo
# example (an application on http/app.h), the proxy of `skiff serve
# --config` and `--http2 off`, on ephemeral 127.0.0.1 ports, against curl
# --http2-prior-knowledge, nghttp, h2load and python3-h2 (the h2-serve
# phase of `make test`; no root).
.PHONY: h2-serve
h2-serve: $(BUILD)/skiff $(BUILD)/examples/echo
	$(DEB_PYTHON3) tests/h2_serve.py $(BUILD)/skiff $(BUILD)/examples/echo

# `make h2-hostile` runs tests/h2_hostile.py: hostile HTTP/2 clients written
# with raw frames (floods, rapid reset, CONTINUATION, HPACK bomb, slow and
# idle connections, zero windows, streams over the limit) against the real
# `skiff serve --root` and `--config`, each defence checked for its answer,
# an honest client served through it, bounded memory and its counter (the
# h2-hostile phase of `make test`; 127.0.0.1, no root).
.PHONY: h2-hostile
h2-hostile: $(BUILD)/skiff
	$(DEB_PYTHON3) tests/h2_hostile.py $(BUILD)/skiff
