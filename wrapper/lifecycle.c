/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The life cycle and the stop. See wrapper/lifecycle.h. */
#include "wrapper/lifecycle.h"

#include <signal.h>

#include "base/log.h"
#include "migrate/adopt.h"
#include "migrate/firststart.h"
#include "migrate/replacement.h"
#include "wrapper/fdstore/fdstore.h"
#include "wrapper/launcher.h"
#include "wrapper/reloader.h"
#include "wrapper/sdnotify.h"
#include "wrapper/selfupgrade/selfupgrade.h"
#include "wrapper/supervisor.h"

void lifecycle_init(struct lifecycle *l, struct supervisor *sv)
{
	*l = (struct lifecycle){ .sv = sv };
}

void lifecycle_clear(struct lifecycle *l)
{
	g_clear_handle_id(&l->stop_timer, g_source_remove);
}

/* The first exit code set wins. */
static void lifecycle_set_exit_code(struct lifecycle *l, int code)
{
	if (!l->have_exit_code) {
		l->have_exit_code = TRUE;
		l->exit_code = code;
	}
}

gboolean lifecycle_running(const struct lifecycle *l)
{
	return l->want == WANT_RUN && !reloader_first_start(l->sv->reloader);
}

void lifecycle_quit_if_done(struct lifecycle *l)
{
	if (lifecycle_stopping(l) && l->sv->gt.gens->len == 0 &&
	    !adopt_alive(replacement_adopt(l->sv->replacement))) {
		/* May happen before the loop runs: "done" covers that. */
		l->done = TRUE;
		g_main_loop_quit(l->sv->loop);
	}
}

const char *lifecycle_state_name(const struct lifecycle *l)
{
	if (lifecycle_stopping(l))
		return "stopping";
	return reloader_first_start(l->sv->reloader) ? "starting" : "running";
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

/* Waiting clients told, a hand-off abandoned, the attempt under way
 * ended unless a generation loads (its end ends it); the searches, the
 * launcher's timers and the self-upgrade's helper end. */
static void tell_parts(struct supervisor *sv)
{
	reloader_post(sv->reloader, RE_STOP, NULL);
	first_start_cancel(sv->first);
	launcher_cancel(sv->launcher);
	selfupgrade_cancel(sv->up);
}

void lifecycle_stop(struct lifecycle *l, int sig, int exit_code)
{
	enum want was = l->want;
	enum want want = sig == SIGUSR1 ? WANT_STOP_GRACEFUL : WANT_STOP_NOW;
	gboolean now = want == WANT_STOP_NOW;

	if (exit_code >= 0)
		lifecycle_set_exit_code(l, exit_code);
	/* The serving generation's sockets stay stored for a restart;
	 * those another process listens beside go before haproxy lets go. */
	fdstore_stopping(l->sv->rt.fdstore);
	if (was == WANT_STOP_NOW || was == want)
		return;
	l->want = want;
	if (was == WANT_STOP_GRACEFUL) {
		log_notice("%s while stopping gracefully: stopping now",
			   signal_name(sig));
	} else {
		g_autofree gchar *line = supervisor_status_summary(l->sv);

		notify_stopping(line);
	}
	tell_parts(l->sv);
	signal_all(l, sig);
	adopt_stop(replacement_adopt(l->sv->replacement), sig);
	if (now && l->sv->opts->stop_timeout_s)
		l->stop_timer = g_timeout_add_seconds(l->sv->opts->stop_timeout_s,
						      on_stop_timeout, l);
	lifecycle_quit_if_done(l);
}
