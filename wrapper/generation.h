/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A generation: one haproxy started by the wrapper, a direct child, from
 * its start until it exits. With -db (haproxy >= 1.8) that child is the
 * whole generation; with -Ds (haproxy < 1.8) it is a foreground parent
 * whose workers, its own children, do the serving and take the signals.
 * With -Ws it is a master that reloads itself in place: its workers are
 * counted in cohorts, the ones each load started (see wrapper/mworker/link.c).
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "wrapper/witness.h"

enum gen_state {
	GEN_STARTING,	/* loading and binding; the witness waits for it */
	GEN_CURRENT,	/* the one serving */
	GEN_DRAINING,	/* superseded; finishing its connections */
};

struct generation {
	guint number;
	GPid pid;
	enum launch_mode mode;
	enum gen_state state;
	gint64 started_us;	/* wall clock, for status */
	gchar version[64];
	guint child_source;
	struct witness witness;
	gboolean warned_addr_in_use;
	guint64 stderr_mark;	/* its stderr's first line (hastderr.h) */
	gboolean exited;	/* reaped: its pid may already be someone's */
	gboolean exposes;	/* exposes its listeners (our -f fragment) */
	gboolean took_listeners;	/* took its predecessor's (-x) */
	gboolean terminated;	/* sent SIGTERM for bounded draining */
	gboolean sf_adopted;	/* adopted instances were on its -sf list */
	/* Every group of its listeners got a steering program. */
	gboolean steerable;
	/* Its own predecessors were left off its -sf list: the wrapper
	 * soft-stops them once it serves and handshakes go to it. */
	gboolean stops_predecessors;
	/* The same for the instances taken over at the first start. */
	gboolean stops_foreign;
	guint drain_timer;
	gint64 draining_since_us;	/* wall clock; 0: unknown */
	/* Superseded: a check that it acted on its soft stop (drain.c). */
	guint stop_check_timer;
	int stop_signal;	/* SIGUSR1 (-sf) or SIGTERM (-st) */
	/* -Ws: the workers of the last good load, and older ones still
	 * draining (struct worker_cohort *, oldest first). */
	GArray *workers;
	GPtrArray *cohorts;
};

/* Workers of a master-worker generation superseded by one of its reloads. */
struct worker_cohort {
	struct generation *master;
	GArray *pids;
	gboolean terminated;
	guint drain_timer;
	gint64 since_us;	/* wall clock, when superseded */
};

struct generation *generation_new(guint number, enum launch_mode mode,
				  const char *version);
void generation_free(struct generation *g);

const char *generation_state_name(enum gen_state state);

/* The pids a successor lists after -sf: the -db process, or the -Ds
 * parent's workers (the parent itself while it has none). */
void generation_sf_pids(const struct generation *g, GArray *pids);

/*
 * Send sig to the processes that act on it: the -db process, or the -Ds
 * workers (verified children of our child, through pidfds), falling back
 * to the -Ds parent when it has no worker. SIGKILL goes to all of them.
 * log_relay prints the historic "SIGTERM -> pid." lines.
 */
void generation_signal(const struct generation *g, int sig,
		       gboolean log_relay);

/* Signal pid, a child of ours whose child watch has not fired: GLib may
 * have reaped it already, so through a pidfd opened while it is still
 * our child. FALSE (errno set) when it could not be sent. */
gboolean generation_signal_child(GPid pid, int sig);

/* -Ws: forget the workers that have exited; drop empty cohorts. */
void generation_prune_cohorts(struct generation *g);

/* -Ws: send sig to a cohort's workers, each verified a child of the
 * master; the number signalled. */
guint cohort_signal(const struct worker_cohort *c, int sig);

