/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The life cycle and the stop. See wrapper/lifecycle.h. */
#include "wrapper/lifecycle.h"

#include <signal.h>

#include "base/log.h"
#include "migrate/adopt.h"
#include "migrate/replacement.h"
#include "wrapper/sdnotify.h"
#include "wrapper/supervisor.h"

void lifecycle_init(struct lifecycle *l, struct supervisor *sv)
{
	*l = (struct lifecycle){ .sv = sv };
}

void lifecycle_clear(struct lifecycle *l)
{
	g_clear_handle_id(&l->stop_timer, g_source_remove);
}

void lifecycle_set_exit_code(struct lifecycle *l, int code)
{
	if (!l->have_exit_code) {
		l->have_exit_code = TRUE;
		l->exit_code = code;
	}
}

void lifecycle_set_running(struct lifecycle *l)
{
	l->phase = PHASE_RUNNING;
}

void lifecycle_quit_if_done(struct lifecycle *l)
{
	if (l->phase == PHASE_STOPPING && l->sv->gt.gens->len == 0 &&
	    !adopt_alive(replacement_adopt(l->sv->replacement))) {
		/* May happen before the loop runs: "done" covers that. */
		l->done = TRUE;
		g_main_loop_quit(l->sv->loop);
	}
}

const char *phase_name(enum phase phase)
{
	switch (phase) {
	case PHASE_STARTING:
		return "starting";
	case PHASE_RUNNING:
		return "running";
	case PHASE_STOPPING:
		return "stopping";
	}
	return "unknown";
}

static gboolean on_stop_timeout(gpointer data)
{
	struct lifecycle *l = data;

	l->stop_timer = 0;
	for (guint i = 0; i < l->sv->gt.gens->len; i++) {
		struct generation *g = g_ptr_array_index(l->sv->gt.gens, i);

		log_warn("generation %u (pid %d) still running %us after the "
			 "stop; SIGKILL", g->number, g->pid,
			 l->sv->opts->stop_timeout_s);
		generation_signal(g, SIGKILL, FALSE);
	}
	if (adopt_alive(replacement_adopt(l->sv->replacement))) {
		log_warn("the adopted haproxy still runs %us after the stop; "
			 "SIGKILL", l->sv->opts->stop_timeout_s);
		adopt_stop(replacement_adopt(l->sv->replacement), SIGKILL);
	}
	return G_SOURCE_REMOVE;
}

static void signal_all(struct lifecycle *l, int sig)
{
	for (guint i = 0; i < l->sv->gt.gens->len; i++) {
		struct generation *g = g_ptr_array_index(l->sv->gt.gens, i);

		/* A haproxy still loading has nothing to drain. */
		generation_signal(g, g->state == GEN_STARTING ? SIGTERM : sig,
				  TRUE);
	}
}

void lifecycle_begin_stop(struct lifecycle *l, int sig)
{
	gboolean hard = sig != SIGUSR1;

	if (l->phase == PHASE_STOPPING) {
		if (!hard || l->stop_hard)
			return;
		log_notice("%s while stopping gracefully: stopping now",
			   signal_name(sig));
	}
	if (l->phase != PHASE_STOPPING) {
		g_autofree gchar *line = NULL;

		l->phase = PHASE_STOPPING;
		line = supervisor_status_summary(l->sv);
		notify_stopping(line);
	}
	/* Waiting clients told, a hand-off abandoned, the attempt under
	 * way ended unless a generation loads (its end ends it). */
	supervisor_stopping(l->sv);
	signal_all(l, sig);
	adopt_stop(replacement_adopt(l->sv->replacement), sig);
	if (hard && !l->stop_hard && l->sv->opts->stop_timeout_s)
		l->stop_timer = g_timeout_add_seconds(l->sv->opts->stop_timeout_s,
						      on_stop_timeout, l);
	l->stop_hard = hard;
	lifecycle_quit_if_done(l);
}
