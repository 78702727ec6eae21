/* SPDX-License-Identifier: GPL-2.0-or-later */
/* haproxy's stderr, through a pipe. See wrapper/hastderr.h. */
#include "wrapper/hastderr.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fdio.h"
#include "base/log.h"
#include "base/sdlib.h"
#include "legacy/stderrline.h"

/* The journal's name for haproxy's lines, as under Debian's own unit. */
#define HAPROXY_IDENT "haproxy"
/* A longer line is passed on in pieces of this size. */
#define LINE_MAX_BYTES 4096
/* The [ALERT] lines kept, each cut to ALERT_MAX_BYTES. */
#define ALERTS_KEPT 16
#define ALERT_MAX_BYTES 512
/* At most this much is read in one go, so that a haproxy writing its
 * traffic logs on stderr ("log stderr") does not hold the loop. */
#define READ_BYTES 65536

struct alert {
	guint64 seq;
	GPid pid;
	gchar *text;		/* "[ALERT] words" */
};

struct ha_stderr {
	int rfd, wfd;		/* -1: no pipe (yet) */
	guint source;
	GString *partial;	/* the start of a line not ended yet */
	guint64 seq;		/* lines read so far */
	GQueue alerts;		/* struct alert, the last ALERTS_KEPT */
	int journal;		/* our stderr is the journal: -1 unknown */
	/* The last piece passed on was cut (LINE_MAX_BYTES): the next one
	 * continues it, at its priority, read as no tag of its own. */
	gboolean cut;
	int cut_priority;
	gboolean told_no_pipe;
};

static void alert_free(gpointer data)
{
	struct alert *a = data;

	g_free(a->text);
	g_free(a);
}

struct ha_stderr *ha_stderr_new(void)
{
	struct ha_stderr *h = g_new0(struct ha_stderr, 1);

	h->rfd = h->wfd = -1;
	h->partial = g_string_new(NULL);
	h->journal = -1;
	g_queue_init(&h->alerts);
	return h;
}

/* ---- each line ---- */

static gboolean to_journal(struct ha_stderr *h, const struct ha_line *l,
			   const char *line)
{
	g_autofree gchar *msg = g_strconcat("MESSAGE=", line, NULL);
	g_autofree gchar *prio = g_strdup_printf("PRIORITY=%d", l->priority);
	g_autofree gchar *pid = g_strdup_printf("SYSLOG_PID=%d", l->pid);
	struct iovec iov[] = {
		{ msg, strlen(msg) },
		{ prio, strlen(prio) },
		{ (char *)"SYSLOG_IDENTIFIER=" HAPROXY_IDENT,
		  strlen("SYSLOG_IDENTIFIER=" HAPROXY_IDENT) },
		{ pid, strlen(pid) },
	};

	if (h->journal < 0)
		h->journal = log_stderr_is_journal();
	if (!h->journal)
		return FALSE;
	return sdlib_journal_sendv(iov, l->pid ? 4 : 3) >= 0;
}

static void keep_alert(struct ha_stderr *h, const struct ha_line *l)
{
	struct alert *a = g_new0(struct alert, 1);
	gsize len = strlen(l->words);

	if (len > ALERT_MAX_BYTES)
		len = ALERT_MAX_BYTES;
	a->seq = h->seq;
	a->pid = l->pid;
	a->text = g_strdup_printf("[ALERT] %.*s", (int)len, l->words);
	g_queue_push_tail(&h->alerts, a);
	while (h->alerts.length > ALERTS_KEPT)
		alert_free(g_queue_pop_head(&h->alerts));
}

static void pass_on(struct ha_stderr *h, const char *line, gboolean cut)
{
	struct ha_line l;

	/* A continuation's start is anyone's text (a long URL in a traffic
	 * log): what looks like a tag there is not one. */
	if (h->cut)
		l = (struct ha_line){ .priority = h->cut_priority,
				      .words = line };
	else
		ha_line_parse(line, &l);
	h->cut = cut;
	h->cut_priority = l.priority;
	/* Only a line that names its pid can be told apart from the
	 * other generations' (a "log stderr" line names none). */
	if (l.alert && l.pid)
		keep_alert(h, &l);
	h->seq++;
	if (!to_journal(h, &l, line)) {
		g_autofree gchar *out = g_strdup_printf("<%d>%s\n", l.priority,
							line);

		/* One write: our own lines do not cut into it. */
		fd_write_all(STDERR_FILENO, out, strlen(out));
	}
}

/* The whole lines in h->partial go on; a piece too long goes as one. */
static void pass_lines(struct ha_stderr *h)
{
	gsize start = 0;

	for (;;) {
		gsize avail = h->partial->len - start;
		char *nl = memchr(h->partial->str + start, '\n',
				  MIN(avail, LINE_MAX_BYTES));
		gsize len;

		if (!nl && avail < LINE_MAX_BYTES)
			break;
		len = nl ? (gsize)(nl - (h->partial->str + start))
			 : LINE_MAX_BYTES;
		{
			g_autofree gchar *line = g_strndup(
				h->partial->str + start, len);

			if (*line)
				pass_on(h, line, !nl);
			else
				h->cut = FALSE;
		}
		start += len + (nl ? 1 : 0);
	}
	g_string_erase(h->partial, 0, start);
}

/* Up to max bytes; FALSE once the pipe is empty (or broken). */
static gboolean read_some(struct ha_stderr *h, gsize max)
{
	char buf[8192];
	gsize got = 0;

	while (got < max) {
		ssize_t n = read(h->rfd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return FALSE;
		g_string_append_len(h->partial, buf, n);
		pass_lines(h);
		got += n;
	}
	return TRUE;
}

/* What the pipe holds now (bounded: a writer that never stops). */
static void drain(struct ha_stderr *h)
{
	if (h->rfd >= 0)
		read_some(h, 16 * READ_BYTES);
}

static gboolean on_readable(gint fd, GIOCondition cond, gpointer data)
{
	struct ha_stderr *h = data;

	read_some(h, READ_BYTES);
	return G_SOURCE_CONTINUE;
}

/* ---- the pipe ---- */

static void watch(struct ha_stderr *h)
{
	h->source = g_unix_fd_add(h->rfd, G_IO_IN, on_readable, h);
}

static void close_pipe(struct ha_stderr *h)
{
	g_clear_handle_id(&h->source, g_source_remove);
	if (h->rfd >= 0)
		close(h->rfd);
	if (h->wfd >= 0)
		close(h->wfd);
	h->rfd = h->wfd = -1;
}

int ha_stderr_writer(struct ha_stderr *h)
{
	int fds[2];

	if (h->wfd >= 0)
		return h->wfd;
	/* Both ends close-on-exec: haproxy gets the write end as its
	 * stderr (dup2), the hand-off's exec takes neither along. */
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		if (!h->told_no_pipe)
			log_warn("no pipe for haproxy's stderr (%s): it shares "
				 "the wrapper's", g_strerror(errno));
		h->told_no_pipe = TRUE;
		return -1;
	}
	h->rfd = fds[0];
	h->wfd = fds[1];
	watch(h);
	return h->wfd;
}

void ha_stderr_free(struct ha_stderr *h)
{
	if (!h)
		return;
	drain(h);
	if (h->partial->len)
		pass_on(h, h->partial->str, FALSE);
	close_pipe(h);
	g_string_free(h->partial, TRUE);
	g_queue_clear_full(&h->alerts, alert_free);
	g_free(h);
}

/* ---- what a failure says ---- */

void ha_stderr_flush(struct ha_stderr *h)
{
	drain(h);
}

guint64 ha_stderr_mark(struct ha_stderr *h)
{
	drain(h);
	return h->seq;
}

gchar *ha_stderr_alert(struct ha_stderr *h, GPid pid, guint64 since)
{
	drain(h);
	for (GList *i = h->alerts.head; i; i = i->next) {
		const struct alert *a = i->data;

		if (a->seq >= since && a->pid == pid)
			return g_strdup(a->text);
	}
	return NULL;
}

gchar *ha_stderr_alert_but(struct ha_stderr *h, const GArray *others,
			   guint64 since)
{
	drain(h);
	for (GList *i = h->alerts.head; i; i = i->next) {
		const struct alert *a = i->data;
		gboolean other = FALSE;

		for (guint j = 0; others && j < others->len && !other; j++)
			other = g_array_index(others, GPid, j) == a->pid;
		if (a->seq >= since && !other)
			return g_strdup(a->text);
	}
	return NULL;
}

/* ---- across our own exec ---- */

void ha_stderr_fds(struct ha_stderr *h, int *rfd, int *wfd)
{
	*rfd = h->rfd >= 0 ? h->rfd : 0;
	*wfd = h->wfd >= 0 ? h->wfd : 0;
}

void ha_stderr_inheritable(struct ha_stderr *h, gboolean yes)
{
	if (h->rfd < 0)
		return;
	/* FD_CLOEXEC is the one descriptor flag. */
	fcntl(h->rfd, F_SETFD, yes ? 0 : FD_CLOEXEC);
	fcntl(h->wfd, F_SETFD, yes ? 0 : FD_CLOEXEC);
}

static gboolean pipe_end(int fd, int mode, struct stat *st)
{
	int fl = fcntl(fd, F_GETFL);

	return fd > STDERR_FILENO && fl >= 0 && (fl & O_ACCMODE) == mode &&
	       fstat(fd, st) == 0 && S_ISFIFO(st->st_mode);
}

gboolean ha_stderr_adopt(struct ha_stderr *h, int rfd, int wfd)
{
	struct stat r, w;

	if (rfd == wfd || !pipe_end(rfd, O_RDONLY, &r) ||
	    !pipe_end(wfd, O_WRONLY, &w) || r.st_dev != w.st_dev ||
	    r.st_ino != w.st_ino)
		return FALSE;
	close_pipe(h);
	h->rfd = rfd;
	h->wfd = wfd;
	fcntl(rfd, F_SETFD, FD_CLOEXEC);
	fcntl(wfd, F_SETFD, FD_CLOEXEC);
	g_unix_set_fd_nonblocking(rfd, TRUE, NULL);
	g_unix_set_fd_nonblocking(wfd, TRUE, NULL);
	watch(h);
	return TRUE;
}
