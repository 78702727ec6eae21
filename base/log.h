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

/* journalctl MESSAGE_ID=... finds an event kind on any host. */
#define MSGID_RELOAD_OK		"494aa78e98424aada074c2de931aa19d"
#define MSGID_RELOAD_FAILED	"929ca286c8284cb7b2f47303f566c5e4"
#define MSGID_GENERATION_LOST	"9d54bc4c6df54dc5881b256994cc972b"
#define MSGID_TAKEOVER		"0028838600be4a3b810014d7961ae20b"
#define MSGID_STOP		"f546d2715ae444feba3ae7d5e3e6dd73"

/* Fields of an event; a 0 generation or pid is left out. */
struct log_event {
	const char *message_id;
	guint generation;
	GPid pid;
	const char *result;	/* RELOAD_RESULT=, with RELOAD_DURATION_USEC= */
	gint64 duration_us;
	int exit_status;	/* EXIT_STATUS=, in MSGID_STOP events */
};

/* wlog's line; when stderr is the journal, sent natively with the event's
 * fields, the same MESSAGE and PRIORITY. */
void wlog_event(const struct log_event *ev, int priority, const char *fmt,
		...) G_GNUC_PRINTF(3, 4);

/* stderr is a journal stream (JOURNAL_STREAM names its device:inode). */
gboolean log_stderr_is_journal(void);
/* The same for any descriptor (stdout, say). */
gboolean log_fd_is_journal(int fd);

#define log_err(...)	wlog(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	wlog(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	wlog(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	wlog(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	wlog(LOG_DEBUG, __VA_ARGS__)

/* The steps of the wrapper's own machinery (the reload state machine's
 * transitions): <7> lines, only when asked for (--debug), so that the
 * journal and `systemctl status` keep to the events. */
void log_set_steps(gboolean on);
gboolean log_steps_on(void);
#define log_step(...)						\
	do {							\
		if (log_steps_on())				\
			wlog(LOG_DEBUG, __VA_ARGS__);		\
	} while (0)

/* The historic "executing" line: every element followed by one space. */
void log_executing(char *const *argv);

/* "exited with status 3", "killed by signal 9 (Killed)" */
gchar *describe_wait_status(int wait_status);

/* A wait status the way a shell reports it: 0-127, 128+signal, else 255. */
int shell_status(int wait_status);

/* "SIGTERM" for SIGTERM; valid for the life of the process. */
const char *signal_name(int sig);
