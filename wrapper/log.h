/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging to stderr with the <N> priority prefixes journald understands,
 * under the historic wrapper's name so that existing greps keep working.
 */
#pragma once

#include <glib.h>
#include <syslog.h>

#define LOG_IDENT "haproxy-systemd-wrapper"

void wlog(int priority, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

#define log_err(...)	wlog(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	wlog(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	wlog(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	wlog(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	wlog(LOG_DEBUG, __VA_ARGS__)

/* The historic "executing" line: every element followed by one space. */
void log_executing(char *const *argv);

/* "exited with status 3", "killed by signal 9 (Killed)" */
gchar *describe_wait_status(int wait_status);

/* A wait status the way a shell reports it: 0-127, 128+signal, else 255. */
int shell_status(int wait_status);

/* "SIGTERM" for SIGTERM; valid for the life of the process. */
const char *signal_name(int sig);
