# Robustness: fuzzing, sanitizers, memcheck, fault injection.
#
#   make fuzz            each libFuzzer target, one at a time under nice, to
#                        FUZZ_RUNS executions (default 10 M) or FUZZ_SECONDS
#                        (default 3600), whichever ends first; prints the
#                        executions reached. Not part of `make check`.
#   make asan-check      the whole test suite under ASan + UBSan (build/asan):
#                        asan-build, then asan-run
#   make valgrind-check  the wrapper under memcheck: start, reloads, stop
#   make robustness-clean
#
# Everything sanitized is built under build/ apart from the normal build's
# objects (build/obj), so that the two never mix.

.PHONY: fuzz fuzz-build fuzz-short asan-check asan-build asan-run \
        valgrind-check robustness-clean

DEB_PACKAGES += clang libclang-rt-14-dev valgrind

ROBUST_DIR   := build
FUZZ_DIR     := $(ROBUST_DIR)/fuzz
ASAN_DIR     := $(ROBUST_DIR)/asan
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 3600
FUZZ_RUNS    ?= 10000000
# Per input. Generous: under nice on a busy machine a run can be starved
# for seconds, which is not a hang of ours.
FUZZ_TIMEOUT ?= 60
# The machines are shared: fuzzing yields to everything else.
FUZZ_NICE    ?= nice -n 19
# The control protocol and the upgrade state first: they parse what
# another process sends.
FUZZ_TARGETS := control state notify args pidfile version proc

# Short passes in `make check`: each fuzz target for a few seconds, then
# the sanitized suite, both on every core; memcheck (one core) and the
# sanitized build (last, make's jobs) beside the series, whose tests
# mostly wait.
CHECK_EXTRA  += fuzz-short asan-run
CHECK_BESIDE += valgrind-check asan-build
CLEAN_FILES  += t/fake/failshim.so t/memcheck

# ---- fuzzing (libFuzzer, clang) ----

FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS    = -std=gnu11 -D_GNU_SOURCE $(WARN) -O1 -g -fno-omit-frame-pointer \
                 -I. $(shell $(PKG_CONFIG) --cflags glib-2.0) \
                 -DWRAPPER_VERSION='"$(VERSION)"' \
                 -DHAPROXY_FALLBACK='"$(HAPROXY_FALLBACK)"'
FUZZ_LIBS      = $(shell $(PKG_CONFIG) --libs glib-2.0)

# What each target links: only the modules its parser needs, so that work
# in progress elsewhere in the tree cannot break the fuzz build.
FUZZ_SRC_args    := legacy/args.c legacy/version.c
FUZZ_SRC_pidfile := legacy/pidfile.c base/fdio.c
FUZZ_SRC_version := legacy/version.c
FUZZ_SRC_control := wrapper/protocol.c
FUZZ_SRC_proc    := base/procparse.c
FUZZ_SRC_notify  := legacy/mworker.c legacy/config.c legacy/cfgwords.c \
                    legacy/launch.c legacy/version.c legacy/args.c \
                    base/proc.c base/procparse.c base/log.c base/fdio.c \
                    base/sdlib.c base/sigreset.c base/fdlimit.c
FUZZ_SRC_state   := wrapper/selfupgrade/state.c wrapper/generation.c wrapper/witness.c \
                    wrapper/child.c base/log.c base/fdio.c base/sdlib.c base/proc.c \
                    base/procparse.c
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz-%)

# The modules are gcc-clean (the normal build's -Werror); a diagnostic only
# clang makes is shown, not fatal here.
$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wno-error $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
		$(DEPFLAGS) -c -o $@ $<

# The fuzz targets themselves are written for clang: -Werror.
$(FUZZ_DIR)/obj/t/fuzz/%.o: t/fuzz/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
		$(DEPFLAGS) -c -o $@ $<

# The target's own file first: it holds LLVMFuzzerTestOneInput.
define fuzz_target_rule
$(FUZZ_DIR)/fuzz-$(1): $(FUZZ_DIR)/obj/t/fuzz/fuzz-$(1).o \
		$(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SRC_$(1)))
	$$(FUZZ_CC) $$(FUZZ_CFLAGS) $$(FUZZ_SAN) -fsanitize=fuzzer -o $$@ $$^ \
		$$(FUZZ_LIBS)
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_target_rule,$(t))))

-include $(shell find $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)

fuzz-build: $(FUZZ_BINS)

# New inputs go to build/fuzz/corpus/<target>; the seeds in t/fuzz/corpus
# are only read (crash inputs added there are replayed on every run).
# A crash, a leak, a timeout or a failed invariant fails the target.
fuzz: $(FUZZ_TARGETS:%=fuzz-run-%)

fuzz-run-%: $(FUZZ_DIR)/fuzz-%
	@t=$*; mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/artifacts; \
	dict=; [ -f t/fuzz/$$t.dict ] && dict=-dict=t/fuzz/$$t.dict; \
	log=$(FUZZ_DIR)/fuzz-$$t.log; \
	if ! $(FUZZ_NICE) $(FUZZ_DIR)/fuzz-$$t -runs=$(FUZZ_RUNS) \
		-max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- $$dict \
		$(FUZZ_DIR)/corpus/$$t t/fuzz/corpus/$$t >$$log 2>&1; then \
		tail -n 60 $$log; \
		echo "fuzz-$$t: FAILED (log: $$log, input: $(FUZZ_DIR)/artifacts/)"; \
		exit 1; \
	fi; \
	runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log); \
	rate=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $$log); \
	secs=$$(sed -n 's/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' $$log); \
	cov=$$(grep -E '^#[0-9]+' $$log | tail -n 1 | \
		sed -n 's/.*\(cov: [0-9]* ft: [0-9]* corp: [^ ]*\).*/\1/p'); \
	echo "fuzz-$$t: ok, $$runs runs in $${secs:-$(FUZZ_SECONDS)} s, $$rate exec/s, $$cov"

# Every target for FUZZ_SECONDS, one a core.
fuzz-short:
	@$(MAKE) --no-print-directory -j$(JOBS) fuzz FUZZ_SECONDS=5 FUZZ_NICE=

# ---- AddressSanitizer + UndefinedBehaviorSanitizer, the whole suite ----

# gcc, as the normal build: the same warnings, with -Werror. The runtimes
# linked in statically, so that the shim t/int/faults preloads can come
# first in the library list, as ASan's shared runtime would not allow.
ASAN_CC      := gcc
ASAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer -O1 -g -static-libasan -static-libubsan
ASAN_REPORTS  = $(abspath $(ASAN_DIR))/reports
# fast_unwind_on_malloc=0: whole stacks through GLib (no frame pointers)
# in leak reports. G_SLICE=always-malloc: GLib's arrays, lists and hash
# tables from malloc, not from slabs GLib keeps, where a lost one is
# never seen as a leak. HSW_PROPS_RUNS: t/unit/reloader-props's 100,000
# sequences take minutes under the sanitizers; fewer find what they look
# for (memory errors), the normal run checks the rules.
ASAN_ENV      = HSW_PROPS_RUNS=5000 G_SLICE=always-malloc ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:fast_unwind_on_malloc=0:log_path=$(ASAN_REPORTS)/asan \
                UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$(ASAN_REPORTS)/ubsan
# The container tests (t/container/*) run the wrapper under systemd in a
# container, where these options and the reports directory do not reach,
# or from the .deb, which dpkg-buildpackage builds without sanitizers:
# nothing to see there, and package would build both .debs again.
ASAN_SKIP    := $(CONTAINER_TESTS)
ASAN_PROGS    = $(filter-out $(ASAN_SKIP),$(TEST_PROGS))

# Every core, or under a make -j (make check), that make's job slots: a
# -j of its own would run beside the caller's jobs, not share with them.
asan_jobs     = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS))

# A copy of the tree (no .git, no build/), cleaned of whatever was built
# in place, built again with the sanitizers: never a stale object.
asan-build:
	@rm -rf $(ASAN_DIR) && mkdir -p $(ASAN_DIR)
	@tar -cf - --exclude=./.git --exclude=./build --exclude='*.o' \
		--exclude='*.a' . | tar -xf - -C $(ASAN_DIR)
	@$(MAKE) --no-print-directory -s -C $(ASAN_DIR) clean >/dev/null
	@$(MAKE) --no-print-directory $(asan_jobs) -C $(ASAN_DIR) CC=$(ASAN_CC) \
		CFLAGS="$(ASAN_FLAGS)" LDFLAGS="$(ASAN_FLAGS)" \
		$(PROG) $(NEXT_WRAPPER) $(NEXT_REJECTING) $(TEST_HELPERS) $(ASAN_PROGS)

asan-check: asan-build
	@$(MAKE) --no-print-directory asan-run

# The suite on what asan-build built (make check builds it earlier, beside
# the series). Any report fails, even one from a process whose exit nobody
# checks (a witness, a helper): they all write to $(ASAN_REPORTS).
asan-run:
	@rm -rf $(ASAN_REPORTS) && mkdir -p $(ASAN_REPORTS)
	@status=0; cd $(ASAN_DIR) && $(ASAN_ENV) \
		prove -j$(TEST_JOBS) --exec '' --timer \
		$(call slow_first,$(ASAN_PROGS)) || status=$$?; \
	if [ -n "$$(ls -A $(ASAN_REPORTS))" ]; then \
		cat $(ASAN_REPORTS)/*; \
		echo "asan-check: sanitizer reports in $(ASAN_REPORTS)"; \
		exit 1; \
	fi; \
	[ $$status -eq 0 ] && echo "asan-check: all tests pass, 0 sanitizer reports"; \
	exit $$status

# ---- valgrind memcheck on the wrapper, with the real haproxy ----

t/memcheck: $(OBJ_DIR)/t/memcheck.o $(HARNESS) $(LIB)
	$(TEST_LINK)

valgrind-check: $(PROG) t/memcheck
	prove --exec '' --timer t/memcheck

# ---- fault injection: t/int/fault* preload a shim into the wrapper ----

# Never sanitized (it is preloaded into uninstrumented haproxy too) and
# depending on libc only.
t/fake/failshim.so: t/fake/failshim.c
	$(CC) -std=gnu11 -D_GNU_SOURCE $(WARN) -O2 -g -fPIC -shared -o $@ $< -ldl

$(filter t/int/fault%,$(INT_TESTS)) t/int/failpaths: t/fake/failshim.so

robustness-clean:
	rm -rf $(FUZZ_DIR) $(ASAN_DIR) t/fake/failshim.so t/memcheck
