/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running a short command ("haproxy -v", "wrapper --upgrade-check") and
 * collecting its standard output without ever blocking the main loop: a
 * hung binary costs a timeout, not a wrapper deaf to its signals.
 */
#pragma once

#include <glib.h>

/* output is what the command printed (at most 64 KiB), wait_status its
 * status as waitpid() gives it. When it could not run or timed out,
 * output is NULL and error says why. */
typedef void (*probe_fn)(const char *output, int wait_status,
			 const GError *error, gpointer data);

struct probe;

/* Starts argv[0] with a scrubbed environment; done is called exactly once,
 * from the main loop, unless the probe is cancelled first. */
struct probe *probe_start(char *const *argv, guint timeout_ms, probe_fn done,
			  gpointer data);

/* The same with this environment. */
struct probe *probe_start_env(char *const *argv, char *const *envp,
			      guint timeout_ms, probe_fn done, gpointer data);

/* data is freed with data_free once done has returned, or at a cancel. */
void probe_own_data(struct probe *p, GDestroyNotify data_free);

/* Kill the command and forget the callback. */
void probe_cancel(struct probe *p);
