/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * systemd notification (sd_notify), for Type=notify and notify-reload
 * units. Without NOTIFY_SOCKET every call is a no-op. The socket is never
 * handed to haproxy (launch.c scrubs NOTIFY_SOCKET from its environment).
 */
#pragma once

#include <glib.h>

/* READY=1, with a STATUS= line. */
void notify_ready(const char *status);
/* RELOADING=1 and MONOTONIC_USEC= (needed by notify-reload to match). */
void notify_reloading(const char *status);
void notify_stopping(const char *status);
void notify_status(const char *status);
/* "This is taking long, but it is alive": EXTEND_TIMEOUT_USEC=usec. */
void notify_extend_timeout(guint64 usec);
void notify_watchdog(void);

/* The watchdog interval systemd asked for (WatchdogSec=), 0 if none. */
guint64 notify_watchdog_usec(void);
