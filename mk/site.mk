# mk/site.mk — the user's site (issue 13).
#
#   make site-test      tests/site.sh: a 1,000-file tree served byte-identical
#                       by skiff vm --root, skiff serve --stack skiff and
#                       --stack linux; bad site archives stop the boot;
#                       SIGHUP reloads without dropping connections
#   make bench-bigtree  bench/bigtree.sh: a 2 GiB tree (BIGTREE_GIB) written
#                       to BIGTREE_DIR (/var/tmp), served by skiff serve
#                       --root: RSS at start < 64 MiB, every file intact;
#                       deleted afterwards
#   make run ROOT=DIR   (Makefile, tools/run.sh) the unikernel serving DIR;
#                       without ROOT, the demo site in site/
.PHONY: site-test bench-bigtree
BIGTREE_GIB ?= 2

site-test: all
	tests/site.sh $(BUILD)/skiff $(UK_ELF)

bench-bigtree: all
	bench/bigtree.sh $(BUILD)/skiff $(BIGTREE_GIB)
