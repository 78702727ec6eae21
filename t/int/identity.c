/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Only its own (migrate/identity.h): the wrapper never stops, adopts or
 * takes the sockets of a haproxy that is not this service's, on the real
 * haproxy: two services sharing one configuration file, a pidfile another
 * user planted, a pidfile whose pid now names another service's haproxy,
 * a container's haproxy whose file has the same path, a haproxy under
 * another live wrapper. Each keeps serving, its pid the same, and no log
 * line says it was signalled. And what is its own is taken as such: the
 * haproxy a wrapper killed by SIGKILL left, with the wrapper's own
 * fragment among its files; a restart by hand that dropped to a user the
 * configuration names in quotes. Every wait is on a real event (a log line,
 * a socket answering, a process gone) and bounded; daemons are not our
 * children: registered, and ended by verified pid.
 */
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "base/proc.h"
#include "t/lib/takeover.h"

#define NOBODY 65534
#define SETPRIV "/usr/bin/setpriv"
#define UNSHARE "/usr/bin/unshare"
#define LATE_SEARCH_DONE "looked for foreign haproxy instances after the start"
/* The refusal of a haproxy by its credentials (migrate/trust.c). */
#define LOG_REFUSED_UID "could have started it"

/* What two services share: no listener of its own. */
static const char common_text[] =
	"global\n"
	"    hard-stop-after 10s\n"
	"defaults\n"
	"    mode http\n"
	"    timeout connect 1s\n"
	"    timeout client 10s\n"
	"    timeout server 10s\n";

/* One service's own file: its frontend, answering with its pid. */
static gchar *frontend_text(const char *name, guint16 port)
{
	return g_strdup_printf(
		"frontend fe_%s\n"
		"    bind 127.0.0.1:%u\n"
		"    http-request return status 200 content-type text/plain "
		"lf-string \"pid=%%pid\\n\"\n", name, port);
}

/* The wrapper on these files and pidfile, its runtime directory s's;
 * --debug: a search that found nothing is told with it only. */
static Wrapper *start_on(struct t_site *s, const char *const *files,
			 const char *pidfile)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();

	g_ptr_array_add(args, s->rundir_opt);
	g_ptr_array_add(args, (gpointer)"--debug");
	for (; *files; files++) {
		g_ptr_array_add(args, (gpointer)"-f");
		g_ptr_array_add(args, (gpointer)*files);
	}
	g_ptr_array_add(args, (gpointer)"-p");
	g_ptr_array_add(args, (gpointer)pidfile);
	g_ptr_array_add(args, NULL);
	return wrapper_start((const char *const *)args->pdata, NULL);
}

/* The search a second after generation 1 serves found nothing of ours. */
static void assert_late_search_found_none(Wrapper *w)
{
	g_autofree gchar *none = g_strdup_printf(LOG_LATE_SEARCH_FOUND_FMT,
						 0u);
	const char *line = wait_log_anywhere(w, LATE_SEARCH_DONE);

	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, none));
}

/* pid was never told to go, nor adopted, nor taken over by w. */
static void assert_never_touched(Wrapper *w, GPid pid)
{
	g_autofree gchar *soft = g_strdup_printf(LOG_FOREIGN_SOFT_STOP_FMT,
						 pid);
	g_autofree gchar *taking = g_strdup_printf(
		LOG_TAKING_OVER_STANDALONE_FMT, pid);
	g_autofree gchar *master = g_strdup_printf(LOG_TAKING_OVER_MASTER_FMT,
						   pid);
	g_autofree gchar *adopting = g_strdup_printf(LOG_ADOPTING "%d", pid);

	g_assert_null(wrapper_find_log(w, soft));
	g_assert_null(wrapper_find_log(w, taking));
	g_assert_null(wrapper_find_log(w, master));
	g_assert_null(wrapper_find_log(w, adopting));
	g_assert_null(wrapper_find_log(w, LOG_ADOPTING_ANY));
}

/* Serving on port, as pid, listening still. */
static void assert_serving(guint16 port, GPid pid)
{
	g_assert_true(t_pid_alive(pid));
	g_assert_true(listens_on(pid, port));
	g_assert_cmpint(t_http_pid(port), ==, pid);
}

/* ---- two services sharing one file ---- */

struct service {
	struct t_site site;	/* its directory, port, pidfile, runtime */
	gchar *own;		/* its own file */
	Wrapper *w;
	GPid gen1;
};

static void service_start(struct service *v, const char *common)
{
	const char *files[] = { common, v->own, NULL };

	v->w = start_on(&v->site, files, v->site.pidfile);
	v->gen1 = wrapper_wait_ready(v->w, 1, T_WAIT);
	g_assert_cmpint(v->gen1, >, 0);
	assert_late_search_found_none(v->w);
}

static void service_stop(struct service *v)
{
	stop_wrapper_ok(v->w);
	g_assert_true(t_wait_gone(v->gen1, T_WAIT));
}

/*
 * A: -f common -f a, B: -f common -f b, each its pidfile. The second
 * started takes nothing of the first's; stopping one leaves the other
 * serving with the same pid. first/second: who starts first; stop_first
 * whether the first started is stopped first.
 */
static void check_shared_file(gboolean a_first, gboolean stop_first)
{
	struct service a = { 0 }, b = { 0 };
	struct service *one = a_first ? &a : &b, *two = a_first ? &b : &a;
	struct service *gone = stop_first ? one : two;
	struct service *stays = stop_first ? two : one;
	g_autofree gchar *common = NULL, *a_text = NULL, *b_text = NULL;

	if (!have_haproxy())
		return;
	t_site_init(&a.site);
	t_site_init(&b.site);
	common = t_write_file(a.site.dir, "common.cfg", common_text);
	a_text = frontend_text("a", a.site.port);
	b_text = frontend_text("b", b.site.port);
	a.own = t_write_file(a.site.dir, "a.cfg", a_text);
	b.own = t_write_file(b.site.dir, "b.cfg", b_text);

	service_start(one, common);
	assert_serving(one->site.port, one->gen1);
	service_start(two, common);
	assert_serving(two->site.port, two->gen1);
	assert_serving(one->site.port, one->gen1);
	assert_never_touched(two->w, one->gen1);
	assert_never_touched(one->w, two->gen1);

	service_stop(gone);
	assert_serving(stays->site.port, stays->gen1);
	assert_never_touched(gone->w, stays->gen1);
	assert_never_touched(stays->w, gone->gen1);
	service_stop(stays);

	wrapper_free(a.w);
	wrapper_free(b.w);
	g_free(a.own);
	g_free(b.own);
	t_site_clear(&b.site);
	t_site_clear(&a.site);
}

static void test_shared_file_a_first(void)
{
	check_shared_file(TRUE, TRUE);
}

static void test_shared_file_b_first(void)
{
	check_shared_file(FALSE, FALSE);
}

/* ---- pidfiles that name another's haproxy ---- */

/*
 * The wrapper starts beside victim (which holds port too, SO_REUSEPORT)
 * and leaves it alone, with refused in a notice; victim serves on.
 */
static void check_left_alone(struct t_site *s, const char *cfg,
			     const char *pidfile, GPid victim,
			     guint16 victim_port, const char *refused,
			     gboolean late_search)
{
	const char *files[] = { cfg, NULL };
	g_autoptr(Wrapper) w = start_on(s, files, pidfile);
	GPid gen1;

	g_assert_nonnull(wrapper_wait_log(w, refused, T_WAIT));
	assert_first_sf(w, NULL, 0);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	if (late_search)
		assert_late_search_found_none(w);
	else
		g_assert_null(wrapper_find_log(w, LOG_SEARCH_DEFERRED));
	g_assert_true(t_pid_alive(victim));
	g_assert_true(listens_on(victim, victim_port));
	stop_wrapper_ok(w);
	assert_never_touched(w, victim);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_cmpint(t_wait_serving(victim_port, T_WAIT), ==, victim);
}

/*
 * A pidfile in a sticky directory, written by another user (nobody), that
 * names a haproxy ours in every other way: whoever wrote it chose it.
 * One notice; nothing signalled.
 */
static void test_planted_pidfile(void)
{
	struct t_site s = { 0 };
	g_autofree gchar *sticky = NULL, *pidfile = NULL, *pid_text = NULL;
	g_autofree gchar *refused = NULL;
	const char *plant[] = { SETPRIV, "--reuid=65534", "--regid=65534",
				"--clear-groups", "/bin/sh", "-c",
				"echo \"$0\" >\"$1\"", NULL, NULL, NULL };
	GPid victim;

	if (!have_haproxy())
		return;
	if (geteuid() != 0 || !g_file_test(SETPRIV, G_FILE_TEST_IS_EXECUTABLE)) {
		g_test_skip("needs root and setpriv: a file of another user");
		return;
	}
	daemon_site_init(&s);
	g_assert_cmpint(chmod(s.dir, 0755), ==, 0);
	sticky = g_build_filename(s.dir, "sticky", NULL);
	g_assert_cmpint(g_mkdir(sticky, 0700), ==, 0);
	g_assert_cmpint(chmod(sticky, 01777), ==, 0);
	pidfile = g_build_filename(sticky, "haproxy.pid", NULL);
	victim = t_foreign_daemon(s.dir, HAPROXY, pidfile, s.cfg);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, victim);

	/* Replaced by nobody, naming the same pid. */
	g_assert_cmpint(g_unlink(pidfile), ==, 0);
	pid_text = g_strdup_printf("%d", victim);
	plant[7] = pid_text;
	plant[8] = pidfile;
	g_assert_cmpint(t_run_command(plant, T_WAIT, NULL, NULL), ==, 0);

	refused = g_strdup_printf("pidfile: pidfile %s belongs to uid %u: "
				  "nothing is taken over", pidfile, NOBODY);
	check_left_alone(&s, s.cfg, pidfile, victim, s.port, refused,
			 FALSE);
	daemon_site_clear(&s);
}

/*
 * A stale pidfile whose pid now names another haproxy of the same user,
 * running the same file under its own pidfile: not ours.
 */
static void test_reused_pid(void)
{
	struct t_site s = { 0 };
	g_autofree gchar *other = NULL, *pid_text = NULL, *refused = NULL;
	GPid victim;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	other = g_build_filename(s.dir, "other.pid", NULL);
	victim = t_foreign_daemon(s.dir, HAPROXY, other, s.cfg);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, victim);
	pid_text = g_strdup_printf("%d\n", victim);
	g_assert_true(g_file_set_contents(s.pidfile, pid_text, -1, NULL));

	refused = g_strdup_printf(LOG_NOT_TAKING_OVER_FMT "its pidfile is %s, "
				  "not ours", victim, other);
	check_left_alone(&s, s.cfg, s.pidfile, victim, s.port, refused,
			 TRUE);
	daemon_site_clear(&s);
}

/*
 * A container's haproxy (another mount namespace) whose configuration
 * has the service's path, another file mounted over it there, and whose
 * pidfile is the service's: the same names, other files.
 */
static void test_container_same_path(void)
{
	struct t_site s = { 0 };
	const char *probe[] = { UNSHARE, "-m", "/bin/true", NULL };
	const char *argv[] = { "-m", "--propagation", "private",
			       "/bin/sh", "-c",
			       NULL, NULL, NULL, NULL, NULL };
	g_autofree gchar *script = g_strdup_printf(
		"/bin/mount --bind \"$0\" \"$1\" && "
		"exec %s -D -p \"$2\" -f \"$1\"", HAPROXY);
	g_autofree gchar *theirs_cfg = NULL, *refused = NULL;
	g_autofree gchar *err = NULL;
	guint16 theirs;
	GPid victim;

	if (!have_haproxy())
		return;
	if (!g_file_test(UNSHARE, G_FILE_TEST_IS_EXECUTABLE) ||
	    t_run_command(probe, T_WAIT, NULL, &err) != 0) {
		g_autofree gchar *why = g_strdup_printf(
			"unshare -m is not possible here: %s", err ? err : "");

		g_test_skip(why);
		return;
	}
	daemon_site_init(&s);
	theirs = t_free_port();
	theirs_cfg = t_write_config(s.dir, "container.cfg", theirs, NULL);
	argv[5] = script;
	argv[6] = theirs_cfg;
	argv[7] = s.cfg;
	argv[8] = s.pidfile;
	victim = T_FOREIGN(s.dir, .program = UNSHARE, .args = argv,
			   .daemon = TRUE, .pidfile = s.pidfile,
			   .exe = HAPROXY);
	g_assert_cmpint(t_wait_serving(theirs, T_WAIT), ==, victim);

	refused = g_strdup_printf(LOG_NOT_TAKING_OVER_FMT "it runs in another "
				  "mnt namespace", victim);
	check_left_alone(&s, s.cfg, s.pidfile, victim, theirs, refused,
			 TRUE);
	daemon_site_clear(&s);
}

/* The historic wrapper and a haproxy it can run (1.7: its -Ds parent
 * stays its child), from the real builds (../shared/haproxy beside the
 * tree, or $HSW_HAPROXY_BUILDS); NULL when they are not there. */
static gchar *historic_builds(void)
{
	const char *env = g_getenv("HSW_HAPROXY_BUILDS");
	g_autofree gchar *up2 = g_build_filename(t_dir(), "..", "..", "shared",
						 "haproxy", NULL);
	g_autofree gchar *up3 = g_build_filename(t_dir(), "..", "..", "..",
						 "shared", "haproxy", NULL);
	const char *dirs[] = { env, up2, up3 };

	for (guint i = 0; i < G_N_ELEMENTS(dirs); i++) {
		g_autofree gchar *w = NULL, *h = NULL;

		if (!dirs[i])
			continue;
		w = g_build_filename(dirs[i], "wrapper-1.7.0", NULL);
		h = g_build_filename(dirs[i], "haproxy-1.7.0", NULL);
		if (g_file_test(w, G_FILE_TEST_IS_EXECUTABLE) &&
		    g_file_test(h, G_FILE_TEST_IS_EXECUTABLE))
			return g_strdup(dirs[i]);
	}
	return NULL;
}

/* Valid for 1.7 and 2.6 alike: a TCP listener, nothing behind it. */
static gchar *tcp_config(const char *dir, guint16 port)
{
	g_autofree gchar *text = g_strdup_printf(
		"defaults\n"
		"    timeout connect 1s\n"
		"    timeout client 10s\n"
		"    timeout server 10s\n"
		"frontend fe\n"
		"    mode tcp\n"
		"    bind 127.0.0.1:%u\n"
		"    default_backend be\n"
		"backend be\n"
		"    mode tcp\n"
		"    server s 127.0.0.1:1\n", port);

	return t_write_file(dir, "tcp.cfg", text);
}

/*
 * The historic wrapper (another unit) runs the same file and pidfile: its
 * haproxy 1.7 -Ds parent and worker are its own, found by the pidfile and
 * by configuration and never taken over; stopping ours leaves them
 * serving.
 */
static void test_under_historic_wrapper(void)
{
	struct t_site s = { 0 };
	g_autofree gchar *builds = historic_builds(), *bin = NULL;
	g_autofree gchar *old_wrapper = NULL, *cfg = NULL, *refused = NULL;
	g_autofree gchar *src = NULL;
	g_autoptr(Wrapper) w = NULL;
	g_autoptr(GError) error = NULL;
	const char *files[] = { NULL, NULL };
	char *argv[] = { NULL, (char *)"-f", NULL, (char *)"-p", NULL, NULL };
	struct t_started *worker_reg;
	GPid historic, worker, parent, gen1;

	if (!have_haproxy())
		return;
	if (!builds) {
		g_test_skip("no real builds (wrapper-1.7.0, haproxy-1.7.0): "
			    "set HSW_HAPROXY_BUILDS");
		return;
	}
	daemon_site_init(&s);
	bin = g_build_filename(s.dir, "bin", NULL);
	src = g_build_filename(builds, "wrapper-1.7.0", NULL);
	old_wrapper = copy_program(bin, src, "haproxy-systemd-wrapper");
	g_free(src);
	/* It runs the haproxy beside itself. */
	src = g_build_filename(builds, "haproxy-1.7.0", NULL);
	g_free(copy_program(bin, src, "haproxy"));
	cfg = tcp_config(s.dir, s.port);
	argv[0] = old_wrapper;
	argv[2] = cfg;
	argv[4] = s.pidfile;
	g_assert_true(g_spawn_async(s.dir, argv, NULL,
				    G_SPAWN_DO_NOT_REAP_CHILD |
				    G_SPAWN_STDOUT_TO_DEV_NULL |
				    G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
				    &historic, &error));
	g_assert_no_error(error);
	t_remember(historic, "/haproxy-systemd-wrapper");
	worker = t_wait_pidfile(s.pidfile);
	g_assert_cmpint(worker, >, 0);
	worker_reg = t_remember(worker, "/haproxy");
	for (gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;
	     !listens_on(worker, s.port) && g_get_monotonic_time() < end;)
		g_usleep(10 * 1000);
	g_assert_true(listens_on(worker, s.port));

	files[0] = cfg;
	w = start_on(&s, files, s.pidfile);
	refused = g_strdup_printf(LOG_NOT_TAKING_OVER_FMT "it runs under "
				  "another wrapper (pid %d)", worker,
				  historic);
	g_assert_nonnull(wrapper_wait_log(w, refused, T_WAIT));
	assert_first_sf(w, NULL, 0);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	assert_late_search_found_none(w);
	g_assert_true(listens_on(worker, s.port));
	stop_wrapper_ok(w);
	assert_never_touched(w, worker);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_true(t_pid_alive(worker));
	g_assert_true(listens_on(worker, s.port));

	/* Its -Ds parent goes with its worker; then the historic wrapper,
	 * our child. */
	parent = proc_parent(worker);
	g_assert_true(t_signal_verified(worker_reg, SIGTERM));
	g_assert_true(t_wait_gone(worker, T_WAIT));
	g_assert_true(t_wait_gone(parent, T_WAIT));
	g_assert_cmpint(kill(historic, SIGKILL), ==, 0);
	g_assert_cmpint(t_wait_child(historic, T_WAIT), !=, -1);
	daemon_site_clear(&s);
}

/*
 * This wrapper twice (two units) on the same files and pidfile: each
 * one's generations are its own (they load its runtime directory's file
 * too), never taken over; stopping one leaves the other serving.
 */
static void test_two_wrappers_same_files(void)
{
	struct t_site s = { 0 }, t = { 0 };
	const char *files[] = { NULL, NULL };
	g_autoptr(Wrapper) first = NULL, second = NULL;
	g_autofree gchar *refused = NULL;
	GPid gen1, gen2;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	t_site_init(&t);
	files[0] = s.cfg;
	first = start_on(&s, files, s.pidfile);
	gen1 = wrapper_wait_ready(first, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	assert_late_search_found_none(first);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, gen1);

	second = start_on(&t, files, s.pidfile);
	refused = g_strdup_printf(LOG_NOT_TAKING_OVER_FMT, gen1);
	g_assert_nonnull(wrapper_wait_log(second, refused, T_WAIT));
	gen2 = wrapper_wait_ready(second, 1, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	assert_late_search_found_none(second);
	g_assert_true(listens_on(gen1, s.port));
	g_assert_true(listens_on(gen2, s.port));

	stop_wrapper_ok(second);
	g_assert_true(t_wait_gone(gen2, T_WAIT));
	assert_never_touched(second, gen1);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, gen1);
	g_assert_true(listens_on(gen1, s.port));
	stop_wrapper_ok(first);
	assert_never_touched(first, gen2);
	t_site_clear(&t);
	daemon_site_clear(&s);
}

/* Every socket listening on port is pid's: nothing else serves it. */
static void assert_only_listener(guint16 port, GPid pid)
{
	g_autoptr(GArray) inodes = tcp_inodes(port, 0, 0x0A);

	g_assert_cmpuint(inodes->len, >, 0);
	assert_holds_all(pid, inodes);
}

/* Nothing listens on port any more. */
static void assert_no_listener(guint16 port)
{
	g_autoptr(GArray) inodes = tcp_inodes(port, 0, 0x0A);

	g_assert_cmpuint(inodes->len, ==, 0);
}

/* The wrapper on the site, with the haproxy under test
 * (HSW_TEST_HAPROXY). */
static Wrapper *start_site_wrapper(struct t_site *s)
{
	g_autoptr(GPtrArray) args = t_site_args(s, NULL);

	return wrapper_start((const char *const *)args->pdata, NULL);
}

/* Does pid's command line name file? */
static gboolean cmdline_names(GPid pid, const char *file)
{
	g_auto(GStrv) argv = t_proc_strings(pid, "cmdline");

	return argv && g_strv_contains((const char *const *)argv, file);
}

/*
 * A wrapper killed by SIGKILL outside systemd (by hand, a container's
 * stop, KillMode=process) leaves its haproxy serving, with the wrapper's
 * own fragment (RUNDIR/listeners.cfg) among its -f. The next wrapper on
 * the same command line takes it over as its own, under load, with no
 * connection refused: then one haproxy serves, and after the stop nothing
 * of ours is left.
 */
static void test_orphan_of_killed_wrapper(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) first = NULL, second = NULL;
	g_autofree gchar *fragment = NULL, *exited = NULL;
	struct t_load l;
	GPid orphan, gen1;
	int status;

	if (!t_site_init_real(&s, NULL))
		return;
	if (!t_haproxy_needs(1, 8, "the wrapper's own fragment (-x)")) {
		t_site_clear(&s);
		return;
	}
	s.with_runtime_dir = TRUE;
	fragment = g_build_filename(s.rundir, "listeners.cfg", NULL);
	first = start_site_wrapper(&s);
	orphan = wrapper_wait_ready(first, 1, T_WAIT);
	g_assert_cmpint(orphan, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, orphan);
	g_assert_true(cmdline_names(orphan, fragment));

	g_assert_cmpint(kill(first->pid, SIGKILL), ==, 0);
	status = wrapper_wait_exit(first, T_WAIT);
	g_assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	t_remember(orphan, t_haproxy_path());
	g_assert_cmpint(t_http_pid(s.port), ==, orphan);
	t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, orphan, 20));

	second = start_site_wrapper(&s);
	gen1 = wait_taken_over(second, orphan);
	g_assert_true(t_wait_gone(orphan, T_WAIT));
	exited = g_strdup_printf(LOG_FOREIGN_EXITED_FMT, orphan, "standalone");
	g_assert_nonnull(wait_log_anywhere(second, exited));
	g_assert_null(wrapper_find_log(second, LOG_NOT_TAKING_OVER));

	g_assert_true(t_load_wait_answers(&l, gen1, 20));
	t_load_finish(&l);
	g_test_message("takeover of the orphan: %u requests, %u failed, %u "
		       "refused", l.requests, l.failures, l.refused);
	g_assert_cmpuint(l.refused, ==, 0);
	g_assert_cmpuint(l.failures, <=, RESET_WINDOW_MAX);
	assert_only_listener(s.port, gen1);
	g_assert_cmpint(t_http_pid(s.port), ==, gen1);

	stop_wrapper_ok(second);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	assert_no_listener(s.port);
	g_assert_false(t_pid_alive(orphan));
	daemon_site_clear(&s);
}

/*
 * As root, a configuration that drops to a user named in quotes, as
 * haproxy reads it (user "nobody"): the wrapper's haproxy runs as nobody,
 * and a restart by hand of it, nobody as well, is adopted as this
 * service's own rather than refused for its uid; the stop ends it, and
 * nothing of ours is left.
 */
struct dropped_user {
	const char *global;	/* the configuration's global lines */
	gint major, minor;	/* the first haproxy that reads them */
	const char *what;
};

static const struct dropped_user quoted_user = {
	"global\n    user \"nobody\"\n", 1, 6, "a quoted word"
};

/* The user named through a variable that the configuration itself sets
 * (setenv, before the line that reads it), as haproxy reads it. */
static const struct dropped_user setenv_user = {
	"global\n    setenv RUNAS nobody\n    user \"$RUNAS\"\n", 1, 7,
	"setenv"
};

static void test_quoted_user_adopted(gconstpointer data)
{
	const struct dropped_user *u = data;
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *adopting = NULL;
	struct proc_ids ids;
	GPid gen1, pid;

	if (geteuid() != 0) {
		g_test_skip("needs root: haproxy drops root to nobody");
		return;
	}
	if (!t_site_init_real(&s, u->global))
		return;
	if (!t_haproxy_needs(u->major, u->minor, u->what)) {
		t_site_clear(&s);
		return;
	}
	s.with_runtime_dir = TRUE;
	w = start_site_wrapper(&s);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	gen1 = answering_for(s.port, gen1);
	/* It answers: it has dropped root (before its first poll). */
	g_assert_true(proc_ids_at("/proc", gen1, &ids, NULL));
	g_assert_cmpuint(ids.uid[1], ==, NOBODY);

	pid = restart_by_hand(&s, "-sf", FALSE);
	adopting = g_strdup_printf(LOG_ADOPTING_KIND_FMT, "standalone", pid);
	g_assert_nonnull(wrapper_wait_log(w, adopting, T_WAIT));
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_cmpint(t_wait_answered_by(s.port, pid), ==, pid);
	g_assert_true(proc_ids_at("/proc", pid, &ids, NULL));
	g_assert_cmpuint(ids.uid[1], ==, NOBODY);
	g_assert_null(wrapper_find_log(w, LOG_REFUSED_UID));
	assert_only_listener(s.port, pid);

	stop_wrapper_ok(w);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	assert_no_listener(s.port);
	daemon_site_clear(&s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();
	g_test_add_func("/identity/shared-file-a-first",
			test_shared_file_a_first);
	g_test_add_func("/identity/shared-file-b-first",
			test_shared_file_b_first);
	g_test_add_func("/identity/planted-pidfile", test_planted_pidfile);
	g_test_add_func("/identity/reused-pid", test_reused_pid);
	g_test_add_func("/identity/container-same-path",
			test_container_same_path);
	g_test_add_func("/identity/under-historic-wrapper",
			test_under_historic_wrapper);
	g_test_add_func("/identity/two-wrappers-same-files",
			test_two_wrappers_same_files);
	g_test_add_func("/identity/orphan-of-killed-wrapper",
			test_orphan_of_killed_wrapper);
	g_test_add_data_func("/identity/quoted-user-adopted", &quoted_user,
			     test_quoted_user_adopted);
	g_test_add_data_func("/identity/setenv-user-adopted", &setenv_user,
			     test_quoted_user_adopted);
	return g_test_run();
}
