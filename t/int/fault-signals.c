/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every control signal (SIGUSR2, SIGHUP, SIGTERM, SIGINT, SIGUSR1,
 * SIGQUIT) in every state of the wrapper: starting, reloading,
 * re-executing itself, stopping. In each case: a clear error in the log, the serving
 * generation keeps serving (the same pid answers HTTP), nothing is
 * orphaned, and the wrapper goes on unless the case is fatal by design.
 * The test process is a child subreaper: whatever the wrapper leaves
 * behind is reparented to it, where "nothing orphaned" is checked. Waits
 * are on events (log lines, exits, sockets, /proc), all bounded.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/faults.h"

enum sig_state {
	IN_STARTING,	/* the first generation loads */
	IN_RELOADING,	/* one serves, the next loads */
	IN_REEXEC,	/* the wrapper re-executes itself for a reload */
	IN_STOPPING,	/* a graceful stop waits for a draining haproxy */
};

static const char *const state_names[] = {
	"starting", "reloading", "re-executing", "stopping",
};

static const int control_signals[] = {
	SIGUSR2, SIGHUP, SIGTERM, SIGINT, SIGUSR1, SIGQUIT,
};

struct sig_case {
	enum sig_state state;
	int sig;
};

static gboolean is_reload(int sig)
{
	return sig == SIGUSR2 || sig == SIGHUP;
}

static gboolean is_stop(int sig)
{
	return sig == SIGTERM || sig == SIGINT || sig == SIGUSR1;
}

/* The wrapper's answer to sig in a running state, while a reload (or
 * the first start) is in progress. */
static void wait_reaction(struct t_site *f, int sig)
{
	g_autofree gchar *name = g_strconcat("SIG", sigabbrev_np(sig), NULL);
	g_autofree gchar *needle = NULL;

	if (is_reload(sig))
		needle = g_strconcat(name, ": " LOG_RELOAD_QUEUED, NULL);
	else if (sig == SIGQUIT)
		needle = g_strdup_printf(LOG_IGNORING_FROM_FMT, name);
	else
		needle = g_strdup_printf(LOG_STOPPING_ON_FMT, name, getpid());
	t_site_wait_log(f, needle);
}

/* A stop that stopped: exit 0, the frozen haproxy never bound. */
static void assert_stopped_cleanly(struct t_site *f, GPid loading)
{
	g_autofree gchar *rc0 = g_strdup_printf(LOG_EXIT_RC_FMT, 0);

	t_assert_exit_code(fx_stop(f, 0), 0);
	g_assert_nonnull(wrapper_find_log(f->w, rc0));
	g_assert_false(fake_logged(f, loading, "bound"));
}

static void sig_in_starting(struct t_site *f, int sig)
{
	GPid gen1;

	t_site_start_wrapper(f, NULL, NULL);
	gen1 = fake_freeze_loading(f, 1);
	wrapper_signal(f->w, sig);
	wait_reaction(f, sig);
	kill(gen1, SIGCONT);
	if (is_stop(sig)) {
		assert_stopped_cleanly(f, gen1);
		return;
	}
	/* Ready; a queued reload may replace it at once: not polled. */
	g_assert_cmpint(fx_wait_ready(f, 1), ==, gen1);
	if (sig == SIGQUIT)
		wrapper_signal(f->w, SIGUSR2);
	fx_serving(f, 2);
	t_assert_exit_code(fx_stop(f, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(f->w, LOG_RELOADING_ON), ==, 1);
}

static void sig_in_reloading(struct t_site *f, int sig)
{
	GPid gen1, gen2;

	t_site_start_wrapper(f, NULL, NULL);
	gen1 = fx_serving(f, 1);
	wrapper_signal(f->w, SIGUSR2);
	gen2 = fake_freeze_loading(f, 2);
	g_assert_cmpint(t_http_pid(f->port), ==, gen1);
	wrapper_signal(f->w, sig);
	wait_reaction(f, sig);
	if (!is_stop(sig))
		g_assert_cmpint(t_http_pid(f->port), ==, gen1);
	kill(gen2, SIGCONT);
	if (is_stop(sig)) {
		assert_stopped_cleanly(f, gen2);
		return;
	}
	g_assert_cmpint(fx_wait_ready(f, 2), ==, gen2);
	if (sig == SIGQUIT)
		wrapper_signal(f->w, SIGUSR2);
	fx_serving(f, 3);
	t_assert_exit_code(fx_stop(f, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(f->w, LOG_RELOADING_ON), ==, 2);
}

/* Sent right after "re-executing": before the exec, during it, or to
 * the new image; blocked and pending throughout, never lost. */
static void sig_in_reexec(struct t_site *f, int sig)
{
	static const char *const opts[] = { "--self-upgrade=always", NULL };
	g_autofree gchar *rc0 = g_strdup_printf(LOG_EXIT_RC_FMT, 0);
	g_autofree gchar *adopted = g_strdup_printf(LOG_RUNNING_ADOPTED_FMT, 1);
	GPid pid;

	t_site_start_wrapper(f, NULL, opts);
	pid = f->w->pid;
	fx_serving(f, 1);
	wrapper_signal(f->w, SIGUSR2);
	t_site_wait_log(f, LOG_REEXECUTING "SIGUSR2.");
	wrapper_signal(f->w, sig);
	if (is_stop(sig)) {
		t_assert_exit_code(fx_stop(f, 0), 0);
		g_assert_nonnull(wrapper_find_log(f->w, rc0));
		return;
	}
	t_site_wait_log(f, adopted);
	fx_wait_ready(f, 2);
	if (sig == SIGQUIT) {
		g_assert_nonnull(wrapper_find_log(f->w, LOG_IGNORING "SIGQUIT"));
		wrapper_signal(f->w, SIGUSR2);
	}
	fx_serving(f, 3);
	g_assert_cmpint(f->w->pid, ==, pid);
	t_assert_exit_code(fx_stop(f, SIGTERM), 0);
}

/* Until gen has accepted a connection of ours: it then drains it. */
static int hold_accepted(struct t_site *f, GPid gen)
{
	guint before = t_count_fds(gen);
	gint64 deadline = t_deadline(T_WAIT);
	int conn = t_hold_connection(f->port);

	g_assert_cmpint(conn, >=, 0);
	while (t_count_fds(gen) == before && g_get_monotonic_time() < deadline)
		g_usleep(5 * 1000);
	g_assert_cmpuint(t_count_fds(gen), >, before);
	return conn;
}

static void sig_in_stopping(struct t_site *f, int sig)
{
	g_autofree gchar *name = g_strconcat("SIG", sigabbrev_np(sig), NULL);
	g_autofree gchar *needle = NULL, *soft = NULL;
	GPid gen1;
	int conn;

	t_site_start_wrapper(f, NULL, NULL);
	gen1 = fx_serving(f, 1);
	conn = hold_accepted(f, gen1);
	wrapper_signal(f->w, SIGUSR1);
	t_site_wait_log(f, LOG_STOPPING_GRACEFULLY);
	soft = fake_wait_nth(f, "soft-stop", NULL, 1);
	g_assert_nonnull(soft);

	wrapper_signal(f->w, sig);
	if (is_reload(sig))
		needle = g_strdup_printf(LOG_IGNORING_STOPPING_FMT, name);
	else if (sig == SIGUSR1)
		needle = g_strdup_printf(LOG_STOPPING_GRACEFULLY_ON_FMT, name,
					 getpid());
	else if (sig == SIGQUIT)
		needle = g_strdup_printf(LOG_IGNORING_FROM_FMT, name);
	else
		needle = g_strdup_printf(LOG_STOPPING_NOW_FMT, name);
	t_site_wait_log(f, needle);
	if (sig == SIGTERM || sig == SIGINT) {
		/* At once, the connection still open. */
		t_assert_exit_code(fx_stop(f, 0), 0);
		close(conn);
		return;
	}
	/* Still draining; the end of the connection ends the stop. */
	g_assert_cmpint(wrapper_wait_exit(f->w, 0), ==, -1);
	g_assert_true(t_pid_alive(gen1));
	close(conn);
	t_assert_exit_code(fx_stop(f, 0), 0);
	g_assert_cmpuint(wrapper_count_log(f->w, LOG_EXECUTING_WORD), ==, 1);
}

static void test_signal_in_state(gconstpointer data)
{
	const struct sig_case *c = data;
	struct t_site f;

	/* Time enough to freeze a loading haproxy before it binds. */
	t_site_init_fake(&f, c->state == IN_STARTING || c->state == IN_RELOADING
				 ? "fake-load-delay-ms 500\n" : NULL);
	switch (c->state) {
	case IN_STARTING:
		sig_in_starting(&f, c->sig);
		break;
	case IN_RELOADING:
		sig_in_reloading(&f, c->sig);
		break;
	case IN_REEXEC:
		sig_in_reexec(&f, c->sig);
		break;
	case IN_STOPPING:
		sig_in_stopping(&f, c->sig);
		break;
	}
	t_site_clear(&f);
}

static void add_signal_tests(void)
{
	static struct sig_case cases[G_N_ELEMENTS(state_names) *
				     G_N_ELEMENTS(control_signals)];
	guint n = 0;

	for (guint s = 0; s < G_N_ELEMENTS(state_names); s++) {
		for (guint i = 0; i < G_N_ELEMENTS(control_signals); i++) {
			g_autofree gchar *path = NULL;

			cases[n] = (struct sig_case){ s, control_signals[i] };
			path = g_strdup_printf("/faults/signal/%s/SIG%s",
					       state_names[s],
					       sigabbrev_np(control_signals[i]));
			g_test_add_data_func(path, &cases[n++],
					     test_signal_in_state);
		}
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* What the wrapper leaves behind becomes ours, to be seen. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	add_signal_tests();
	return g_test_run();
}
