# The real-haproxy tests again on upstream builds of other series
# (../shared/haproxy, see its README.md): HSW_TEST_HAPROXY names the
# build (t/lib/harness-haproxy.c). Tests that do not apply to a series skip
# with the reason.
#
#   make check          also runs them on SERIES_CHECK
#   make check-series   runs them on every build of SERIES_ALL
#   make test-run HSW_TEST_HAPROXY=PATH
#                       the whole suite's real-haproxy tests on PATH
#                       (a variable set on make's command line reaches
#                       the tests' environment)
#
# The t/int/real-* and t/int/reload* files (under a minute a series): the
# container tests and the rest of the suite stay on Debian's haproxy.

SERIES_DIR   ?= ../shared/haproxy
SERIES_ALL   := 1.5.18 1.7.0 1.8.30 2.0.0 2.8.0 3.0.0 3.4.0
SERIES_CHECK ?= 1.5.18 1.8.30 3.4.0
# t/int/reload-versions runs the fake only: nothing there changes with
# the real haproxy.
SERIES_TESTS ?= $(filter-out t/int/reload-versions,\
		$(sort $(patsubst %.c,%,$(wildcard t/int/real-*.c t/int/reload*.c))))

CHECK_WAITING += series-check

.PHONY: series-check check-series

# $(1): the versions. A missing directory is a notice, not a failure.
define run_series
	@if [ ! -d "$(SERIES_DIR)" ]; then \
		echo "series: $(SERIES_DIR) absent: real-haproxy tests on Debian's haproxy only"; \
		exit 0; \
	fi; \
	dir=$$(cd "$(SERIES_DIR)" && pwd); status=0; \
	for v in $(1); do \
		if [ ! -x "$$dir/haproxy-$$v" ]; then \
			echo "series: no $$dir/haproxy-$$v: skipped"; continue; \
		fi; \
		echo "series: haproxy $$v"; \
		HSW_TEST_HAPROXY=$$dir/haproxy-$$v prove -j$(TEST_JOBS) --exec '' \
			$(call slow_first,$(SERIES_TESTS)) \
			|| status=1; \
	done; \
	exit $$status
endef

series-check: tests
	$(call run_series,$(SERIES_CHECK))

check-series: tests
	$(call run_series,$(SERIES_ALL))
