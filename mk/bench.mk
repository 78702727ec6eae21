# Benchmarks: never part of `make check`.
#
#   make bench               every reload mode, RELOADS=200 reloads each, then
#                            start-up, takeovers and no-handover reloads
#                            (bench/extra.sh), on an idle host and with
#                            BENCH_IDLE_PROCS=10000 idle processes, and
#                            reloads without -x on haproxy 1.5.18 and 1.7.0
#                            (BENCH_SERIES_DIR) beside the historic wrapper
#   make bench BENCH_QUICK=1 every case, smaller (RELOADS=50, 6 starts...)
#   make bench-restarts      under a real systemd 252 (a container, as
#                            t/container/systemd boots it), 20 `systemctl restart`,
#                            10 kills of the main pid and a haproxy binary
#                            replaced then a restart, under 64 clients: the
#                            shipped unit beside Debian's haproxy -Ws unit
#                            (also the last part of make bench)
#   make bench-units         under a real systemd 252 with dpkg (as
#                            t/container/package boots it), one container:
#                            Debian's haproxy.service alone, then through the
#                            drop-in, then the package's unit, each through 5
#                            `systemctl restart`, 2 kills of the main pid,
#                            haproxy's binary replaced then a restart, and (not
#                            Debian's unit alone) the wrapper's package upgraded
#                            and removed, each step under a load of its own
#   make bench-soak          the wrapper alone, SOAK_RELOADS=2000 reloads under
#                            load: its VmRSS and descriptors every SOAK_EVERY=250
#   make bench-crowd         the wrapper's peak memory and CPU at its start with
#                            and without CROWD=400 processes of another user
#                            named haproxy, CROWD_ARGS=65535 arguments each
#                            (bench/crowd.sh; root)
#
# bench/run measures, side by side on Debian's haproxy, failed requests
# and reload latency for the wrapper, `haproxy -Ws` and manual -sf
# restarts, under load from bench/loadclient; see bench/README.
# BENCH_ROUNDS (10), IDLE_SECONDS (5), BENCH_KEEP=1 go to bench/run;
# SERIES_DIR (mk/series.mk) says where the old haproxy builds are.

.PHONY: bench bench-build bench-soak bench-restarts bench-units bench-crowd

ifeq ($(BENCH_QUICK),1)
RELOADS      ?= 50
endif
RELOADS      ?= 200
SOAK_RELOADS ?= 2000
SOAK_EVERY   ?= 250
BENCH_CONC   ?= 8
BENCH_BINS   := bench/loadclient bench/reloader bench/idleprocs
BENCH_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -O2 -pthread

CLEAN_FILES  += $(BENCH_BINS)

$(BENCH_BINS): %: %.c
	$(CC) $(BENCH_CFLAGS) $(LDFLAGS) -o $@ $<

bench-build: $(PROG) $(BENCH_BINS)

bench: bench-build
	@RELOADS=$(RELOADS) BENCH_CONC=$(BENCH_CONC) WRAPPER=$(CURDIR)/$(PROG) \
		HAPROXY=$(HAPROXY_FALLBACK) BENCH_SERIES_DIR=$(abspath $(SERIES_DIR)) bench/run
	@$(MAKE) --no-print-directory bench-restarts

# The counts are the test's messages ("measured: ..."); refused > 0 for
# the shipped unit fails it.
bench-restarts: bench/loadclient t/container/systemd
	@HSW_LOADCLIENT=$(CURDIR)/bench/loadclient ./t/container/systemd --verbose \
		-p /systemd/measure/restarts -p /systemd/debian13/measure/restarts 2>&1 | grep -E '^(ok|not ok|# measured:|# SKIP)|ERROR'

# The counts are the test's messages ("measured: ..."); a refusal under a
# unit that runs the wrapper fails it, but at the stop of the package's
# unit by its removal. It needs both packages (make deb, make deb-next).
bench-units: t/container/package deb deb-next
	@HSW_MEASURE=1 ./t/container/package --verbose -p /package/measure/units \
		2>&1 | grep -E '^(ok|not ok|# measured:|# SKIP)|ERROR'

bench-crowd: bench-build
	@WRAPPERS="$(if $(CROWD_WRAPPERS),$(CROWD_WRAPPERS),built=$(CURDIR)/$(PROG))" \
		HAPROXY=$(HAPROXY_FALLBACK) bench/crowd.sh

bench-soak: bench-build
	@SOAK_RELOADS=$(SOAK_RELOADS) SOAK_EVERY=$(SOAK_EVERY) BENCH_CONC=$(BENCH_CONC) \
		WRAPPER=$(CURDIR)/$(PROG) HAPROXY=$(HAPROXY_FALLBACK) bench/run --soak
