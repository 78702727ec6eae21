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
