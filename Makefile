# haproxy-systemd-wrapper
#
#   make            build the wrapper
#   make check      install missing Debian packages (as root), build, run every test
#   make demo       build and run the wrapper on demo/haproxy.cfg (127.0.0.1), show a reload
#   make install    DESTDIR, PREFIX, SBINDIR
#   make deps       install what the build and tests need from Debian's packages
#   make mutation   the mutants of t/mutants.list against the tests (slow)
#   make life       a long generated life under systemd (t/container/life)

.DEFAULT_GOAL := all

# The version is debian/changelog's (its first line, without an epoch):
# the package, the wrapper's --version and --status, and `make deb`'s file
# name all say the one `dch -v` (or an edit of the changelog) gives.
VERSION      := $(shell sed -n '1{s/^[^ ]* .//;s/[^-+.~:0-9A-Za-z].*//;s/^[0-9]*://;p;q;}' debian/changelog 2>/dev/null)
ifeq ($(VERSION),)
$(error no version in debian/changelog's first line)
endif
PROG         := haproxy-systemd-wrapper

PREFIX       ?= /usr
SBINDIR      ?= $(PREFIX)/sbin
DESTDIR      ?=
# Where haproxy is when it is neither named by the wrapper's own name nor beside it.
HAPROXY_FALLBACK ?= /usr/sbin/haproxy

CC           ?= cc
PKG_CONFIG   ?= pkg-config
PKGS         := glib-2.0 json-glib-1.0 libsystemd
WARN         := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
                -Wno-unused-parameter
CFLAGS       ?= -O2 -g
ALL_CFLAGS    = -std=gnu11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -I. $(shell $(PKG_CONFIG) --cflags $(PKGS)) \
                -DWRAPPER_VERSION='"$(VERSION)$(VERSION_SUFFIX)"' \
                -DHAPROXY_FALLBACK='"$(HAPROXY_FALLBACK)"'
# libsystemd and json-glib are loaded when first needed (base/sdlib.c,
# base/jsonlib.c): headers only.
LIBS          = $(shell $(PKG_CONFIG) --libs glib-2.0)

# Objects and the static library are built out of tree, under build/obj;
# -MMD -MP write each object's header dependencies next to it (.d).
OBJ_DIR      := build/obj
DEPFLAGS     := -MMD -MP
# Every module but main() goes into a static library the tests link too.
# The product's directories: base/, legacy/, migrate/, wrapper/ and its
# features (wrapper/*/).
SRC_DIRS     := base legacy migrate wrapper $(patsubst %/,%,$(wildcard wrapper/*/))
LIB_SRC      := $(sort $(filter-out wrapper/main.c,$(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c))))
LIB_OBJ      := $(LIB_SRC:%.c=$(OBJ_DIR)/%.o)
LIB          := $(OBJ_DIR)/libhsw.a
HEADERS      := $(foreach d,$(SRC_DIRS) t/lib t/fake t/container,\
                $(wildcard $(d)/*.h))
# The test harness (t/lib/harness.h), one object a concern, and the helpers a
# family of test files shares (t/lib/*.c too), in an archive: a test links
# only the objects it uses.
HARNESS_OBJ  := $(patsubst %.c,$(OBJ_DIR)/%.o,$(sort $(wildcard t/lib/*.c)))
HARNESS      := $(OBJ_DIR)/t/lib/harness.a

UNIT_TESTS   := $(patsubst %.c,%,$(wildcard t/unit/*.c))
INT_TESTS    := $(patsubst %.c,%,$(wildcard t/int/*.c))
CONTAINER_TESTS := $(addprefix t/container/,systemd distro package unitmove life)
TEST_HELPERS := t/fake/fake-haproxy t/fake/sigrecorder
# The same wrapper built with another version: the binary-upgrade tests install it.
NEXT_WRAPPER := t/$(PROG)-next
# A next version that no longer takes --drain-timeout: a self-upgrade into
# it must be refused (t/int/failpaths).
NEXT_REJECTING := t/$(PROG)-next-rejecting

DEB_PACKAGES := gcc make pkg-config libglib2.0-dev libjson-glib-dev libsystemd-dev haproxy perl curl procps

.PHONY: all check tests test-run demo clean deps layers-check diagram-check

# One concern a fragment: install.mk (install, packaging), robustness.mk
# (fuzzing, sanitizers), bench.mk (benchmarks). They may add to
# DEB_PACKAGES, TEST_PROGS, CLEAN_FILES, CHECK_WAITING (checks that wait
# more than they compute), CHECK_BESIDE (checks `make check` runs beside
# them: each takes a core at most, or shares make's jobserver) and
# CHECK_EXTRA (those it runs one after the other, before the test suite).
TEST_PROGS   = $(UNIT_TESTS) $(INT_TESTS) $(CONTAINER_TESTS)
# The build and the test runs use every core. Most tests wait on haproxy
# and systemd more than they compute, so prove runs one more than the
# cores: the suite takes the time of its slowest programs, not their sum.
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)
TEST_JOBS    ?= $(shell echo $$(( $(JOBS) + 1 )))
# The longest programs start first, longest first, so that the short ones
# fill the other slots beside them instead of waiting at the end: the
# containers, then the integration tests of 10 s and more (under ASan too).
SLOW_TESTS   := t/container/package t/container/systemd t/container/unitmove \
                t/container/distro t/int/real-fdstore t/container/life \
                t/int/migration t/int/adopt t/int/fault-signals \
                t/int/mworker-fake t/int/storm t/int/rundir t/int/identity \
                t/int/fake-failures t/int/reload-notify t/int/reload-control \
                t/int/takeover t/int/timers
slow_first    = $(filter $(1),$(SLOW_TESTS)) $(filter-out $(SLOW_TESTS),$(1))
CLEAN_FILES  =
CHECK_WAITING =
CHECK_BESIDE = diagram-check
CHECK_EXTRA  =
include $(wildcard mk/*.mk)

all: $(PROG)

$(PROG): $(OBJ_DIR)/wrapper/main.o $(LIB)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

# Rebuilt from scratch: a module removed from the tree leaves no member.
$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

# The objects are rebuilt when the version changes (WRAPPER_VERSION is on
# their command line): a stamp holding the version, rewritten only then.
VERSION_STAMP := $(OBJ_DIR)/version
$(shell mkdir -p $(OBJ_DIR) && { [ "$$(cat $(VERSION_STAMP) 2>/dev/null)" = "$(VERSION)" ] || echo "$(VERSION)" > $(VERSION_STAMP); })

$(OBJ_DIR)/%.o: %.c $(VERSION_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

# A test program: its own object, then what it needs, then the library.
TEST_LINK     = $(CC) $(ALL_CFLAGS) $(LDFLAGS) $(TEST_LDFLAGS) -o $@ \
                $(filter %.o,$^) $(filter $(HARNESS),$^) $(LIB) $(LIBS)

$(HARNESS): $(HARNESS_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

t/unit/%: $(OBJ_DIR)/t/unit/%.o $(LIB)
	$(TEST_LINK)

t/int/%: $(OBJ_DIR)/t/int/%.o $(HARNESS) $(LIB)
	$(TEST_LINK)

# They make directories and sockets as the integration tests do, or
# fake proc trees (t/lib/proctree.c), or drive the reload state machine
# with fake effects (t/lib/reloader.c).
HARNESS_UNITS := t/unit/rundir t/unit/control t/unit/proc-parse t/unit/adopt \
                 t/unit/settled \
                 $(patsubst %.c,%,$(wildcard t/unit/migrate*.c t/unit/reloader*.c))
$(HARNESS_UNITS): t/%: $(OBJ_DIR)/t/%.o $(HARNESS) $(LIB)
	$(TEST_LINK)

# It parses the status JSON with json-glib itself (the wrapper loads it
# when first needed).
t/unit/status: LIBS = $(shell $(PKG_CONFIG) --libs glib-2.0 json-glib-1.0)

# Its looks at the proc tree go through the test first (a tree changed
# between two looks, as on a busy host).
t/unit/adopt: TEST_LDFLAGS = -Wl,--wrap=find_foreign

# Its control sockets' timers go through the test, which shortens the
# idle deadline instead of waiting for the wrapper's.
t/unit/control: TEST_LDFLAGS = -Wl,--wrap=g_timeout_add

# The tests that boot systemd in a container share t/container/container.c
# (the container), files.c (files put in it) and unitcheck.c (the checks
# of a unit under its systemd).
CONTAINER_OBJ   := $(patsubst %,$(OBJ_DIR)/t/container/%.o,\
                   container files unitcheck)
$(CONTAINER_TESTS): t/%: $(OBJ_DIR)/t/%.o $(CONTAINER_OBJ) $(HARNESS) $(LIB)
	$(TEST_LINK)

# The fake haproxy: one program in several files (t/fake/fake-haproxy*.c).
FAKE_HAPROXY_SRC := $(sort $(wildcard t/fake/fake-haproxy*.c))
t/fake/fake-haproxy: $(FAKE_HAPROXY_SRC) t/fake/fake-haproxy.h
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -o $@ $(FAKE_HAPROXY_SRC)

t/fake/sigrecorder: %: %.c
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -o $@ $<

# The same wrapper built with another version, in an object tree of its
# own; the rejecting one differs only in main.c, which reads the option.
NEXT_DIR     := build/next
NEXT_OBJ     := $(LIB_SRC:%.c=$(NEXT_DIR)/%.o)

$(NEXT_DIR)/%.o: VERSION_SUFFIX := +next
$(NEXT_DIR)/%.o: %.c $(VERSION_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(NEXT_DIR)/main-rejecting.o: wrapper/main.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DTEST_REJECTED_OPTION='"--drain-timeout"' $(DEPFLAGS) \
		-c -o $@ $<

$(NEXT_WRAPPER): $(NEXT_DIR)/wrapper/main.o $(NEXT_OBJ)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(NEXT_REJECTING): $(NEXT_DIR)/main-rejecting.o $(NEXT_OBJ)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

# Made by pattern rules, kept for the next build.
.SECONDARY: $(patsubst %,$(OBJ_DIR)/%.o,$(UNIT_TESTS) $(INT_TESTS) $(CONTAINER_TESTS))

-include $(shell find $(OBJ_DIR) $(NEXT_DIR) -name '*.d' 2>/dev/null)

tests: $(PROG) $(NEXT_WRAPPER) $(NEXT_REJECTING) $(TEST_HELPERS) \
       $(UNIT_TESTS) $(INT_TESTS) $(CONTAINER_TESTS)

# Runs in a fresh make so that pkg-config sees what deps just installed.
# The extra checks first, so that prove's summary is what CI reads last:
# CHECK_WAITING and CHECK_BESIDE side by side, each target's output kept
# together, then CHECK_EXTRA in order. layers-check (seconds) takes make's
# own job slot, CHECK_WAITING (the series: its tests mostly wait on
# haproxy) a slot of the jobserver, which it gives back when it ends; the
# static checks, one after the other, take the core it leaves, then the
# sanitized build (last) compiles there, and on every core once the
# series is done.
check: deps
	@$(MAKE) --no-print-directory -j$(JOBS) tests
	@$(MAKE) --no-print-directory -j$(JOBS) --output-sync=target \
		layers-check $(CHECK_WAITING) $(CHECK_BESIDE)
	@$(MAKE) --no-print-directory $(CHECK_EXTRA) test-run

# The tree's map (mk/layers.sh): base/ <- legacy/ <- migrate's proof <-
# the supervisor and migrate's actors; each feature used only where the
# map says; the reload machine runs without processes; only the core
# names struct supervisor, and no call cycle runs outside it. The self-test
# breaks each rule once on a scratch copy: the check can fail.
layers-check:
	@mk/layers.sh && mk/layers-selftest.sh && echo "layers-check: base <- legacy <- migrate's proof <- the supervisor; features used where the map says; the reload machine alone; only the core names the supervisor, and no call cycle runs outside it"

# doc/internals.md's diagram of the reload machine is printed from its
# table (mk/diagram.sh): the two never disagree.
diagram-check: t/unit/reloader
	@mk/diagram.sh && echo "diagram-check: doc/internals.md shows the reload machine's table"

# Under an 80+ character temp root, then the skipped cases and why
# (t/run-suite), prove's summary last.
test-run:
	@t/run-suite -j$(TEST_JOBS) $(call slow_first,$(TEST_PROGS))

# A longer generated life under systemd than make check's 10 events
# (t/container/life): HSW_LIFE_EVENTS (60 here) events drawn from
# HSW_LIFE_SEED (printed; random when unset), which replays a run.
.PHONY: life
life: $(PROG) $(NEXT_WRAPPER) t/container/life $(DEB_FILE) $(DEB_NEXT_FILE)
	HSW_LIFE_EVENTS=$${HSW_LIFE_EVENTS:-60} ./t/container/life

demo: deps
	@$(MAKE) --no-print-directory all
	@demo/run

clean:
	rm -rf $(OBJ_DIR) $(NEXT_DIR)
	rm -f $(PROG) $(NEXT_WRAPPER) $(NEXT_REJECTING) \
	      $(UNIT_TESTS) $(INT_TESTS) $(CONTAINER_TESTS) $(TEST_HELPERS) $(CLEAN_FILES)

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
