/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Starting a generation, the reload machine's PROBING and LOADING steps:
 * locate haproxy, know its version (wrapper/versioncache/vcache.h), choose the mode,
 * spawn it with its -sf list and -x, hear its witness, bound its load; or
 * have the serving master reload itself. The launcher owns the probe, the
 * load timers and the version; it adds to the generation table and posts
 * the machine's events (PROBED, FAILED, TIMEOUT); a generation ready or
 * spawned goes to wrapper/outcome.h, a master's reload to its link.
 */
#pragma once

#include <glib.h>

#include "legacy/version.h"
#include "wrapper/reloader.h"

struct launcher;
struct supervisor;

/* sv: its owner; self_path: the wrapper's own file, where haproxy is
 * looked for first. */
struct launcher *launcher_new(struct supervisor *sv, const char *self_path);
void launcher_free(struct launcher *l);

/* The reload machine's effects (wrapper/reloader.h). */
void launcher_probe(struct supervisor *sv);
/* At the first start, before the search for foreign instances (long on a
 * busy host): haproxy -v runs meanwhile when the version is not cached;
 * launcher_probe() then waits for it. */
void launcher_probe_early(struct launcher *l);
gboolean launcher_must_wait(struct supervisor *sv);
enum launch_kind launcher_launch(struct supervisor *sv,
				 const struct haproxy_version *v);
void launcher_kill_loading(struct supervisor *sv);
gchar *launcher_master_timeout_text(struct supervisor *sv, gboolean settling);
/* The attempt is over: no load timers, no master's reload waited for,
 * haproxy located anew next time. */
void launcher_end_attempt(struct supervisor *sv);
/* A stop: a version probe under way is cancelled, and the load timers
 * of a generation still loading (the stop bounds it now). */
void launcher_cancel(struct launcher *l);

/* "haproxy -Ws" replacing us (the hand-off): -x from the serving
 * generation, -sf every live one. */
GStrv launcher_master_argv(struct launcher *l, const char *path);
