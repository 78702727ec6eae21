/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Starting a generation, the reload machine's PROBING and LOADING steps:
 * locate haproxy, know its version (wrapper/versioncache/vcache.h), choose the mode,
 * spawn it with its -sf list and -x, hear its witness, bound its load; or
 * have the serving master reload itself. The launcher owns the probe, the
 * load timers and the version; it adds to the generation table and posts
 * the machine's events (PROBED, FAILED, TIMEOUT); a generation ready or
 * spawned is reported (the core's wrapper/outcome.h takes it), a master's
 * reload goes to its link.
 */
#pragma once

#include <glib.h>

#include "legacy/version.h"
#include "wrapper/generation.h"
#include "wrapper/reloader.h"

struct first_start;
struct gen_table;
struct ha_stderr;
struct launcher;
struct master_link;
struct replacement;
struct reuseport;
struct rundir_use;
struct wrapper_args;
struct wrapper_options;

/* What the launcher reads and acts on: its owners', which outlive every
 * call to it. self_path: the wrapper's own file, where haproxy is looked
 * for first. */
struct launcher_uses {
	const struct wrapper_args *args;
	const struct wrapper_options *opts;
	struct gen_table *gt;
	struct reloader *reloader;
	const struct rundir_use *rt;
	struct reuseport *reuseport;
	struct master_link *master;
	struct first_start *first;
	struct replacement *replacement;
	struct ha_stderr *hastderr;
	const char *self_path;
};

enum launcher_report {
	LAUNCHER_SPAWNED,	/* g was spawned: its end is to be watched */
	LAUNCHER_SERVES,	/* g is bound (a -Ds parent: forked) */
};

typedef void (*launcher_report_fn)(enum launcher_report what,
				   struct generation *g, gpointer data);

struct launcher *launcher_new(const struct launcher_uses *uses,
			      launcher_report_fn report, gpointer data);
void launcher_free(struct launcher *l);

/* The reload machine's effects (wrapper/reloader.h). first_start: nothing
 * served yet (a second try after a takeover's search too): an early
 * probe under way is awaited, and the user's -sf pids and the instances
 * taken over go on the -sf list. hard: the old ones are stopped (-st). */
void launcher_probe(struct launcher *l, gboolean first_start);
/* At the first start, before the search for foreign instances (long on a
 * busy host): haproxy -v runs meanwhile when the version is not cached;
 * launcher_probe() then waits for it. */
void launcher_probe_early(struct launcher *l);
gboolean launcher_must_wait(struct launcher *l);
enum launch_kind launcher_launch(struct launcher *l,
				 const struct haproxy_version *v,
				 gboolean first_start, gboolean hard);
void launcher_kill_loading(struct launcher *l);
gchar *launcher_master_timeout_text(struct launcher *l, gboolean settling);
/* The attempt is over: no load timers, no master's reload waited for,
 * haproxy located anew next time. */
void launcher_end_attempt(struct launcher *l);
/* A stop: a version probe under way is cancelled, and the load timers
 * of a generation still loading (the stop bounds it now). */
void launcher_cancel(struct launcher *l);

/* "haproxy -Ws" replacing us (the hand-off): -x from the serving
 * generation, -sf every live one. */
GStrv launcher_master_argv(struct launcher *l, const char *path);
