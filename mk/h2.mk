# mk/h2.mk — HTTP/2's wire layer (src/h2) against another implementation:
# `make hpack-interop` builds tests/hpack_peer.c (skiff's HPACK on stdin and
# stdout) and runs tests/hpack_interop.py, which pairs it with python3-hpack
# both ways (the hpack-interop phase of `make test`; no root, no network).
.PHONY: hpack-interop
$(BUILD)/test/hpack_peer: tests/hpack_peer.c $(BUILD)/libskiff-core.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -MMD -MP -MF $@.d -o $@ $< $(BUILD)/libskiff-core.a

hpack-interop: $(BUILD)/test/hpack_peer
	python3 tests/hpack_interop.py $(BUILD)/test/hpack_peer
