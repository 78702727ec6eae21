/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A child about to exec must not inherit what its parent did with signals
 * (the wrapper blocks the ones it reads through a signalfd; make and shells
 * hand some down ignored): haproxy expects the defaults. Nor the
 * descriptor limit the wrapper raised for itself (base/fdlimit.h).
 */
#pragma once

#include <glib.h>

/* In a child between fork and exec: default dispositions, empty mask,
 * the soft descriptor limit the wrapper was started with.
 * Async-signal-safe. Shaped as a GSpawnChildSetupFunc so that g_spawn_*()
 * takes it as it is; unused is ignored. */
void signals_reset_for_exec(gpointer unused);
