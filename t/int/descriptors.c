/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wrapper's own descriptors, on the real haproxy (Debian's 2.6):
 * their number stays level over reloads of every kind (a descriptor
 * leaked once a reload is only seen after thousands of them, as EMFILE),
 * and a shortage of them never costs a client that waits for a reload
 * its answer, nor the wrapper its life. Waits are on events (log lines,
 * exits, answers, /proc), all bounded.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/faults.h"
#include "t/lib/takeover.h"

/* ---- the wrapper's descriptors, by what they point to ---- */

/* A pipe or socket by its kind alone (its inode changes with each one);
 * anon_inode targets ([pidfd], bpf-prog, [signalfd]...) and paths whole. */
static gchar *fd_kind(const char *target)
{
	if (g_str_has_prefix(target, "socket:["))
		return g_strdup("socket");
	if (g_str_has_prefix(target, "pipe:["))
		return g_strdup("pipe");
	return g_strdup(target);
}

struct fd_census {
	GHashTable *kinds;	/* kind -> count (GUINT_TO_POINTER) */
	GString *listing;	/* "fd N -> target" lines, for a failure */
};

static void census_take(GPid pid, struct fd_census *c)
{
	g_autofree gchar *dir = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	c->kinds = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					 NULL);
	c->listing = g_string_new(NULL);
	g_assert_nonnull(d);
	while ((name = g_dir_read_name(d))) {
		g_autofree gchar *link = g_build_filename(dir, name, NULL);
		g_autofree gchar *to = g_file_read_link(link, NULL);
		gchar *kind;
		guint n;

		/* Closed between the listing and the look. */
		if (!to)
			continue;
		kind = fd_kind(to);
		n = GPOINTER_TO_UINT(g_hash_table_lookup(c->kinds, kind));
		g_hash_table_replace(c->kinds, kind, GUINT_TO_POINTER(n + 1));
		g_string_append_printf(c->listing, "  fd %s -> %s\n", name, to);
	}
}

static void census_clear(struct fd_census *c)
{
	g_clear_pointer(&c->kinds, g_hash_table_unref);
	if (c->listing)
		g_string_free(g_steal_pointer(&c->listing), TRUE);
}

/* The kinds that now has more of than base, "kind: a -> b" each; NULL
 * if none grew. */
static gchar *census_growth(const struct fd_census *base,
			    const struct fd_census *now)
{
	g_autoptr(GString) out = g_string_new(NULL);
	GHashTableIter it;
	gpointer key, value;

	g_hash_table_iter_init(&it, now->kinds);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		guint was = GPOINTER_TO_UINT(
			g_hash_table_lookup(base->kinds, key));

		if (GPOINTER_TO_UINT(value) > was)
			g_string_append_printf(out, "%s: %u -> %u; ",
					       (const char *)key, was,
					       GPOINTER_TO_UINT(value));
	}
	return out->len ? g_string_free(g_steal_pointer(&out), FALSE) : NULL;
}

/*
 * The wrapper's descriptors once gen is its only child and every dispatch
 * before a --status answer is done (settled_fds() says why), compared
 * with base: no kind may have grown. A descriptor still held for a moment
 * (a connection the wrapper closes after its answer) is waited out,
 * within the bound; a leaked one stays, and fails the test with both
 * listings. gen 0: the caller has settled the wrapper.
 */
static void assert_level(struct t_site *f, GPid gen,
			 const struct fd_census *base, const char *after)
{
	gint64 deadline = t_deadline(T_WAIT);
	g_autofree gchar *growth = NULL;
	struct fd_census now = { 0 };

	if (gen)
		settled_fds(f, gen);
	for (;;) {
		census_take(f->w->pid, &now);
		g_free(growth);
		growth = census_growth(base, &now);
		if (!growth || g_get_monotonic_time() >= deadline)
			break;
		census_clear(&now);
		g_usleep(10 * 1000);
	}
	if (growth) {
		g_test_message("after %s, the wrapper's descriptors grew: %s",
			       after, growth);
		g_test_message("at the start:\n%s", base->listing->str);
		g_test_message("now:\n%s", now.listing->str);
	}
	census_clear(&now);
	g_assert_null(growth);
}

/* ---- reloads of every kind ---- */

/* A client's --reload or --hard-reload: exit 0, generation number
 * serves; its pid. */
static GPid client_reload(struct t_site *f, const char *cmd, guint number)
{
	g_autofree gchar *out = NULL;

	g_assert_cmpint(t_site_client(f, cmd, &out, NULL), ==, 0);
	g_assert_nonnull(strstr(out, "ok generation "));
	return fx_serving(f, number);
}

/* A client's reload of a broken configuration: refused, gen serves. */
static void client_reload_fails(struct t_site *f, GPid gen)
{
	g_autofree gchar *out = NULL;

	g_assert_cmpint(t_site_client(f, "--reload", &out, NULL), !=, 0);
	fx_keeps_serving(f, gen);
}

/*
 * A restart by hand (haproxy -D -sf, as an init script does) replaces
 * gen: the wrapper searches (inotify on the pidfile's directory), adopts
 * the daemon, and the next --reload takes it over. The new generation's
 * pid.
 */
static GPid restart_by_hand_taken_over(struct t_site *f)
{
	g_autofree gchar *out = NULL;
	GPid daemon, gen;
	int status;

	daemon = restart_by_hand(f, "-sf", FALSE);
	g_assert_cmpint(t_pid_in(t_site_wait_log(f, LOG_ADOPTING), "pid "),
			==, daemon);
	g_assert_cmpint(t_site_client(f, "--reload", &out, NULL), ==, 0);
	gen = t_pid_in(out, "(pid ");
	g_assert_cmpint(gen, >, 0);
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	/* Reparented to us (a child subreaper): reaped, no orphan. */
	waitpid(daemon, &status, 0);
	g_assert_true(wait_answering(f->port, gen));
	return gen;
}

struct level_case {
	const char *opt;	/* the wrapper's option, or NULL */
	gboolean with_x;	/* its reloads hand the listeners over (-x) */
};

static const struct level_case level_cases[] = {
	{ NULL, TRUE },
	{ "--seamless-reload=off", FALSE },
};

/*
 * Start, then reloads of each kind, each followed by a census of the
 * wrapper's descriptors against the one after the start: SIGUSR2,
 * --reload, --hard-reload, a SIGUSR2 and a --reload that fail on a
 * broken configuration, the same again, then a restart by hand that a
 * --reload takes over. A leak of one descriptor a reload shows at the
 * first census after it.
 */
static void test_level(gconstpointer data)
{
	const struct level_case *c = data;
	const char *opts[] = { c->opt, NULL };
	struct fd_census base = { 0 };
	g_auto(TSite) f = { 0 };
	guint n = 1;
	GPid gen;

	if (!fx_init_real(&f))
		return;
	t_site_start_wrapper(&f, NULL, opts);
	gen = fx_serving(&f, n);
	settled_fds(&f, gen);
	census_take(f.w->pid, &base);
	g_test_message("at the start:\n%s", base.listing->str);

	for (guint round = 0; round < 2; round++) {
		wrapper_signal(f.w, SIGUSR2);
		gen = fx_serving(&f, ++n);
		assert_level(&f, gen, &base, "a SIGUSR2");

		gen = client_reload(&f, "--reload", ++n);
		assert_level(&f, gen, &base, "a --reload");

		gen = client_reload(&f, "--hard-reload", ++n);
		assert_level(&f, gen, &base, "a --hard-reload");

		t_site_config(&f, "    no-such-keyword here\n");
		fx_reload_fails(&f, gen);
		n++;
		assert_level(&f, gen, &base, "a failed SIGUSR2");
		client_reload_fails(&f, gen);
		n++;
		assert_level(&f, gen, &base, "a failed --reload");
		t_site_config(&f, NULL);
	}
	gen = restart_by_hand_taken_over(&f);
	assert_level(&f, gen, &base, "a restart by hand taken over");
	/* What was measured is what was meant: with -x, or without. */
	g_assert_cmpuint(wrapper_count_log(f.w, LOG_ARG_X) > 0, ==, c->with_x);
	census_clear(&base);
	fx_stop_ok(&f);
	t_end_all_started();
}

/* ---- the same in master-worker mode ---- */

/* settled_fds() in master-worker mode: below the wrapper, the master
 * and its one worker (the old ones gone). */
static void settle_mw(struct t_site *f, GPid master, GPid worker)
{
	const GPid both[] = { master, worker };

	g_assert_true(wait_descendants(f->w, both, G_N_ELEMENTS(both)));
	g_assert_cmpint(t_site_client(f, "--status", NULL, NULL), ==, 0);
}

static void assert_level_mw(struct t_site *f, GPid master, GPid worker,
			    const struct fd_census *base, const char *after)
{
	settle_mw(f, master, worker);
	assert_level(f, 0, base, after);
}

/* A client's reload in master-worker mode: its answer names the new
 * worker. */
static GPid mw_client_reload(struct t_site *f, const char *cmd, GPid old)
{
	g_autofree gchar *out = NULL;
	GPid worker;

	g_assert_cmpint(t_site_client(f, cmd, &out, NULL), ==, 0);
	worker = t_pid_in(out, "workers ");
	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(worker, !=, old);
	g_assert_true(wait_answering(f->port, worker));
	return worker;
}

/*
 * haproxy -Ws, reloaded in place: the wrapper talks to its master
 * (SIGUSR2, the master's notify socket) instead of starting generations.
 * Its descriptors stay level over --reload, --hard-reload, a SIGUSR2 and
 * a --reload the master refuses (a broken configuration).
 */
static void test_level_master_worker(void)
{
	const char *opts[] = { "--master-worker=on", NULL };
	g_autofree gchar *reloaded = NULL;
	struct fd_census base = { 0 };
	g_auto(TSite) f = { 0 };
	GPid master, worker;

	if (!fx_init_real(&f))
		return;
	t_site_start_wrapper(&f, NULL, opts);
	master = fx_wait_ready(&f, 1);
	worker = t_wait_serving(f.port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(proc_parent(worker), ==, master);
	settle_mw(&f, master, worker);
	census_take(f.w->pid, &base);
	g_test_message("at the start:\n%s", base.listing->str);

	reloaded = g_strdup_printf(LOG_MASTER_RELOADED_FMT, 1);
	for (guint round = 0; round < 2; round++) {
		g_autofree gchar *out = NULL;

		worker = mw_client_reload(&f, "--reload", worker);
		assert_level_mw(&f, master, worker, &base, "a --reload");
		/* Past its line, for the SIGUSR2's. */
		g_assert_nonnull(wrapper_wait_log(f.w, reloaded, T_WAIT));

		worker = mw_client_reload(&f, "--hard-reload", worker);
		assert_level_mw(&f, master, worker, &base, "a --hard-reload");
		g_assert_nonnull(wrapper_wait_log(f.w, reloaded, T_WAIT));

		wrapper_signal(f.w, SIGUSR2);
		worker = t_pid_in(wrapper_wait_log(f.w, reloaded, T_WAIT),
				  "workers ");
		g_assert_cmpint(worker, >, 0);
		g_assert_true(wait_answering(f.port, worker));
		assert_level_mw(&f, master, worker, &base, "a SIGUSR2");

		t_site_config(&f, "    no-such-keyword here\n");
		g_assert_cmpint(t_site_client(&f, "--reload", &out, NULL), !=,
				0);
		t_site_config(&f, NULL);
		assert_level_mw(&f, master, worker, &base, "a failed --reload");
	}
	census_clear(&base);
	fx_stop_ok(&f);
}

/* ---- a shortage while a client waits for its reload ---- */

/*
 * Out of descriptors while a --reload client waits for its reload: the
 * wrapper drops idle clients to get descriptors back, never one that
 * waits (the reload machine holds it, and answers it when the reload
 * ends). That client gets the reload's real verdict; the wrapper lives
 * on, supervises the new generation, and stops it.
 */
static void test_shortage_spares_waiter(void)
{
	struct t_command reload = { 0 };
	g_autofree gchar *answer = NULL;
	g_auto(TSite) f = { 0 };
	struct rlimit orig;
	GPid gen1, gen2;
	int queued, rc;

	if (!fx_init_real_gated(&f))
		return;
	t_site_start_wrapper(&f, NULL, NULL);
	gen1 = fx_serving(&f, 1);
	/* Done with what readiness began (settled_fds() says why). */
	settled_fds(&f, gen1);
	g_assert_cmpint(prlimit(f.w->pid, RLIMIT_NOFILE, NULL, &orig), ==, 0);

	/* The reload's new generation held before it runs haproxy: the
	 * client that asked for it waits. */
	fx_close_gate(&f);
	fx_client(&f, &reload, "--reload");
	fx_wait_gate_entered(&f);

	/* No descriptor for the next client: the wrapper looks for idle
	 * ones to drop. */
	set_nofile(f.w->pid, lowest_free_fd(f.w->pid));
	queued = connect_control(&f);
	g_assert_cmpint(send(queued, "status\n", 7, MSG_NOSIGNAL), ==, 7);
	t_site_wait_log(&f, LOG_CONTROL_SOCKET "Too many open files");
	set_nofile(f.w->pid, orig.rlim_cur);
	answer = read_answer(queued);
	close(queued);
	g_assert_nonnull(strstr(answer, "generation 1"));

	/* The reload goes on: its client hears how it ended. */
	fx_open_gate(&f);
	gen2 = fx_serving(&f, 2);
	rc = t_command_finish(&reload, T_WAIT);
	g_test_message("the --reload client: exit %d, \"%s\", \"%s\"", rc,
		       reload.out->str, reload.err->str);
	g_assert_null(strstr(reload.err->str, "out of descriptors"));
	g_assert_cmpint(rc, ==, 0);
	g_assert_cmpint(t_pid_in(reload.out->str, "ok generation "), ==, 2);
	g_assert_cmpint(t_pid_in(reload.out->str, "(pid "), ==, gen2);
	g_assert_true(t_wait_gone(gen1, T_WAIT));

	/* Alive, and supervising generation 2: it answers for it, and its
	 * stop ends it. */
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	g_assert_cmpint(proc_parent(gen2), ==, f.w->pid);
	settled_fds(&f, gen2);
	fx_reload_works(&f, 3);
	t_command_clear(&reload);
	g_assert_cmpint(fx_stop(&f, SIGTERM), ==, 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* What the wrapper leaves behind becomes ours, to be seen. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	g_test_add_data_func("/descriptors/level", &level_cases[0],
			     test_level);
	g_test_add_data_func("/descriptors/level-no-x", &level_cases[1],
			     test_level);
	g_test_add_func("/descriptors/level-master-worker",
			test_level_master_worker);
	g_test_add_func("/descriptors/shortage-spares-reload-waiter",
			test_shortage_spares_waiter);
	return g_test_run();
}
