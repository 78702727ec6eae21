/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/child.h"

#include <signal.h>
#include <unistd.h>

#include "base/proc.h"

/* Killed, not yet reaped: the wrapper must not exit and orphan them. */
static guint unreaped;

static void reap_only(GPid pid, int status, gpointer data)
{
	g_spawn_close_pid(pid);
	unreaped--;
}

static gboolean on_deadline(gpointer data)
{
	*(gboolean *)data = TRUE;
	return G_SOURCE_REMOVE;
}

void child_reap_discarded(guint timeout_ms)
{
	gboolean late = FALSE;
	guint timer = g_timeout_add(timeout_ms, on_deadline, &late);

	while (unreaped && !late)
		g_main_context_iteration(NULL, TRUE);
	if (!late)
		g_source_remove(timer);
}

void child_discard(GPid pid, guint watch_source)
{
	kill(pid, SIGKILL);
	g_source_remove(watch_source);
	g_child_watch_add(pid, reap_only, NULL);
	unreaped++;
}

void child_discard_strays(const GArray *keep)
{
	g_autoptr(GArray) kids = proc_children(getpid());

	for (guint i = 0; i < kids->len; i++) {
		GPid pid = g_array_index(kids, GPid, i);

		if (proc_pids_contain(keep, pid))
			continue;
		/* Our child, not reaped by anyone yet: the pid is stable. */
		kill(pid, SIGKILL);
		g_child_watch_add(pid, reap_only, NULL);
		unreaped++;
	}
}
