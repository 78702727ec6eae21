/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration tests of the takeover at first start (migrate/takeover.c) on
 * the real haproxy (Debian's 2.6 in /usr/sbin/haproxy), 127.0.0.1 only: a
 * -D daemon and a -W -D master-worker instance using the same pidfile or
 * configuration are taken over under load without a failed request; a
 * pidfile naming another program gets it no signal; a generation that
 * cannot bind leaves the foreign instance serving; --takeover=off leaves
 * it alone. Every wait is on a real event (a log line, a process exit, a
 * socket answering, a file's content) and bounded. The daemons are not our
 * children: they are ended by the pid read, through a pidfd, after
 * checking that it still is that process.
 */
#include "t/harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "legacy/pidfile.h"
#include "migrate/proc.h"

#define HAPROXY "/usr/sbin/haproxy"

/* ---- safety net: a failed assertion aborts; leave nothing behind ---- */

/* ---- a service: directory, configuration, pidfile, port ---- */

struct site {
	gchar *dir;
	gchar *cfg;
	gchar *pidfile;
	gchar *rundir_opt;
	guint16 port;
};

static void site_init(struct site *s)
{
	s->dir = t_tmpdir();
	s->port = t_free_port();
	s->cfg = t_write_config(s->dir, "h.cfg", s->port, NULL);
	s->pidfile = g_build_filename(s->dir, "h.pid", NULL);
	{
		g_autofree gchar *run = t_runtime_dir(s->dir);

		s->rundir_opt = g_strconcat("--runtime-dir=", run, NULL);
	}
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

/* "haproxy -D -p pidfile -f cfg" in the site's directory: the daemon. */
static GPid start_daemon(struct site *s, gboolean master_worker)
{
	const char *daemon[] = { HAPROXY, "-D", "-p", s->pidfile, "-f",
				 s->cfg, NULL };
	const char *mworker[] = { HAPROXY, "-W", "-D", "-p", s->pidfile,
				  "-f", s->cfg, NULL };
	GPid pid;

	t_launch_daemon(s->dir, master_worker ? mworker : daemon);
	pid = t_wait_pidfile(s->pidfile);
	g_assert_cmpint(pid, >, 0);
	t_remember(pid, HAPROXY);
	return pid;
}

/* Poll (bounded) until port answers with pid; the last pid that answered. */
static GPid wait_answering(guint16 port, GPid pid)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;
	GPid got;

	while ((got = t_http_pid(port)) != pid &&
	       g_get_monotonic_time() < end)
		g_usleep(20 * 1000);
	return got;
}

/* ---- /proc/net/tcp: who holds which socket ---- */

/* Inodes of the sockets on local port lport, remote port rport (0: any),
 * in TCP state st (0x0A: LISTEN, 0: any). */
static GArray *tcp_inodes(guint16 lport, guint16 rport, unsigned int st)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(guint64));
	g_autofree gchar *table = NULL;
	g_auto(GStrv) lines = NULL;

	g_assert_true(g_file_get_contents("/proc/net/tcp", &table, NULL, NULL));
	lines = g_strsplit(table, "\n", -1);
	for (char **l = lines; *l; l++) {
		unsigned int lp, rp, state;
		guint64 inode;

		/* sl local rem st tx:rx tr:when retr uid timeout inode */
		if (sscanf(*l, " %*s %*8s:%x %*8s:%x %x %*s %*s %*s %*s %*s "
			   "%" G_GUINT64_FORMAT, &lp, &rp, &state, &inode) != 4)
			continue;
		if (lp == lport && (!rport || rp == rport) &&
		    (!st || state == st) && inode)
			g_array_append_val(out, inode);
	}
	return out;
}

/* Does pid hold one of these socket inodes? */
static gboolean holds_socket(GPid pid, GArray *inodes)
{
	g_autofree gchar *dir = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		g_autofree gchar *link = g_file_read_link(path, NULL);
		guint64 inode;

		if (!link || sscanf(link, "socket:[%" G_GUINT64_FORMAT "]",
				    &inode) != 1)
			continue;
		for (guint i = 0; i < inodes->len; i++)
			if (g_array_index(inodes, guint64, i) == inode)
				return TRUE;
	}
	return FALSE;
}

/* A haproxy that soft-stops closes its listeners first thing. */
static gboolean listens_on(GPid pid, guint16 port)
{
	g_autoptr(GArray) inodes = tcp_inodes(port, 0, 0x0A);

	return holds_socket(pid, inodes);
}

/* Has pid accepted our connection conn to port (holds its other end)? */
static gboolean accepted_by(GPid pid, int conn, guint16 port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	g_autoptr(GArray) inodes = NULL;

	g_assert_cmpint(getsockname(conn, (struct sockaddr *)&a, &len), ==, 0);
	inodes = tcp_inodes(port, ntohs(a.sin_port), 0);
	return holds_socket(pid, inodes);
}

/* ---- sockets of our own ---- */

static int connect_port(guint16 port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	/* Bounds connect() too, and every read and write. */
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Sends what is left of a request on fd; the answering pid, or NULL and
 * why not. */
static gchar *finish_request(int fd, const char *rest, GPid *pid)
{
	g_autoptr(GString) resp = g_string_new(NULL);
	const char *body;
	char buf[512];
	ssize_t n;

	*pid = 0;
	if (write(fd, rest, strlen(rest)) != (ssize_t)strlen(rest))
		return g_strdup_printf("write: %s", g_strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		g_string_append_len(resp, buf, n);
	if (n < 0)
		return g_strdup_printf("read: %s (after %zu bytes)",
				       g_strerror(errno), resp->len);
	if (!g_str_has_prefix(resp->str, "HTTP/1.") ||
	    !strstr(resp->str, " 200 "))
		return g_strdup_printf("answer \"%.40s\"", resp->str);
	body = strstr(resp->str, "\r\n\r\n");
	*pid = body ? t_pid_in(body, "pid=") : 0;
	return *pid ? NULL : g_strdup("no pid in the answer");
}


/* ---- the wrapper ---- */

/* The wrapper on the site's pidfile and cfg (NULL: the site's), with
 * option (may be NULL) before haproxy's arguments. */
static struct wrapper *start_wrapper(struct site *s, const char *option,
				     const char *cfg)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();

	g_ptr_array_add(args, s->rundir_opt);
	if (option)
		g_ptr_array_add(args, (gpointer)option);
	g_ptr_array_add(args, "-f");
	g_ptr_array_add(args, (gpointer)(cfg ? cfg : s->cfg));
	g_ptr_array_add(args, "-p");
	g_ptr_array_add(args, s->pidfile);
	g_ptr_array_add(args, NULL);
	return wrapper_start((const char *const *)args->pdata, NULL);
}

/* A log line that may have come before or after the last one waited for. */
static const char *wait_log_anywhere(struct wrapper *w, const char *needle)
{
	return wrapper_find_log(w, needle) ? : wrapper_wait_log(w, needle,
							       T_WAIT);
}

/* The pids after -sf on an "executing" line. */
static GArray *sf_pids(const char *line)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	const char *p = line ? strstr(line, " -sf ") : NULL;
	g_auto(GStrv) words = NULL;

	if (!p)
		return pids;
	words = g_strsplit(p + strlen(" -sf "), " ", -1);
	for (char **x = words; *x && **x; x++) {
		guint64 v;
		GPid pid;

		if (!g_ascii_string_to_unsigned(*x, 10, 1, G_MAXINT, &v, NULL))
			break;
		pid = (GPid)v;
		g_array_append_val(pids, pid);
	}
	return pids;
}

/* Generation 1's -sf list is want (n pids) and then the witness. */
static void assert_first_sf(struct wrapper *w, const GPid *want, guint n)
{
	const char *line = wrapper_wait_log(w, "executing ", T_WAIT);
	g_autoptr(GArray) pids = sf_pids(line);

	g_assert_nonnull(line);
	g_test_message("%s", line);
	g_assert_cmpuint(pids->len, ==, n + 1);
	for (guint i = 0; i < n; i++)
		g_assert_cmpint(g_array_index(pids, GPid, i), ==, want[i]);
}

static void assert_exit_code(int status, int code)
{
	g_assert_cmpint(status, !=, -1);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, code);
}

static void stop_wrapper(struct wrapper *w)
{
	wrapper_signal(w, SIGTERM);
	assert_exit_code(wrapper_wait_exit(w, T_WAIT), 0);
}

/* `--status [format]`, run to its end (bounded); its output. */
static gchar *run_status(struct site *s, const char *format)
{
	const char *argv[] = { t_wrapper_path(), "--status", s->rundir_opt,
			       format, NULL };
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	GPid pid;
	int fd, status;

	g_spawn_async_with_pipes(NULL, (char **)argv, NULL,
				 G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
				 NULL, &fd, NULL, &error);
	g_assert_no_error(error);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		gint64 left = end - g_get_monotonic_time();
		char buf[1024];
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)(left / 1000) + 1) <= 0)
			break;
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		g_string_append_len(out, buf, n);
	}
	close(fd);
	status = t_wait_child(pid, T_WAIT);
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	g_test_message("status:\n%s", out->str);
	assert_exit_code(status, 0);
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/*
 * Status lists the foreign instance pid, unless it has exited and the
 * wrapper has seen it (its pidfd fired): checked in that order, a missing
 * line with the process still alive is a failure, without a race.
 */
static void assert_status_foreign(struct site *s, GPid pid, const char *kind)
{
	g_autofree gchar *text = run_status(s, NULL);
	g_autofree gchar *json = run_status(s, "--json");
	g_autofree gchar *om = run_status(s, "--format=openmetrics");
	g_autofree gchar *line = g_strdup_printf("foreign pid %d " HAPROXY
						 " %s started ", pid, kind);
	g_autofree gchar *obj = g_strdup_printf(
		"{\"number\":null,\"pid\":%d,\"haproxy\":null,"
		"\"executable\":\"" HAPROXY "\",", pid);
	const char *at = strstr(json, obj);
	g_autofree gchar *entry = at ? g_strndup(at, strcspn(at, "}")) : NULL;

	/* Taken over, whether still draining or gone. */
	g_assert_nonnull(strstr(om, "\nhaproxy_wrapper_takeovers_total 1\n"));

	if (!strstr(text, line) || !entry) {
		g_test_message("pid %d not in status: it must have exited", pid);
		g_assert_false(t_pid_alive(pid));
		return;
	}
	g_assert_nonnull(strstr(entry, "\"state\":\"foreign\""));
	/* Its real start time, not the epoch. */
	g_assert_null(strstr(entry, "\"started\":\"1970-"));
}

/* ---- tests ---- */

static gboolean have_haproxy(void)
{
	if (t_have_haproxy())
		return TRUE;
	g_test_skip("no " HAPROXY);
	return FALSE;
}

/* A request started and not finished: the daemon drains it, so it stays
 * alive (soft-stopping) until we finish it. */
static int hold_request(guint16 port, GPid daemon)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;
	int fd = connect_port(port);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(write(fd, "GET / HTTP/1.0\r\n", 16), ==, 16);
	while (!accepted_by(daemon, fd, port) &&
	       g_get_monotonic_time() < end)
		g_usleep(5 * 1000);
	g_assert_true(accepted_by(daemon, fd, port));
	return fd;
}

static void test_takeover_daemon_under_load(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *taking = NULL, *exited = NULL, *err = NULL;
	struct t_load l;
	GPid daemon, gen1, answered;
	int held;

	if (!have_haproxy())
		return;
	site_init(&s);
	daemon = start_daemon(&s, FALSE);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	held = hold_request(s.port, daemon);
	t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, daemon, 20));

	w = start_wrapper(&s, NULL, NULL);
	taking = g_strdup_printf("taking over standalone pid %d, ", daemon);
	g_assert_nonnull(wrapper_wait_log(w, taking, T_WAIT));
	assert_first_sf(w, &daemon, 1);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	g_assert_cmpint(gen1, !=, daemon);
	assert_status_foreign(&s, daemon, "standalone");

	/* The request it had accepted is answered, then it goes. */
	err = finish_request(held, "Host: t\r\n\r\n", &answered);
	close(held);
	g_assert_null(err);
	g_assert_cmpint(answered, ==, daemon);
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	exited = g_strdup_printf("foreign haproxy pid %d (standalone) has "
				 "exited", daemon);
	g_assert_nonnull(wait_log_anywhere(w, exited));

	g_assert_true(t_load_wait_answers(&l, gen1, 20));
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_assert_cmpint(t_http_pid(s.port), ==, gen1);
	g_assert_null(wrapper_find_log(w, "not taking over"));
	stop_wrapper(w);
	site_clear(&s);
}

static void test_takeover_master_worker(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *taking = NULL, *exited = NULL;
	const char *line;
	struct t_load l;
	GPid master, worker, gen1;

	if (!have_haproxy())
		return;
	site_init(&s);
	master = start_daemon(&s, TRUE);
	worker = t_wait_serving(s.port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	t_remember(worker, HAPROXY);
	g_assert_cmpint(worker, !=, master);
	g_assert_cmpint(proc_parent(worker), ==, master);
	t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, worker, 20));

	/* The wrapper waits itself until the master handles SIGUSR1. */
	w = start_wrapper(&s, NULL, NULL);
	taking = g_strdup_printf("taking over master-worker master pid %d ",
				 master);
	line = wrapper_wait_log(w, taking, T_WAIT);
	g_assert_nonnull(line);
	g_assert_true(t_pid_in(line, "(workers ") == worker);
	assert_first_sf(w, (const GPid[]){ master, worker }, 2);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);

	g_assert_true(t_wait_gone(worker, T_WAIT));
	g_assert_true(t_wait_gone(master, T_WAIT));
	exited = g_strdup_printf("foreign haproxy pid %d (master-worker "
				 "master) has exited", master);
	g_assert_nonnull(wait_log_anywhere(w, exited));

	g_assert_true(t_load_wait_answers(&l, gen1, 20));
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_assert_cmpint(t_http_pid(s.port), ==, gen1);
	stop_wrapper(w);
	site_clear(&s);
}

/* Started as our child, so that we can reap it; registered once ready. */
static void test_pidfile_naming_unrelated_process(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *record = NULL, *pids = NULL, *skip = NULL;
	g_autofree gchar *others = NULL;
	struct t_started *recorder;
	GPid pid, gen1, gen2;

	site_init(&s);
	record = g_build_filename(s.dir, "signals", NULL);
	recorder = t_start_recorder(record);
	pid = recorder->pid;
	pids = g_strdup_printf("%d\n", pid);
	g_assert_true(g_file_set_contents(s.pidfile, pids, -1, NULL));

	w = start_wrapper(&s, NULL, NULL);
	skip = g_strdup_printf("not taking over pid %d: ", pid);
	g_assert_nonnull(wrapper_wait_log(w, skip, T_WAIT));
	assert_first_sf(w, NULL, 0);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, gen1);
	g_assert_null(wrapper_find_log(w, "taking over standalone"));

	wrapper_signal(w, SIGUSR2);
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(wait_answering(s.port, gen2), ==, gen2);
	stop_wrapper(w);

	others = t_signals_before_marker(record, recorder);
	g_assert_cmpstr(others, ==, "");
	g_assert_true(t_signal_verified(recorder, SIGKILL));
	g_assert_cmpint(t_wait_child(pid, T_WAIT), !=, -1);
	site_clear(&s);
}

/* Between fork and exec: become nobody, as another local user would be. */
static void become_nobody(gpointer unused)
{
	if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(126);
}

/* Another user's haproxy (uid 65534) that loads the very configuration
 * path of the service (rewritten since, to another port): named in a
 * notice and left alone, through the wrapper's start, a reload and stop. */
static void test_other_users_instance_left_alone(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *skip = NULL, *cfg = NULL;
	char *argv[] = { (char *)HAPROXY, (char *)"-db", NULL, NULL, NULL };
	guint16 theirs;
	struct t_started *other;
	GPid pid, gen1, gen2;

	if (!have_haproxy())
		return;
	site_init(&s);
	theirs = s.port;
	g_assert_cmpint(chmod(s.dir, 0755), ==, 0);
	g_assert_cmpint(chmod(s.cfg, 0644), ==, 0);
	argv[2] = (char *)"-f";
	argv[3] = s.cfg;
	g_assert_true(g_spawn_async(s.dir, argv, NULL,
				    G_SPAWN_DO_NOT_REAP_CHILD |
				    G_SPAWN_STDOUT_TO_DEV_NULL,
				    become_nobody, NULL, &pid, &error));
	g_assert_no_error(error);
	other = t_remember(pid, HAPROXY);
	g_assert_cmpint(t_wait_serving(theirs, T_WAIT), ==, pid);

	/* The same path, now the service's own port. */
	s.port = t_free_port();
	cfg = t_write_config(s.dir, "h.cfg", s.port, NULL);
	g_assert_cmpstr(cfg, ==, s.cfg);
	w = start_wrapper(&s, NULL, NULL);
	skip = g_strdup_printf("not taking over pid %d: it runs as uid 65534",
			       pid);
	g_assert_nonnull(wrapper_wait_log(w, skip, T_WAIT));
	assert_first_sf(w, NULL, 0);
	g_assert_null(wrapper_find_log(w, "taking over standalone"));
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, gen1);
	wrapper_signal(w, SIGUSR2);
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(wait_answering(s.port, gen2), ==, gen2);
	stop_wrapper(w);

	g_assert_true(t_pid_alive(pid));
	g_assert_cmpint(t_http_pid(theirs), ==, pid);
	g_assert_true(t_signal_verified(other, SIGKILL));
	g_assert_cmpint(t_wait_child(pid, T_WAIT), !=, -1);
	site_clear(&s);
}

/* ---- names another user chose: never a forged log line ---- */

#define FORGED_DIR "t\n<0>haproxy-systemd-wrapper: FORGED"
#define FORGED_ESCAPED "t\\n<0>haproxy-systemd-wrapper: FORGED"

/* A copy of program under dir/FORGED_DIR/name: its path. */
static gchar *copy_as_forged(const char *dir, const char *program,
			     const char *name)
{
	g_autofree gchar *sub = g_build_filename(dir, FORGED_DIR, NULL);
	gchar *path = g_build_filename(sub, name, NULL);
	g_autofree gchar *data = NULL;
	gsize len;

	g_assert_cmpint(g_mkdir_with_parents(sub, 0755), ==, 0);
	g_assert_true(g_file_get_contents(program, &data, &len, NULL));
	g_assert_true(g_file_set_contents(path, data, len, NULL));
	g_assert_cmpint(chmod(path, 0755), ==, 0);
	return path;
}

/* Every line the wrapper wrote is one of its own: a priority of ours
 * (3 to 7) before its name, or haproxy's; the forged text only escaped. */
static void assert_no_forged_line(struct wrapper *w)
{
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		g_assert_false(line[0] == '<' && line[1] >= '0' &&
			       line[1] <= '2');
		if (strstr(line, "FORGED"))
			g_assert_nonnull(strstr(line, FORGED_ESCAPED));
	}
}

/* A process the pidfile names, its executable path holding a newline and
 * "<0>": the stranger notice (--takeover=off) and the takeover's skip
 * notice print it escaped. */
static void test_hostile_name_not_haproxy(void)
{
	struct site s = { 0 };
	g_autofree gchar *sleeper = NULL, *pids = NULL;
	char *argv[] = { NULL, (char *)"60", NULL };
	g_autoptr(GError) error = NULL;
	struct t_started *p;
	GPid pid;

	site_init(&s);
	sleeper = copy_as_forged(s.dir, "/usr/bin/sleep", "sleep");
	argv[0] = sleeper;
	g_assert_true(g_spawn_async(NULL, argv, NULL,
				    G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
				    &pid, &error));
	g_assert_no_error(error);
	p = t_remember(pid, "/sleep");
	pids = g_strdup_printf("%d\n", pid);
	g_assert_true(g_file_set_contents(s.pidfile, pids, -1, NULL));
	for (guint i = 0; i < 2; i++) {
		g_autoptr(Wrapper) w = NULL;
		g_autofree gchar *want = g_strdup_printf(
			i ? "not taking over pid %d: runs " : "names pid %d (",
			pid);
		const char *line;

		g_assert_true(g_file_set_contents(s.pidfile, pids, -1, NULL));
		w = start_wrapper(&s, i ? NULL : "--takeover=off", NULL);
		line = wrapper_wait_log(w, want, T_WAIT);
		g_assert_nonnull(line);
		g_assert_nonnull(strstr(line, FORGED_ESCAPED));
		g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
		stop_wrapper(w);
		assert_no_forged_line(w);
	}
	g_assert_true(t_signal_verified(p, SIGKILL));
	g_assert_cmpint(t_wait_child(pid, T_WAIT), !=, -1);
	site_clear(&s);
}

/* A haproxy run from such a path, taken over: the takeover notice and
 * --status (text and JSON, with \u escapes) show it escaped. */
static void test_hostile_name_taken_over(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *haproxy = NULL, *taking = NULL, *text = NULL;
	g_autofree gchar *json = NULL, *err = NULL;
	const char *argv[] = { NULL, "-D", "-p", NULL, "-f", NULL, NULL };
	const char *line;
	GPid daemon, answered;
	int held;

	if (!have_haproxy())
		return;
	site_init(&s);
	haproxy = copy_as_forged(s.dir, HAPROXY, "haproxy");
	argv[0] = haproxy;
	argv[3] = s.pidfile;
	argv[5] = s.cfg;
	t_launch_daemon(s.dir, argv);
	daemon = t_wait_pidfile(s.pidfile);
	g_assert_cmpint(daemon, >, 0);
	t_remember(daemon, "/haproxy");
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	held = hold_request(s.port, daemon);

	w = start_wrapper(&s, NULL, NULL);
	taking = g_strdup_printf("taking over standalone pid %d, ", daemon);
	line = wrapper_wait_log(w, taking, T_WAIT);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, FORGED_ESCAPED "/haproxy, found by"));
	g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
	/* It drains the held request: listed as foreign meanwhile. */
	text = run_status(&s, NULL);
	json = run_status(&s, "--json");
	g_assert_true(t_pid_alive(daemon));
	g_assert_nonnull(strstr(text, FORGED_ESCAPED "/haproxy standalone"));
	g_assert_null(strstr(text, "\n<0>"));
	g_assert_nonnull(strstr(json, "\"executable\":\"" ));
	g_assert_nonnull(strstr(json, "t\\u000a<0>haproxy-systemd-wrapper: "
				      "FORGED/haproxy\""));
	/* One line of JSON (then "ok"): no raw control character in it. */
	g_assert_true(g_str_has_suffix(json, "}\nok\n"));
	for (const char *c = json; *c != '\n'; c++)
		g_assert_cmpint((unsigned char)*c, >=, 0x20);

	err = finish_request(held, "Host: t\r\n\r\n", &answered);
	close(held);
	g_assert_null(err);
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	stop_wrapper(w);
	assert_no_forged_line(w);
	site_clear(&s);
}

static void test_cannot_bind_leaves_foreign_serving(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *taking = NULL, *wcfg = NULL, *bind_q = NULL;
	guint16 q = t_free_port();
	GPid daemon;
	int holder;

	if (!have_haproxy())
		return;
	site_init(&s);
	daemon = start_daemon(&s, FALSE);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	holder = t_plain_listener(q);

	/* Same pidfile, so the daemon is found; a config that also binds q. */
	bind_q = g_strdup_printf("    bind 127.0.0.1:%u\n", q);
	wcfg = t_write_config(s.dir, "w.cfg", s.port, bind_q);
	w = start_wrapper(&s, NULL, wcfg);
	taking = g_strdup_printf("taking over standalone pid %d, ", daemon);
	g_assert_nonnull(wrapper_wait_log(w, taking, T_WAIT));
	assert_first_sf(w, &daemon, 1);
	/* haproxy retries for about 2 s, pausing the daemon meanwhile. */
	assert_exit_code(wrapper_wait_exit(w, T_WAIT), 1);
	/* The witness, listed after the daemon, got SIGTTOU: so did the
	 * daemon. Its SIGTTIN report may come after haproxy's exit has
	 * ended the wrapper: not asserted. */
	g_assert_nonnull(wrapper_find_log(w, "an address is in use"));
	if (!wrapper_find_log(w, "old processes were told to resume"))
		g_test_message("the witness's SIGTTIN was not logged");
	g_assert_null(wrapper_find_log(w, "generation 1 ready"));

	/* Resumed (SIGTTIN): alive, listening, answering, still in the
	 * pidfile. */
	g_assert_true(t_pid_alive(daemon));
	g_assert_cmpint(wait_answering(s.port, daemon), ==, daemon);
	g_assert_true(listens_on(daemon, s.port));
	g_assert_cmpint(t_wait_pidfile(s.pidfile), ==, daemon);
	close(holder);
	site_clear(&s);
}

static void test_takeover_off(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	struct t_load l;
	GPid daemon, gen1;

	if (!have_haproxy())
		return;
	site_init(&s);
	daemon = start_daemon(&s, FALSE);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, daemon, 20));

	w = start_wrapper(&s, "--takeover=off", NULL);
	assert_first_sf(w, NULL, 0);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	/* Both listen with SO_REUSEPORT: ask /proc, not the port. */
	g_assert_true(t_pid_alive(daemon));
	g_assert_true(listens_on(daemon, s.port));
	g_assert_true(t_load_wait_answers(&l, gen1, 20));
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_assert_null(wrapper_find_log(w, "taking over"));
	stop_wrapper(w);

	/* Never signalled: once the wrapper is gone, it alone answers. */
	g_assert_true(t_pid_alive(daemon));
	g_assert_true(listens_on(daemon, s.port));
	g_assert_cmpint(wait_answering(s.port, daemon), ==, daemon);
	site_clear(&s);
	g_assert_false(t_pid_alive(daemon));
}

static void test_no_foreign(void)
{
	struct site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	GPid gen1;

	if (!have_haproxy())
		return;
	site_init(&s);
	w = start_wrapper(&s, NULL, NULL);
	/* The witness alone after -sf: nothing to wait for, nothing found. */
	assert_first_sf(w, NULL, 0);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, gen1);
	g_assert_null(wrapper_find_log(w, "taking over"));
	g_assert_null(wrapper_find_log(w, "foreign"));
	stop_wrapper(w);
	site_clear(&s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_end_started_on_abort();

	g_test_add_func("/takeover/daemon-under-load",
			test_takeover_daemon_under_load);
	g_test_add_func("/takeover/master-worker", test_takeover_master_worker);
	g_test_add_func("/takeover/pidfile-naming-unrelated-process",
			test_pidfile_naming_unrelated_process);
	g_test_add_func("/takeover/cannot-bind-leaves-foreign-serving",
			test_cannot_bind_leaves_foreign_serving);
	g_test_add_func("/takeover/other-users-instance-left-alone",
			test_other_users_instance_left_alone);
	g_test_add_func("/takeover/hostile-name-not-haproxy",
			test_hostile_name_not_haproxy);
	g_test_add_func("/takeover/hostile-name-taken-over",
			test_hostile_name_taken_over);
	g_test_add_func("/takeover/takeover-off", test_takeover_off);
	g_test_add_func("/takeover/no-foreign", test_no_foreign);
	return g_test_run();
}
