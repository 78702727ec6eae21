/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The life cycle: starting, running, stopping, and how the wrapper
 * exits. The stop: STOPPING=1, the stop signal to every generation and
 * adopted instance, the --stop-timeout bound, and the main loop's end
 * once nothing is left; the rest of the supervisor is told
 * (supervisor_stopping). The supervisor reads phase, done and
 * exit_code; it writes them through the functions below.
 */
#pragma once

#include <glib.h>

struct supervisor;


enum phase {
	PHASE_STARTING,	/* the first generation is not ready yet */
	PHASE_RUNNING,
	PHASE_STOPPING,
};

/* The life cycle: starting, running, stopping, and how we exit. */
struct lifecycle {
	enum phase phase;
	gboolean stop_hard;	/* the stop asked for is SIGTERM-now */
	guint stop_timer;	/* --stop-timeout, then a hard stop */
	gboolean done;		/* stopping, nothing left to wait for */
	gboolean have_exit_code;
	int exit_code;

	struct supervisor *sv;	/* its owner */
};

void lifecycle_init(struct lifecycle *l, struct supervisor *sv);
void lifecycle_clear(struct lifecycle *l);

const char *phase_name(enum phase phase);
/* The first exit code set wins. */
void lifecycle_set_exit_code(struct lifecycle *l, int code);
void lifecycle_set_running(struct lifecycle *l);
/* Stopping and nothing left to wait for: the main loop ends. */
void lifecycle_quit_if_done(struct lifecycle *l);
/* SIGTERM/SIGINT: hard, bounded; SIGUSR1: graceful, haproxy's soft stop. */
void lifecycle_begin_stop(struct lifecycle *l, int sig);
