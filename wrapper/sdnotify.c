/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/sdnotify.h"

#include <errno.h>
#include <time.h>

#include "base/log.h"
#include "base/sdlib.h"

/* Each load is tried again at the next call: one line for each reason
 * it failed, not one per READY=1 or WATCHDOG=1 where it is absent. */
static void warn_load_failed(void)
{
	static gchar *said;
	const char *why = sdlib_load_error();

	if (g_strcmp0(said, why) == 0)
		return;
	g_free(said);
	said = g_strdup(why);
	log_warn("sd_notify: cannot load libsystemd: %s", why);
}

static void send_state(const char *state)
{
	int r = sdlib_notify(state);

	if (r == -ELIBACC)
		warn_load_failed();
	else if (r < 0)
		log_warn("sd_notify: %s", g_strerror(-r));
}

/* STATUS= is one line: a newline would start another assignment. */
static gchar *status_line(const char *status)
{
	return g_strdelimit(g_strdup(status), "\n", ' ');
}

static void send_with_status(const char *state, const char *status)
{
	g_autofree gchar *line = status_line(status);
	g_autofree gchar *msg = g_strdup_printf("%s%sSTATUS=%s", state,
						*state ? "\n" : "", line);

	send_state(msg);
}

void notify_ready(const char *status)
{
	send_with_status("READY=1", status);
}

void notify_reloading(const char *status)
{
	g_autofree gchar *state = g_strdup_printf(
		"RELOADING=1\nMONOTONIC_USEC=%" G_GINT64_FORMAT,
		g_get_monotonic_time());

	send_with_status(state, status);
}

void notify_stopping(const char *status)
{
	send_with_status("STOPPING=1", status);
}

void notify_status(const char *status)
{
	send_with_status("", status);
}

void notify_extend_timeout(guint64 usec)
{
	g_autofree gchar *msg = g_strdup_printf(
		"EXTEND_TIMEOUT_USEC=%" G_GUINT64_FORMAT, usec);

	send_state(msg);
}

void notify_watchdog(void)
{
	send_state("WATCHDOG=1");
}

guint64 notify_watchdog_usec(void)
{
	uint64_t usec = 0;

	return sdlib_watchdog_enabled(&usec) > 0 ? usec : 0;
}
