/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <signal.h>
#include <unistd.h>

#include "base/sigreset.h"
#include "legacy/launch.h"
#include "wrapper/child.h"

#define PROBE_MAX_OUTPUT (64 * 1024)

struct probe {
	GPid pid;
	int fd;
	GString *out;
	gboolean eof;
	gboolean exited;
	int wait_status;
	guint fd_source;
	guint child_source;
	guint timer;
	GError *spawn_error;
	probe_fn done;
	gpointer data;
	GDestroyNotify data_free;
};


static void probe_free(struct probe *p)
{
	if (p->fd_source)
		g_source_remove(p->fd_source);
	if (p->timer)
		g_source_remove(p->timer);
	if (p->child_source)
		child_discard(p->pid, p->child_source);
	if (p->fd >= 0)
		close(p->fd);
	g_clear_error(&p->spawn_error);
	g_string_free(p->out, TRUE);
	if (p->data_free)
		p->data_free(p->data);
	g_free(p);
}

static void finish(struct probe *p, const GError *error)
{
	if (error)
		p->done(NULL, 0, error, p->data);
	else
		p->done(p->out->str, p->wait_status, NULL, p->data);
	probe_free(p);
}

static void maybe_finish(struct probe *p)
{
	if (p->eof && p->exited)
		finish(p, NULL);
}

static gboolean on_output(int fd, GIOCondition cond, gpointer data)
{
	struct probe *p = data;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return G_SOURCE_CONTINUE;
	if (n > 0) {
		if (p->out->len + n <= PROBE_MAX_OUTPUT)
			g_string_append_len(p->out, buf, n);
		return G_SOURCE_CONTINUE;
	}
	p->fd_source = 0;
	p->eof = TRUE;
	maybe_finish(p);
	return G_SOURCE_REMOVE;
}

static void on_probe_exit(GPid pid, int status, gpointer data)
{
	struct probe *p = data;

	g_spawn_close_pid(pid);
	p->child_source = 0;
	p->exited = TRUE;
	p->wait_status = status;
	maybe_finish(p);
}

GQuark probe_error_quark(void);
G_DEFINE_QUARK(probe-error-quark, probe_error)

static gboolean on_timeout(gpointer data)
{
	struct probe *p = data;
	g_autoptr(GError) error = g_error_new(probe_error_quark(), 0,
					      "no answer within the time limit");

	p->timer = 0;
	finish(p, error);
	return G_SOURCE_REMOVE;
}

static gboolean on_spawn_error(gpointer data)
{
	struct probe *p = data;

	p->timer = 0;
	finish(p, p->spawn_error);
	return G_SOURCE_REMOVE;
}

struct probe *probe_start(char *const *argv, guint timeout_ms, probe_fn done,
			  gpointer data)
{
	g_auto(GStrv) envp = haproxy_environ();

	return probe_start_env(argv, envp, timeout_ms, done, data);
}

struct probe *probe_start_env(char *const *argv, char *const *envp,
			      guint timeout_ms, probe_fn done, gpointer data)
{
	struct probe *p = g_new0(struct probe, 1);

	p->out = g_string_new(NULL);
	p->fd = -1;
	p->done = done;
	p->data = data;
	if (!g_spawn_async_with_pipes(NULL, (char **)argv, (char **)envp,
				      G_SPAWN_DO_NOT_REAP_CHILD |
				      G_SPAWN_STDERR_TO_DEV_NULL |
				      G_SPAWN_STDIN_FROM_DEV_NULL,
				      signals_reset_for_exec, NULL, &p->pid,
				      NULL, &p->fd, NULL, &p->spawn_error)) {
		/* Reported from the main loop, as every other outcome is:
		 * done is never called from inside this call. */
		p->fd = -1;
		p->timer = g_idle_add(on_spawn_error, p);
		return p;
	}
	/* GLib 2.74 makes this pipe inheritable: a callback that execs (a
	 * self upgrade, the hand-off) would carry it into the new image. */
	fcntl(p->fd, F_SETFD, FD_CLOEXEC);
	g_unix_set_fd_nonblocking(p->fd, TRUE, NULL);
	p->fd_source = g_unix_fd_add(p->fd, G_IO_IN | G_IO_HUP, on_output, p);
	p->child_source = g_child_watch_add(p->pid, on_probe_exit, p);
	p->timer = g_timeout_add(timeout_ms, on_timeout, p);
	return p;
}

void probe_own_data(struct probe *p, GDestroyNotify data_free)
{
	p->data_free = data_free;
}

void probe_cancel(struct probe *p)
{
	probe_free(p);
}
