/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fault injection: what the wrapper does when the system fails under it.
 * haproxy missing or not executable at a reload, a pidfile it cannot
 * write, fork/pipe/exec failing (t/failshim.so, preloaded), descriptors
 * exhausted (RLIMIT_NOFILE lowered under it), the wrapper SIGKILLed in the
 * middle of a reload, and every control signal in every state.
 *
 * In each case: a clear error in the log, the serving generation keeps
 * serving (the same pid answers HTTP), nothing is orphaned, and the
 * wrapper goes on (a later reload works) unless the case is fatal by
 * design. The test process is a child subreaper: whatever the wrapper
 * leaves behind is reparented to it, where "nothing orphaned" is checked.
 * Waits are on events (log lines, exits, sockets, /proc), all bounded.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/harness.h"

#define HAPROXY "/usr/sbin/haproxy"

/* ---- a failed assertion aborts: end what the test started first ---- */

static Wrapper *guarded_wrapper;
static const char *guarded_dir;

/* Our own children, once the wrapper under test is reaped: orphans. */
static void kill_orphans(void)
{
	g_autoptr(GArray) kids = proc_children(getpid());

	for (guint i = 0; i < kids->len; i++) {
		GPid pid = g_array_index(kids, GPid, i);

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static void on_abort(int sig)
{
	if (guarded_wrapper && !guarded_wrapper->reaped) {
		g_array_unref(t_kill_tree(guarded_wrapper->pid));
		waitpid(guarded_wrapper->pid, NULL, 0);
	}
	kill_orphans();
	if (guarded_dir)
		t_rmtree(guarded_dir);
	signal(SIGABRT, SIG_DFL);
	raise(SIGABRT);
}

/* ---- processes ---- */

static gint64 deadline_after(guint ms)
{
	return g_get_monotonic_time() + (gint64)ms * 1000;
}

static char proc_state(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/stat", pid);
	g_autofree gchar *stat = NULL;
	const char *p;

	if (!g_file_get_contents(path, &stat, NULL, NULL))
		return 0;
	p = strrchr(stat, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static gboolean wait_stopped(GPid pid)
{
	gint64 deadline = deadline_after(T_WAIT);

	while (proc_state(pid) != 'T' && g_get_monotonic_time() < deadline)
		g_usleep(5 * 1000);
	return proc_state(pid) == 'T';
}

static guint count_fds(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
	guint n = 0;

	while (d && g_dir_read_name(d))
		n++;
	return n;
}

/* The lowest descriptor number pid does not use (the /proc entries are
 * symbolic links, not always to a file that exists). */
static int lowest_free_fd(GPid pid)
{
	for (int fd = 0;; fd++) {
		g_autofree gchar *path = g_strdup_printf("/proc/%d/fd/%d",
							 pid, fd);

		if (!g_file_test(path, G_FILE_TEST_IS_SYMLINK))
			return fd;
	}
}

/* Bounded wait until the wrapper's only descendants are want (its
 * helpers of a failed reload killed and reaped). */
static gboolean wait_descendants(Wrapper *w, const GPid *want, guint n)
{
	gint64 deadline = deadline_after(T_WAIT);

	for (;;) {
		g_autoptr(GArray) below = t_descendants(w->pid);
		gboolean same = below->len == n;

		for (guint i = 0; same && i < n; i++) {
			gboolean found = FALSE;

			for (guint j = 0; j < below->len; j++)
				found |= g_array_index(below, GPid, j) == want[i];
			same = found;
		}
		if (same)
			return TRUE;
		if (g_get_monotonic_time() >= deadline) {
			for (guint j = 0; j < below->len; j++)
				g_test_message("descendant: %d",
					       g_array_index(below, GPid, j));
			return FALSE;
		}
		g_usleep(10 * 1000);
	}
}

/* ---- the fixture: a directory, a port, a config, a wrapper ---- */

struct fx {
	gchar *dir;
	gchar *cfg;
	gchar *pidfile;
	gchar *fake_log;
	gchar *haproxy;		/* --haproxy=, or NULL */
	gboolean fake;
	guint16 port;
	GPtrArray *env;		/* "K=V" for the wrapper, NULL-terminated */
	Wrapper *w;
};

static const char *fake_path(void)
{
	static gchar *path;

	if (!path)
		path = g_build_filename(t_dir(), "fake-haproxy", NULL);
	return path;
}

/* Nothing but the wrapper (if still running) has been reparented to us. */
static void assert_no_orphans(struct fx *f)
{
	g_autoptr(GArray) kids = proc_children(getpid());

	for (guint i = 0; i < kids->len; i++) {
		GPid pid = g_array_index(kids, GPid, i);
		g_autofree gchar *path = g_strdup_printf("/proc/%d/comm", pid);
		g_autofree gchar *comm = NULL;

		if (pid == f->w->pid && !f->w->reaped)
			continue;
		g_file_get_contents(path, &comm, NULL, NULL);
		comm = g_strchomp(comm ? comm : g_strdup("?"));
		/* The wrapper reaps its helpers, even those it killed on its
		 * way out: anything here was orphaned. */
		g_test_message("orphan: pid %d (%s), state %c", pid, comm,
			       proc_state(pid));
		g_assert_not_reached();
	}
}

static void fx_init(struct fx *f)
{
	*f = (struct fx){ 0 };
	f->dir = t_tmpdir();
	guarded_dir = f->dir;
	f->port = t_free_port();
	f->pidfile = g_build_filename(f->dir, "haproxy.pid", NULL);
	f->env = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(f->env, NULL);
}

static void fx_setenv(struct fx *f, const char *key, const char *value)
{
	g_ptr_array_insert(f->env, f->env->len - 1,
			   g_strdup_printf("%s=%s", key, value));
}

/* The real haproxy; FALSE (test skipped) when there is none. */
static gboolean fx_init_real(struct fx *f)
{
	if (!t_have_haproxy()) {
		g_test_skip("no " HAPROXY);
		return FALSE;
	}
	fx_init(f);
	f->cfg = t_write_config(f->dir, "haproxy.cfg", f->port, NULL);
	return TRUE;
}

/* Rewritten atomically: a starting fake never reads half of it. */
static void fx_fake_config(struct fx *f, const char *extra)
{
	g_autofree gchar *text = g_strdup_printf("bind 127.0.0.1:%u\n%s",
						 f->port, extra ? extra : "");

	g_free(f->cfg);
	f->cfg = t_write_file(f->dir, "haproxy.cfg", text);
}

static void fx_init_fake(struct fx *f, const char *extra)
{
	fx_init(f);
	f->fake = TRUE;
	f->haproxy = g_strdup(fake_path());
	f->fake_log = g_build_filename(f->dir, "fake.log", NULL);
	fx_setenv(f, "FAKE_HAPROXY_LOG", f->fake_log);
	fx_fake_config(f, extra);
}

static void fx_start(struct fx *f, const char *const *opts)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);

	if (f->haproxy)
		g_ptr_array_add(args, g_strdup_printf("--haproxy=%s",
						      f->haproxy));
	for (; opts && *opts; opts++)
		g_ptr_array_add(args, g_strdup(*opts));
	g_ptr_array_add(args, g_strdup("-f"));
	g_ptr_array_add(args, g_strdup(f->cfg));
	g_ptr_array_add(args, g_strdup("-p"));
	g_ptr_array_add(args, g_strdup(f->pidfile));
	g_ptr_array_add(args, NULL);
	f->w = guarded_wrapper = wrapper_start(
		(const char *const *)args->pdata,
		(const char *const *)f->env->pdata);
}

static void fx_clear(struct fx *f)
{
	guarded_wrapper = NULL;
	g_clear_pointer(&f->w, wrapper_free);
	/* What wrapper_free killed below a wrapper that was gone already. */
	kill_orphans();
	guarded_dir = NULL;
	t_rmtree(f->dir);
	g_free(f->dir);
	g_free(f->cfg);
	g_free(f->pidfile);
	g_free(f->fake_log);
	g_free(f->haproxy);
	g_ptr_array_unref(f->env);
}

static const char *fx_wait_log(struct fx *f, const char *needle)
{
	const char *line = wrapper_wait_log(f->w, needle, T_WAIT);

	if (!line)
		g_test_message("no log line with \"%s\"", needle);
	g_assert_nonnull(line);
	return line;
}

static GPid fx_wait_ready(struct fx *f, guint number)
{
	GPid pid = wrapper_wait_ready(f->w, number, T_WAIT);

	g_assert_cmpint(pid, >, 0);
	return pid;
}

/* Poll (bounded) until pid answers on port: an old generation may still
 * take a connection or two just after its successor is ready. */
static gboolean wait_answering(guint16 port, GPid pid)
{
	gint64 deadline = deadline_after(T_WAIT);

	while (t_http_pid(port) != pid) {
		if (g_get_monotonic_time() >= deadline)
			return FALSE;
		g_usleep(10 * 1000);
	}
	return TRUE;
}

/* Generation number serves: ready, and the one answering. */
static GPid fx_serving(struct fx *f, guint number)
{
	GPid pid = fx_wait_ready(f, number);

	g_assert_true(wait_answering(f->port, pid));
	return pid;
}

/* The wrapper goes on: a reload signal makes generation number serve. */
static GPid fx_reload_works(struct fx *f, guint number)
{
	wrapper_signal(f->w, SIGUSR2);
	return fx_serving(f, number);
}

/* After a failure: gen still answers, the wrapper's only descendant is
 * gen (the failed attempt's helpers are reaped), nothing reparented. */
static void fx_keeps_serving(struct fx *f, GPid gen)
{
	g_assert_cmpint(t_http_pid(f->port), ==, gen);
	g_assert_true(wait_descendants(f->w, &gen, 1));
	g_assert_cmpint(wrapper_wait_exit(f->w, 0), ==, -1);
	assert_no_orphans(f);
}

/*
 * The wrapper's descriptor count once gen is its only child: GLib (2.74)
 * holds a pidfd for each child watch, so the count moves while a helper
 * is being reaped.
 */
static guint settled_fds(struct fx *f, GPid gen)
{
	g_assert_true(wait_descendants(f->w, &gen, 1));
	return count_fds(f->w->pid);
}

/* A failed reload leaks no descriptor: back to n, within the bound. */
static void assert_fds(struct fx *f, guint n)
{
	gint64 deadline = deadline_after(T_WAIT);

	while (count_fds(f->w->pid) != n && g_get_monotonic_time() < deadline)
		g_usleep(10 * 1000);
	g_assert_cmpuint(count_fds(f->w->pid), ==, n);
}

/* The failure line of a failed reload; it must name the serving one. */
static const char *fx_reload_fails(struct fx *f, GPid gen)
{
	g_autofree gchar *keeps = g_strdup_printf("(pid %d) keeps serving", gen);
	const char *line;

	wrapper_signal(f->w, SIGUSR2);
	line = fx_wait_log(f, "reload failed: ");
	g_test_message("%s", line);
	g_assert_true(g_str_has_prefix(line, "<3>"));
	g_assert_nonnull(strstr(line, keeps));
	fx_keeps_serving(f, gen);
	return line;
}

static void assert_exit_code(int status, int code)
{
	g_assert_cmpint(status, !=, -1);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, code);
}

/* Signal the wrapper (0: it ends on its own), wait for its end; all
 * below it must end with it, nothing reparented. The exit status. */
static int fx_stop(struct fx *f, int sig)
{
	g_autoptr(GArray) below = t_descendants(f->w->pid);
	int status;

	if (sig)
		wrapper_signal(f->w, sig);
	status = wrapper_wait_exit(f->w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	for (guint i = 0; i < below->len; i++)
		g_assert_true(t_wait_gone(g_array_index(below, GPid, i),
					  T_WAIT));
	assert_no_orphans(f);
	return status;
}

/* ---- the fake's event log ---- */

/* The nth (from 1) line of the fake's log holding needle and needle2. */
static gchar *fake_wait_nth(struct fx *f, const char *needle,
			    const char *needle2, guint nth)
{
	return t_wait_file_line(f->fake_log, needle, needle2, nth, T_WAIT);
}

static gboolean fake_logged(struct fx *f, GPid pid, const char *event)
{
	g_autofree gchar *text = NULL;
	g_autofree gchar *needle = g_strdup_printf("pid=%d %s", pid, event);

	return g_file_get_contents(f->fake_log, &text, NULL, NULL) &&
	       strstr(text, needle);
}

/* The nth generation the wrapper started (not a "-v" probe), caught
 * while it loads, and frozen there: its pid. */
static GPid fake_freeze_loading(struct fx *f, guint nth)
{
	g_autofree gchar *start = fake_wait_nth(f, " start ", " -db ", nth);
	GPid pid;

	g_assert_nonnull(start);
	pid = t_pid_in(start, "pid=");
	g_assert_cmpint(pid, >, 0);
	kill(pid, SIGSTOP);
	g_assert_true(wait_stopped(pid));
	/* Caught within its load delay: not bound, so still loading. */
	g_assert_false(fake_logged(f, pid, "bound"));
	return pid;
}

/* ---- haproxy missing, not executable, not a program ---- */

static gchar *copy_haproxy(const char *dir)
{
	g_autofree gchar *data = NULL;
	gchar *copy = g_build_filename(dir, "haproxy", NULL);
	gsize len;

	g_assert_true(g_file_get_contents(HAPROXY, &data, &len, NULL));
	g_assert_true(g_file_set_contents(copy, data, len, NULL));
	g_assert_cmpint(g_chmod(copy, 0755), ==, 0);
	return copy;
}

static void test_haproxy_missing_at_reload(void)
{
	g_autofree gchar *away = NULL;
	struct fx f;
	GPid gen1;
	guint fds;

	if (!fx_init_real(&f))
		return;
	f.haproxy = copy_haproxy(f.dir);
	away = g_strconcat(f.haproxy, ".away", NULL);
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);
	fds = settled_fds(&f, gen1);

	g_assert_cmpint(g_rename(f.haproxy, away), ==, 0);
	g_assert_nonnull(strstr(fx_reload_fails(&f, gen1), f.haproxy));
	assert_fds(&f, fds);

	/* Back, but without x bits (root may read it, exec needs them). */
	g_assert_cmpint(g_rename(away, f.haproxy), ==, 0);
	g_assert_cmpint(g_chmod(f.haproxy, 0644), ==, 0);
	g_assert_nonnull(strstr(fx_reload_fails(&f, gen1),
				"Permission denied"));
	assert_fds(&f, fds);

	g_assert_cmpint(g_chmod(f.haproxy, 0755), ==, 0);
	fx_reload_works(&f, 2);
	assert_exit_code(fx_stop(&f, SIGTERM), 0);
	fx_clear(&f);
}

/* Replaced by something that is no program: the version probe fails. */
static void test_haproxy_not_a_program(void)
{
	g_autofree gchar *saved = NULL;
	struct fx f;
	GPid gen1;

	if (!fx_init_real(&f))
		return;
	f.haproxy = copy_haproxy(f.dir);
	saved = g_strconcat(f.haproxy, ".saved", NULL);
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);

	g_assert_cmpint(g_rename(f.haproxy, saved), ==, 0);
	g_assert_true(g_file_set_contents(f.haproxy, "\x7f" "ELF garbage",
					  -1, NULL));
	g_assert_cmpint(g_chmod(f.haproxy, 0755), ==, 0);
	g_assert_nonnull(strstr(fx_reload_fails(&f, gen1), "-v"));

	g_assert_cmpint(g_rename(saved, f.haproxy), ==, 0);
	fx_reload_works(&f, 2);
	assert_exit_code(fx_stop(&f, SIGTERM), 0);
	fx_clear(&f);
}

/* ---- a pidfile that cannot be written ---- */

/* Root ignores permission bits: a parent that is a regular file does not. */
static void test_pidfile_unwritable(void)
{
	g_autofree gchar *notdir = NULL;
	const char *warn;
	struct fx f;
	GPid gen1;

	if (!fx_init_real(&f))
		return;
	notdir = t_write_file(f.dir, "not-a-directory", "");
	g_free(f.pidfile);
	f.pidfile = g_build_filename(notdir, "haproxy.pid", NULL);
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);
	warn = wrapper_find_log(f.w, "cannot write pidfile");
	g_assert_nonnull(warn);
	g_assert_true(g_str_has_prefix(warn, "<4>"));
	g_assert_nonnull(strstr(warn, "Not a directory"));
	fx_keeps_serving(&f, gen1);

	fx_reload_works(&f, 2);
	g_assert_cmpuint(wrapper_count_log(f.w, "cannot write pidfile"), ==, 2);
	assert_exit_code(fx_stop(&f, SIGTERM), 0);
	fx_clear(&f);
}

/* ---- fork, pipe, exec failing: t/failshim.so in the wrapper ---- */

struct shim_case {
	const char *token;	/* what the shim fails */
	const char *message;	/* in the failure line */
};

static const struct shim_case shim_cases[] = {
	{ "fork", "Resource temporarily unavailable" },
	{ "spawn-fork", "Resource temporarily unavailable" },
	{ "pipe2", "Too many open files" },
	{ "spawn-pipe2", "Too many open files" },
	{ "execve", "Permission denied" },
};

struct shim {
	gchar *control;
	gchar *log;
};

static void shim_setup(struct fx *f, struct shim *s, const char *initial)
{
	g_autofree gchar *so = g_build_filename(t_dir(), "failshim.so", NULL);

	g_assert_true(g_file_test(so, G_FILE_TEST_EXISTS));
	s->control = t_write_file(f->dir, "failshim.control", initial);
	s->log = g_build_filename(f->dir, "failshim.log", NULL);
	fx_setenv(f, "LD_PRELOAD", so);
	fx_setenv(f, "FAILSHIM_CONTROL", s->control);
	fx_setenv(f, "FAILSHIM_LOG", s->log);
	fx_setenv(f, "FAILSHIM_EXE", "haproxy-systemd-wrapper");
}

static void shim_set(struct shim *s, const char *tokens)
{
	g_assert_true(g_file_set_contents(s->control, tokens, -1, NULL));
}

/* The shim's own record that it failed a call: the fault was real. */
static gboolean shim_injected(struct shim *s, const char *token)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;

	if (!g_file_get_contents(s->log, &text, NULL, NULL))
		return FALSE;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i]; i++) {
		const char *sp = strchr(lines[i], ' ');

		if (sp && g_str_equal(sp + 1, token))
			return TRUE;
	}
	return FALSE;
}

static void shim_clear(struct shim *s)
{
	g_free(s->control);
	g_free(s->log);
}

static void test_shim(gconstpointer data)
{
	const struct shim_case *c = data;
	const char *line;
	struct shim s;
	struct fx f;
	GPid gen1;
	guint fds;

	if (!fx_init_real(&f))
		return;
	shim_setup(&f, &s, "");
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);
	g_assert_false(shim_injected(&s, c->token));
	fds = settled_fds(&f, gen1);

	shim_set(&s, c->token);
	line = fx_reload_fails(&f, gen1);
	g_assert_nonnull(strstr(line, c->message));
	g_assert_true(shim_injected(&s, c->token));
	assert_fds(&f, fds);

	shim_set(&s, "");
	fx_reload_works(&f, 2);
	assert_exit_code(fx_stop(&f, SIGTERM), 0);
	shim_clear(&s);
	fx_clear(&f);
}

/* No signalfd, no wrapper: fatal by design, before any haproxy. */
static void test_shim_signalfd_at_start(void)
{
	struct shim s;
	struct fx f;

	if (!fx_init_real(&f))
		return;
	shim_setup(&f, &s, "signalfd");
	fx_start(&f, NULL);
	assert_exit_code(fx_stop(&f, 0), 71);
	g_assert_true(shim_injected(&s, "signalfd"));
	g_assert_nonnull(wrapper_find_log(f.w, "signalfd: Too many open files"));
	g_assert_null(wrapper_find_log(f.w, "executing "));
	g_assert_false(g_file_test(f.pidfile, G_FILE_TEST_EXISTS));
	shim_clear(&s);
	fx_clear(&f);
}

/*
 * No fork at all from the start: the first "haproxy -v" cannot run. An
 * operating system failure, exit 71 by the README; nothing left behind.
 */
static void test_shim_fork_at_start(void)
{
	const char *line;
	struct shim s;
	struct fx f;
	int status;

	if (!fx_init_real(&f))
		return;
	shim_setup(&f, &s, "fork");
	fx_start(&f, NULL);
	status = fx_stop(&f, 0);
	g_assert_true(shim_injected(&s, "fork"));
	line = wrapper_find_log(f.w, "cannot start haproxy: ");
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, "Resource temporarily unavailable"));
	g_assert_null(wrapper_find_log(f.w, "executing "));
	g_assert_true(WIFEXITED(status));
	assert_exit_code(status, 71);
	shim_clear(&s);
	fx_clear(&f);
}

/* ---- descriptors exhausted ---- */

static void set_nofile(GPid pid, rlim_t soft)
{
	struct rlimit old, lim;

	g_assert_cmpint(prlimit(pid, RLIMIT_NOFILE, NULL, &old), ==, 0);
	lim = (struct rlimit){ .rlim_cur = soft, .rlim_max = old.rlim_max };
	g_assert_cmpint(prlimit(pid, RLIMIT_NOFILE, &lim, NULL), ==, 0);
}

static void test_nofile(void)
{
	struct rlimit orig;
	const char *line;
	struct fx f;
	GPid gen1;
	guint fds;

	if (!fx_init_real(&f))
		return;
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);
	fds = settled_fds(&f, gen1);
	g_assert_cmpint(prlimit(f.w->pid, RLIMIT_NOFILE, NULL, &orig), ==, 0);

	/* Every new descriptor would be at or above the limit. */
	set_nofile(f.w->pid, lowest_free_fd(f.w->pid));
	line = fx_reload_fails(&f, gen1);
	g_assert_nonnull(strstr(line, "Too many open files"));
	assert_fds(&f, fds);

	set_nofile(f.w->pid, orig.rlim_cur);
	fx_reload_works(&f, 2);
	assert_exit_code(fx_stop(&f, SIGTERM), 0);
	fx_clear(&f);
}

/* ---- the wrapper SIGKILLed in the middle of a reload ---- */

/*
 * Nothing kills haproxy when its wrapper dies: the witness goes (it has
 * PR_SET_PDEATHSIG), both generations are reparented (to the subreaper,
 * here the test; under systemd to PID 1), and the reload completes on its
 * own: the new haproxy binds, sends the old one its -sf SIGUSR1, serves.
 * Under systemd, KillMode=mixed then SIGKILLs what is left in the cgroup
 * once the main process is gone, and Restart= starts the service anew.
 */
static void test_wrapper_killed_mid_reload(void)
{
	g_autofree gchar *start2 = NULL;
	g_autoptr(GArray) below = NULL;
	struct fx f;
	GPid gen1, gen2, witness = 0;
	int status;

	fx_init_fake(&f, NULL);
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);

	fx_fake_config(&f, "fake-load-delay-ms 2000\n");
	wrapper_signal(f.w, SIGUSR2);
	fx_wait_log(&f, "executing ");
	start2 = fake_wait_nth(&f, " start ", " -db ", 2);
	g_assert_nonnull(start2);
	gen2 = t_pid_in(start2, "pid=");
	g_assert_false(fake_logged(&f, gen2, "bound"));
	below = t_descendants(f.w->pid);
	for (guint i = 0; i < below->len; i++) {
		GPid p = g_array_index(below, GPid, i);

		if (p != gen1 && p != gen2)
			witness = p;
	}
	g_assert_cmpuint(below->len, ==, 3);

	kill(f.w->pid, SIGKILL);
	status = wrapper_wait_exit(f.w, T_WAIT);
	g_assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	/* The witness dies with the wrapper; the generations do not. */
	g_assert_true(t_wait_gone(witness, T_WAIT));
	g_assert_cmpint(proc_parent(gen1), ==, getpid());
	g_assert_cmpint(proc_parent(gen2), ==, getpid());
	g_assert_cmpint(t_http_pid(f.port), ==, gen1);
	/* The reload finishes without its wrapper. */
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_true(wait_answering(f.port, gen2));
	g_assert_true(fake_logged(&f, gen1, "soft-stop"));
	g_assert_true(t_pid_alive(gen2));

	/* Ended by pid, as systemd's KillMode=mixed would. */
	kill(gen2, SIGKILL);
	g_assert_true(t_wait_gone(gen2, T_WAIT));
	fx_clear(&f);
}

/* ---- every control signal in every state ---- */

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
static void wait_reaction(struct fx *f, int sig)
{
	g_autofree gchar *needle = NULL;

	if (is_reload(sig))
		needle = g_strdup_printf("SIG%s: a reload is in progress",
					 sigabbrev_np(sig));
	else if (sig == SIGQUIT)
		needle = g_strdup("ignoring SIGQUIT from pid ");
	else
		needle = g_strdup_printf("SIG%s from pid %d: stopping",
					 sigabbrev_np(sig), getpid());
	fx_wait_log(f, needle);
}

/* A stop that stopped: exit 0, the frozen haproxy never bound. */
static void assert_stopped_cleanly(struct fx *f, GPid loading)
{
	assert_exit_code(fx_stop(f, 0), 0);
	g_assert_nonnull(wrapper_find_log(f->w, "exit, haproxy RC=0"));
	g_assert_false(fake_logged(f, loading, "bound"));
}

static void sig_in_starting(struct fx *f, int sig)
{
	GPid gen1;

	fx_start(f, NULL);
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
	assert_exit_code(fx_stop(f, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(f->w, "reloading on "), ==, 1);
}

static void sig_in_reloading(struct fx *f, int sig)
{
	GPid gen1, gen2;

	fx_start(f, NULL);
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
	assert_exit_code(fx_stop(f, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(f->w, "reloading on "), ==, 2);
}

/* Sent right after "re-executing": before the exec, during it, or to
 * the new image; blocked and pending throughout, never lost. */
static void sig_in_reexec(struct fx *f, int sig)
{
	static const char *const opts[] = { "--self-upgrade=always", NULL };
	GPid pid;

	fx_start(f, opts);
	pid = f->w->pid;
	fx_serving(f, 1);
	wrapper_signal(f->w, SIGUSR2);
	fx_wait_log(f, "re-executing on SIGUSR2.");
	wrapper_signal(f->w, sig);
	if (is_stop(sig)) {
		assert_exit_code(fx_stop(f, 0), 0);
		g_assert_nonnull(wrapper_find_log(f->w, "exit, haproxy RC=0"));
		return;
	}
	fx_wait_log(f, "running, adopted 1 generation(s)");
	fx_wait_ready(f, 2);
	if (sig == SIGQUIT) {
		g_assert_nonnull(wrapper_find_log(f->w, "ignoring SIGQUIT"));
		wrapper_signal(f->w, SIGUSR2);
	}
	fx_serving(f, 3);
	g_assert_cmpint(f->w->pid, ==, pid);
	assert_exit_code(fx_stop(f, SIGTERM), 0);
}

/* Until gen has accepted a connection of ours: it then drains it. */
static int hold_accepted(struct fx *f, GPid gen)
{
	guint before = count_fds(gen);
	gint64 deadline = deadline_after(T_WAIT);
	int conn = t_hold_connection(f->port);

	g_assert_cmpint(conn, >=, 0);
	while (count_fds(gen) == before && g_get_monotonic_time() < deadline)
		g_usleep(5 * 1000);
	g_assert_cmpuint(count_fds(gen), >, before);
	return conn;
}

static void sig_in_stopping(struct fx *f, int sig)
{
	g_autofree gchar *needle = NULL, *soft = NULL;
	GPid gen1;
	int conn;

	fx_start(f, NULL);
	gen1 = fx_serving(f, 1);
	conn = hold_accepted(f, gen1);
	wrapper_signal(f->w, SIGUSR1);
	fx_wait_log(f, "stopping gracefully");
	soft = fake_wait_nth(f, "soft-stop", NULL, 1);
	g_assert_nonnull(soft);

	wrapper_signal(f->w, sig);
	if (is_reload(sig))
		needle = g_strdup_printf("ignoring SIG%s: stopping",
					 sigabbrev_np(sig));
	else if (sig == SIGUSR1)
		needle = g_strdup_printf("SIGUSR1 from pid %d: stopping gracefully",
					 getpid());
	else if (sig == SIGQUIT)
		needle = g_strdup("ignoring SIGQUIT from pid ");
	else
		needle = g_strdup_printf("SIG%s while stopping gracefully: "
					 "stopping now", sigabbrev_np(sig));
	fx_wait_log(f, needle);
	if (sig == SIGTERM || sig == SIGINT) {
		/* At once, the connection still open. */
		assert_exit_code(fx_stop(f, 0), 0);
		close(conn);
		return;
	}
	/* Still draining; the end of the connection ends the stop. */
	g_assert_cmpint(wrapper_wait_exit(f->w, 0), ==, -1);
	g_assert_true(t_pid_alive(gen1));
	close(conn);
	assert_exit_code(fx_stop(f, 0), 0);
	g_assert_cmpuint(wrapper_count_log(f->w, "executing "), ==, 1);
}

static void test_signal_in_state(gconstpointer data)
{
	const struct sig_case *c = data;
	struct fx f;

	/* Time enough to freeze a loading haproxy before it binds. */
	fx_init_fake(&f, c->state == IN_STARTING || c->state == IN_RELOADING
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
	fx_clear(&f);
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
	signal(SIGABRT, on_abort);
	/* What the wrapper leaves behind becomes ours, to be seen. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	g_test_add_func("/faults/haproxy-missing-at-reload",
			test_haproxy_missing_at_reload);
	g_test_add_func("/faults/haproxy-not-a-program",
			test_haproxy_not_a_program);
	g_test_add_func("/faults/pidfile-unwritable", test_pidfile_unwritable);
	for (guint i = 0; i < G_N_ELEMENTS(shim_cases); i++) {
		g_autofree gchar *path = g_strdup_printf("/faults/shim/%s",
							 shim_cases[i].token);

		g_test_add_data_func(path, &shim_cases[i], test_shim);
	}
	g_test_add_func("/faults/shim/signalfd-at-start",
			test_shim_signalfd_at_start);
	g_test_add_func("/faults/shim/fork-at-start", test_shim_fork_at_start);
	g_test_add_func("/faults/nofile", test_nofile);
	g_test_add_func("/faults/wrapper-killed-mid-reload",
			test_wrapper_killed_mid_reload);
	add_signal_tests();
	return g_test_run();
}
