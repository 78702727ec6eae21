/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hand-off to upstream's unit: the wrapper replaces itself, same pid,
 * by "haproxy -Ws <args> -sf <live pids>", once the haproxy is known to
 * have master-worker mode and to accept the configuration. Not the
 * self-upgrade (selfupgrade.h). What it needs of the supervisor comes
 * through struct handoff_ops.
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "wrapper/control.h"

struct handoff;

struct handoff_ops {
	/* haproxy -Ws's command line, path its binary. */
	GStrv (*master_argv)(void *ctx, const char *path);
	/* The clients of reloads asked for meanwhile (struct waiter *). */
	const GPtrArray *(*waiters)(void *ctx);
	/* It ended short of the exec (refused, failed, abandoned). */
	void (*over)(void *ctx);
};

struct handoff *handoff_new(const struct wrapper_args *args,
			    const struct handoff_ops *ops, void *ctx);
void handoff_free(struct handoff *h);

/* Check, then exec: client hears how it went. path: the haproxy to run,
 * or NULL and why not (error). */
void handoff_begin(struct handoff *h, struct control_client *client,
		   const char *path, const GError *error);
/* A stop: a hand-off under way is abandoned, its client told. */
void handoff_abandon(struct handoff *h);
