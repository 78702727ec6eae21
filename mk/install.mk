# Installation and packaging.
#
#   make install     the wrapper, its man page and systemd units, under DESTDIR:
#                    PREFIX (/usr), SBINDIR ($(PREFIX)/sbin), MANDIR
#                    ($(PREFIX)/share/man), DOCDIR ($(PREFIX)/share/doc/$(PROG)),
#                    UNITDIR (pkg-config's systemdsystemunitdir, else
#                    /lib/systemd/system), PRESETDIR (systemdsystempresetdir,
#                    else /lib/systemd/system-preset), DATADIR
#                    ($(PREFIX)/share/$(PROG))
#   make uninstall   removes exactly what install put there
#   make man-lint    mandoc -Tlint and groff -ww on the man page, and the
#                    man page's option list against --help (in `make check`)
#   make deb         the Debian package, built in a copy of the tree under
#                    build/deb/ (the tree itself stays clean): build/deb/*.deb
#   make deb-lint    lintian on it: no error allowed (in `make check`)
#   make unit-security  `systemd-analyze security --offline=true` of every
#                    shipped unit as installed, next to Debian's own
#                    haproxy.service: fails unless each sandboxed unit's
#                    exposure is lower, or if their sandboxes differ (in
#                    `make check`)
#
# Installed units (contrib/systemd/, the wrapper's path substituted):
#   $(UNITDIR)/haproxy-systemd-wrapper.service    from haproxy.service
#   $(UNITDIR)/haproxy-systemd-wrapper@.service   from haproxy@.service
#   $(UNITDIR)/haproxy-systemd-wrapper-metrics.{service,timer}  the metrics
#                    for node_exporter, every 15 s once the timer is enabled
# Not named haproxy.service: that is Debian's haproxy package's unit. A
# preset keeps them disabled ($(PRESETDIR)/80-$(PROG).preset). The drop-in
# that runs Debian's own haproxy.service through the wrapper goes to
# $(DATADIR)/haproxy.service.d/wrapper.conf, where systemd does not read it
# until the administrator links it in (and not under doc/, which minimal
# images strip). The service units, under their contrib/ names, also go to
# $(DOCDIR)/examples/, with the historic 1.5-era one and the
# Type=notify-reload one (systemd >= 253); README.wrapper, NEWS and the
# doc/*.md it names go to $(DOCDIR), doc/ kept.

.PHONY: install uninstall man-lint deb deb-lint unit-security

DEB_PACKAGES += mandoc groff-base debhelper dpkg-dev lintian systemd-container \
                debootstrap python3-prometheus-client

MANDIR       ?= $(PREFIX)/share/man
DOCDIR       ?= $(PREFIX)/share/doc/$(PROG)
UNITDIR      ?= $(or $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)
PRESETDIR    ?= $(or $(shell $(PKG_CONFIG) --variable=systemdsystempresetdir systemd 2>/dev/null),/lib/systemd/system-preset)
DATADIR      ?= $(PREFIX)/share/$(PROG)

MAN_PAGE     := doc/$(PROG).8
METRICS_UNITS := $(PROG)-metrics.service $(PROG)-metrics.timer
UNIT_SRC     := haproxy.service haproxy@.service $(METRICS_UNITS)
UNIT_DST     := $(PROG).service $(PROG)@.service $(METRICS_UNITS)
EXAMPLES     := haproxy.service haproxy@.service haproxy-historic.service \
                haproxy-notify-reload.service
DROPIN       := haproxy.service.d/wrapper.conf
PRESET       := 80-$(PROG).preset
# README.wrapper names them by these paths.
DOCS         := README.wrapper NEWS doc/migration.md doc/figures.md

# The units name /usr/sbin/haproxy-systemd-wrapper and /usr/sbin/haproxy.
UNIT_SED      = -e 's|/usr/sbin/$(PROG)|@WRAPPER@|g' \
                -e 's|/usr/sbin/haproxy |$(HAPROXY_FALLBACK) |g' \
                -e 's|@WRAPPER@|$(SBINDIR)/$(PROG)|g'

install: $(PROG)
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(DOCDIR)/doc $(DESTDIR)$(PRESETDIR) \
		$(DESTDIR)$(DATADIR)/haproxy.service.d
	install -m 0755 $(PROG) $(DESTDIR)$(SBINDIR)/$(PROG)
	install -m 0644 $(MAN_PAGE) $(DESTDIR)$(MANDIR)/man8/$(PROG).8
	set -e; set -- $(UNIT_DST); for u in $(UNIT_SRC); do \
		sed $(UNIT_SED) contrib/systemd/$$u > $(DESTDIR)$(UNITDIR)/$$1.tmp; \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$1.tmp; \
		mv $(DESTDIR)$(UNITDIR)/$$1.tmp $(DESTDIR)$(UNITDIR)/$$1; \
		shift; \
	done
	set -e; for u in $(EXAMPLES); do \
		sed $(UNIT_SED) contrib/systemd/$$u > $(DESTDIR)$(DOCDIR)/examples/$$u.tmp; \
		chmod 0644 $(DESTDIR)$(DOCDIR)/examples/$$u.tmp; \
		mv $(DESTDIR)$(DOCDIR)/examples/$$u.tmp $(DESTDIR)$(DOCDIR)/examples/$$u; \
	done
	sed $(UNIT_SED) contrib/systemd/$(DROPIN) > $(DESTDIR)$(DATADIR)/$(DROPIN).tmp
	chmod 0644 $(DESTDIR)$(DATADIR)/$(DROPIN).tmp
	mv $(DESTDIR)$(DATADIR)/$(DROPIN).tmp $(DESTDIR)$(DATADIR)/$(DROPIN)
	install -m 0644 contrib/systemd/$(PROG).preset $(DESTDIR)$(PRESETDIR)/$(PRESET)
	set -e; for d in $(DOCS); do \
		install -m 0644 $$d $(DESTDIR)$(DOCDIR)/$$d; \
	done

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/$(PROG) $(DESTDIR)$(MANDIR)/man8/$(PROG).8
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(UNIT_DST))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/examples/,$(EXAMPLES))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(DOCS))
	rm -f $(DESTDIR)$(DATADIR)/$(DROPIN) $(DESTDIR)$(PRESETDIR)/$(PRESET)
	-rmdir $(DESTDIR)$(DATADIR)/haproxy.service.d $(DESTDIR)$(DATADIR) \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR)/doc \
		$(DESTDIR)$(DOCDIR) 2>/dev/null

# ---- man page ----

CHECK_BESIDE += man-lint

man-lint: $(PROG)
	mandoc -Tlint -Wall $(MAN_PAGE)
	groff -ww -man -z $(MAN_PAGE) 2>&1 | { ! grep .; }
	doc/check-man.sh ./$(PROG) $(MAN_PAGE) $(VERSION)

# ---- Debian package ----

DEB_DIR      := build/deb
DEB_ARCH     := $(shell dpkg --print-architecture 2>/dev/null)
DEB_FILE     := $(DEB_DIR)/$(PROG)_$(VERSION)_$(DEB_ARCH).deb
# What the package is made of: rebuilt when any of it changes.
DEB_INPUTS   := Makefile $(wildcard mk/*.mk) wrapper/main.c $(LIB_SRC) $(HEADERS) \
                $(MAN_PAGE) README.wrapper NEWS $(wildcard doc/*.md) $(wildcard contrib/systemd/* contrib/systemd/*/*) $(shell find debian -type f 2>/dev/null)

# t/container/systemd installs it into a container.
tests: $(DEB_FILE)
CHECK_BESIDE += deb-lint

deb: $(DEB_FILE)

# A copy of the sources only (no .git, objects, build/), built in a
# directory of its own (two builds at once do not mix), the results moved
# into place by rename. $(1): the directory of the results; $(2): a
# version suffix, empty for the release; otherwise the copy's
# debian/changelog gets an entry of that version on top, as `dch -v`
# would add, and the package and its wrapper take it from there.
define build_deb
	@mkdir -p $(1)
	@set -e; tmp=$$(mktemp -d $(1)/build.XXXXXX); \
	trap 'rm -rf "$$tmp"' EXIT; \
	src=$$tmp/$(PROG)-$(VERSION); mkdir $$src; \
	tar -cf - --exclude=./.git --exclude=./build --exclude='*.o' \
		--exclude='*.a' . | tar -xf - -C $$src; \
	if [ -n "$(2)" ]; then \
		{ printf '%s (%s) unstable; urgency=medium\n\n' $(PROG) $(VERSION)$(2); \
		  printf '  * The next version, for the package upgrade tests.\n\n'; \
		  sed -n '/^ -- /{p;q}' debian/changelog; echo; \
		  cat debian/changelog; } > $$src/debian/changelog; \
	fi; \
	echo "dpkg-buildpackage -us -uc -b in $$src"; \
	if ! (cd $$src && dpkg-buildpackage -us -uc -b) \
			>$$tmp/build.log 2>&1; then \
		cp $$tmp/build.log $(1)/build.log; \
		tail -n 40 $(1)/build.log; exit 1; \
	fi; \
	cp $$tmp/build.log $(1)/build.log; \
	for f in $$tmp/*.deb $$tmp/*.buildinfo $$tmp/*.changes; do \
		mv -f $$f $(1)/; \
	done
	test -f $@
	@echo "built $@ (log: $(1)/build.log)"
endef

$(DEB_FILE): $(DEB_INPUTS)
	$(call build_deb,$(DEB_DIR),)

# The same package as a higher version (its wrapper says so too):
# t/container/package upgrades to it and downgrades back.
DEB_NEXT_DIR  := build/deb-next
DEB_NEXT_FILE := $(DEB_NEXT_DIR)/$(PROG)_$(VERSION)+next_$(DEB_ARCH).deb
tests: $(DEB_NEXT_FILE)
.PHONY: deb-next
deb-next: $(DEB_NEXT_FILE)

$(DEB_NEXT_FILE): $(DEB_INPUTS)
	$(call build_deb,$(DEB_NEXT_DIR),+next)

deb-lint: $(DEB_FILE)
	lintian --fail-on error --info --display-info $(DEB_FILE) \
		$(DEB_DIR)/$(PROG)_$(VERSION)_$(DEB_ARCH).changes

.PHONY: deb-clean
clean: deb-clean
deb-clean:
	rm -rf $(DEB_DIR) $(DEB_NEXT_DIR)

# ---- the units' sandboxing ----

CHECK_BESIDE += unit-security

DEBIAN_UNIT  ?= /lib/systemd/system/haproxy.service
# contrib name:installed name; the first three carry the sandbox.
SANDBOXED    := haproxy.service:$(PROG).service \
                haproxy@.service:$(PROG)@.service \
                haproxy-notify-reload.service:$(PROG)-notify-reload.service
UNSANDBOXED  := haproxy-historic.service:$(PROG)-historic.service

# The overall exposure (0.0 to 10.0, lower is better), offline: the test
# machines' PID 1 is not systemd. Units under their installed names in a
# directory of their own, so that no unit of the host is analysed instead.
unit-security:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	test -f $(DEBIAN_UNIT) || { echo "unit-security: no $(DEBIAN_UNIT)" \
		"(Debian package haproxy) to compare with"; exit 1; }; \
	exposure() { systemd-analyze security --offline=true "$$1" 2>/dev/null | \
		sed -n 's/.*Overall exposure level for [^ ]*: \([0-9.]*\) .*/\1/p'; }; \
	sandbox() { sed -n '/^# Sandboxing:/,/^CapabilityBoundingSet=/p' "$$1"; }; \
	debian=$$(exposure $(DEBIAN_UNIT)); \
	echo "unit-security: systemd-analyze security --offline=true, exposure" \
		"(0.0-10.0, lower is better)"; \
	printf '  %-5s %s\n' "$$debian" "$(DEBIAN_UNIT) (Debian's haproxy)"; \
	status=0; \
	sandbox contrib/systemd/haproxy.service > $$tmp/sandbox; \
	if ! test -s $$tmp/sandbox; then \
		echo "unit-security: haproxy.service has no \"# Sandboxing:\" block"; \
		status=1; \
	fi; \
	for pair in $(SANDBOXED) $(UNSANDBOXED); do \
		src=$${pair%%:*}; dst=$$tmp/$${pair#*:}; \
		sed $(UNIT_SED) contrib/systemd/$$src > $$dst; \
		e=$$(exposure $$dst); \
		printf '  %-5s %s\n' "$$e" "$${pair#*:} (contrib/systemd/$$src)"; \
		case " $(SANDBOXED) " in *" $$pair "*) ;; *) continue;; esac; \
		if ! awk -v a="$$e" -v b="$$debian" 'BEGIN { exit !(a != "" && a + 0 < b + 0) }'; then \
			echo "unit-security: $$src: exposure '$$e' not below Debian's $$debian"; \
			status=1; \
		fi; \
		if ! sandbox contrib/systemd/$$src | cmp -s - $$tmp/sandbox; then \
			echo "unit-security: $$src: its sandbox differs from haproxy.service's"; \
			status=1; \
		fi; \
	done; \
	exit $$status
