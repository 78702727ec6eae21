/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What "status" shows, gathered from the owners of the state (the
 * generation table, the life cycle, the reload machine, the counters,
 * the takeover and the adopted instances, the SO_REUSEPORT migration):
 * the view wrapper/status.h formats, and systemd's STATUS= line.
 */
#pragma once

#include <glib.h>

#include "migrate/firststart.h"
#include "wrapper/gentable.h"
#include "wrapper/lifecycle.h"
#include "wrapper/metrics.h"
#include "wrapper/reloader.h"
#include "migrate/replacement.h"
#include "wrapper/steering/reuseport.h"
#include "wrapper/status.h"

/* The owners' handles, set by whoever composes them, outliving it. */
struct status_source {
	struct gen_table *gt;
	const struct lifecycle *life;
	const struct reloader *reloader;
	const struct metrics *metrics;
	const struct first_start *first;
	const struct replacement *replacement;
	const struct reuseport *reuseport;
	GPtrArray *foreign_view;	/* its own: status_source_clear() */
};

void status_source_clear(struct status_source *v);
/* Valid until the next call, or a change of the owners'. */
struct status_view status_source_view(struct status_source *v);
/* One line for systemd's STATUS=. */
gchar *status_source_summary(struct status_source *v);
/* STATUS= for systemd, outside a reload or a stop that say it anyway. */
void status_source_tell(struct status_source *v);
