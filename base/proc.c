/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "base/fdio.h"

#define DELETED_SUFFIX " (deleted)"

/* Field 4 of /proc/pid/stat; the command name before it may hold any
 * character, ")" included, so parse from the last ")". */
GPid proc_parent(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/stat", pid);
	g_autofree gchar *stat = NULL;
	const char *p;
	char state;
	int ppid;

	if (pid <= 0 || !g_file_get_contents(path, &stat, NULL, NULL))
		return 0;
	p = strrchr(stat, ')');
	if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2)
		return 0;
	return ppid;
}

gboolean proc_parse_pid(const char *name, GPid *pid)
{
	guint64 v;

	if (!g_ascii_string_to_unsigned(name, 10, 1, G_MAXINT, &v, NULL))
		return FALSE;
	*pid = (GPid)v;
	return TRUE;
}

gboolean proc_pids_contain(const GArray *pids, GPid pid)
{
	for (guint i = 0; i < pids->len; i++)
		if (g_array_index(pids, GPid, i) == pid)
			return TRUE;
	return FALSE;
}

gchar *pids_text(const GArray *pids)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < pids->len; i++)
		g_string_append_printf(s, "%s%d", i ? " " : "",
				       g_array_index(pids, GPid, i));
	return g_string_free(s, FALSE);
}

gint proc_pid_cmp(gconstpointer a, gconstpointer b)
{
	GPid x = *(const GPid *)a, y = *(const GPid *)b;

	return x < y ? -1 : x > y;
}

static gchar *read_at_most(const char *path, gsize max, gsize *len,
			   GError **error);

/* The largest children list read for one task. No real list comes close,
 * as it cannot hold more pids than pid_max allows. */
#define CHILDREN_MAX (8u << 20)

/* Does this kernel list children (CONFIG_PROC_CHILDREN)? */
static gboolean kernel_lists_children(void)
{
	static int known = -1;

	if (known < 0) {
		g_autofree gchar *path = g_strdup_printf(
			"/proc/self/task/%d/children", (int)gettid());

		known = access(path, R_OK) == 0;
	}
	return known;
}

/* Reads of a children list before it is taken as unstable. */
#define CHILDREN_READS 8

/*
 * A children list read twice the same. A child reaped while the kernel
 * walks the list makes it skip the children after it (a master reaps
 * its old worker as the reload verdict looks for the new one); the
 * reaped one is then on no later read, so two equal reads skipped none
 * alive throughout. NULL: gone, or *unstable when it never held still.
 */
static gchar *read_children(const char *path, gboolean *unstable)
{
	g_autofree gchar *last = NULL;
	gsize len;

	last = read_at_most(path, CHILDREN_MAX, &len, NULL);
	for (guint i = 1; last && i < CHILDREN_READS; i++) {
		g_autofree gchar *again = read_at_most(path, CHILDREN_MAX,
						       &len, NULL);

		if (!again || strcmp(again, last) == 0)
			return g_steal_pointer(&again);
		g_free(last);
		last = g_steal_pointer(&again);
	}
	*unstable = last != NULL;
	return NULL;
}

/*
 * The kernel's own lists, PID/task/TID/children (a child is on the list
 * of the thread that forked it): a cost that does not grow with the
 * host, where a scan reads every process. FALSE without such lists, or
 * when one kept changing.
 */
static gboolean children_of_tasks(GPid parent, GArray *pids)
{
	g_autofree gchar *task_dir = g_strdup_printf("/proc/%d/task", parent);
	g_autoptr(GDir) dir = NULL;
	const char *tid;

	if (!kernel_lists_children())
		return FALSE;
	/* Gone: no children, as a scan would find. */
	dir = g_dir_open(task_dir, 0, NULL);
	while (dir && (tid = g_dir_read_name(dir))) {
		g_autofree gchar *path = g_build_filename(task_dir, tid,
							  "children", NULL);
		g_autofree gchar *text = NULL;
		g_auto(GStrv) words = NULL;
		gboolean unstable = FALSE;

		/* A thread that ended meanwhile left its children to another. */
		text = read_children(path, &unstable);
		if (unstable)
			return FALSE;
		if (!text)
			continue;
		words = g_strsplit(text, " ", -1);
		for (guint i = 0; words[i]; i++) {
			GPid pid;

			if (proc_parse_pid(g_strstrip(words[i]), &pid))
				g_array_append_val(pids, pid);
		}
	}
	return TRUE;
}

GArray *proc_children(GPid parent)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_autoptr(GDir) dir = NULL;
	const char *name;

	if (parent > 0 && children_of_tasks(parent, pids)) {
		/* In pid order, as the scan gives them. */
		g_array_sort(pids, proc_pid_cmp);
		return pids;
	}
	g_array_set_size(pids, 0);
	dir = g_dir_open("/proc", 0, NULL);
	while (dir && (name = g_dir_read_name(dir))) {
		GPid pid;

		if (proc_parse_pid(name, &pid) && proc_parent(pid) == parent)
			g_array_append_val(pids, pid);
	}
	return pids;
}

gchar *proc_exe(GPid pid)
{
	g_autofree gchar *link = g_strdup_printf("/proc/%d/exe", pid);
	gchar *target = g_file_read_link(link, NULL);

	if (target && g_str_has_suffix(target, DELETED_SUFFIX))
		target[strlen(target) - strlen(DELETED_SUFFIX)] = '\0';
	return target;
}

int proc_open_if_child_of(GPid pid, GPid expected_parent)
{
	int fd;

	if (pid <= 0)
		return -1;
	fd = pidfd_open(pid, 0);
	if (fd < 0)
		return -1;
	/* Checked after the open: the pidfd pins the process we verified. */
	if (proc_parent(pid) != expected_parent) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	return fd;
}

gint64 proc_start_time_us(guint64 ticks)
{
	g_autofree gchar *stat = NULL;
	const char *btime;
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || !g_file_get_contents("/proc/stat", &stat, NULL, NULL))
		return 0;
	btime = strstr(stat, "\nbtime ");
	if (!btime)
		return 0;
	return g_ascii_strtoll(btime + 7, NULL, 10) * G_USEC_PER_SEC +
	       (gint64)(ticks * G_USEC_PER_SEC / hz);
}

gboolean proc_pidfd_signal(int pidfd, int sig)
{
	return pidfd_send_signal(pidfd, sig, NULL, 0) == 0;
}

/* ---- proc trees under any root (procparse.c parses what is read) ---- */

GArray *proc_list_pids_at(const char *root, GError **error)
{
	g_autoptr(GDir) dir = g_dir_open(root, 0, error);
	GArray *pids;
	const char *name;

	if (!dir)
		return NULL;
	pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	while ((name = g_dir_read_name(dir))) {
		GPid pid;

		if (proc_parse_pid(name, &pid))
			g_array_append_val(pids, pid);
	}
	return pids;
}

static gchar *pid_path(const char *root, GPid pid, const char *what)
{
	g_autofree gchar *dir = g_strdup_printf("%d", pid);

	return g_build_filename(root, dir, what, NULL);
}

/* All of a small file, at most max bytes (the rest is dropped). */
static gchar *read_at_most(const char *path, gsize max, gsize *len,
			   GError **error)
{
	g_autofree gchar *buf = NULL;
	gsize total = 0, size = MIN(4096, max);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int errsv;

	if (fd < 0)
		goto fail;
	buf = g_malloc(size + 1);
	for (;;) {
		gssize r = fd_read_upto(fd, buf + total, size - total);

		if (r < 0) {
			errsv = errno;
			close(fd);
			errno = errsv;
			goto fail;
		}
		total += (gsize)r;
		/* The end, or the bound. */
		if (total < size || size == max)
			break;
		size = MIN(size * 2, max);
		buf = g_realloc(buf, size + 1);
	}
	close(fd);
	buf[total] = '\0';
	*len = total;
	return g_steal_pointer(&buf);
fail:
	errsv = errno;
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errsv),
		    "%s: %s", path, g_strerror(errsv));
	return NULL;
}

/* A stat line is a few hundred bytes; a name cannot make it reach this. */
gssize proc_read_head_at(int dirfd, GPid pid, const char *name, char *buf,
			 gsize size)
{
	char path[64];
	gssize total;
	int fd, errsv;

	g_return_val_if_fail(size > 1, -1);
	g_snprintf(path, sizeof(path), "%d/%s", pid, name);
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	total = fd_read_upto(fd, buf, size - 1);
	errsv = errno;
	close(fd);
	errno = errsv;
	if (total >= 0)
		buf[total] = '\0';
	return total;
}

#define STAT_MAX 4096

/* status is a few kB; the groups line alone can make it longer. */
#define STATUS_MAX (256u << 10)

/* The files of PID read whole and parsed by one of the proc_parse_*. */
enum pid_file { PID_STAT, PID_SIGMASKS, PID_IDS };

static const struct {
	const char *name;
	gsize max;
	const char *lacking;	/* the error when it does not parse */
} pid_files[] = {
	[PID_STAT] = { "stat", STAT_MAX, "not a stat line" },
	[PID_SIGMASKS] = { "status", STATUS_MAX, "no signal masks" },
	[PID_IDS] = { "status", STATUS_MAX, "no Uid: and Gid: lines" },
};

static gboolean parse_as(enum pid_file f, const char *text, gsize len,
			 gpointer out)
{
	switch (f) {
	case PID_STAT:
		return proc_parse_stat(text, len, out);
	case PID_SIGMASKS:
		return proc_parse_sigmasks(text, len, out);
	case PID_IDS:
		return proc_parse_ids(text, len, out);
	}
	return FALSE;
}

static gboolean parse_pid_file(const char *root, GPid pid, enum pid_file f,
			       gpointer out, GError **error)
{
	g_autofree gchar *path = pid_path(root, pid, pid_files[f].name);
	g_autofree gchar *text = NULL;
	gsize len = 0;

	text = read_at_most(path, pid_files[f].max, &len, error);
	if (!text)
		return FALSE;
	if (!parse_as(f, text, len, out)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s",
			    path, pid_files[f].lacking);
		return FALSE;
	}
	return TRUE;
}

gboolean proc_stat_at(const char *root, GPid pid, struct proc_stat *out,
		      GError **error)
{
	return parse_pid_file(root, pid, PID_STAT, out, error);
}

GStrv proc_cmdline_at(const char *root, GPid pid, gsize max, gboolean *whole,
		      GError **error)
{
	g_autofree gchar *path = pid_path(root, pid, "cmdline");
	g_autofree gchar *data = NULL;
	gsize len = 0;

	/* One byte more than max tells a longer one. */
	data = read_at_most(path, max + 1, &len, error);
	*whole = !data || len <= max;
	return data && *whole ? proc_parse_cmdline(data, len) : NULL;
}

gchar *proc_exe_at(const char *root, GPid pid, gboolean *deleted,
		   GError **error)
{
	g_autofree gchar *path = pid_path(root, pid, "exe");
	gchar *target = g_file_read_link(path, error);
	gboolean gone = target && g_str_has_suffix(target, DELETED_SUFFIX);

	if (gone)
		target[strlen(target) - strlen(DELETED_SUFFIX)] = '\0';
	if (deleted)
		*deleted = gone;
	return target;
}

gchar *proc_cwd_at(const char *root, GPid pid)
{
	g_autofree gchar *path = pid_path(root, pid, "cwd");

	return g_file_read_link(path, NULL);
}

gboolean proc_same_process_at(const char *root, GPid pid, guint64 start_time)
{
	struct proc_stat st;

	return proc_stat_at(root, pid, &st, NULL) &&
	       st.start_time == start_time && st.state != 'Z' &&
	       st.state != 'X';
}

int proc_open_if_same_at(const char *root, GPid pid, guint64 start_time)
{
	int fd = pidfd_open(pid, 0);

	if (fd >= 0 && !proc_same_process_at(root, pid, start_time)) {
		close(fd);
		return -1;
	}
	return fd;
}

gboolean proc_catches_signal_at(const char *root, GPid pid, int sig)
{
	struct proc_sigmasks m;

	if (sig < 1 || sig > 64 ||
	    !parse_pid_file(root, pid, PID_SIGMASKS, &m, NULL))
		return FALSE;
	return (m.caught & PROC_SIGBIT(sig)) && !(m.blocked & PROC_SIGBIT(sig));
}

gboolean proc_ids_at(const char *root, GPid pid, struct proc_ids *out,
		     GError **error)
{
	return parse_pid_file(root, pid, PID_IDS, out, error);
}
