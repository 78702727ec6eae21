/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/sdlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#define LIBSYSTEMD "libsystemd.so.0"

static struct {
	char *error;		/* the last failed load's dlerror(), kept */
	__typeof__(sd_notify) *notify;
	__typeof__(sd_pid_notify_with_fds) *notify_with_fds;
	__typeof__(sd_notify_barrier) *notify_barrier;	/* libsystemd 246+ */
	__typeof__(sd_watchdog_enabled) *watchdog_enabled;
	__typeof__(sd_journal_sendv) *journal_sendv;
} lib;

/*
 * Loaded once; a failure is tried again at the next call: it may be
 * passing (no descriptor or no memory left at that moment), and a cached
 * one would never send READY=1 or WATCHDOG=1 again.
 */
static gboolean load(void)
{
	void *h;

	if (lib.notify)
		return TRUE;
	/* Never unloaded: the pointers stay valid for the process's life. */
	h = dlopen(LIBSYSTEMD, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (h) {
		lib.watchdog_enabled = dlsym(h, "sd_watchdog_enabled");
		lib.journal_sendv = dlsym(h, "sd_journal_sendv");
		lib.notify_with_fds = dlsym(h, "sd_pid_notify_with_fds");
		/* Optional: an older libsystemd works without it. */
		lib.notify_barrier = dlsym(h, "sd_notify_barrier");
		/* Set last, and only when the three other required calls
		 * are there: load() takes it as the sign that all are. */
		if (lib.watchdog_enabled && lib.journal_sendv &&
		    lib.notify_with_fds)
			lib.notify = dlsym(h, "sd_notify");
	}
	g_clear_pointer(&lib.error, g_free);
	if (!lib.notify)
		lib.error = g_strdup(dlerror() ? : LIBSYSTEMD ": missing symbol");
	return lib.notify != NULL;
}

int sdlib_notify(const char *state)
{
	/* What sd_notify() itself answers, without loading it. */
	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	return load() ? lib.notify(0, state) : -ELIBACC;
}

int sdlib_notify_with_fds(const char *state, const int *fds, unsigned n)
{
	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	return load() ? lib.notify_with_fds(0, 0, state, fds, n) : -ELIBACC;
}

int sdlib_notify_barrier(uint64_t timeout_usec)
{
	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	if (!load())
		return -ELIBACC;
	return lib.notify_barrier ? lib.notify_barrier(0, timeout_usec) :
				    -EOPNOTSUPP;
}

int sdlib_watchdog_enabled(uint64_t *usec)
{
	if (!getenv("WATCHDOG_USEC"))
		return 0;
	return load() ? lib.watchdog_enabled(0, usec) : -ELIBACC;
}

int sdlib_journal_sendv(const struct iovec *iov, int n)
{
	return load() ? lib.journal_sendv(iov, n) : -ELIBACC;
}

const char *sdlib_load_error(void)
{
	return lib.error;
}
