/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What "status" shows, gathered from the owners of the state (the
 * generation table, the life cycle, the reload machine, the counters,
 * the takeover and the adopted instances, the SO_REUSEPORT migration):
 * the view wrapper/status.h formats, and systemd's STATUS= line. The
 * view's list of foreign instances is the supervisor's (foreign_view).
 */
#pragma once

#include <glib.h>

#include "wrapper/status.h"

struct supervisor;

/* Valid until the next call, or a change of the owners'. */
struct status_view status_source_view(struct supervisor *sv);
/* One line for systemd's STATUS=. */
gchar *status_source_summary(struct supervisor *sv);
/* STATUS= for systemd, outside a reload or a stop that say it anyway. */
void status_source_tell(struct supervisor *sv);
