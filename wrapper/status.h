/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What "status" answers, and the STATUS= line systemd shows. */
#pragma once

#include <glib.h>

#include "wrapper/generation.h"

struct reload_report {
	gboolean valid;		/* a reload has ended */
	gboolean ok;
	gchar *message;
	gint64 ended_us;	/* wall clock */
	gint64 duration_us;
};

/* A generation that failed to start, kept for status until a success. */
struct failed_generation {
	gboolean valid;
	guint number;
	GPid pid;
	gchar version[64];
	gint64 started_us;
	gchar *how;
	guint attempt;		/* the reload attempt it was started for */
};

struct status_view {
	GPid wrapper_pid;
	const char *phase;
	guint reloads;		/* the ones that worked */
	guint reloads_failed;
	guint takeovers;
	guint restarts_adopted;
	guint adoptions;
	const struct reload_report *last;
	const struct failed_generation *failed;
	const GPtrArray *gens;	/* struct generation *, oldest first */
	const struct generation *current;
	const GPtrArray *foreign;	/* struct foreign *, may be NULL */
	/* Serves when no generation does: adopted after a restart by hand. */
	const struct foreign *adopted;
	/* "active", "off", "unavailable: ...": see reuseport_state() */
	const char *reuseport;
};

gchar *status_text(const struct status_view *v);
gchar *status_json(const struct status_view *v);
/* OpenMetrics text, "# EOF" then the "ok" verdict line. */
gchar *status_openmetrics(const struct status_view *v);
/* One line for systemd's STATUS=. */
gchar *status_summary(const struct status_view *v);

void reload_report_clear(struct reload_report *r);
void failed_generation_clear(struct failed_generation *f);
