# mk/install.mk — make install / uninstall, and the man pages.
#
#   make install [PREFIX=/usr/local] [DESTDIR=]   (BINDIR, LIBDIR, MANDIR,
#                     UNITDIR, SYSCONFDIR override the parts)
#     PREFIX/bin/skiff                      the binary
#     PREFIX/lib/skiff/skiff-uk.elf         the unikernel: `skiff vm` looks
#                                           for it there (../lib/skiff from
#                                           the binary's directory, src/cmd/vm.c)
#     PREFIX/lib/skiff/skiff-proxy-uk.elf   the proxy's image (`skiff vm --proxy`)
#     PREFIX/share/man/man1/skiff*.1        one page per command, from --help
#                                           (tools/man.sh, help2man)
#     PREFIX/lib/systemd/system/skiff@.service   the unit (dist/), paths filled in
#     SYSCONFDIR/skiff/example.env          its example instance file
#   make uninstall    removes exactly those files (and the two skiff folders,
#                     if empty); an instance's own NAME.env stays
#   make man          build/man/*.1 only
#   make install-test tests/install.sh (root; namespaces)
#
# DESTDIR is only a staging root: every path written into a file (the
# unit's ExecStart, EnvironmentFile) is the final one, without DESTDIR.
# systemd reads units from /usr/local/lib/systemd/system as well as
# /usr/lib and /etc, so the default PREFIX needs no UNITDIR.

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib/skiff
MANDIR     ?= $(PREFIX)/share/man/man1
UNITDIR    ?= $(PREFIX)/lib/systemd/system
# /etc for the system prefixes, else beside the rest.
SYSCONFDIR ?= $(if $(filter /usr /usr/local,$(PREFIX)),/etc,$(PREFIX)/etc)
# The pages' version: the commit this tree was built from.
VERSION    ?= $(shell git describe --always --dirty 2>/dev/null || echo unknown)

MAN_DIR := $(BUILD)/man
INSTALL ?= install

.PHONY: install uninstall man install-test
install-test: all
	tests/install.sh $(BUILD)
man: $(MAN_DIR)/.stamp

# One stamp for all pages: tools/man.sh writes one page per command that
# skiff --help lists, and fails if any command's --help does not work.
$(MAN_DIR)/.stamp: $(BUILD)/skiff tools/man.sh
	@rm -rf $(MAN_DIR)
	tools/man.sh $(BUILD)/skiff $(MAN_DIR) $(VERSION)
	@touch $@

$(BUILD)/skiff@.service: dist/skiff@.service.in
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< >$@
$(BUILD)/example.env: dist/example.env
	sed -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< >$@

# The unit and env file depend on the paths: made again on every install.
.PHONY: $(BUILD)/skiff@.service $(BUILD)/example.env

install: all man $(BUILD)/skiff@.service $(BUILD)/example.env
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(MANDIR) \
	  $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/skiff
	$(INSTALL) -m 755 $(BUILD)/skiff $(DESTDIR)$(BINDIR)/skiff
	$(INSTALL) -m 644 $(UK_ELF) $(DESTDIR)$(LIBDIR)/skiff-uk.elf
	$(INSTALL) -m 644 $(UK_PROXY_ELF) $(DESTDIR)$(LIBDIR)/skiff-proxy-uk.elf
	$(INSTALL) -m 644 $(MAN_DIR)/*.1 $(DESTDIR)$(MANDIR)/
	$(INSTALL) -m 644 $(BUILD)/skiff@.service $(DESTDIR)$(UNITDIR)/skiff@.service
	$(INSTALL) -m 644 $(BUILD)/example.env $(DESTDIR)$(SYSCONFDIR)/skiff/example.env

# The pages: skiff.1 and every skiff-*.1, so that a page of a command this
# tree no longer has goes too.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/skiff $(DESTDIR)$(LIBDIR)/skiff-uk.elf \
	  $(DESTDIR)$(LIBDIR)/skiff-proxy-uk.elf \
	  $(DESTDIR)$(UNITDIR)/skiff@.service $(DESTDIR)$(SYSCONFDIR)/skiff/example.env
	rm -f $(DESTDIR)$(MANDIR)/skiff.1 $(DESTDIR)$(MANDIR)/skiff-*.1
	rmdir $(DESTDIR)$(LIBDIR) $(DESTDIR)$(SYSCONFDIR)/skiff 2>/dev/null || true
