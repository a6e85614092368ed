# mk/switch.mk — the shared-memory switch: its acceptance tests and its
# benchmark: pktgen port to port, then kernel-free HTTP (skiff load ⇄ switch ⇄
# skiff serve --stack skiff) and the server's memory per idle connection.
.PHONY: switch-test bench-switch bench-switch-http load-test

switch-test: all
	tests/switch.sh $(BUILD)/skiff

BENCH_SWITCH_SECS ?= 3
BENCH_SWITCH_REPS ?= 3
bench-switch: all $(BUILD)/bench/bench_switch
	@echo "== the engine alone, one core (in-process peers)"
	@taskset -c $$(($$(nproc) - 1)) $(BUILD)/bench/bench_switch 1
	@echo "== process to process"
	@bench/bench_switch.sh $(BUILD)/skiff $(BENCH_SWITCH_SECS) $(BENCH_SWITCH_REPS)
	@echo "== HTTP through the switch"
	@bench/bench_switch_http.sh $(BUILD)/skiff $(BENCH_HTTP_SECS) $(BENCH_SWITCH_REPS) $(BENCH_MEM_CONNS)

# Only the HTTP part (keep-alive/close at c64, memory at BENCH_MEM_CONNS).
BENCH_HTTP_SECS ?= 5
BENCH_MEM_CONNS ?= 100000
bench-switch-http: all
	@bench/bench_switch_http.sh $(BUILD)/skiff $(BENCH_HTTP_SECS) $(BENCH_SWITCH_REPS) $(BENCH_MEM_CONNS)

# skiff load against skiff serve --stack linux, nginx and ab, in namespaces.
load-test: all
	tests/load.sh $(BUILD)/skiff
