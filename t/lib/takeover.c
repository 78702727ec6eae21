/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the takeover and adoption tests share: see t/lib/takeover.h. */
#include "t/lib/takeover.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "legacy/pidfile.h"
#include "base/proc.h"

void daemon_site_init(struct t_site *s)
{
	t_site_init(s);
	/* The wrapper runs the haproxy its foreign instances run. */
	if (t_haproxy_switched())
		s->haproxy = g_strdup(t_haproxy_path());
	t_site_config(s, NULL);
}

void daemon_site_clear(struct t_site *s)
{
	t_end_all_started();
	t_site_clear(s);
}

/* "haproxy [-W] -D -p pidfile -f cfg" in the site's directory: the
 * daemon (the master-worker's master). */
GPid start_daemon(struct t_site *s, gboolean master_worker)
{
	if (!master_worker)
		return t_foreign_daemon(s->dir, HAPROXY, s->pidfile, s->cfg);
	return T_FOREIGN(s->dir, .program = HAPROXY, .daemon = TRUE,
			 .pidfile = s->pidfile,
			 .args = (const char *const[]){ "-W", "-D", "-p",
				s->pidfile, "-f", s->cfg, NULL });
}

/* Poll (bounded) until port answers with pid; the last pid that answered. */
GPid wait_answered_by(guint16 port, GPid pid)
{
	return t_wait_answered_by(port, pid);
}

/*
 * Inodes of the sockets on local port lport, remote port rport (0: any),
 * in TCP state st (0x0A: LISTEN, 0: any). Read a line at a time: load
 * tests swell the table to megabytes of TIME_WAIT entries, and splitting
 * it whole costs quadratic time under AddressSanitizer's strstr checks
 * (a single call ran for minutes in the sanitized suite).
 */
GArray *tcp_inodes(guint16 lport, guint16 rport, unsigned int st)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(guint64));
	FILE *table = fopen("/proc/net/tcp", "re");
	g_autofree char *line = NULL;
	size_t size = 0;

	g_assert_nonnull(table);
	while (getline(&line, &size, table) >= 0) {
		unsigned int lp, rp, state;
		guint64 inode;

		/* sl local rem st tx:rx tr:when retr uid timeout inode */
		if (sscanf(line, " %*s %*8s:%x %*8s:%x %x %*s %*s %*s %*s %*s "
			   "%" G_GUINT64_FORMAT, &lp, &rp, &state, &inode) != 4)
			continue;
		if (lp == lport && (!rport || rp == rport) &&
		    (!st || state == st) && inode)
			g_array_append_val(out, inode);
	}
	fclose(table);
	return out;
}

guint64 fd_inode(int fd)
{
	struct stat st;

	g_assert_no_errno(fstat(fd, &st));
	return st.st_ino;
}

GArray *fd_inodes(const int *fds, guint n)
{
	GArray *inodes = g_array_new(FALSE, FALSE, sizeof(guint64));

	for (guint i = 0; i < n; i++) {
		guint64 inode = fd_inode(fds[i]);

		g_array_append_val(inodes, inode);
	}
	return inodes;
}

GHashTable *held_sockets(GPid pid)
{
	g_autofree gchar *dir = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	GHashTable *held = g_hash_table_new_full(g_int64_hash, g_int64_equal,
						 g_free, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		g_autofree gchar *link = g_file_read_link(path, NULL);
		guint64 inode;

		if (link && sscanf(link, "socket:[%" G_GUINT64_FORMAT "]",
				   &inode) == 1)
			g_hash_table_add(held, g_memdup2(&inode, sizeof(inode)));
	}
	return held;
}

gboolean holds_socket(GPid pid, GArray *inodes)
{
	g_autoptr(GHashTable) held = held_sockets(pid);

	for (guint i = 0; i < inodes->len; i++)
		if (g_hash_table_contains(held,
					  &g_array_index(inodes, guint64, i)))
			return TRUE;
	return FALSE;
}

gboolean holds_inode(GPid pid, guint64 inode)
{
	g_autoptr(GHashTable) held = held_sockets(pid);

	return g_hash_table_contains(held, &inode);
}

gboolean holds_all(GPid pid, GArray *inodes)
{
	g_autoptr(GHashTable) held = held_sockets(pid);

	for (guint i = 0; i < inodes->len; i++)
		if (!g_hash_table_contains(held,
					   &g_array_index(inodes, guint64, i)))
			return FALSE;
	return TRUE;
}

void assert_holds_all(GPid pid, GArray *inodes)
{
	g_autoptr(GHashTable) held = held_sockets(pid);

	for (guint i = 0; i < inodes->len; i++) {
		guint64 inode = g_array_index(inodes, guint64, i);

		if (!g_hash_table_contains(held, &inode))
			g_error("pid %d does not hold socket %u of %u (inode %"
				G_GUINT64_FORMAT ")", pid, i + 1, inodes->len,
				inode);
	}
}

/* A haproxy that soft-stops closes its listeners first thing. */
gboolean listens_on(GPid pid, guint16 port)
{
	g_autoptr(GArray) inodes = tcp_inodes(port, 0, 0x0A);

	return holds_socket(pid, inodes);
}

/* Has pid accepted our connection conn to port (holds its other end)? */
gboolean accepted_by(GPid pid, int conn, guint16 port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	g_autoptr(GArray) inodes = NULL;

	g_assert_cmpint(getsockname(conn, (struct sockaddr *)&a, &len), ==, 0);
	inodes = tcp_inodes(port, ntohs(a.sin_port), 0);
	return holds_socket(pid, inodes);
}

int connect_port(guint16 port)
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
gchar *finish_request(int fd, const char *rest, GPid *pid)
{
	g_autoptr(GString) resp = g_string_new(NULL);
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
	*pid = t_http_answer_pid(resp->str);
	return *pid ? NULL : g_strdup_printf("answer \"%.40s\"", resp->str);
}

/* The wrapper on the site's pidfile and cfg (NULL: the site's), with
 * option (may be NULL) before haproxy's arguments. */
struct wrapper *start_wrapper(struct t_site *s, const char *option,
				     const char *cfg)
{
	return start_wrapper_env(s, option, cfg, NULL);
}

struct wrapper *start_wrapper_env(struct t_site *s, const char *option,
				  const char *cfg, const char *const *env)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);

	g_ptr_array_add(args, g_strdup(s->rundir_opt));
	/* The site's haproxy, unless the test names another. */
	if (s->haproxy && !(option && g_str_has_prefix(option, "--haproxy=")))
		g_ptr_array_add(args, g_strconcat("--haproxy=", s->haproxy,
						  NULL));
	if (option)
		g_ptr_array_add(args, g_strdup(option));
	g_ptr_array_add(args, g_strdup("-f"));
	g_ptr_array_add(args, g_strdup(cfg ? cfg : s->cfg));
	g_ptr_array_add(args, g_strdup("-p"));
	g_ptr_array_add(args, g_strdup(s->pidfile));
	g_ptr_array_add(args, NULL);
	return wrapper_start((const char *const *)args->pdata, env);
}

/* A log line that may have come before or after the last one waited for. */
const char *wait_log_anywhere(struct wrapper *w, const char *needle)
{
	return wrapper_find_log(w, needle) ? : wrapper_wait_log(w, needle,
							       T_WAIT);
}

/* The pids after -sf on an "executing" line. */
GArray *sf_pid_list(const char *line)
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

/*
 * Generation 1's -sf list is want (n pids) and then the witness; or, when
 * every group of theirs steers, the witness alone, and the wrapper said
 * (before it) that want stay off, for their soft stop from it once
 * generation 1 serves.
 */
void assert_first_sf(struct wrapper *w, const GPid *want, guint n)
{
	const char *line = wrapper_wait_log(w, LOG_EXECUTING, T_WAIT);
	g_autoptr(GArray) pids = sf_pid_list(line);

	g_assert_nonnull(line);
	g_test_message("%s", line);
	if (n > 0 && pids->len == 1) {
		g_autoptr(GString) list = g_string_new(NULL);
		g_autofree gchar *held = NULL;

		for (guint i = 0; i < n; i++)
			g_string_append_printf(list, "%s%d", i ? " " : "",
					       want[i]);
		held = g_strdup_printf(LOG_FOREIGN_HELD_BACK_FMT, list->str);
		g_assert_nonnull(wrapper_find_log(w, held));
		return;
	}
	g_assert_cmpuint(pids->len, ==, n + 1);
	for (guint i = 0; i < n; i++)
		g_assert_cmpint(g_array_index(pids, GPid, i), ==, want[i]);
}

void stop_wrapper_ok(struct wrapper *w)
{
	wrapper_signal(w, SIGTERM);
	t_assert_exit_code(wrapper_wait_exit(w, T_WAIT), 0);
}

/* `--status [format]`, run to its end (bounded); its output. */
gchar *run_status(struct t_site *s, const char *format)
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
	t_assert_exit_code(status, 0);
	return g_string_free(g_steal_pointer(&out), FALSE);
}

void finish_across_reset_window(struct t_load *l)
{
	guint failed = t_load_finish(l);

	g_test_message("across the reset window: %u failed", failed);
	g_assert_cmpuint(failed, <=, RESET_WINDOW_MAX);
}

/*
 * Status lists the foreign instance pid, unless it has exited and the
 * wrapper has seen it (its pidfd fired): checked in that order, a missing
 * line with the process still alive is a failure, without a race.
 * counter: the openmetrics sample that counts how it came (taken over at
 * start, or a restart by hand adopted).
 */
void assert_status_foreign(struct t_site *s, GPid pid, const char *kind,
				  const char *counter)
{
	g_autofree gchar *text = run_status(s, NULL);
	g_autofree gchar *json = run_status(s, "--json");
	g_autofree gchar *om = run_status(s, "--format=openmetrics");
	g_autofree gchar *line = g_strdup_printf("foreign pid %d %s %s started ",
						 pid, HAPROXY, kind);
	g_autofree gchar *obj = g_strdup_printf(
		"{\"number\":null,\"pid\":%d,\"haproxy\":null,"
		"\"executable\":\"%s\",", pid, HAPROXY);
	const char *at = strstr(json, obj);
	g_autofree gchar *entry = at ? g_strndup(at, strcspn(at, "}")) : NULL;

	/* Counted, whether still draining or gone. */
	g_assert_nonnull(strstr(om, counter));

	if (!strstr(text, line) || !entry) {
		g_test_message("pid %d not in status: it must have exited", pid);
		g_assert_false(t_pid_alive(pid));
		return;
	}
	g_assert_nonnull(strstr(entry, "\"state\":\"foreign\""));
	/* Its real start time, not the epoch. */
	g_assert_null(strstr(entry, "\"started\":\"1970-"));
}

gboolean have_haproxy(void)
{
	g_autofree gchar *why = g_strconcat("no ", HAPROXY, NULL);

	if (t_have_haproxy())
		return TRUE;
	g_test_skip(why);
	return FALSE;
}

/* Built with Lua: "haproxy -vv" says so (asked once). */
static gboolean haproxy_has_lua(void)
{
	static int has = -1;
	const char *argv[] = { HAPROXY, "-vv", NULL };
	g_autofree gchar *out = NULL;

	if (has < 0)
		has = t_run_command(argv, T_WAIT, &out, NULL) == 0 &&
		      strstr(out, "Built with Lua");
	return has;
}

gboolean have_haproxy_for(gboolean conditional, gboolean lua)
{
	g_autofree gchar *why = NULL;

	if (!have_haproxy())
		return FALSE;
	if (conditional &&
	    !t_haproxy_needs(2, 4, "a configuration with .if blocks"))
		return FALSE;
	if (!lua || haproxy_has_lua())
		return TRUE;
	why = g_strdup_printf("haproxy %s is built without Lua, which holds "
			      "its load here (lua-load)", t_haproxy_version());
	g_test_skip(why);
	return FALSE;
}

/* A request started and not finished: the daemon drains it, so it stays
 * alive (soft-stopping) until we finish it. */
int hold_request(guint16 port, GPid daemon)
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

/* What a deploy script does: "haproxy [-W] -D -p PIDFILE -f CFG -sf
 * $(cat PIDFILE)" (or -st), with cfg; the pid the new instance writes. */
GPid restart_by_hand_with(struct t_site *s, const char *cfg,
				 const char *how, gboolean master_worker)
{
	GPid old = t_wait_pidfile(s->pidfile);
	g_autofree gchar *oldarg = g_strdup_printf("%d", old);
	const char *daemon[] = { "-D", "-p", s->pidfile, "-f", cfg, how,
				 oldarg, NULL };
	const char *mworker[] = { "-W", "-D", "-p", s->pidfile, "-f", cfg,
				  how, oldarg, NULL };

	g_assert_cmpint(old, >, 0);
	/* The haproxy under test: the wrapper runs the same. */
	return T_FOREIGN(s->dir, .program = t_haproxy_path(), .daemon = TRUE,
			 .pidfile = s->pidfile, .old = old,
			 .args = master_worker ? mworker : daemon);
}

GPid restart_by_hand(struct t_site *s, const char *how,
			    gboolean master_worker)
{
	return restart_by_hand_with(s, s->cfg, how, master_worker);
}

/* The pid that answers on port, generation gen's own or its worker's. */
GPid answering_for(guint16 port, GPid gen)
{
	GPid pid = t_wait_serving(port, T_WAIT);

	g_assert_cmpint(pid, >, 0);
	if (pid != gen)
		g_assert_cmpint(proc_parent(pid), ==, gen);
	return pid;
}

/* A wrapper serving generation 1 on the site; the pid that answers. */
GPid start_serving(struct t_site *s, const char *option,
			  struct wrapper **w)
{
	GPid gen1;

	*w = start_wrapper(s, option, NULL);
	gen1 = wrapper_wait_ready(*w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	return answering_for(s->port, gen1);
}

/* `--reload`, synchronous: "ok ..." once the new haproxy serves. */
void reload_by_client(struct t_site *s)
{
	const char *argv[] = { t_wrapper_path(), "--reload", s->rundir_opt,
			       NULL };
	g_autofree gchar *out = NULL;

	g_assert_cmpint(t_run_command(argv, T_WAIT, &out, NULL), ==, 0);
	g_assert_true(g_str_has_prefix(out, "ok "));
}

/* The pid answering on port once it is not old any more (bounded). */
GPid answering_other_than(guint16 port, GPid old)
{
	gint64 deadline = g_get_monotonic_time() + T_WAIT * 1000LL;
	GPid pid;

	do {
		pid = t_http_pid(port);
		if (pid > 0 && pid != old)
			return pid;
		g_usleep(10 * 1000);
	} while (g_get_monotonic_time() < deadline);
	g_assert_not_reached();
}

void wait_taking_over(Wrapper *w, GPid daemon)
{
	g_autofree gchar *taking = g_strdup_printf(
		LOG_TAKING_OVER_STANDALONE_FMT, daemon);

	g_assert_nonnull(wrapper_wait_log(w, taking, T_WAIT));
	/* After the notice: the first "executing" line, daemon on -sf. */
	assert_first_sf(w, &daemon, 1);
}

GPid wait_taken_over(Wrapper *w, GPid daemon)
{
	GPid gen1;

	wait_taking_over(w, daemon);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	g_assert_cmpint(gen1, !=, daemon);
	return gen1;
}

struct t_started *fake_master_by_hand(struct t_site *s, const char *extra,
				      gchar **log, GPid *worker_out)
{
	const char *args[] = { "-W", "-p", s->pidfile, "-f", s->cfg, NULL };
	g_autofree gchar *fake = g_build_filename(s->dir, "bin", "haproxy",
						  NULL);
	struct t_started *master;
	GPid pid, worker;

	t_site_config(s, extra);
	pid = T_FOREIGN(s->dir, .args = args, .log = log);
	/* Known by the copy it runs; interned, as registrations outlive us. */
	master = t_remember(pid, g_intern_string(fake));
	worker = t_wait_serving(s->port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(worker, !=, pid);
	t_remember(worker, g_intern_string(fake));
	if (worker_out)
		*worker_out = worker;
	return master;
}

GPid assert_reload_loses_nothing(struct t_site *s, GPid serving)
{
	struct t_load l;

	t_load_start(&l, s->port);
	g_assert_true(t_load_wait_answers(&l, serving, 20));
	reload_by_client(s);
	serving = answering_other_than(s->port, serving);
	g_assert_true(t_load_wait_answers(&l, serving, 20));
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	return serving;
}

GPid restart_adopted(struct t_site *s, Wrapper *w)
{
	g_autofree gchar *adopting = NULL;
	GPid pid = restart_by_hand(s, "-sf", FALSE);

	adopting = g_strdup_printf(LOG_ADOPTING "%d", pid);
	g_assert_nonnull(wrapper_wait_log(w, adopting, T_WAIT));
	return pid;
}

GPid start_daemon_by_hand(struct t_site *s, const char *hold_var)
{
	return T_FOREIGN(s->dir, .program = HAPROXY,
			 .args = (const char *const[]){ "-D", "-p", s->pidfile,
							"-f", s->cfg, NULL },
			 .env = (const char *const[]){ hold_var, "1", NULL });
}

gchar *held_config_text_if(const char *dir, const char *name,
			   const char *var)
{
	g_autofree gchar *text = held_config_text(dir, name);

	return g_strdup_printf(".if defined(%s)\n%s.endif\n", var, text);
}

gchar *held_config_text(const char *dir, const char *name)
{
	g_autofree gchar *gate = g_strdup_printf("%s/%s.gate", dir, name);
	g_autofree gchar *held = g_strdup_printf("%s/%s.held", dir, name);
	g_autofree gchar *lua_name = g_strdup_printf("%s.lua", name);
	g_autofree gchar *lua = NULL, *text = NULL;

	text = g_strdup_printf(
		"local h = io.open(\"%s\", \"w\") h:write(\"held\\n\") h:close()\n"
		"local deadline = os.time() + 60\n"
		"while os.time() < deadline do\n"
		"  local f = io.open(\"%s\") if f then f:close() break end\n"
		"  os.execute(\"sleep 0.02\")\nend\n", held, gate);
	lua = t_write_file(dir, lua_name, text);
	return g_strdup_printf("global\n    lua-load %s\n", lua);
}
