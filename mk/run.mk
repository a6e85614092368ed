# mk/run.mk — the main job's hosted variant.
#
#   make run          (Makefile) the unikernel under QEMU, serving
#                     http://127.0.0.1:8080/ (tools/run.sh BIN uk)
#   make run-hosted   the previous main job: `skiff serve --stack skiff` on a
#                     TAP inside a namespace it creates and removes (root)

.PHONY: run-hosted
run-hosted: deps all
	@tools/run.sh $(BUILD)/skiff hosted
