# Installation. DESTDIR, PREFIX, SBINDIR as usual.
.PHONY: install uninstall

install: $(PROG)
	install -d $(DESTDIR)$(SBINDIR)
	install -m 0755 $(PROG) $(DESTDIR)$(SBINDIR)/$(PROG)

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/$(PROG)
