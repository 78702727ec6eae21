/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * haproxy's stderr, read by the wrapper through a pipe: each line goes
 * on to the journal at the priority its tag means ([ALERT] <3>,
 * [WARNING] <4>, [NOTICE] <5>, untagged <6>), under haproxy's name and
 * pid (SYSLOG_IDENTIFIER=haproxy) when our stderr is the journal, else
 * to our stderr with the <N> prefix; and the last [ALERT] lines are kept,
 * so that a failed start or reload can say what haproxy said.
 *
 * The pipe never holds haproxy up: its write end is non-blocking (a full
 * pipe loses the line, never blocks haproxy), and haproxy ignores
 * SIGPIPE in every series, so a wrapper gone (killed, or exec'd into
 * haproxy -Ws by the hand-off, which closes both ends) makes its writes
 * fail, nothing more. Both ends cross our own exec (self-upgrade): what
 * is in the pipe meanwhile is read by the new image.
 */
#pragma once

#include <glib.h>

struct ha_stderr;

struct ha_stderr *ha_stderr_new(void);
/* Reads what is left, then closes both ends. */
void ha_stderr_free(struct ha_stderr *h);

/* The descriptor to give haproxy as its stderr, the pipe made on first
 * need; -1 (said once): haproxy shares ours, as before. */
int ha_stderr_writer(struct ha_stderr *h);

/* Everything the pipe holds now, passed on (before our last line). */
void ha_stderr_flush(struct ha_stderr *h);

/* Where the lines read from now on begin: ha_stderr_alert's since. */
guint64 ha_stderr_mark(struct ha_stderr *h);
/* The first [ALERT] line pid wrote since mark, as "[ALERT] words" (its
 * date and pid left out), after reading what the pipe holds now; NULL if
 * none. A line written before haproxy's exit or its notify message is in
 * the pipe when they are seen. */
gchar *ha_stderr_alert(struct ha_stderr *h, GPid pid, guint64 since);
/* The same from any pid but those of others: a -Ws master's own, or
 * (3.1 and later) the new worker's it forked to load the configuration,
 * not its old workers'. */
gchar *ha_stderr_alert_but(struct ha_stderr *h, const GArray *others,
			   guint64 since);

/* ---- across our own exec (wrapper/selfupgrade/) ---- */

/* Both ends (0: no pipe), inheritable or close-on-exec again. */
void ha_stderr_fds(struct ha_stderr *h, int *rfd, int *wfd);
void ha_stderr_inheritable(struct ha_stderr *h, gboolean yes);
/* The old image's pipe, if rfd and wfd are the two ends of one pipe
 * (else left alone: a leaked state may name anyone's descriptors). */
gboolean ha_stderr_adopt(struct ha_stderr *h, int rfd, int wfd);
