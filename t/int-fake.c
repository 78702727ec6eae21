/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration tests with t/fake-haproxy: the haproxy versions (1.5, 1.7,
 * 1.8 ... 3.2) and the failures (crashes, bind conflicts, slow loads) that
 * the real haproxy 2.6 of the test machine cannot show. Every check rests
 * on an event: a wrapper log line, a line in the fake's event log
 * (FAKE_HAPROXY_LOG), an exit status, an HTTP answer.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <glib.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/harness.h"

#define NO_SIGNALS "0000000000000000"

/* ---- a failed assertion aborts: end what the test started first ---- */

struct fx {
	gchar *dir;
	gchar *cfg;
	gchar *log;
	gchar *pidfile;
	guint16 port;
};

static Wrapper *guarded_wrapper;
static GPid guarded_pid;
static struct fx *guarded_fx;

static void fx_kill_strays(struct fx *f);

static void on_abort(int sig)
{
	if (guarded_wrapper)
		g_array_unref(t_kill_tree(guarded_wrapper->pid));
	if (guarded_pid > 0)
		kill(guarded_pid, SIGKILL);
	if (guarded_fx) {
		fx_kill_strays(guarded_fx);
		t_rmtree(guarded_fx->dir);
	}
	signal(SIGABRT, SIG_DFL);
	raise(SIGABRT);
}

/* ---- the fixture: a directory, a port, a config, the fake's log ---- */

/* Rewritten atomically (rename): a starting fake never reads half of it. */
static void fx_config(struct fx *f, const char *extra)
{
	g_autofree gchar *text = g_strdup_printf("bind 127.0.0.1:%u\n%s",
						 f->port, extra ? extra : "");
	g_autofree gchar *path = t_write_file(f->dir, "haproxy.cfg", text);
}

static void fx_init(struct fx *f, const char *extra)
{
	f->dir = t_tmpdir();
	f->cfg = g_build_filename(f->dir, "haproxy.cfg", NULL);
	f->log = g_build_filename(f->dir, "fake.log", NULL);
	f->pidfile = g_build_filename(f->dir, "haproxy.pid", NULL);
	f->port = t_free_port();
	fx_config(f, extra);
	guarded_fx = f;
}

static const char *fake_path(void)
{
	static gchar *path;

	if (!path)
		path = g_build_filename(t_dir(), "fake-haproxy", NULL);
	return path;
}

static GArray *pids_of_file(const char *path)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) tok = NULL;
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return pids;
	tok = g_strsplit_set(text, " \n", -1);
	for (guint i = 0; tok[i]; i++) {
		GPid pid = t_pid_in(tok[i], "pid=");

		if (!pid && g_ascii_isdigit(tok[i][0]))
			pid = atoi(tok[i]);
		if (pid > 0)
			g_array_append_val(pids, pid);
	}
	return pids;
}

/* A fake that escaped (a -D daemon is setsid, no one's descendant): any
 * live fake-haproxy named in its log or pidfile, killed by pid. */
static void fx_kill_strays(struct fx *f)
{
	g_autoptr(GArray) logged = pids_of_file(f->log);
	g_autoptr(GArray) listed = pids_of_file(f->pidfile);
	GArray *sets[] = { logged, listed };

	for (guint s = 0; s < G_N_ELEMENTS(sets); s++) {
		for (guint i = 0; i < sets[s]->len; i++) {
			GPid pid = g_array_index(sets[s], GPid, i);
			g_autofree gchar *exe = proc_exe(pid);

			if (exe && g_str_equal(exe, fake_path()) &&
			    t_pid_alive(pid)) {
				kill(pid, SIGKILL);
				t_wait_gone(pid, T_WAIT);
			}
		}
	}
}

static void fx_clear(struct fx *f)
{
	guarded_fx = NULL;
	fx_kill_strays(f);
	t_rmtree(f->dir);
	g_free(f->dir);
	g_free(f->cfg);
	g_free(f->log);
	g_free(f->pidfile);
}

static GPtrArray *fx_argv(struct fx *f, const char *const *extra)
{
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);

	g_ptr_array_add(argv, g_strdup_printf("--haproxy=%s", fake_path()));
	for (; extra && *extra; extra++)
		g_ptr_array_add(argv, g_strdup(*extra));
	g_ptr_array_add(argv, g_strdup("-f"));
	g_ptr_array_add(argv, g_strdup(f->cfg));
	g_ptr_array_add(argv, g_strdup("-p"));
	g_ptr_array_add(argv, g_strdup(f->pidfile));
	g_ptr_array_add(argv, NULL);
	return argv;
}

static GPtrArray *fx_env(struct fx *f, const char *version)
{
	GPtrArray *env = g_ptr_array_new_with_free_func(g_free);

	if (version)
		g_ptr_array_add(env, g_strdup_printf("FAKE_HAPROXY_VERSION=%s",
						     version));
	g_ptr_array_add(env, g_strdup_printf("FAKE_HAPROXY_LOG=%s", f->log));
	g_ptr_array_add(env, NULL);
	return env;
}

/* The wrapper on the fake; version NULL: the fake's default (2.6.12). */
static Wrapper *fx_start(struct fx *f, const char *version,
			 const char *const *extra)
{
	g_autoptr(GPtrArray) argv = fx_argv(f, extra);
	g_autoptr(GPtrArray) env = fx_env(f, version);

	guarded_wrapper = wrapper_start((const char *const *)argv->pdata,
					(const char *const *)env->pdata);
	return guarded_wrapper;
}

static void fx_free_wrapper(Wrapper *w)
{
	if (guarded_wrapper == w)
		guarded_wrapper = NULL;
	wrapper_free(w);
}

/* ---- the fake's event log ---- */

static gint64 deadline_after(guint ms)
{
	return g_get_monotonic_time() + (gint64)ms * 1000;
}

static gchar *fake_wait(struct fx *f, const char *needle, guint timeout_ms)
{
	return t_wait_file_line(f->log, needle, NULL, 1, timeout_ms);
}

static guint fake_count(struct fx *f, const char *needle)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;
	guint n = 0;

	if (!g_file_get_contents(f->log, &text, NULL, NULL))
		return 0;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i]; i++)
		if (strstr(lines[i], needle))
			n++;
	return n;
}

/* "key=value ..." -> value. */
static gchar *field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	if (!p)
		return NULL;
	p += strlen(key);
	return g_strndup(p, strcspn(p, " "));
}

/* ---- command lines ---- */

static gboolean has_arg(const char *line, const char *arg)
{
	g_auto(GStrv) tok = g_strsplit(line, " ", -1);

	return g_strv_contains((const char *const *)tok, arg);
}

/* Any daemon flag: -D, -Ds, -Dxyz (haproxy reads the first letters). */
static gboolean has_daemon_flag(const char *line)
{
	g_auto(GStrv) tok = g_strsplit(line, " ", -1);

	for (guint i = 0; tok[i]; i++)
		if (g_str_has_prefix(tok[i], "-D"))
			return TRUE;
	return FALSE;
}

/* The pids after -sf (or -st) in an "executing" line. */
static GArray *sf_pids(const char *line)
{
	g_auto(GStrv) tok = g_strsplit(line, " ", -1);
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	gboolean in = FALSE;

	for (guint i = 0; tok[i]; i++) {
		if (!*tok[i])
			continue;
		if (g_str_equal(tok[i], "-sf") || g_str_equal(tok[i], "-st")) {
			in = TRUE;
		} else if (in) {
			GPid pid;

			if (tok[i][0] == '-')
				break;
			pid = atoi(tok[i]);
			g_array_append_val(pids, pid);
		}
	}
	return pids;
}

static gboolean pids_contain(GArray *pids, GPid pid)
{
	for (guint i = 0; i < pids->len; i++)
		if (g_array_index(pids, GPid, i) == pid)
			return TRUE;
	return FALSE;
}

/* ---- processes ---- */

/* The -Ds parent's n workers, from the pidfile it writes. */
static GArray *wait_workers(struct fx *f, GPid parent, guint n)
{
	gint64 deadline = deadline_after(T_WAIT);

	for (;;) {
		GArray *pids = pids_of_file(f->pidfile);
		guint ours = 0;

		for (guint i = 0; i < pids->len; i++)
			if (proc_parent(g_array_index(pids, GPid, i)) == parent)
				ours++;
		if (pids->len == n && ours == n)
			return pids;
		g_array_unref(pids);
		if (g_get_monotonic_time() >= deadline)
			g_error("no %u workers of pid %d in %s", n, parent,
				f->pidfile);
		g_usleep(10 * 1000);
	}
}

static void assert_all_gone(GArray *pids)
{
	for (guint i = 0; i < pids->len; i++)
		g_assert_true(t_wait_gone(g_array_index(pids, GPid, i),
					  T_WAIT));
}

static void assert_exit_code(int status, int code)
{
	g_assert_cmpint(status, !=, -1);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, code);
}

/* Signal the wrapper (sig 0: it ends on its own), wait for its end;
 * everything below it must end too. */
static int stop_wrapper(Wrapper *w, int sig)
{
	g_autoptr(GArray) below = t_descendants(w->pid);
	int status;

	if (sig)
		wrapper_signal(w, sig);
	status = wrapper_wait_exit(w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	assert_all_gone(below);
	return status;
}

/* Generation n's pid, checking the version it was detected as. */
static GPid wait_ready_version(Wrapper *w, guint n, const char *version)
{
	g_autofree gchar *needle = g_strdup_printf("generation %u ready: ", n);
	g_autofree gchar *want = g_strdup_printf(", haproxy %s", version);
	const char *line = wrapper_wait_log(w, needle, T_WAIT);

	g_assert_nonnull(line);
	g_assert_true(g_str_has_suffix(line, want));
	return t_pid_in(line, "pid ");
}

static gchar *dup_wait_log(Wrapper *w, const char *needle)
{
	const char *line = wrapper_wait_log(w, needle, T_WAIT);

	g_assert_nonnull(line);
	return g_strdup(line);
}

/* ---- 1, 2: haproxy < 1.8 runs as -Ds, its workers take -sf ---- */

static void check_ds_family(const char *version, guint nbproc)
{
	g_autofree gchar *extra = g_strdup_printf("fake-nbproc %u\n", nbproc);
	g_autofree gchar *exec1 = NULL, *exec2 = NULL, *signalled = NULL;
	g_autoptr(GArray) old_workers = NULL, new_workers = NULL, sf = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1, gen2, witness, pid;

	fx_init(&f, extra);
	w = fx_start(&f, version, NULL);

	exec1 = dup_wait_log(w, "executing ");
	g_assert_true(has_arg(exec1, "-Ds"));
	g_assert_false(has_arg(exec1, "-db"));
	gen1 = wait_ready_version(w, 1, version);
	old_workers = wait_workers(&f, gen1, nbproc);
	pid = t_wait_serving(f.port, T_WAIT);
	g_assert_true(pids_contain(old_workers, pid));

	wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, "reloading on SIGUSR2.", T_WAIT));
	exec2 = dup_wait_log(w, "executing ");
	g_assert_true(has_arg(exec2, "-Ds"));
	g_assert_false(has_arg(exec2, "-db"));
	/* Every old worker, then the witness, last. */
	sf = sf_pids(exec2);
	g_assert_cmpuint(sf->len, ==, nbproc + 1);
	for (guint i = 0; i < nbproc; i++)
		g_assert_true(pids_contain(sf, g_array_index(old_workers,
							     GPid, i)));
	witness = g_array_index(sf, GPid, nbproc);
	g_assert_false(pids_contain(old_workers, witness));
	g_assert_cmpint(witness, !=, gen1);

	gen2 = wait_ready_version(w, 2, version);
	{
		g_autofree gchar *needle = g_strdup_printf(
			"pid=%d signalled-old SIGUSR1 %d", gen2, witness);

		signalled = fake_wait(&f, needle, T_WAIT);
		g_assert_nonnull(signalled);
	}
	assert_all_gone(old_workers);
	g_assert_true(t_wait_gone(gen1, T_WAIT));

	new_workers = wait_workers(&f, gen2, nbproc);
	pid = t_wait_serving(f.port, T_WAIT);
	g_assert_true(pids_contain(new_workers, pid));
	g_assert_cmpint(proc_parent(pid), ==, gen2);

	assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(w, "-db"), ==, 0);
	fx_free_wrapper(w);
	fx_clear(&f);
}

static void test_version_15(void)
{
	check_ds_family("1.5.18", 2);
}

static void test_version_17(void)
{
	check_ds_family("1.7.0", 1);
}

/* "-- FILES" (Debian's old units, scripts) on 1.5, which has no "--":
 * each file goes to haproxy as -f FILE, at start and at reloads. */
static void test_double_dash_15(void)
{
	g_autofree gchar *haproxy = g_strdup_printf("--haproxy=%s",
						    fake_path());
	g_autofree gchar *exec1 = NULL, *exec2 = NULL, *file = NULL;
	g_autoptr(GPtrArray) env = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1, gen2;

	fx_init(&f, "fake-nbproc 1\n");
	env = fx_env(&f, "1.5.18");
	/* the historic line ends in a space */
	file = g_strdup_printf(" -f %s ", f.cfg);
	{
		const char *args[] = { haproxy, "-p", f.pidfile, "--", f.cfg,
				       NULL };

		w = guarded_wrapper = wrapper_start(
			args, (const char *const *)env->pdata);
	}
	exec1 = dup_wait_log(w, "executing ");
	g_assert_true(g_str_has_suffix(exec1, file));
	g_assert_false(has_arg(exec1, "--"));
	gen1 = wait_ready_version(w, 1, "1.5.18");
	wait_workers(&f, gen1, 1);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), >, 0);
	wrapper_signal(w, SIGUSR2);
	exec2 = dup_wait_log(w, "executing ");
	g_assert_true(g_str_has_suffix(exec2, file));
	gen2 = wait_ready_version(w, 2, "1.5.18");
	wait_workers(&f, gen2, 1);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* ---- 3: haproxy >= 1.8 runs as -db, whatever the banner's spelling ---- */

static gchar *fake_banner(const char *version)
{
	char *argv[] = { (char *)fake_path(), (char *)"-v", NULL };
	g_auto(GStrv) envp = g_environ_setenv(g_get_environ(),
					      "FAKE_HAPROXY_VERSION", version,
					      TRUE);
	g_autoptr(GError) error = NULL;
	gchar *out = NULL;

	g_assert_true(g_spawn_sync(NULL, argv, envp, G_SPAWN_STDERR_TO_DEV_NULL,
				   NULL, NULL, &out, NULL, NULL, &error));
	g_assert_no_error(error);
	return out;
}

static void check_db_version(const char *version, const char *banner)
{
	g_autofree gchar *out = fake_banner(version);
	g_autofree gchar *exec1 = NULL, *exec2 = NULL, *start2 = NULL;
	g_autoptr(GArray) sf = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1, gen2;

	/* The fixture really prints the spelling this case is about. */
	g_assert_true(g_str_has_prefix(out, banner));

	fx_init(&f, NULL);
	w = fx_start(&f, version, NULL);
	exec1 = dup_wait_log(w, "executing ");
	g_assert_true(has_arg(exec1, "-db"));
	g_assert_false(has_daemon_flag(exec1));
	gen1 = wait_ready_version(w, 1, version);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);

	wrapper_signal(w, SIGUSR2);
	exec2 = dup_wait_log(w, "executing ");
	g_assert_true(has_arg(exec2, "-db"));
	g_assert_false(has_daemon_flag(exec2));
	sf = sf_pids(exec2);
	g_assert_cmpuint(sf->len, ==, 2);
	g_assert_cmpint(g_array_index(sf, GPid, 0), ==, gen1);
	gen2 = wait_ready_version(w, 2, version);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen2);

	/* What the fake itself was given: no daemon flag either. */
	start2 = t_wait_file_line(f.log, "start ", "-db", 2, T_WAIT);
	g_assert_nonnull(start2);
	g_assert_false(has_daemon_flag(start2));
	g_assert_cmpuint(fake_count(&f, "-Ds"), ==, 0);

	assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(w, "-Ds"), ==, 0);
	fx_free_wrapper(w);
	fx_clear(&f);
}

static void test_version_18_and_later(void)
{
	static const struct {
		const char *version;
		const char *banner;
	} cases[] = {
		{ "1.8.30", "HA-Proxy version 1.8.30 " },
		{ "2.0.0", "HA-Proxy version 2.0.0 " },
		{ "3.2.0", "HAProxy version 3.2.0 " },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
		check_db_version(cases[i].version, cases[i].banner);
}

/* ---- 4: a "haproxy -v" that names no version ---- */

static void test_version_unparseable(void)
{
	struct fx f;
	Wrapper *w;

	fx_init(&f, NULL);
	w = fx_start(&f, "garbage", NULL);
	assert_exit_code(stop_wrapper(w, 0), 65);
	g_assert_nonnull(wrapper_find_log(w, "cannot start haproxy: "));
	g_assert_nonnull(wrapper_find_log(w, "printed no haproxy version"));
	g_assert_nonnull(wrapper_find_log(w, "exit, haproxy RC=65"));
	/* Only "-v" ran: no generation was started on a guess. */
	g_assert_cmpuint(wrapper_count_log(w, "executing "), ==, 0);
	g_assert_cmpuint(fake_count(&f, " start "), ==, 1);
	g_assert_cmpuint(fake_count(&f, " args=-v "), ==, 1);
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* ---- 5: configuration errors ---- */

static void test_config_error_at_start(void)
{
	struct fx f;
	Wrapper *w;

	fx_init(&f, "fake-config-error\n");
	w = fx_start(&f, NULL, NULL);
	assert_exit_code(stop_wrapper(w, 0), 1);
	g_assert_nonnull(wrapper_find_log(w, "cannot start haproxy: "));
	g_assert_null(wrapper_find_log(w, " ready: "));
	g_assert_nonnull(wrapper_find_log(w, "exit, haproxy RC=1"));
	fx_free_wrapper(w);
	fx_clear(&f);
}

static void test_config_error_at_reload(void)
{
	g_autofree gchar *failed = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1;

	fx_init(&f, NULL);
	w = fx_start(&f, NULL, NULL);
	gen1 = wait_ready_version(w, 1, "2.6.12");
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);

	fx_config(&f, "fake-config-error\n");
	wrapper_signal(w, SIGUSR2);
	failed = dup_wait_log(w, "reload failed: ");
	g_assert_nonnull(strstr(failed, "keeps serving"));
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);
	g_assert_true(t_pid_alive(gen1));
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);
	/* The old generation was never told to leave. */
	{
		g_autofree gchar *needle = g_strdup_printf(
			"signalled-old SIGUSR1 %d", gen1);

		g_assert_cmpuint(fake_count(&f, needle), ==, 0);
	}

	/* A failed reload is no failure of the service. */
	assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* ---- 6: the new config binds a port someone holds ---- */

static void test_bind_failure_at_reload(void)
{
	g_autofree gchar *extra = NULL, *paused = NULL, *resumed = NULL;
	g_autofree gchar *needle = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1;
	int held;

	fx_init(&f, NULL);
	held = t_plain_listener(t_free_port());
	w = fx_start(&f, NULL, NULL);
	gen1 = wait_ready_version(w, 1, "2.6.12");
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);

	{
		struct sockaddr_in a;
		socklen_t len = sizeof(a);

		getsockname(held, (struct sockaddr *)&a, &len);
		extra = g_strdup_printf("bind 127.0.0.1:%u\n",
					ntohs(a.sin_port));
	}
	fx_config(&f, extra);
	wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, "an address is in use", T_WAIT));
	g_assert_nonnull(wrapper_wait_log(w, "reload failed: ", T_WAIT));

	/* Paused by SIGTTOU, resumed by SIGTTIN: it serves again. */
	needle = g_strdup_printf("pid=%d paused", gen1);
	paused = fake_wait(&f, needle, T_WAIT);
	g_assert_nonnull(paused);
	g_free(needle);
	needle = g_strdup_printf("pid=%d resumed", gen1);
	resumed = fake_wait(&f, needle, T_WAIT);
	g_assert_nonnull(resumed);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);
	g_assert_true(t_pid_alive(gen1));
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);

	assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	close(held);
	/* The witness saw SIGTTIN before haproxy exited: the reason of the
	 * failure must be in the log, whichever the wrapper reads first. */
	g_assert_nonnull(wrapper_find_log(w, "could not bind"));
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* ---- 7: the serving haproxy ends on its own ---- */

static void check_dies_after_ready(const char *extra, int code)
{
	g_autofree gchar *rc = g_strdup_printf("exit, haproxy RC=%d", code);
	struct fx f;
	Wrapper *w;

	fx_init(&f, extra);
	w = fx_start(&f, NULL, NULL);
	g_assert_nonnull(wrapper_wait_log(w, "generation 1 ready: ", T_WAIT));
	assert_exit_code(stop_wrapper(w, 0), code);
	g_assert_nonnull(wrapper_find_log(w, "the one serving"));
	g_assert_nonnull(wrapper_find_log(w, rc));
	fx_free_wrapper(w);
	fx_clear(&f);
}

static void test_crash(void)
{
	check_dies_after_ready("fake-crash-after-ready\n", 128 + SIGSEGV);
	check_dies_after_ready("fake-exit-after-ready 3\n", 3);
	/* A soft stop that nothing replaced: the service ended, cleanly. */
	check_dies_after_ready("fake-exit-after-ready 0\n", 0);
}

/* The -Ds parent exits 0 when its worker crashed: that is no success. */
static void test_crash_ds(void)
{
	g_autofree gchar *crash = NULL, *exit0 = NULL, *needle = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1;

	fx_init(&f, "fake-crash-after-ready\n");
	w = fx_start(&f, "1.7.0", NULL);
	gen1 = wait_ready_version(w, 1, "1.7.0");
	assert_exit_code(stop_wrapper(w, 0), 1);
	g_assert_nonnull(wrapper_find_log(w, "the one serving"));
	g_assert_nonnull(wrapper_find_log(w, "exit, haproxy RC=1"));
	/* The worker crashed; its -Ds parent then exited 0. */
	crash = fake_wait(&f, " crash", T_WAIT);
	g_assert_nonnull(crash);
	g_assert_cmpint(t_pid_in(crash, "pid="), !=, gen1);
	needle = g_strdup_printf("pid=%d exit 0", gen1);
	exit0 = fake_wait(&f, needle, T_WAIT);
	g_assert_nonnull(exit0);
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* ---- 8: what haproxy inherits ---- */

static const char *const leaked_env[] = {
	"HAPROXY_MWORKER_REEXEC=1",
	"HAPROXY_PROCESSES=|type=worker;fd=4;pid=1;",
	"HAPROXY_SYSTEMD_REEXEC=1",
	"HAPROXY_WRAPPER_FD=7",
	"NOTIFY_SOCKET=/run/systemd/notify",
};

/* What a careless parent leaves to the wrapper. */
static void dirty_child_setup(gpointer unused)
{
	sigset_t set;

	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* The harness's wrapper_start, with a child_setup before the exec. */
static Wrapper *start_with_setup(const char *const *args,
				 const char *const *env,
				 GSpawnChildSetupFunc setup)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(GError) error = NULL;
	Wrapper *w = g_new0(Wrapper, 1);

	g_ptr_array_add(argv, (char *)t_wrapper_path());
	for (; *args; args++)
		g_ptr_array_add(argv, (char *)*args);
	g_ptr_array_add(argv, NULL);
	for (; *env; env++) {
		g_auto(GStrv) kv = g_strsplit(*env, "=", 2);

		envp = g_environ_setenv(envp, kv[0], kv[1], TRUE);
	}
	w->lines = g_ptr_array_new_with_free_func(g_free);
	w->partial = g_string_new(NULL);
	if (!g_spawn_async_with_pipes(NULL, (char **)argv->pdata, envp,
				      G_SPAWN_DO_NOT_REAP_CHILD, setup, NULL,
				      &w->pid, NULL, NULL, &w->err_fd, &error))
		g_error("cannot start the wrapper: %s", error->message);
	fcntl(w->err_fd, F_SETFL, O_NONBLOCK);
	guarded_wrapper = w;
	return w;
}

static guint64 status_mask(GPid pid, const char *key)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/status", pid);
	g_autofree gchar *text = NULL;
	const char *p;

	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	p = strstr(text, key);
	g_assert_nonnull(p);
	return g_ascii_strtoull(p + strlen(key), NULL, 16);
}

static void assert_clean_start(const char *line)
{
	g_autofree gchar *blk = field(line, " sigblk=");
	g_autofree gchar *ign = field(line, " sigign=");
	g_autofree gchar *fds = field(line, " fds=");
	const char *env = strstr(line, " env=");

	g_assert_cmpstr(blk, ==, NO_SIGNALS);
	g_assert_cmpstr(ign, ==, NO_SIGNALS);
	g_assert_cmpstr(fds, ==, "0,1,2");
	g_assert_nonnull(env);
	g_assert_cmpstr(env, ==, " env=");
}

static void test_child_hygiene(void)
{
	g_autoptr(GPtrArray) argv = NULL;
	g_autoptr(GPtrArray) env = NULL;
	struct fx f;
	Wrapper *w;
	guint64 ign;

	fx_init(&f, NULL);
	argv = fx_argv(&f, NULL);
	env = fx_env(&f, NULL);
	g_ptr_array_remove_index(env, env->len - 1);
	for (guint i = 0; i < G_N_ELEMENTS(leaked_env); i++)
		g_ptr_array_add(env, g_strdup(leaked_env[i]));
	g_ptr_array_add(env, NULL);
	w = start_with_setup((const char *const *)argv->pdata,
			     (const char *const *)env->pdata,
			     dirty_child_setup);

	g_assert_nonnull(wrapper_wait_log(w, "generation 1 ready: ", T_WAIT));
	/* The premise: the wrapper itself did inherit all that. */
	ign = status_mask(w->pid, "SigIgn:");
	g_assert_true(ign & (1ULL << (SIGINT - 1)));
	g_assert_true(ign & (1ULL << (SIGQUIT - 1)));
	g_assert_true(status_mask(w->pid, "SigBlk:") & (1ULL << (SIGUSR1 - 1)));

	wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, "generation 2 ready: ", T_WAIT));
	/* The version probe, generation 1, generation 2. */
	for (guint n = 1; n <= 3; n++) {
		g_autofree gchar *start = t_wait_file_line(f.log, " start ", NULL,
							 n, T_WAIT);

		g_assert_nonnull(start);
		assert_clean_start(start);
	}
	g_assert_cmpuint(fake_count(&f, " start "), ==, 3);

	/* An ignored SIGINT still stops the wrapper. */
	assert_exit_code(stop_wrapper(w, SIGINT), 0);
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* ---- 9: signals while haproxy loads ---- */

static void test_stop_while_loading(void)
{
	g_autofree gchar *start = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1;

	fx_init(&f, "fake-load-delay-ms 2000\n");
	w = fx_start(&f, NULL, NULL);
	g_assert_nonnull(wrapper_wait_log(w, "executing ", T_WAIT));
	start = fake_wait(&f, " -db ", T_WAIT);
	g_assert_nonnull(start);
	gen1 = t_pid_in(start, "pid=");

	assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_null(wrapper_find_log(w, " ready: "));
	g_assert_nonnull(wrapper_find_log(w, "exit, haproxy RC=0"));
	/* Ended while loading, not after: it never bound. */
	g_assert_false(t_pid_alive(gen1));
	g_assert_cmpuint(fake_count(&f, " bound"), ==, 0);
	fx_free_wrapper(w);
	fx_clear(&f);
}

static guint line_index(Wrapper *w, const char *needle)
{
	for (guint i = 0; i < w->lines->len; i++)
		if (strstr(g_ptr_array_index(w->lines, i), needle))
			return i;
	g_error("no line with '%s'", needle);
}

static void test_reloads_while_loading(void)
{
	g_autofree gchar *start2 = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen3;

	fx_init(&f, NULL);
	w = fx_start(&f, NULL, NULL);
	g_assert_nonnull(wrapper_wait_log(w, "generation 1 ready: ", T_WAIT));

	fx_config(&f, "fake-load-delay-ms 2000\n");
	wrapper_signal(w, SIGUSR2);
	start2 = t_wait_file_line(f.log, " start ", " -db ", 2, T_WAIT);
	g_assert_nonnull(start2);
	for (int i = 0; i < 10; i++)
		wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, "generation 2 ready: ", T_WAIT));
	gen3 = wrapper_wait_ready(w, 3, T_WAIT);
	g_assert_cmpint(gen3, >, 0);
	/* They arrived while generation 2 was loading. */
	g_assert_cmpuint(line_index(w, "a reload is in progress"), <,
			 line_index(w, "generation 2 ready: "));
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen3);

	/* A fourth reload would start before the stop is even read. */
	assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(w, "executing "), ==, 3);
	g_assert_cmpuint(wrapper_count_log(w, "reloading on "), ==, 2);
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* ---- 10: a stop is bounded even when a worker does not die ---- */

static gboolean wait_stopped(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/stat", pid);

	for (int i = 0; i < T_WAIT / 10; i++) {
		g_autofree gchar *stat = NULL;
		const char *p;

		if (!g_file_get_contents(path, &stat, NULL, NULL))
			return FALSE;
		p = strrchr(stat, ')');
		if (p && p[1] == ' ' && p[2] == 'T')
			return TRUE;
		g_usleep(10 * 1000);
	}
	return FALSE;
}

static void test_stop_timeout(void)
{
	static const char *const opts[] = { "--stop-timeout=1", NULL };
	g_autoptr(GArray) workers = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1, worker;

	fx_init(&f, NULL);
	w = fx_start(&f, "1.7.0", opts);
	gen1 = wait_ready_version(w, 1, "1.7.0");
	workers = wait_workers(&f, gen1, 1);
	worker = g_array_index(workers, GPid, 0);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, worker);

	/* A stopped process keeps a SIGTERM pending; only SIGKILL ends it. */
	kill(worker, SIGSTOP);
	g_assert_true(wait_stopped(worker));
	wrapper_signal(w, SIGTERM);
	g_assert_nonnull(wrapper_wait_log(w, "still running 1s after the stop",
					  T_WAIT));
	assert_exit_code(stop_wrapper(w, 0), 0);
	g_assert_true(t_wait_gone(worker, T_WAIT));
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* ---- the old generation's exit, read before the new one's report ---- */

/* The witness names itself just after its fork: wait for the name. */
static gboolean wait_comm(GPid pid, const char *want)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/comm", pid);

	for (int i = 0; i < T_WAIT / 10; i++) {
		g_autofree gchar *comm = NULL;

		if (!g_file_get_contents(path, &comm, NULL, NULL))
			return FALSE;
		if (g_str_equal(g_strchomp(comm), want))
			return TRUE;
		g_usleep(10 * 1000);
	}
	return FALSE;
}

/*
 * A reload's old generation leaves on the new one's -sf SIGUSR1, sent just
 * before the witness's: which of the exit and the readiness report the
 * wrapper reads first is up to the scheduler. A witness held stopped until
 * the old generation is gone makes the "exit first" order certain.
 */
static void test_old_exits_before_ready_report(void)
{
	g_autofree gchar *exec2 = NULL, *gone = NULL;
	g_autofree gchar *needle = NULL, *line = NULL;
	g_autoptr(GArray) sf = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1, gen2, witness;

	fx_init(&f, NULL);
	w = fx_start(&f, NULL, NULL);
	gen1 = wait_ready_version(w, 1, "2.6.12");
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);

	/* Time to stop the witness before haproxy binds and signals. */
	fx_config(&f, "fake-load-delay-ms 1000\n");
	wrapper_signal(w, SIGUSR2);
	exec2 = dup_wait_log(w, "executing ");
	sf = sf_pids(exec2);
	g_assert_cmpuint(sf->len, ==, 2);
	witness = g_array_index(sf, GPid, 1);
	g_assert_true(wait_comm(witness, "hsw-witness"));
	kill(witness, SIGSTOP);
	g_assert_true(wait_stopped(witness));
	g_assert_cmpuint(fake_count(&f, "signalled-old SIGUSR1"), ==, 1);

	needle = g_strdup_printf("pid=%d exit 0", gen1);
	gone = fake_wait(&f, needle, T_WAIT);
	g_assert_nonnull(gone);
	g_free(needle);
	needle = g_strdup_printf("generation 1 (pid %d)", gen1);
	line = dup_wait_log(w, needle);
	kill(witness, SIGCONT);

	/* Superseded, not crashed: the reload goes on. */
	g_assert_null(strstr(line, "the one serving"));
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen2);
	assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* ---- 11: the user's own -sf pids ---- */

static void test_user_sf_pids(void)
{
	g_autofree gchar *out = NULL, *exec2 = NULL;
	g_autofree gchar *pidarg = NULL;
	g_autofree gchar *want = NULL;
	gchar *got;
	const char *opts[3];
	struct t_started *recorder;
	struct fx f;
	Wrapper *w;
	GPid gen1;

	fx_init(&f, NULL);
	out = g_build_filename(f.dir, "recorder.log", NULL);
	recorder = t_start_recorder(out);
	guarded_pid = recorder->pid;
	pidarg = g_strdup_printf("%d", recorder->pid);
	opts[0] = "-sf";
	opts[1] = pidarg;
	opts[2] = NULL;
	w = fx_start(&f, NULL, opts);
	gen1 = wait_ready_version(w, 1, "2.6.12");

	/* Exactly one signal: the soft stop from generation 1. */
	got = t_signals_before_marker(out, recorder);
	want = g_strdup_printf("signal=%d name=SIGUSR1 from=%d\n", SIGUSR1,
			       gen1);
	g_assert_cmpstr(got, ==, want);
	g_free(got);

	wrapper_signal(w, SIGUSR2);
	exec2 = dup_wait_log(w, "executing ");
	g_assert_false(has_arg(exec2, pidarg));
	g_assert_cmpint(wrapper_wait_ready(w, 2, T_WAIT), >, 0);
	assert_exit_code(stop_wrapper(w, SIGTERM), 0);

	/* And nothing since. */
	got = t_signals_before_marker(out, recorder);
	g_assert_cmpstr(got, ==, want);
	g_free(got);
	g_assert_true(t_pid_alive(recorder->pid));
	t_stop_recorder(recorder);
	guarded_pid = 0;
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* ---- 12: a soft stop the old generation lost ---- */

static void test_lost_soft_stop(void)
{
	g_autofree gchar *lost = NULL, *resend = NULL, *stopped = NULL;
	g_autofree gchar *line = NULL, *lost_line = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1, gen2;

	/* Generation 1 ignores the first SIGUSR1 it gets: generation 2's. */
	fx_init(&f, "fake-lose-first-usr1\n");
	w = fx_start(&f, NULL, NULL);
	gen1 = wait_ready_version(w, 1, "2.6.12");
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);
	fx_config(&f, NULL);
	wrapper_signal(w, SIGUSR2);
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	lost = g_strdup_printf("pid=%d lost SIGUSR1", gen1);
	lost_line = fake_wait(&f, lost, T_WAIT);
	g_assert_nonnull(lost_line);

	/* The wrapper sees it still listening, and says it again, once. */
	resend = g_strdup_printf("generation 1 (pid %d) still listens ", gen1);
	line = dup_wait_log(w, resend);
	g_assert_true(g_str_has_prefix(line, "<4>"));
	g_assert_nonnull(strstr(line, "SIGUSR1 again"));
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	stopped = g_strdup_printf("pid=%d soft-stop", gen1);
	g_assert_cmpuint(fake_count(&f, stopped), ==, 1);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen2);
	assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(w, "still listens "), ==, 1);
	fx_free_wrapper(w);
	fx_clear(&f);
}

/* --hard-reload: the lost stop is sent again as SIGTERM (-st), once. */
static void test_lost_hard_stop(void)
{
	g_autofree gchar *lost = NULL, *resend = NULL, *line = NULL;
	g_autofree gchar *lost_line = NULL;
	struct fx f;
	Wrapper *w;
	GPid gen1, gen2;

	fx_init(&f, "fake-lose-first-term\n");
	w = fx_start(&f, NULL, NULL);
	gen1 = wait_ready_version(w, 1, "2.6.12");
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);
	fx_config(&f, NULL);
	g_assert_cmpint(t_run_command((const char *[]){ t_wrapper_path(),
				      "--hard-reload", "-p", f.pidfile, NULL },
				      T_WAIT, NULL, NULL), ==, 0);
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	lost = g_strdup_printf("pid=%d lost SIGTERM", gen1);
	lost_line = fake_wait(&f, lost, T_WAIT);
	g_assert_nonnull(lost_line);

	resend = g_strdup_printf("generation 1 (pid %d) still listens ", gen1);
	line = dup_wait_log(w, resend);
	g_assert_true(g_str_has_prefix(line, "<4>"));
	g_assert_nonnull(strstr(line, "SIGTERM again"));
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_cmpuint(fake_count(&f, lost), ==, 1);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen2);
	assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(w, "still listens "), ==, 1);
	fx_free_wrapper(w);
	fx_clear(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	signal(SIGABRT, on_abort);

	g_test_add_func("/fake/version-1.5", test_version_15);
	g_test_add_func("/fake/version-1.7", test_version_17);
	g_test_add_func("/fake/double-dash-1.5", test_double_dash_15);
	g_test_add_func("/fake/version-1.8-and-later",
			test_version_18_and_later);
	g_test_add_func("/fake/version-unparseable", test_version_unparseable);
	g_test_add_func("/fake/config-error-at-start",
			test_config_error_at_start);
	g_test_add_func("/fake/config-error-at-reload",
			test_config_error_at_reload);
	g_test_add_func("/fake/bind-failure-at-reload",
			test_bind_failure_at_reload);
	g_test_add_func("/fake/crash", test_crash);
	g_test_add_func("/fake/crash-ds", test_crash_ds);
	g_test_add_func("/fake/child-hygiene", test_child_hygiene);
	g_test_add_func("/fake/stop-while-loading", test_stop_while_loading);
	g_test_add_func("/fake/reloads-while-loading",
			test_reloads_while_loading);
	g_test_add_func("/fake/stop-timeout", test_stop_timeout);
	g_test_add_func("/fake/old-exits-before-ready-report",
			test_old_exits_before_ready_report);
	g_test_add_func("/fake/user-sf-pids", test_user_sf_pids);
	g_test_add_func("/fake/lost-soft-stop", test_lost_soft_stop);
	g_test_add_func("/fake/lost-hard-stop", test_lost_hard_stop);
	return g_test_run();
}
