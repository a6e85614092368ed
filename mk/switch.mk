# mk/switch.mk — the shared-memory switch: its acceptance tests and its
# benchmark (pktgen port to port; the HTTP part of bench-switch comes later).
.PHONY: switch-test bench-switch

switch-test: all
	tests/switch.sh $(BUILD)/skiff

BENCH_SWITCH_SECS ?= 3
BENCH_SWITCH_REPS ?= 3
bench-switch: all $(BUILD)/bench/bench_switch
	@echo "== the engine alone, one core (in-process peers)"
	@taskset -c $$(($$(nproc) - 1)) $(BUILD)/bench/bench_switch 1
	@echo "== process to process"
	@bench/bench_switch.sh $(BUILD)/skiff $(BENCH_SWITCH_SECS) $(BENCH_SWITCH_REPS)
