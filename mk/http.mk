# mk/http.mk — `make http-test`: skiff serve --stack linux against curl, ab,
# wrk, h2load and python in namespaces (tests/http.sh; needs root).
.PHONY: http-test
http-test: all
	tests/http.sh $(BUILD)/skiff

# `make http-diff-test`: the static file semantics against nginx on the same
# tree, on both stacks and the unikernel (tests/http_diff.sh; the skiff
# stack needs root).
.PHONY: http-diff-test
http-diff-test: all
	tests/http_diff.sh $(BUILD)/skiff

# `make ops-test`: the access log and the graceful drain on --stack linux and
# --stack skiff (tests/ops.sh; needs root).
.PHONY: ops-test
ops-test: all
	tests/ops.sh $(BUILD)/skiff

# `make metrics-test`: --metrics (checked with promtool) and skiff stat on
# --stack linux and --stack skiff (tests/metrics.sh; needs root).
.PHONY: metrics-test
metrics-test: all
	tests/metrics.sh $(BUILD)/skiff
