/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Looking at processes through /proc. Pids found here are candidates; a
 * signal goes only through a pidfd opened and then verified (proc_open_if),
 * so that a pid reused in between can never receive it.
 */
#pragma once

#include <glib.h>

/* The parent of pid, or 0 when pid does not exist or cannot be read. */
GPid proc_parent(GPid pid);

/* The pids whose parent is parent, from a scan of /proc (GArray of GPid). */
GArray *proc_children(GPid parent);

/* /proc/pid/exe, without a " (deleted)" suffix; NULL when unreadable. */
gchar *proc_exe(GPid pid);

/*
 * A pidfd for pid, returned only if, after it was opened, pid's parent is
 * still expected_parent: the pidfd then names that very process. -1 when
 * the process is gone or is someone else's.
 */
int proc_open_if_child_of(GPid pid, GPid expected_parent);

/* Send sig through a pidfd; FALSE (errno set) when it could not be sent. */
gboolean proc_pidfd_signal(int pidfd, int sig);
