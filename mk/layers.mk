# mk/layers.mk — make check-layers: every #include in src/ points down a
# layer.  Each folder of src/ is one layer; tools/layers.txt is the table
# of which folder may include which (DESIGN.md's order), and
# tools/check_layers.py refuses any other include, naming file:line, the
# include and the rule.  --core: the folders of CORE_DIRS (the freestanding
# core, Makefile) may include only each other and plat/plat.h.  `make
# check` runs it.

.PHONY: check-layers
check-layers:
	@python3 tools/check_layers.py --table tools/layers.txt --core "$(CORE_DIRS)" src
