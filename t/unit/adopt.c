/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * migrate/adopt.c on a fake proc tree: what a search adopts, and what an
 * awaited -D launcher becomes once it leads its own session. The pids
 * are real children of the test (sleep), for the pidfds; what they look
 * like comes from the tree. find_foreign() is wrapped at link time
 * (-Wl,--wrap=find_foreign, Makefile): a test changes the tree between
 * two looks of one search step, where a real host races.
 */
#include <poll.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/proctree.h"
#include "migrate/adopt.h"
#include "migrate/find.h"

#define WAIT_MS 10000
/* SigCgt with SIGUSR1: haproxy past loading, -sf can reach it. */
#define CATCHES_USR1 (1ull << (SIGUSR1 - 1))

/* ---- the looks at the proc tree, counted; a change after the first ---- */

gboolean __real_find_foreign(const char *proc_root, const char *pidfile,
			     const char *const *config_files,
			     const char *fragment, GPid self,
			     GPtrArray **out, GPtrArray **skipped,
			     GError **error);
gboolean __wrap_find_foreign(const char *proc_root, const char *pidfile,
			     const char *const *config_files,
			     const char *fragment, GPid self,
			     GPtrArray **out, GPtrArray **skipped,
			     GError **error);

static struct {
	guint looks;
	void (*after_first)(gpointer data);	/* once, then NULL */
	gpointer data;
} gate;

gboolean __wrap_find_foreign(const char *proc_root, const char *pidfile,
			     const char *const *config_files,
			     const char *fragment, GPid self,
			     GPtrArray **out, GPtrArray **skipped,
			     GError **error)
{
	gboolean ok = __real_find_foreign(proc_root, pidfile, config_files,
					  fragment, self, out, skipped,
					  error);
	void (*fn)(gpointer) = gate.after_first;

	gate.looks++;
	gate.after_first = NULL;
	if (fn)
		fn(gate.data);
	return ok;
}

struct outcome {
	GMainLoop *loop;
	gboolean seen;
	enum adopt_event event;
};

static void on_event(enum adopt_event event, gpointer data)
{
	struct outcome *o = data;

	o->seen = TRUE;
	o->event = event;
	g_main_loop_quit(o->loop);
}

static gboolean on_timeout(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

/* A failed assertion (abort) takes the sleepers with it. */
static void die_with_parent(gpointer data)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* A child that only waits: a real pid for pidfd_open(). */
static GPid sleeper(void)
{
	const char *argv[] = { "sleep", "60", NULL };
	g_autoptr(GError) error = NULL;
	GPid pid = 0;

	g_spawn_async(NULL, (gchar **)argv, NULL,
		      G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
			      G_SPAWN_STDOUT_TO_DEV_NULL |
			      G_SPAWN_STDERR_TO_DEV_NULL,
		      die_with_parent, NULL, &pid, &error);
	g_assert_no_error(error);
	return pid;
}

/* Ours, unreaped: the pid cannot name anyone else yet. */
static void end_sleeper(GPid pid)
{
	g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
	g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
}

/*
 * Two -D launchers that never lead a session of their own within the
 * search's bound are adopted as launchers, no instance. Then one leads
 * its session, the same process (a daemon caught between its fork and
 * its setsid() when the search gave up): an instance; the other pid
 * leads a session too, but it started at another time: another process
 * that took a freed pid, never an instance of ours to -sf or stop.
 */
static void test_promote_same_process(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *bars = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s",
						 cfg);
	g_autofree gchar *pidfile = tpath(t, "h.pid");
	const char *argv[] = { HAPROXY, "-f", cfg, NULL };
	struct outcome o = { .loop = g_main_loop_new(NULL, FALSE) };
	GPid same = sleeper(), reused = sleeper();
	const struct foreign *f;
	struct adopt *a;
	GArray *targets;
	guint timer;

	fake_system(t);
	HAP(t, same, 40, 40, bars, .start = 500);
	HAP(t, reused, 40, 40, bars, .start = 600);
	a = adopt_new_at(t->proc, pidfile, argv, "/", NULL, on_event, &o);
	adopt_look(a);
	timer = g_timeout_add(WAIT_MS, on_timeout, o.loop);
	if (!o.seen)
		g_main_loop_run(o.loop);
	g_source_remove(timer);
	g_assert_true(o.seen);
	g_assert_cmpint(o.event, ==, ADOPT_FOUND);
	g_assert_true(adopt_alive(a));
	g_assert_cmpuint(adopt_instances(a)->len, ==, 0);

	put_stat(t, same, "haproxy", 'S', 40, same, 500);
	put_stat(t, reused, "haproxy", 'S', 40, reused, 601);
	targets = adopt_targets(a);
	g_assert_cmpuint(adopt_instances(a)->len, ==, 1);
	f = g_ptr_array_index((GPtrArray *)adopt_instances(a), 0);
	g_assert_cmpint(f->pid, ==, same);
	g_assert_cmpuint(targets->len, ==, 1);
	g_assert_cmpint(g_array_index(targets, GPid, 0), ==, same);
	g_array_unref(targets);

	adopt_free(a);
	end_sleeper(same);
	end_sleeper(reused);
	g_main_loop_unref(o.loop);
}

struct forking {
	struct tree *t;
	GPid daemon;
	const char *argv;
};

/* The launcher forked: its daemon leads a session of its own, and has
 * its handlers. */
static void daemon_forked(gpointer data)
{
	struct forking *k = data;

	FAKE(k->t, .pid = k->daemon, .ppid = 1, .sid = k->daemon,
	     .start = 700, .exe = HAPROXY, .cwd = "/", .argv = k->argv);
	put_status(k->t, k->daemon, 0, CATCHES_USR1);
}

/*
 * A -D launcher forks its daemon while the search looks: the first look
 * reads the launcher once it has exited (a zombie, passed over) and
 * lists the daemon not yet. That look finds nothing, and a quick search
 * would end on it (NONE: the service lost). The next look has the
 * daemon: what two looks in a row find the same is taken, and that is
 * the daemon, adopted as the instance.
 */
static void test_daemon_forked_during_look(struct tree *t,
					   gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *bars = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s",
						 cfg);
	g_autofree gchar *pidfile = tpath(t, "h.pid");
	const char *argv[] = { HAPROXY, "-f", cfg, NULL };
	struct outcome o = { .loop = g_main_loop_new(NULL, FALSE) };
	GPid launcher = sleeper(), daemon = sleeper();
	struct forking k = { .t = t, .daemon = daemon, .argv = bars };
	const struct foreign *f;
	struct adopt *a;
	guint timer;

	fake_system(t);
	FAKE(t, .pid = launcher, .ppid = 40, .sid = 40, .start = 500,
	     .exe = HAPROXY, .cwd = "/", .argv = bars, .state = 'Z');
	a = adopt_new_at(t->proc, pidfile, argv, "/", NULL, on_event, &o);
	gate.looks = 0;
	gate.after_first = daemon_forked;
	gate.data = &k;
	adopt_look(a);
	timer = g_timeout_add(WAIT_MS, on_timeout, o.loop);
	if (!o.seen)
		g_main_loop_run(o.loop);
	g_source_remove(timer);
	g_assert_null(gate.after_first);
	g_assert_true(o.seen);
	g_assert_cmpint(o.event, ==, ADOPT_FOUND);
	g_assert_cmpuint(adopt_instances(a)->len, ==, 1);
	f = g_ptr_array_index((GPtrArray *)adopt_instances(a), 0);
	g_assert_cmpint(f->pid, ==, daemon);
	g_assert_true(adopt_serving(a));

	adopt_free(a);
	end_sleeper(launcher);
	end_sleeper(daemon);
	g_main_loop_unref(o.loop);
}

/*
 * After our own exec, the rows the old image handed over are taken back
 * only as the search finds them, with the same start time: a pid that
 * another process took since is left alone. A row that no longer served
 * (its -sf sent) stays off the next -sf list.
 */
static void test_restore_by_identity(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *bars = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s",
						 cfg);
	g_autofree gchar *pidfile = tpath(t, "h.pid");
	const char *argv[] = { HAPROXY, "-f", cfg, NULL };
	GPid serving = sleeper(), reused = sleeper(), leaving = sleeper();
	const struct adopt_row handed[] = {
		{ .pid = serving, .start_time = 500 },
		{ .pid = reused, .start_time = 599 },
		{ .pid = leaving, .start_time = 700, .leaving = TRUE },
	};
	g_autoptr(GArray) rows = g_array_new(FALSE, FALSE,
					     sizeof(struct adopt_row));
	g_autoptr(GArray) targets = NULL, again = NULL;
	struct adopt *a;

	fake_system(t);
	HAP(t, serving, 1, serving, bars, .start = 500);
	HAP(t, reused, 1, reused, bars, .start = 600);
	HAP(t, leaving, 1, leaving, bars, .start = 700);
	g_array_append_vals(rows, handed, G_N_ELEMENTS(handed));
	a = adopt_new_at(t->proc, pidfile, argv, "/", NULL, on_event, NULL);
	adopt_restore(a, rows);
	g_assert_cmpuint(adopt_instances(a)->len, ==, 2);
	g_assert_true(adopt_serving(a));
	again = adopt_rows(a);
	g_assert_cmpuint(again->len, ==, 2);
	for (guint i = 0; i < again->len; i++)
		g_assert_cmpint(g_array_index(again, struct adopt_row, i).pid,
				!=, reused);
	targets = adopt_targets(a);
	g_assert_cmpuint(targets->len, ==, 1);
	g_assert_cmpint(g_array_index(targets, GPid, 0), ==, serving);

	adopt_free(a);
	end_sleeper(serving);
	end_sleeper(reused);
	end_sleeper(leaving);
}

/*
 * An instance taken over at the first start and told to leave is handed
 * over with the pidfd the takeover watched it through: one row of the
 * adopted that leaves. It is in the rows that cross our exec (leaving),
 * in status, never on -sf, serves nothing; the stop gives it its signal
 * through that pidfd, and its end is the adopted ones' last (GONE).
 */
static void test_taken_over_row(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *bars = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s",
						 cfg);
	g_autofree gchar *pidfile = tpath(t, "h.pid");
	const char *argv[] = { HAPROXY, "-f", cfg, NULL };
	const char *configs[] = { cfg, NULL };
	g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);
	struct outcome o = { .loop = loop };
	g_autoptr(GPtrArray) found = NULL;
	g_autoptr(GArray) rows = NULL, targets = NULL;
	g_autoptr(GError) error = NULL;
	GPid taken = sleeper();
	struct pollfd end = { .events = POLLIN };
	const struct adopt_row *row;
	struct adopt *a;
	guint timeout;
	int status;

	fake_system(t);
	HAP(t, taken, 1, taken, bars, .start = 800);
	g_assert_true(find_foreign(t->proc, pidfile, configs, NULL, getpid(),
				   &found, NULL, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(found->len, ==, 1);
	a = adopt_new_at(t->proc, pidfile, argv, "/", NULL, on_event, &o);
	adopt_taken_over(a, g_ptr_array_steal_index(found, 0),
			 pidfd_open(taken, 0));

	g_assert_true(adopt_alive(a));
	g_assert_false(adopt_serving(a));
	g_assert_cmpuint(adopt_instances(a)->len, ==, 1);
	rows = adopt_rows(a);
	g_assert_cmpuint(rows->len, ==, 1);
	row = &g_array_index(rows, struct adopt_row, 0);
	g_assert_cmpint(row->pid, ==, taken);
	g_assert_cmpuint(row->start_time, ==, 800);
	g_assert_true(row->leaving);
	targets = adopt_targets(a);
	g_assert_cmpuint(targets->len, ==, 0);

	adopt_stop(a, SIGTERM);
	/* Bounded: a sleeper left alone would sleep on for a minute. */
	end.fd = pidfd_open(taken, 0);
	g_assert_cmpint(poll(&end, 1, WAIT_MS), ==, 1);
	close(end.fd);
	g_assert_cmpint(waitpid(taken, &status, 0), ==, taken);
	g_assert_true(WIFSIGNALED(status));
	g_assert_cmpint(WTERMSIG(status), ==, SIGTERM);
	timeout = g_timeout_add(WAIT_MS, on_timeout, loop);
	g_main_loop_run(loop);
	g_source_remove(timeout);
	g_assert_true(o.seen);
	g_assert_cmpint(o.event, ==, ADOPT_GONE);
	g_assert_false(adopt_alive(a));
	adopt_free(a);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	add_tree_test("/adopt/promote-same-process",
		      test_promote_same_process);
	add_tree_test("/adopt/daemon-forked-during-look",
		      test_daemon_forked_during_look);
	add_tree_test("/adopt/restore-by-identity", test_restore_by_identity);
	add_tree_test("/adopt/taken-over-row", test_taken_over_row);
	return g_test_run();
}
