/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration tests of per-group SO_REUSEPORT migration (wrapper/steering/reuseport.c)
 * on the real haproxy (Debian's 2.6), 127.0.0.1 only. With
 * --seamless-reload=off every reload makes the old haproxy close listeners
 * that still hold queued connections, as haproxy 1.5-1.7 always does:
 * without migration the kernel resets them. Reloads and a takeover of a
 * foreign -D daemon under load lose nothing, a group the new configuration
 * adds gets migration too, and a listener without SO_REUSEPORT is told
 * about. net.ipv4.tcp_migrate_req is read, never written.
 */
#include "t/lib/foreign.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/proc.h"

#define HAPROXY "/usr/sbin/haproxy"

/* Clients, each a new connection a request: enough to keep the accept
 * queues non-empty whenever the old haproxy closes its listeners. A
 * handshake whose last ACK the kernel handles at the very microsecond
 * its listener closes is still reset ("connect: Connection reset by
 * peer"), migration or not: a kernel race (doc/figures.md, "The reset that
 * is left"), about once in 200 reloads on a busy host. */
#define LOADERS 8
/* A reload competes with them for the CPU (seconds under ASan). */
#define LOADED_WAIT (4 * T_WAIT)
#ifndef RELOADS
#define RELOADS 12
#endif

struct site {
	gchar *dir;
	gchar *cfg;
	gchar *pidfile;
	gchar *rundir_opt;
	guint16 port;
	guint16 port2;		/* added by a later configuration */
};

static void site_init(struct site *s)
{
	g_autofree gchar *run = NULL;

	s->dir = t_tmpdir();
	s->port = t_free_port();
	do
		s->port2 = t_free_port();
	while (s->port2 == s->port);
	s->cfg = t_write_config(s->dir, "h.cfg", s->port, NULL);
	s->pidfile = g_build_filename(s->dir, "h.pid", NULL);
	run = t_runtime_dir(s->dir);
	s->rundir_opt = g_strconcat("--runtime-dir=", run, NULL);
}

static void site_clear(struct site *s)
{
	t_end_all_started();
	t_rmtree(s->dir);
	g_free(s->dir);
	g_free(s->cfg);
	g_free(s->pidfile);
	g_free(s->rundir_opt);
}

static void site_config(struct site *s, const char *extra)
{
	g_free(t_write_config(s->dir, "h.cfg", s->port, extra));
}

/* The wrapper with its runtime dir, options (up to NULL), -f, -p; env:
 * additions "K=V" (may be NULL). */
static G_GNUC_NULL_TERMINATED Wrapper *start_wrapper_env(struct site *s,
							 const char *const *env,
							 ...)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	const char *arg;
	va_list ap;

	g_ptr_array_add(args, s->rundir_opt);
	va_start(ap, env);
	while ((arg = va_arg(ap, const char *)))
		g_ptr_array_add(args, (gpointer)arg);
	va_end(ap);
	g_ptr_array_add(args, "-f");
	g_ptr_array_add(args, s->cfg);
	g_ptr_array_add(args, "-p");
	g_ptr_array_add(args, s->pidfile);
	g_ptr_array_add(args, NULL);
	return wrapper_start((const char *const *)args->pdata, env);
}

#define start_wrapper(s, ...) start_wrapper_env(s, NULL, __VA_ARGS__)

static void stop_wrapper(Wrapper *w)
{
	wrapper_signal(w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(w, T_WAIT), !=, -1);
}

/* "status --json" of the site's wrapper. */
static gchar *status_json(struct site *s)
{
	const char *argv[] = { t_wrapper_path(), s->rundir_opt, "-f", s->cfg,
			       "-p", s->pidfile, "--status", "--json", NULL };
	gchar *out = NULL;

	g_assert_cmpint(t_run_command(argv, T_WAIT, &out, NULL), ==, 0);
	return out;
}

static void assert_migration_state(struct site *s, const char *state)
{
	g_autofree gchar *json = status_json(s);
	g_autofree gchar *want = g_strdup_printf(
		"\"reuseport_migration\":\"%s", state);

	if (!strstr(json, want))
		g_error("status lacks %s:\n%s", want, json);
}

static gboolean have_haproxy(void)
{
	if (t_have_haproxy())
		return TRUE;
	g_test_skip("no " HAPROXY);
	return FALSE;
}


static void loads_start(struct t_load *l, guint n, guint16 port)
{
	for (guint i = 0; i < n; i++)
		t_load_start(&l[i], port);
}

static guint loads_finish(struct t_load *l, guint n, guint *requests)
{
	guint failed = 0;

	for (guint i = 0; i < n; i++) {
		failed += t_load_finish(&l[i]);
		*requests += l[i].requests;
	}
	return failed;
}

/*
 * RELOADS reloads (SIGUSR2) under load, --seamless-reload=off; halfway
 * the configuration adds a second port, loaded too from then on. Each
 * reload waits until the new generation answers and the old one is
 * gone, so that every close of a listener with a queue is covered. The
 * number of failed requests.
 */
static guint reloads_under_load(struct site *s, Wrapper *w, guint *requests)
{
	struct t_load l[LOADERS], l2[LOADERS / 2];
	g_autofree gchar *extra = g_strdup_printf("    bind 127.0.0.1:%u\n",
						  s->port2);
	GPid pid = wrapper_wait_ready(w, 1, T_WAIT);
	guint failed;

	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), ==, pid);
	loads_start(l, LOADERS, s->port);
	for (guint n = 2; n <= RELOADS + 1; n++) {
		GPid old = pid;

		if (n == RELOADS / 2)
			site_config(s, extra);
		wrapper_signal(w, SIGUSR2);
		pid = wrapper_wait_ready(w, n, LOADED_WAIT);
		g_assert_cmpint(pid, >, 0);
		g_assert_true(t_load_wait_answers(&l[0], pid, 10));
		if (n == RELOADS / 2) {
			g_assert_cmpint(t_wait_serving(s->port2, T_WAIT), ==,
					pid);
			loads_start(l2, G_N_ELEMENTS(l2), s->port2);
		}
		if (n > RELOADS / 2)
			g_assert_true(t_load_wait_answers(&l2[0], pid, 10));
		g_assert_true(t_wait_gone(old, T_WAIT));
	}
	failed = loads_finish(l, LOADERS, requests);
	failed += loads_finish(l2, G_N_ELEMENTS(l2), requests);
	return failed;
}

static void test_reloads_zero_loss(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *on2 = NULL;
	guint requests = 0, failed;

	if (!have_haproxy() || t_host_migrates())
		return;
	site_init(&s);
	w = start_wrapper(&s, "--seamless-reload=off", NULL);
	failed = reloads_under_load(&s, w, &requests);
	g_test_message("migration on: %u of %u requests failed over %u "
		       "reloads", failed, requests, RELOADS);
	g_assert_cmpuint(failed, ==, 0);
	/* The group the configuration added got it as well. */
	on2 = g_strdup(LOG_MIGRATION_ON "2 " LOG_HAPROXY_PID_KEY);
	g_assert_nonnull(wrapper_find_log(w, on2));
	assert_migration_state(&s, "active\"");
	stop_wrapper(w);
	site_clear(&s);
}

/* Off: nothing attached, status says so, reloads as ever. */
static void test_reloads_off(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;

	if (!have_haproxy())
		return;
	site_init(&s);
	w = start_wrapper(&s, "--seamless-reload=off",
			  "--reuseport-migration=off", NULL);
	g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
	for (guint n = 2; n <= 3; n++) {
		wrapper_signal(w, SIGUSR2);
		g_assert_cmpint(wrapper_wait_ready(w, n, T_WAIT), >, 0);
	}
	/* Answered after generation 3's round: its lines are written. */
	assert_migration_state(&s, "off\"");
	wrapper_pump(w, 0);
	g_assert_null(wrapper_find_log(w, LOG_MIGRATION));
	stop_wrapper(w);
	site_clear(&s);
}

/*
 * The figure beside /migration/reloads-zero-loss: the same reloads with
 * migration off. How many fail depends on the machine, so it is logged,
 * not asserted, and only with -m slow (make bench measures it too).
 */
static void test_figure_off(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	guint requests = 0, failed;

	if (!g_test_slow()) {
		g_test_skip("a figure, not a check: run with -m slow");
		return;
	}
	if (!have_haproxy() || t_host_migrates())
		return;
	site_init(&s);
	w = start_wrapper(&s, "--seamless-reload=off",
			  "--reuseport-migration=off", NULL);
	failed = reloads_under_load(&s, w, &requests);
	g_test_message("migration off: %u of %u requests failed over %u "
		       "reloads", failed, requests, RELOADS);
	stop_wrapper(w);
	site_clear(&s);
}

/*
 * A foreign "haproxy -D" taken over under load, several times: its
 * listeners close with their queues when our generation's -sf reaches it.
 */
#define TAKEOVERS 5

/* Did the wrapper log "SO_REUSEPORT migration on for N listeners of
 * haproxy pid PID"? */
static gboolean migration_on_for(Wrapper *w, GPid pid)
{
	g_autofree gchar *tail = g_strdup_printf(LOG_HAPROXY_PID_KEY "%d",
						 pid);

	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		if (strstr(line, LOG_MIGRATION_ON) &&
		    g_str_has_suffix(line, tail))
			return TRUE;
	}
	return FALSE;
}

static void test_takeover_zero_loss(void)
{
	guint failed = 0, requests = 0;

	if (!have_haproxy() || t_host_migrates())
		return;
	for (guint i = 0; i < TAKEOVERS; i++) {
		struct site s = { 0 };
		g_autoptr(Wrapper) w = NULL;
		struct t_load l[LOADERS];
		GPid daemon, gen1;

		site_init(&s);
		daemon = t_foreign_daemon(s.dir, HAPROXY, s.pidfile, s.cfg);
		g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
		loads_start(l, LOADERS, s.port);
		g_assert_true(t_load_wait_answers(&l[0], daemon, 10));

		w = start_wrapper(&s, NULL);
		gen1 = wrapper_wait_ready(w, 1, LOADED_WAIT);
		g_assert_cmpint(gen1, >, 0);
		/* Its listeners got the program before it closed them: no
		 * load test can show it every time (ours join the group). */
		g_assert_true(migration_on_for(w, daemon));
		g_assert_true(t_wait_gone(daemon, T_WAIT));
		g_assert_true(t_load_wait_answers(&l[0], gen1, 10));
		failed += loads_finish(l, LOADERS, &requests);
		stop_wrapper(w);
		site_clear(&s);
	}
	g_test_message("%u of %u requests failed over %u takeovers", failed,
		       requests, TAKEOVERS);
	g_assert_cmpuint(failed, ==, 0);
}

/*
 * A restart by hand whose configuration adds a port: the adopted
 * instance's new group gets the program when it is found, so that the
 * reload that retires it (no -x from an instance we did not start)
 * loses nothing on either port.
 */
static void test_adopted_zero_loss(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	struct t_load l[LOADERS], l2[LOADERS / 2];
	g_autofree gchar *extra = NULL, *oldarg = NULL, *on2 = NULL;
	const char *line;
	guint requests = 0, failed;
	GPid gen1, adopted, gen2;

	if (!have_haproxy() || t_host_migrates())
		return;
	site_init(&s);
	w = start_wrapper(&s, NULL);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, gen1);
	loads_start(l, LOADERS, s.port);
	g_assert_true(t_load_wait_answers(&l[0], gen1, 10));

	extra = g_strdup_printf("    bind 127.0.0.1:%u\n", s.port2);
	site_config(&s, extra);
	oldarg = g_strdup_printf("%d", gen1);
	T_FOREIGN(s.dir, .program = HAPROXY, .daemon = TRUE,
		  .args = (const char *const[]){ "-D", "-p", s.pidfile, "-f",
						 s.cfg, "-sf", oldarg, NULL });
	line = wrapper_wait_log(w, LOG_ADOPTING, LOADED_WAIT);
	g_assert_nonnull(line);
	adopted = t_pid_in(line, LOG_PID_KEY);
	t_remember(adopted, HAPROXY);
	on2 = g_strdup_printf(LOG_MIGRATION_ON_FMT, 2, adopted);
	g_assert_nonnull(wrapper_wait_log(w, on2, T_WAIT));
	g_assert_true(t_load_wait_answers(&l[0], adopted, 10));
	loads_start(l2, G_N_ELEMENTS(l2), s.port2);
	g_assert_true(t_load_wait_answers(&l2[0], adopted, 10));

	wrapper_signal(w, SIGUSR2);
	gen2 = wrapper_wait_ready(w, 2, LOADED_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_true(t_wait_gone(adopted, T_WAIT));
	g_assert_true(t_load_wait_answers(&l[0], gen2, 10));
	g_assert_true(t_load_wait_answers(&l2[0], gen2, 10));
	failed = loads_finish(l, LOADERS, &requests);
	failed += loads_finish(l2, G_N_ELEMENTS(l2), &requests);
	g_test_message("%u of %u requests failed across an adoption and "
		       "its retirement", failed, requests);
	g_assert_cmpuint(failed, ==, 0);
	stop_wrapper(w);
	site_clear(&s);
}

/* A haproxy that switched user is not dumpable: root's CAP_SYS_PTRACE
 * still takes its listeners. */
static void test_user_switched(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *text = NULL, *cfg = NULL, *on = NULL;
	struct proc_ids ids;
	GPid pid;

	if (!have_haproxy())
		return;
	if (geteuid() != 0) {
		g_test_skip("haproxy switches user only when started as root");
		return;
	}
	site_init(&s);
	text = t_config_text(s.port, NULL);
	cfg = g_strconcat("global\n    uid 65534\n    gid 65534\n", text,
			  NULL);
	g_free(t_write_file(s.dir, "h.cfg", cfg));
	w = start_wrapper(&s, "--seamless-reload=off", NULL);
	pid = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, pid);
	g_assert_true(proc_ids_at("/proc", pid, &ids, NULL));
	g_assert_cmpuint(ids.uid[1], ==, 65534);
	on = g_strdup_printf(LOG_MIGRATION_ON_FMT, 1, pid);
	/* Attached once the reload is answered, not before. */
	g_assert_nonnull(wrapper_wait_log(w, on, T_WAIT));
	assert_migration_state(&s, "active\"");
	stop_wrapper(w);
	site_clear(&s);
}

/*
 * A configuration with many binds: one line a generation, with their
 * count, not one a listener (thousands of binds would flood the journal
 * at every reload).
 */
#define MANY_BINDS 50

static gchar *many_binds(guint16 first)
{
	GString *extra = g_string_new(NULL);
	g_autoptr(GHashTable) ports = g_hash_table_new(NULL, NULL);

	g_hash_table_add(ports, GUINT_TO_POINTER(first));
	while (g_hash_table_size(ports) < MANY_BINDS) {
		guint16 port = t_free_port();

		if (g_hash_table_add(ports, GUINT_TO_POINTER(port)))
			g_string_append_printf(extra, "    bind 127.0.0.1:%u\n",
					       port);
	}
	return g_string_free(extra, FALSE);
}

static void test_many_binds_one_line(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *extra = NULL, *on1 = NULL, *on2 = NULL;
	GPid gen1, gen2;

	if (!have_haproxy())
		return;
	site_init(&s);
	extra = many_binds(s.port);
	site_config(&s, extra);
	w = start_wrapper(&s, "--seamless-reload=off", NULL);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	on1 = g_strdup_printf(LOG_MIGRATION_ON_FMT, MANY_BINDS, gen1);
	g_assert_nonnull(wrapper_wait_log(w, on1, T_WAIT));
	wrapper_signal(w, SIGUSR2);
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	on2 = g_strdup_printf(LOG_MIGRATION_ON_FMT, MANY_BINDS, gen2);
	g_assert_nonnull(wrapper_wait_log(w, on2, T_WAIT));
	/* Answered after generation 2's round: its lines are written. */
	assert_migration_state(&s, "active\"");
	wrapper_pump(w, 0);
	g_assert_cmpuint(wrapper_count_log(w, LOG_MIGRATION_ON), ==, 2);
	stop_wrapper(w);
	site_clear(&s);
}

/* A listener without SO_REUSEPORT: one notice naming it, status says
 * why, and haproxy serves and reloads as ever. */
static void test_noreuseport_told(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *notice = NULL, *state = NULL;
	g_autofree gchar *text = NULL, *cfg = NULL;
	GPid pid;

	if (!have_haproxy())
		return;
	site_init(&s);
	text = t_config_text(s.port, NULL);
	cfg = g_strconcat("global\n    noreuseport\n", text, NULL);
	g_free(t_write_file(s.dir, "h.cfg", cfg));
	w = start_wrapper(&s, "--seamless-reload=off", NULL);
	pid = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, pid);
	notice = g_strdup_printf(LOG_PRIO_NOTICE LOG_IDENT_PREFIX
				 LOG_NOREUSEPORT_FMT, pid, s.port);
	g_assert_nonnull(wrapper_wait_log(w, notice, T_WAIT));
	state = g_strdup_printf("unavailable: 127.0.0.1:%u has no SO_REUSEPORT",
				s.port);
	assert_migration_state(&s, state);
	wrapper_signal(w, SIGUSR2);
	pid = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, pid);
	/* Answered after generation 2's round: its lines are written. */
	assert_migration_state(&s, state);
	wrapper_pump(w, 0);
	g_assert_cmpuint(wrapper_count_log(w, LOG_NOREUSEPORT), ==, 1);
	stop_wrapper(w);
	site_clear(&s);
}

/*
 * haproxy < 1.8 (-Ds, t/fake/fake-haproxy as 1.7.0): the program goes through
 * the -Ds parent or its workers; the advice to set tcp_migrate_req is
 * given only when migration is off.
 */
static void test_ds_workers(void)
{
	struct site s = { 0 };
	g_autofree gchar *fake = g_build_filename(t_dir(), "fake/fake-haproxy",
						  NULL);
	g_autofree gchar *haproxy = g_strconcat("--haproxy=", fake, NULL);
	g_autofree gchar *cfg = NULL, *on = NULL;
	const char *env[] = { "FAKE_HAPROXY_VERSION=1.7.0", NULL };
	const char *line;
	GPid holder;

	site_init(&s);
	cfg = g_strdup_printf("bind 127.0.0.1:%u\n", s.port);
	g_free(t_write_file(s.dir, "h.cfg", cfg));
	on = g_strdup(LOG_MIGRATION_ON "1 " LOG_HAPROXY_PID_KEY);
	for (guint off = 0; off <= 1; off++) {
		g_autoptr(Wrapper) w = start_wrapper_env(
			&s, env, haproxy,
			off ? "--reuseport-migration=off" : NULL, NULL);
		GPid parent = wrapper_wait_ready(w, 1, T_WAIT);

		g_assert_cmpint(parent, >, 0);
		if (!off) {
			line = wrapper_wait_log(w, on, T_WAIT);
			g_assert_nonnull(line);
			/* The -Ds parent until it has forked, else a worker,
			 * still serving (t/unit/reuseport checks the
			 * workers' path). */
			holder = t_pid_in(line, LOG_HAPROXY_PID_KEY);
			g_assert_true(holder == parent ||
				      proc_parent(holder) == parent);
		}
		wrapper_signal(w, SIGUSR2);
		g_assert_cmpint(wrapper_wait_ready(w, 2, T_WAIT), >, 0);
		/* Answered after generation 2's round. */
		assert_migration_state(&s, off ? "off\"" : "active\"");
		wrapper_pump(w, 0);
		g_assert_cmpuint(wrapper_count_log(w, LOG_TCP_MIGRATE_REQ), ==,
				 off ? 1 : 0);
		stop_wrapper(w);
	}
	site_clear(&s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_end_started_on_abort();

	g_test_add_func("/migration/reloads-zero-loss", test_reloads_zero_loss);
	g_test_add_func("/migration/reloads-off", test_reloads_off);
	g_test_add_func("/migration/figure-off", test_figure_off);
	g_test_add_func("/migration/takeover-zero-loss",
			test_takeover_zero_loss);
	g_test_add_func("/migration/adopted-zero-loss", test_adopted_zero_loss);
	g_test_add_func("/migration/user-switched", test_user_switched);
	g_test_add_func("/migration/noreuseport-told", test_noreuseport_told);
	g_test_add_func("/migration/many-binds-one-line",
			test_many_binds_one_line);
	g_test_add_func("/migration/ds-workers", test_ds_workers);
	return g_test_run();
}
