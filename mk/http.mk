# mk/http.mk — `make http-test`: skiff serve --stack linux against curl, ab,
# wrk, h2load and python in namespaces (tests/http.sh; needs root).
.PHONY: http-test
http-test: all
	tests/http.sh $(BUILD)/skiff
