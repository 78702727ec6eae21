/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "migrate/proc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

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

static gboolean parse_pid(const char *name, GPid *pid)
{
	guint64 v;

	if (!g_ascii_string_to_unsigned(name, 10, 1, G_MAXINT, &v, NULL))
		return FALSE;
	*pid = (GPid)v;
	return TRUE;
}

GArray *proc_children(GPid parent)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
	const char *name;

	while (dir && (name = g_dir_read_name(dir))) {
		GPid pid;

		if (parse_pid(name, &pid) && proc_parent(pid) == parent)
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
		return -1;
	}
	return fd;
}

gboolean proc_pidfd_signal(int pidfd, int sig)
{
	return pidfd_send_signal(pidfd, sig, NULL, 0) == 0;
}
