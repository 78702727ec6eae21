/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Children the wrapper no longer cares about, but must still reap. */
#pragma once

#include <glib.h>

/*
 * SIGKILL a child still watched by watch_source (so not yet reaped: its
 * pid cannot have been reused), drop that watch, and let a new one reap it
 * in the background.
 */
void child_discard(GPid pid, guint watch_source);

/* Before exiting, run the loop until every discarded child is reaped, at
 * most timeout_ms. They were sent SIGKILL, so it takes milliseconds. */
void child_reap_discarded(guint timeout_ms);

/*
 * After a self re-exec: every child of ours that is not one of keep
 * (GPid array) is a helper the old image left behind (a witness, a
 * probe): kill and reap it, so that it cannot linger as a zombie.
 */
void child_discard_strays(const GArray *keep);
