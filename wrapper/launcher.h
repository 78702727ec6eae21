/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Starting a generation, the reload machine's PROBING and LOADING steps:
 * locate haproxy, know its version (wrapper/versioncache/vcache.h), choose the mode,
 * spawn it with its -sf list and -x, hear its witness, bound its load; or
 * have the serving master reload itself. The launcher owns the probe, the
 * load timers and the version; it adds to the generation table and posts
 * the machine's events (PROBED, FAILED, TIMEOUT); what else it needs of
 * the supervisor comes through struct launcher_ops.
 */
#pragma once

#include <glib.h>

#include "legacy/version.h"
#include "wrapper/gentable.h"
#include "wrapper/reloader.h"
#include "wrapper/steering/reuseport.h"
#include "wrapper/rundir-use.h"
#include "wrapper/supervisor.h"

struct launcher;

struct launcher_ops {
	/* The witness heard g's signal to the old pids: g serves. */
	void (*ready)(void *ctx, struct generation *g);
	/* g was spawned: its end is watched. */
	void (*watch)(void *ctx, struct generation *g);
	/* Instances we did not start that go on the -sf list: taken over
	 * (first: the first generation) and adopted ones. may_hold_back:
	 * the new generation's binds need no -sf; those taken over whose
	 * every group steers are then left off, and *held_back set. */
	GArray *(*foreign_pids)(void *ctx, gboolean first,
				gboolean may_hold_back, gboolean *held_back);
	/* Does an adopted haproxy serve (its pids are on the -sf list)? */
	gboolean (*adopted_serving)(void *ctx);
	/* Does the search for a haproxy that replaced ours run? */
	gboolean (*searching)(void *ctx);
	/* The master's notify socket, bound on first use. */
	const char *(*notify_socket)(void *ctx, GError **error);
	/* The serving master g reloads itself into version. */
	void (*reload_master)(void *ctx, struct generation *g,
			      const char *version);
};

/* self_path: the wrapper's own file, where haproxy is looked for first;
 * the pointers are the owners', and outlive the launcher. */
struct launcher *launcher_new(const struct wrapper_args *args,
			      const struct wrapper_options *opts,
			      struct gen_table *gt, const struct runtime *rt,
			      struct reloader *reloader,
			      struct reuseport *reuseport,
			      const char *self_path,
			      const struct launcher_ops *ops, void *ctx);
void launcher_free(struct launcher *l);

/* The reload machine's effects (wrapper/reloader.h). */
void launcher_probe(struct launcher *l);
/* At the first start, before the search for foreign instances (long on a
 * busy host): haproxy -v runs meanwhile when the version is not cached;
 * launcher_probe() then waits for it. */
void launcher_probe_early(struct launcher *l);
gboolean launcher_must_wait(struct launcher *l);
enum launch_kind launcher_launch(struct launcher *l,
				 const struct haproxy_version *v);
void launcher_kill_loading(struct launcher *l);
gchar *launcher_master_timeout_text(struct launcher *l, gboolean settling);
/* The attempt is over: no load timers, haproxy located anew next time. */
void launcher_end_attempt(struct launcher *l);
/* A stop: a version probe under way is cancelled, and the load timers
 * of a generation still loading (the stop bounds it now). */
void launcher_cancel(struct launcher *l);

/* "haproxy -Ws" replacing us (the hand-off): -x from the serving
 * generation, -sf every live one. */
GStrv launcher_master_argv(struct launcher *l, const char *path);
