/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The life cycle: starting, running, stopping, and how the wrapper
 * exits. The stop: STOPPING=1, the stop signal to every generation and
 * adopted instance, the --stop-timeout bound, and the main loop's end
 * once nothing is left. What the rest of the supervisor does on a stop
 * comes through struct lifecycle_ops. The supervisor reads phase, done
 * and exit_code; it writes them through the functions below.
 */
#pragma once

#include <glib.h>

#include "wrapper/gentable.h"
#include "migrate/replacement.h"
#include "wrapper/supervisor.h"

enum phase {
	PHASE_STARTING,	/* the first generation is not ready yet */
	PHASE_RUNNING,
	PHASE_STOPPING,
};

struct lifecycle_ops {
	/* The summary for STOPPING=1's STATUS=. */
	gchar *(*summary)(void *ctx);
	/* A stop was asked for: the reload machine told, what runs for a
	 * start or a reload (takeover, probes, self-upgrade) cancelled. */
	void (*stopping)(void *ctx);
};

/* The life cycle: starting, running, stopping, and how we exit. */
struct lifecycle {
	enum phase phase;
	gboolean stop_hard;	/* the stop asked for is SIGTERM-now */
	guint stop_timer;	/* --stop-timeout, then a hard stop */
	gboolean done;		/* stopping, nothing left to wait for */
	gboolean have_exit_code;
	int exit_code;

	/* The owners', outliving it. */
	GMainLoop *loop;
	struct gen_table *gt;
	const struct wrapper_options *opts;
	const struct replacement *replacement;
	const struct lifecycle_ops *ops;
	void *ctx;
};

void lifecycle_init(struct lifecycle *l, GMainLoop *loop,
		    struct gen_table *gt, const struct wrapper_options *opts,
		    const struct replacement *replacement,
		    const struct lifecycle_ops *ops, void *ctx);
void lifecycle_clear(struct lifecycle *l);

const char *phase_name(enum phase phase);
/* The first exit code set wins. */
void lifecycle_set_exit_code(struct lifecycle *l, int code);
void lifecycle_set_running(struct lifecycle *l);
/* Stopping and nothing left to wait for: the main loop ends. */
void lifecycle_quit_if_done(struct lifecycle *l);
/* SIGTERM/SIGINT: hard, bounded; SIGUSR1: graceful, haproxy's soft stop. */
void lifecycle_begin_stop(struct lifecycle *l, int sig);
