/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/child.h"

#include <signal.h>

static void reap_only(GPid pid, int status, gpointer data)
{
	g_spawn_close_pid(pid);
}

void child_discard(GPid pid, guint watch_source)
{
	kill(pid, SIGKILL);
	g_source_remove(watch_source);
	g_child_watch_add(pid, reap_only, NULL);
}
