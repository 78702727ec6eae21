# haproxy-systemd-wrapper
#
#   make            build the wrapper
#   make check      install missing Debian packages (as root), build, run every test
#   make demo       build and run the wrapper on demo/haproxy.cfg (127.0.0.1), show a reload
#   make install    DESTDIR, PREFIX, SBINDIR
#   make deps       install what the build and tests need from Debian's packages

.DEFAULT_GOAL := all

VERSION      := 0.1.0
PROG         := haproxy-systemd-wrapper

PREFIX       ?= /usr
SBINDIR      ?= $(PREFIX)/sbin
DESTDIR      ?=
# Where haproxy is when it is neither named by the wrapper's own name nor beside it.
HAPROXY_FALLBACK ?= /usr/sbin/haproxy

CC           ?= cc
PKG_CONFIG   ?= pkg-config
PKGS         := glib-2.0 libsystemd
WARN         := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
                -Wno-unused-parameter
CFLAGS       ?= -O2 -g
ALL_CFLAGS    = -std=gnu11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -I. $(shell $(PKG_CONFIG) --cflags $(PKGS)) \
                -DWRAPPER_VERSION='"$(VERSION)$(VERSION_SUFFIX)"' \
                -DHAPROXY_FALLBACK='"$(HAPROXY_FALLBACK)"'
LIBS          = $(shell $(PKG_CONFIG) --libs $(PKGS))

# Every module but main() goes into a static library the tests link too.
LIB_SRC      := $(sort $(filter-out wrapper/main.c,$(wildcard base/*.c wrapper/*.c legacy/*.c migrate/*.c)))
LIB_OBJ      := $(LIB_SRC:.c=.o)
HEADERS      := $(wildcard base/*.h wrapper/*.h legacy/*.h migrate/*.h t/*.h)
# The test harness (t/harness.h), one object a concern, and the helpers a
# family of test files shares (t/lib-*.c), in an archive: a test links
# only the objects it uses.
HARNESS_OBJ  := $(patsubst %.c,%.o,$(sort $(wildcard t/harness-*.c t/lib-*.c)))
HARNESS      := t/harness.a

UNIT_TESTS   := $(patsubst %.c,%,$(wildcard t/unit-*.c))
INT_TESTS    := $(patsubst %.c,%,$(wildcard t/int-*.c))
TEST_HELPERS := t/fake-haproxy t/sigrecorder
# The same wrapper built with another version: the binary-upgrade tests install it.
NEXT_WRAPPER := t/$(PROG)-next
# A next version that no longer takes --drain-timeout: a self-upgrade into
# it must be refused (t/int-failpaths).
NEXT_REJECTING := t/$(PROG)-next-rejecting

DEB_PACKAGES := gcc make pkg-config libglib2.0-dev libsystemd-dev haproxy perl curl procps

.PHONY: all check tests test-run demo clean deps

# One concern a fragment: install.mk (install, packaging), robustness.mk
# (fuzzing, sanitizers), bench.mk (benchmarks). They may add to
# DEB_PACKAGES, TEST_PROGS, CLEAN_FILES and CHECK_EXTRA (more targets that
# `make check` runs after the test suite).
TEST_PROGS   = $(UNIT_TESTS) $(INT_TESTS)
CLEAN_FILES  =
CHECK_EXTRA  =
include $(wildcard mk/*.mk)

all: $(PROG)

$(PROG): wrapper/main.o libhsw.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

libhsw.a: $(LIB_OBJ)
	$(AR) rcs $@ $^

$(HARNESS): $(HARNESS_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

%.o: %.c $(HEADERS)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

t/unit-%: t/unit-%.c libhsw.a $(HEADERS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< libhsw.a $(LIBS)

t/int-%: t/int-%.c $(HARNESS) libhsw.a $(HEADERS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(HARNESS) libhsw.a $(LIBS)

# They make directories and sockets as the integration tests do, or
# fake proc trees (t/lib-proctree.c).
t/unit-rundir t/unit-control $(patsubst %.c,%,$(wildcard t/unit-migrate*.c)) t/unit-proc-parse: %: %.c $(HARNESS) libhsw.a $(HEADERS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(HARNESS) libhsw.a $(LIBS)

# The tests that boot systemd in a container share t/container.c (the
# container) and t/unitcheck.c (the checks of a unit under its systemd).
CONTAINER_TESTS := t/int-systemd t/int-distro
CONTAINER_OBJ   := t/container.o t/unitcheck.o
$(CONTAINER_TESTS): %: %.c $(CONTAINER_OBJ) $(HARNESS) libhsw.a $(HEADERS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(CONTAINER_OBJ) $(HARNESS) libhsw.a $(LIBS)

t/fake-haproxy t/sigrecorder: %: %.c
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -o $@ $<

$(NEXT_WRAPPER): VERSION_SUFFIX := +next
$(NEXT_WRAPPER): wrapper/main.c $(LIB_SRC) $(HEADERS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ wrapper/main.c $(LIB_SRC) $(LIBS)

$(NEXT_REJECTING): VERSION_SUFFIX := +next
$(NEXT_REJECTING): wrapper/main.c $(LIB_SRC) $(HEADERS)
	$(CC) $(ALL_CFLAGS) -DTEST_REJECTED_OPTION='"--drain-timeout"' $(LDFLAGS) \
		-o $@ wrapper/main.c $(LIB_SRC) $(LIBS)

tests: $(PROG) $(NEXT_WRAPPER) $(NEXT_REJECTING) $(TEST_HELPERS) $(UNIT_TESTS) $(INT_TESTS)

# Runs in a fresh make so that pkg-config sees what deps just installed.
# The extra checks first, so that prove's summary is what CI reads last.
check: deps
	@$(MAKE) --no-print-directory tests
	@$(MAKE) --no-print-directory $(CHECK_EXTRA) test-run

# Under an 80+ character temp root, then the skipped cases and why
# (t/run-suite), prove's summary last.
test-run:
	@t/run-suite $(TEST_PROGS)

demo: deps
	@$(MAKE) --no-print-directory all
	@demo/run

clean:
	rm -f $(PROG) $(NEXT_WRAPPER) $(NEXT_REJECTING) libhsw.a $(HARNESS) base/*.o wrapper/*.o legacy/*.o migrate/*.o t/*.o \
	      $(UNIT_TESTS) $(INT_TESTS) $(TEST_HELPERS) $(CLEAN_FILES)

# Installs missing packages when root; otherwise says exactly what to run.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' \
			|| missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
		echo "missing Debian packages; run as root:"; \
		echo "  apt-get install -y --no-install-recommends$$missing"; \
		exit 1; \
	fi; \
	echo "installing:$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y -qq --no-install-recommends$$missing </dev/null
