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
	gboolean tried;
	char *error;		/* dlerror()'s text, kept */
	__typeof__(sd_notify) *notify;
	__typeof__(sd_watchdog_enabled) *watchdog_enabled;
	__typeof__(sd_journal_sendv) *journal_sendv;
} lib;

/* Once per process: a failure stays a failure. */
static gboolean load(void)
{
	void *h;

	if (lib.tried)
		return lib.notify != NULL;
	lib.tried = TRUE;
	/* Never unloaded: the pointers stay valid for the process's life. */
	h = dlopen(LIBSYSTEMD, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (h) {
		lib.notify = dlsym(h, "sd_notify");
		lib.watchdog_enabled = dlsym(h, "sd_watchdog_enabled");
		lib.journal_sendv = dlsym(h, "sd_journal_sendv");
	}
	if (!h || !lib.notify || !lib.watchdog_enabled || !lib.journal_sendv) {
		lib.error = g_strdup(dlerror() ? : LIBSYSTEMD ": missing symbol");
		lib.notify = NULL;
		return FALSE;
	}
	return TRUE;
}

int sdlib_notify(const char *state)
{
	/* What sd_notify() itself answers, without loading it. */
	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	return load() ? lib.notify(0, state) : -ELIBACC;
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
