/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The life cycle: what the wrapper wants (to run, or to stop), and how it
 * exits; whether it still starts is the reload machine's
 * (reloader_first_start()). want is the one home of "stopping", and
 * lifecycle_stop() the one door every stop goes through: it tells the fd
 * store, systemd (STOPPING=1), the reload machine, the searches, the
 * launcher and the self-upgrade, signals every generation and adopted
 * instance, bounds a stop by --stop-timeout, and ends the main loop once
 * nothing is left. The core reads want, done and exit_code; it
 * writes them through the functions below.
 */
#pragma once

#include <glib.h>

struct supervisor;


/* What the wrapper wants, as runit's want beside its state. */
enum want {
	WANT_RUN,
	WANT_STOP_GRACEFUL,	/* SIGUSR1: haproxy's soft stop */
	WANT_STOP_NOW,		/* SIGTERM, bounded by --stop-timeout */
};

/* The life cycle: stopping or not, and how we exit. */
struct lifecycle {
	enum want want;
	guint stop_timer;	/* --stop-timeout, then a hard stop */
	gboolean done;		/* stopping, nothing left to wait for */
	gboolean have_exit_code;
	int exit_code;

	struct supervisor *sv;	/* its owner */
};

void lifecycle_init(struct lifecycle *l, struct supervisor *sv);
void lifecycle_clear(struct lifecycle *l);

static inline gboolean lifecycle_stopping(const struct lifecycle *l)
{
	return l->want != WANT_RUN;
}

/* Running once the first generation served, and not stopping. */
gboolean lifecycle_running(const struct lifecycle *l);

/* What status shows: starting, running or stopping. */
const char *lifecycle_state_name(const struct lifecycle *l);
/* Stopping and nothing left to wait for: the main loop ends. */
void lifecycle_quit_if_done(struct lifecycle *l);
/* The one door of every stop: a stop signal, or the wrapper's own
 * decision (a failed first start, nothing serving any more: SIGTERM).
 * sig is what every generation gets: SIGUSR1 wants a graceful stop,
 * SIGTERM or SIGINT a stop now. exit_code: the wrapper's, or -1 to keep
 * the one set before (0 by default). A stop now during a graceful one
 * makes it a stop now; nothing else changes a stop once begun. */
void lifecycle_stop(struct lifecycle *l, int sig, int exit_code);
