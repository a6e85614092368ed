# mk/dev.mk — `make dev-smoke`: every hosted device (tap, packet, xdp)
# against real Linux with no stack in between: tests/devloop.c answers ARP
# and ping by raw byte edits (tests/dev_smoke.sh; needs root).
.PHONY: dev-smoke
$(BUILD)/test/devloop: tests/devloop.c $(BUILD)/libskiff-host.a $(BUILD)/libskiff-core.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -MMD -MP -MF $@.d -o $@ $< $(BUILD)/libskiff-host.a $(BUILD)/libskiff-core.a $(LDLIBS)

dev-smoke: $(BUILD)/test/devloop
	tests/dev_smoke.sh $(BUILD)/test/devloop
