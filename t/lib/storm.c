/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the storm test runs beside the wrapper: see t/lib/storm.h. */
#include "t/lib/storm.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"

/* Read one of the client's pipes; FALSE at EOF. */
static gboolean pipe_read(int fd, GString *to)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return TRUE;
	if (n > 0)
		g_string_append_len(to, buf, n);
	return n > 0;
}

/*
 * Run `wrapper COMMAND [OPT] --runtime-dir=...` to its end (bounded): its exit
 * code, or -1 if it did not exit in time or was killed (then *err says
 * so). *slot holds its pid while it runs, for the safety net. No
 * assertion here: the client loops run in threads.
 */
int run_client(const char *command, const char *opt, const char *rundir_opt,
	       GPid *slot, gchar **out, gchar **err)
{
	const char *argv[] = { t_wrapper_path(), command, opt ? opt : rundir_opt,
			       opt ? rundir_opt : NULL, NULL };
	g_autoptr(GString) o = g_string_new(NULL);
	g_autoptr(GString) e = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	gint64 deadline = t_deadline(T_WAIT);
	gboolean out_open = TRUE, err_open = TRUE;
	int out_fd, err_fd, pidfd, status = -1;
	GPid pid;

	if (!g_spawn_async_with_pipes(NULL, (char **)argv, NULL,
				      G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
				      &pid, NULL, &out_fd, &err_fd, &error)) {
		*out = g_strdup("");
		*err = g_strdup_printf("cannot spawn: %s", error->message);
		return -1;
	}
	g_atomic_int_set(slot, pid);
	while ((out_open || err_open) && t_ms_left(deadline)) {
		struct pollfd p[2] = {
			{ .fd = out_open ? out_fd : -1, .events = POLLIN },
			{ .fd = err_open ? err_fd : -1, .events = POLLIN },
		};

		if (poll(p, 2, t_ms_left(deadline)) <= 0)
			continue;
		if (p[0].revents)
			out_open = pipe_read(out_fd, o);
		if (p[1].revents)
			err_open = pipe_read(err_fd, e);
	}
	pidfd = pidfd_open(pid, 0);
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		poll(&p, 1, t_ms_left(deadline));
		close(pidfd);
	}
	if (waitpid(pid, &status, WNOHANG) != pid) {
		g_string_append(e, "[did not exit in time: SIGKILL]");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		status = -1;
	}
	g_atomic_int_set(slot, 0);
	close(out_fd);
	close(err_fd);
	if (status != -1 && !WIFEXITED(status)) {
		g_string_append_printf(e, "[wait status 0x%x]", status);
		status = -1;
	}
	*out = g_strdup(o->str);
	*err = g_strdup(e->str);
	return status == -1 ? -1 : WEXITSTATUS(status);
}

gpointer load_run(gpointer data)
{
	struct load *l = data;

	g_mutex_lock(&l->lock);
	while (!l->stop && l->requests < LOAD_MAX &&
	       g_get_monotonic_time() < l->until) {
		gchar *why;

		g_mutex_unlock(&l->lock);
		why = t_request_once(l->port);
		g_mutex_lock(&l->lock);
		if (why && !l->failures++)
			l->first_failure = g_strdup_printf("request %u: %s",
							   l->requests, why);
		l->requests++;
		g_cond_broadcast(&l->changed);
		g_free(why);
	}
	g_mutex_unlock(&l->lock);
	return NULL;
}

/* Wait (bounded) for n more requests; how many there are in all. */
guint load_more(struct load *l, guint n)
{
	gint64 deadline = t_deadline(T_WAIT);
	guint want, got;

	g_mutex_lock(&l->lock);
	want = l->requests + n;
	while (l->requests < want &&
	       g_cond_wait_until(&l->changed, &l->lock, deadline))
		;
	got = l->requests;
	g_mutex_unlock(&l->lock);
	g_assert_cmpuint(got, >=, want);
	return got;
}

void load_stop(struct load *l)
{
	g_mutex_lock(&l->lock);
	l->stop = TRUE;
	g_mutex_unlock(&l->lock);
}

/* "pid (comm) S ppid ..." */
gboolean read_stat(GPid pid, struct proc_entry *e)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/stat", pid);
	g_autofree gchar *text = NULL;
	const char *open, *close;
	int ppid;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return FALSE;
	open = strchr(text, '(');
	close = strrchr(text, ')');
	if (!open || !close || close < open ||
	    sscanf(close + 1, " %c %d", &e->state, &ppid) != 2)
		return FALSE;
	e->pid = pid;
	e->ppid = ppid;
	g_strlcpy(e->comm, open + 1,
		  MIN(sizeof(e->comm), (gsize)(close - open)));
	return TRUE;
}

struct proc_entry *entry_at(GArray *procs, guint i)
{
	return &g_array_index(procs, struct proc_entry, i);
}

gboolean has_pid(GArray *procs, GPid pid)
{
	for (guint i = 0; i < procs->len; i++)
		if (entry_at(procs, i)->pid == pid)
			return TRUE;
	return FALSE;
}

/* Every process below root, zombies included, from one pass over /proc. */
GArray *tree_below(GPid root)
{
	g_autoptr(GArray) all = g_array_new(FALSE, FALSE,
					    sizeof(struct proc_entry));
	g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
	GArray *below = g_array_new(FALSE, FALSE, sizeof(struct proc_entry));
	const char *name;
	gboolean grew = TRUE;

	while (dir && (name = g_dir_read_name(dir))) {
		struct proc_entry e;

		if (g_ascii_isdigit(*name) && read_stat(atoi(name), &e))
			g_array_append_val(all, e);
	}
	/* Each pass moves over the children of what is already below. */
	while (grew) {
		grew = FALSE;
		for (guint i = 0; i < all->len; i++) {
			struct proc_entry *e = entry_at(all, i);

			if (e->ppid != root && !has_pid(below, e->ppid))
				continue;
			g_array_append_val(below, *e);
			g_array_remove_index_fast(all, i--);
			grew = TRUE;
		}
	}
	return below;
}

guint count_comm(GArray *procs, const char *comm)
{
	guint n = 0;

	for (guint i = 0; i < procs->len; i++)
		n += g_str_equal(entry_at(procs, i)->comm, comm);
	return n;
}

gchar *describe_procs(GArray *procs)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < procs->len; i++) {
		struct proc_entry *e = entry_at(procs, i);

		g_string_append_printf(s, "%s%d(%s,%c,ppid %d)", i ? " " : "",
				       e->pid, e->comm, e->state, e->ppid);
	}
	return g_string_free(s, FALSE);
}
