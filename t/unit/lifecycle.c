/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one door of every stop (lifecycle_stop()), on a supervisor that
 * runs no haproxy: what the wrapper wants after each kind of stop, the
 * exit code, the --stop-timeout bound, and the machine told. No process
 * is started: nothing is posted that would probe or launch.
 */
#include <signal.h>
#include <unistd.h>

#include "legacy/args.h"
#include "wrapper/lifecycle.h"
#include "wrapper/options.h"
#include "wrapper/reloader.h"
#include "wrapper/supervisor.h"

struct fixture {
	struct wrapper_args args;
	struct wrapper_options opts;
	struct supervisor *sv;
};

static char *argv0[] = { "haproxy-systemd-wrapper", "-f",
			 "/nonexistent/haproxy.cfg", "-p",
			 "/nonexistent/haproxy.pid", NULL };

static void setup(struct fixture *f, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	g_assert_true(wrapper_args_parse(G_N_ELEMENTS(argv0) - 1, argv0, "/",
					 &f->args, &error));
	f->opts = (struct wrapper_options){
		.stop_timeout_s = 5, .max_old_workers = -1,
		.fd_store = FDSTORE_OFF,
	};
	f->sv = supervisor_new(&f->args, &f->opts, argv0);
}

static void teardown(struct fixture *f, gconstpointer data)
{
	supervisor_free(f->sv);
	wrapper_args_clear(&f->args);
}

static struct lifecycle *life(struct fixture *f)
{
	return &f->sv->life;
}

/* A graceful stop stays graceful (no SIGKILL bound) until a stop now,
 * which bounds it; nothing makes a stop now graceful again. */
static void test_graceful_then_now(struct fixture *f, gconstpointer data)
{
	g_assert_false(lifecycle_stopping(life(f)));
	g_assert_cmpstr(lifecycle_state_name(life(f)), ==, "starting");

	lifecycle_stop(life(f), SIGUSR1, -1);
	g_assert_cmpint(life(f)->want, ==, WANT_STOP_GRACEFUL);
	g_assert_cmpuint(life(f)->stop_timer, ==, 0);
	g_assert_cmpstr(lifecycle_state_name(life(f)), ==, "stopping");
	/* Nothing runs: nothing to wait for. */
	g_assert_true(life(f)->done);

	lifecycle_stop(life(f), SIGINT, -1);
	g_assert_cmpint(life(f)->want, ==, WANT_STOP_NOW);
	g_assert_cmpuint(life(f)->stop_timer, !=, 0);

	lifecycle_stop(life(f), SIGUSR1, -1);
	g_assert_cmpint(life(f)->want, ==, WANT_STOP_NOW);
	g_assert_false(life(f)->have_exit_code);
}

/* The wrapper's own stop (a crash, a failed start) is a stop now; the
 * first exit code set is the one the wrapper exits with. */
static void test_own_stop_keeps_first_code(struct fixture *f,
					   gconstpointer data)
{
	lifecycle_stop(life(f), SIGTERM, 137);
	g_assert_cmpint(life(f)->want, ==, WANT_STOP_NOW);
	lifecycle_stop(life(f), SIGTERM, 143);
	g_assert_true(life(f)->have_exit_code);
	g_assert_cmpint(life(f)->exit_code, ==, 137);
}

/* Once stopping, a reload asked for is refused: no attempt begins. */
static void test_machine_told(struct fixture *f, gconstpointer data)
{
	lifecycle_stop(life(f), SIGTERM, 1);
	reloader_post(f->sv->reloader, RE_REQUEST,
		      &(struct reload_input){ .signal = SIGUSR2 });
	g_assert_false(reloader_busy(f->sv->reloader));
	g_assert_cmpint(reloader_state(f->sv->reloader), ==, RS_IDLE);
	g_assert_cmpuint(reloader_attempt(f->sv->reloader), ==, 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/lifecycle/graceful-then-now", struct fixture, NULL,
		   setup, test_graceful_then_now, teardown);
	g_test_add("/lifecycle/own-stop-keeps-first-code", struct fixture,
		   NULL, setup, test_own_stop_keeps_first_code, teardown);
	g_test_add("/lifecycle/machine-told", struct fixture, NULL, setup,
		   test_machine_told, teardown);
	return g_test_run();
}
