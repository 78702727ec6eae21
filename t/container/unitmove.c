/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * doc/migration.md, "Moving to upstream's unit, one host at a time", run as
 * written under a real systemd 252 (t/container/container.c) with the .deb
 * installed, and again in a Debian 13 tree (systemd 257, haproxy 3.0),
 * under a load from the host that counts every refused or failed request:
 *
 *   1. the historic unit (haproxy.service from contrib's
 *      haproxy-historic.service) -> the packaged
 *      haproxy-systemd-wrapper.service;
 *   2. that unit -> the same unit with --master-worker=on;
 *   3. the hand-off to haproxy -Ws in place, and a reload after it;
 *   4. that unit -> Debian's own haproxy.service (haproxy -Ws).
 *
 * Each switch of units goes through a bridge: a plain haproxy -Ws in a
 * transient unit, on a copy of the configuration and a pidfile of its
 * own, which shares the listening ports through SO_REUSEPORT while one
 * unit stops gracefully (KillSignal=SIGUSR1 in a runtime drop-in, then
 * `systemctl stop`) and the next one starts, with net.ipv4.tcp_migrate_req
 * set for the switch. No unit's wrapper ever meets another unit's haproxy
 * on its pidfile or configuration, so nothing here depends on whether a
 * wrapper takes over or adopts across units.
 *
 * The container has a network namespace of its own (the sysctl is one of
 * its settings); this test's thread enters it. Every listener a switch
 * closes has requests in its queue when it closes (struct closing).
 *
 * Asserted: no request failed in any step, the queued ones included,
 * every reload succeeds, a unit left behind is never started again
 * (NRestarts=0, inactive), and no unit is failed at the end. The commands and what they print are in the test's
 * messages (prove -v): doc/migration.md quotes them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "t/container/container.h"
#include "t/lib/harness.h"

#define OLD		"haproxy.service"	/* historic, then Debian's */
#define NEW		PROG ".service"
#define BRIDGE		"haproxy-bridge.service"
#define CFG		"/etc/haproxy/haproxy.cfg"
#define PIDFILE		"/run/haproxy.pid"
/* A request every 2 ms: light beside the container, dense enough that
 * a closed listener in any step would be met by many requests. */
#define PACE_US		2000
#define MIGRATE		"net.ipv4.tcp_migrate_req"
/* Requests put in the queue of every listener a move closes. */
#define QUEUED		4
/* One thread: after SIGCONT the thread that takes the stop signal is the
 * one that would accept, and it closes its listeners first, so that the
 * queue is certainly there at the close (with two threads, the other one
 * may accept it first). */
#define ONE_THREAD	"    nbthread 1\n"

/* A command as the administrator types it, run by sh in the container;
 * what it prints is logged. Returns its exit code. */
static int G_GNUC_PRINTF(3, 4) shell(struct container *c, gchar **out,
				     const char *fmt, ...)
{
	g_autofree gchar *cmd = NULL;
	g_autofree gchar *o = NULL;
	g_autofree gchar *e = NULL;
	const char *argv[] = { "sh", "-c", NULL, NULL };
	va_list ap;
	int code;

	va_start(ap, fmt);
	cmd = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	argv[2] = cmd;
	code = cexecv(c, CMD_TIMEOUT_S, &o, &e, argv);
	g_test_message("# %s\n%s%s[exit %d]", cmd, o ? o : "", e ? e : "",
		       code);
	if (out)
		*out = g_strconcat(o ? o : "", e ? e : "", NULL);
	return code;
}

#define RUN(c, ...) g_assert_cmpint(shell(c, NULL, __VA_ARGS__), ==, 0)

/* Failures of the load since the last mark, and the requests. */
struct mark {
	guint requests;
	guint failures;
};

static struct mark load_since(struct t_load *l, struct mark *last)
{
	struct mark now, d;

	g_mutex_lock(&l->lock);
	now = (struct mark){ l->requests, l->failures };
	g_mutex_unlock(&l->lock);
	d = (struct mark){ now.requests - last->requests,
			   now.failures - last->failures };
	*last = now;
	return d;
}

static void step_done(struct t_load *l, struct mark *m, const char *step)
{
	struct mark d = load_since(l, m);

	g_test_message("step %s: %u requests, %u failed", step, d.requests,
		       d.failures);
	if (d.failures)
		g_test_message("first failures:\n%s", l->errors->str);
	g_assert_cmpuint(d.failures, ==, 0);
	/* The load ran through the step. */
	g_assert_cmpuint(d.requests, >, 0);
}

/* The test's configuration (t_config_text()), one thread: haproxy 3.x
 * takes nbthread in the first global section only. */
static void put_cfg(struct container *c, guint16 port, const char *extra)
{
	g_autofree gchar *text = t_config_text(port, extra);
	g_auto(GStrv) parts = g_strsplit(text, "global\n", 2);
	g_autofree gchar *cfg = NULL;

	g_assert_nonnull(parts[1]);
	cfg = g_strconcat(parts[0], "global\n" ONE_THREAD, parts[1], NULL);
	put_text(c, CFG, cfg);
}

/*
 * A listener closed with requests in its queue. Every close of the moves
 * (a unit's graceful stop, the bridge's end) is made to meet some: the
 * closing unit's haproxy processes that hold a listening socket on the
 * port are stopped (SIGSTOP), requests are sent until QUEUED of them wait
 * in those sockets' accept queues (/proc/net/tcp's rx_queue of a LISTEN
 * socket), `systemctl stop` runs, and once each stopped haproxy has its
 * stop signal (SIGUSR1) pending, SIGCONT lets it close its listeners with
 * the queue in them. Without net.ipv4.tcp_migrate_req (or the wrapper's
 * BPF program) the kernel resets every queued request; with it, they move
 * to the next socket of the SO_REUSEPORT group and are answered.
 */
struct closing {
	GArray *pids;		/* host pids, stopped */
	GHashTable *inodes;	/* their listening sockets on the port */
	GArray *fds;		/* the requests sent meanwhile */
	guint queued;		/* of them, in those sockets' queues */
};

/* The LISTEN sockets of 127.0.0.1:port in this thread's network
 * namespace (the container's): inode -> accept queue length. */
static GHashTable *listen_queues(guint16 port)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;
	g_autofree gchar *local = g_strdup_printf("0100007F:%04X", port);
	GHashTable *q = g_hash_table_new(NULL, NULL);

	g_assert_true(g_file_get_contents("/proc/thread-self/net/tcp", &text,
					  NULL, NULL));
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		g_auto(GStrv) w = g_strsplit_set(g_strstrip(*l), " ", -1);
		g_autoptr(GPtrArray) f = g_ptr_array_new();
		const char *colon;

		for (char **x = w; *x; x++)
			if (**x)
				g_ptr_array_add(f, *x);
		/* sl local rem st tx:rx tr:when retr uid timeout inode */
		if (f->len < 10 || !g_str_equal(f->pdata[1], local) ||
		    !g_str_equal(f->pdata[3], "0A"))
			continue;
		colon = strchr(f->pdata[4], ':');
		g_hash_table_insert(q, GSIZE_TO_POINTER(g_ascii_strtoull(
					    f->pdata[9], NULL, 10)),
				    GSIZE_TO_POINTER(g_ascii_strtoull(
					    colon ? colon + 1 : "0", NULL,
					    16)));
	}
	return q;
}

/* The unit's haproxy processes (host pids) holding one of the port's
 * listening sockets; those sockets into inodes. */
static GArray *unit_listeners(struct container *c, const char *unit,
			      guint16 port, GHashTable *inodes)
{
	g_autoptr(GHashTable) all = listen_queues(port);
	g_autofree gchar *cg = prop(c, unit, "ControlGroup");
	g_autofree gchar *needle = g_strdup_printf("/%s/payload%s\n", c->name,
						   cg);
	g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	const char *name;

	g_assert_cmpstr(cg, !=, "");
	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *cgf = g_strdup_printf("/proc/%s/cgroup", name);
		g_autofree gchar *commf = g_strdup_printf("/proc/%s/comm", name);
		g_autofree gchar *fdd = g_strdup_printf("/proc/%s/fd", name);
		g_autofree gchar *cgt = NULL;
		g_autofree gchar *comm = NULL;
		g_autoptr(GDir) fds = NULL;
		gboolean holds = FALSE;
		const char *fd;

		if (!g_ascii_isdigit(*name) ||
		    !g_file_get_contents(cgf, &cgt, NULL, NULL) ||
		    !strstr(cgt, needle) ||
		    !g_file_get_contents(commf, &comm, NULL, NULL) ||
		    !g_str_equal(g_strstrip(comm), "haproxy") ||
		    !(fds = g_dir_open(fdd, 0, NULL)))
			continue;
		while ((fd = g_dir_read_name(fds))) {
			g_autofree gchar *link = g_strdup_printf("%s/%s", fdd,
								 fd);
			g_autofree gchar *to = g_file_read_link(link, NULL);
			gsize ino;

			if (!to || sscanf(to, "socket:[%zu]", &ino) != 1 ||
			    !g_hash_table_contains(all, GSIZE_TO_POINTER(ino)))
				continue;
			g_hash_table_add(inodes, GSIZE_TO_POINTER(ino));
			holds = TRUE;
		}
		if (holds) {
			GPid pid = atoi(name);

			g_array_append_val(pids, pid);
		}
	}
	return pids;
}

static guint queued_on(GHashTable *inodes, guint16 port)
{
	g_autoptr(GHashTable) q = listen_queues(port);
	GHashTableIter it;
	gpointer ino;
	guint n = 0;

	g_hash_table_iter_init(&it, inodes);
	while (g_hash_table_iter_next(&it, &ino, NULL))
		n += GPOINTER_TO_UINT(g_hash_table_lookup(q, ino));
	return n;
}

/* A connection with its request sent, or -1. */
static int request_sent(guint16 port)
{
	static const char req[] = "GET / HTTP/1.0\r\nHost: t\r\n\r\n";
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != sizeof(req) - 1) {
		g_test_message("queued request: %s", g_strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The unit's listeners stopped with QUEUED requests waiting in them. */
static void closing_prepare(struct container *c, const char *unit,
			    guint16 port, struct closing *z)
{
	z->inodes = g_hash_table_new(NULL, NULL);
	z->pids = unit_listeners(c, unit, port, z->inodes);
	z->fds = g_array_new(FALSE, FALSE, sizeof(int));
	g_assert_cmpuint(z->pids->len, >, 0);
	for (guint i = 0; i < z->pids->len; i++) {
		GPid pid = g_array_index(z->pids, GPid, i);

		g_assert_cmpint(kill(pid, SIGSTOP), ==, 0);
		g_assert_true(t_wait_stopped(pid));
	}
	/* The SO_REUSEPORT hash spreads them: some go to the other
	 * socket of the group and are answered at once. */
	for (guint i = 0; i < 64 && queued_on(z->inodes, port) < QUEUED;
	     i++) {
		int fd = request_sent(port);

		g_assert_cmpint(fd, >=, 0);
		g_array_append_val(z->fds, fd);
	}
	z->queued = queued_on(z->inodes, port);
	g_assert_cmpuint(z->queued, >=, QUEUED);
}

static gboolean usr1_pending(GPid pid)
{
	static const char *const sets[] = { "\nSigPnd:", "\nShdPnd:" };
	g_autofree gchar *path = g_strdup_printf("/proc/%d/status", pid);
	g_autofree gchar *text = NULL;
	const guint64 bit = 1ULL << (SIGUSR1 - 1);

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return FALSE;
	for (guint i = 0; i < G_N_ELEMENTS(sets); i++) {
		const char *at = strstr(text, sets[i]);

		if (at && (g_ascii_strtoull(at + strlen(sets[i]), NULL, 16) &
			   bit))
			return TRUE;
	}
	return FALSE;
}

/* cmd (systemctl stop) runs; once every stopped haproxy has its stop
 * signal pending, they go on. The queued requests' answers: how many
 * failed. */
static guint closing_run(struct container *c, struct closing *z,
			 const char *cmd)
{
	g_autofree gchar *pid1 = g_strdup_printf("%d", c->pid1);
	const char *argv[] = { "/usr/bin/nsenter", "-t", pid1, "-a", "sh",
			       "-c", cmd, NULL };
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;
	struct t_command stop;
	guint failed = 0;
	int code;

	g_test_message("# %s (its %u listening haproxy process(es) stopped, "
		       "%u request(s) in their queues)", cmd, z->pids->len,
		       z->queued);
	t_command_spawn(&stop, argv);
	for (guint i = 0; i < z->pids->len; i++) {
		GPid pid = g_array_index(z->pids, GPid, i);

		while (!usr1_pending(pid) &&
		       g_get_monotonic_time() < deadline)
			g_usleep(5 * 1000);
		g_assert_true(usr1_pending(pid));
	}
	for (guint i = 0; i < z->pids->len; i++)
		kill(g_array_index(z->pids, GPid, i), SIGCONT);
	code = t_command_finish(&stop, CMD_TIMEOUT_S * 1000);
	g_test_message("%s%s[exit %d]", stop.out->str, stop.err->str, code);
	t_command_clear(&stop);
	g_assert_cmpint(code, ==, 0);
	for (guint i = 0; i < z->fds->len; i++) {
		int fd = g_array_index(z->fds, int, i);
		char buf[512] = "";
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

		if (n > 0)
			buf[n] = '\0';
		if (n < 0 || !g_str_has_prefix(buf, "HTTP/1.") ||
		    !strstr(buf, " 200 ")) {
			g_test_message("queued request %u: %s", i,
				       n < 0 ? g_strerror(errno) : buf);
			failed++;
		}
		close(fd);
	}
	g_array_unref(z->fds);
	g_array_unref(z->pids);
	g_hash_table_unref(z->inodes);
	return failed;
}

/* systemctl stop unit, its listeners closing with requests queued: every
 * one of them answered. */
static void stop_with_queue(struct container *c, const char *unit,
			    guint16 port)
{
	g_autofree gchar *cmd = g_strdup_printf("systemctl stop %s", unit);
	struct closing z;

	closing_prepare(c, unit, port, &z);
	g_assert_cmpuint(closing_run(c, &z, cmd), ==, 0);
}

/* The move's setting, for every SO_REUSEPORT group of the network
 * namespace: a closing listener's queue goes to another socket of its
 * group. The value it had, for migrate_back(). */
static gchar *migrate_on(struct container *c)
{
	gchar *was = NULL;

	g_assert_cmpint(shell(c, &was, "sysctl -n " MIGRATE), ==, 0);
	RUN(c, "sysctl -w " MIGRATE "=1");
	return g_strstrip(was);
}

static void migrate_back(struct container *c, const char *was)
{
	RUN(c, "sysctl -w " MIGRATE "=%s", was);
}

/* The bridge: haproxy -Ws on a copy of the configuration, beside the
 * unit that serves (SO_REUSEPORT); systemd-run returns once it serves
 * (Type=notify). */
static void bridge_start(struct container *c)
{
	/* The copy leaves out the stats sockets: they are paths, which the
	 * bridge would take from the serving unit (and remove at its end). */
	RUN(c, "sed '/^[[:space:]]*stats socket/d' " CFG
	       " > /run/haproxy-bridge.cfg");
	RUN(c, "systemd-run --unit=" BRIDGE " -p Type=notify "
	       "-p KillSignal=SIGUSR1 -p KillMode=mixed "
	       "-p SuccessExitStatus=143 "
	       "-p BindReadOnlyPaths=-/dev/log:/var/lib/haproxy/dev/log "
	       HAPROXY " -Ws -f /run/haproxy-bridge.cfg "
	       "-p /run/haproxy-bridge.pid");
	assert_prop(c, BRIDGE, "ActiveState", "active");
}

static void bridge_stop(struct container *c, guint16 port)
{
	stop_with_queue(c, BRIDGE, port);
	shell(c, NULL, "systemctl show -p LoadState,ActiveState,Result,"
		  "ExecMainStatus,ExecMainCode " BRIDGE);
	RUN(c, "rm -f /run/haproxy-bridge.cfg /run/haproxy-bridge.pid");
	/* A transient unit that stopped cleanly is collected (soon after
	 * systemctl returns): not failed, and its name free again. */
	g_assert_true(wait_props(c, BRIDGE, (const char *const[]){
		"LoadState", "not-found", "Result", "success", NULL }));
}

/* A graceful stop: SIGUSR1 to the unit's main process (the wrapper, or
 * a haproxy -Ws master), which ends once its haproxy has drained. A stop
 * by hand is never restarted (Restart=). */
static void graceful_stop(struct container *c, const char *unit,
			  guint16 port)
{
	RUN(c, "mkdir -p /run/systemd/system/%s.d && "
	       "printf '[Service]\\nKillSignal=SIGUSR1\\n' "
	       "> /run/systemd/system/%s.d/graceful.conf && "
	       "systemctl daemon-reload", unit, unit);
	stop_with_queue(c, unit, port);
	RUN(c, "rm -r /run/systemd/system/%s.d && systemctl daemon-reload",
	    unit);
	assert_prop(c, unit, "ActiveState", "inactive");
	assert_prop(c, unit, "Result", "success");
	assert_prop(c, unit, "MainPID", "0");
}

/* The unit is what the steps left it: inactive, never restarted. */
static void assert_left_alone(struct container *c, const char *unit)
{
	assert_prop(c, unit, "ActiveState", "inactive");
	assert_prop(c, unit, "NRestarts", "0");
}

/* Bounded: until a haproxy other than not answers on port. */
static GPid wait_new_answer(guint16 port, GPid not)
{
	GPid pid = wait_serving(port, not);

	g_assert_cmpint(pid, >, 0);
	return pid;
}

static void test_unitmove(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *out = NULL;
	g_autofree gchar *exe = NULL;
	guint16 port = t_free_port();
	struct mark m = { 0 };
	struct t_load l;
	g_autofree gchar *migrate = NULL;
	GPid main_pid, worker, master;

	if (!fx_deb_copied(f))
		return;
	if (!exists_in(f->c, "/proc/sys/net/ipv4/tcp_migrate_req")) {
		g_test_skip("Linux < 5.14, no " MIGRATE ": a move can reset "
			    "the requests queued on a listener it closes");
		return;
	}
	RUN(f->c, "dpkg -i /tmp/hsw.deb >/dev/null");
	put_cfg(f->c, port, NULL);
	/* Debian's haproxy.service binds /dev/log into haproxy's chroot. */
	put_text(f->c, "/var/lib/haproxy/dev/.keep", "");

	/* Where the host starts: the 1.5-era unit as haproxy.service. */
	install_unit(f->c, "haproxy-historic.service", OLD);
	put_text(f->c, UNIT_DIR "/" NEW ".d/test.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	RUN(f->c, "systemctl daemon-reload && systemctl start " OLD);
	worker = wait_new_answer(port, 0);
	t_load_start_paced(&l, port, PACE_US);
	g_assert_true(t_load_wait_answers(&l, worker, 10));
	load_since(&l, &m);

	/* 1. historic unit -> the packaged unit. */
	migrate = migrate_on(f->c);
	bridge_start(f->c);
	graceful_stop(f->c, OLD, port);
	RUN(f->c, "systemctl disable " OLD);
	RUN(f->c, "systemctl enable --now " NEW);
	bridge_stop(f->c, port);
	migrate_back(f->c, migrate);
	g_clear_pointer(&migrate, g_free);
	main_pid = prop_int(f->c, NEW, "MainPID");
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	worker = wait_new_answer(port, 0);
	g_assert_cmpint(parent_of(f->c, worker), ==, main_pid);
	RUN(f->c, "systemctl reload " NEW);
	RUN(f->c, SBIN_WRAPPER " --status --json -p " PIDFILE);
	step_done(&l, &m, "1 historic -> " NEW);
	assert_left_alone(f->c, OLD);

	/* 2. the same unit, haproxy in master-worker mode under the
	 * wrapper: a changed command line, so a new start of the unit. */
	migrate = migrate_on(f->c);
	bridge_start(f->c);
	graceful_stop(f->c, NEW, port);
	RUN(f->c, "mkdir -p " UNIT_DIR "/" NEW ".d && printf '[Service]\\n"
		  "ExecStart=\\nExecStart=" SBIN_WRAPPER " --master-worker=on"
		  " -f $CONFIG -p $PIDFILE $EXTRAOPTS\\n' > " UNIT_DIR "/"
		  NEW ".d/master-worker.conf && systemctl daemon-reload");
	RUN(f->c, "systemctl start " NEW);
	bridge_stop(f->c, port);
	migrate_back(f->c, migrate);
	g_clear_pointer(&migrate, g_free);
	main_pid = prop_int(f->c, NEW, "MainPID");
	worker = wait_new_answer(port, 0);
	master = parent_of(f->c, worker);
	g_assert_cmpint(parent_of(f->c, master), ==, main_pid);
	RUN(f->c, "systemctl reload " NEW);
	worker = wait_new_answer(port, worker);
	step_done(&l, &m, "2 " NEW " -> --master-worker=on");
	assert_left_alone(f->c, OLD);

	/* 3. the hand-off: same unit, same MainPID, now haproxy -Ws. */
	RUN(f->c, SBIN_WRAPPER " --handoff -p " PIDFILE);
	worker = wait_new_answer(port, worker);
	g_clear_pointer(&exe, g_free);
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, HAPROXY);
	g_assert_cmpint(prop_int(f->c, NEW, "MainPID"), ==, main_pid);
	g_assert_cmpint(parent_of(f->c, worker), ==, main_pid);
	/* The unit's reload works after the hand-off too. */
	RUN(f->c, "systemctl reload " NEW);
	worker = wait_new_answer(port, worker);
	g_assert_cmpint(parent_of(f->c, worker), ==, main_pid);
	/* ... and still fails on a configuration haproxy refuses, the
	 * worker serving on. */
	put_cfg(f->c, port, "    no-such-keyword here\n");
	g_assert_cmpint(shell(f->c, NULL, "systemctl reload " NEW), !=, 0);
	g_assert_cmpint(t_http_pid(port), ==, worker);
	put_cfg(f->c, port, NULL);
	assert_prop(f->c, NEW, "ActiveState", "active");
	g_assert_cmpint(prop_int(f->c, NEW, "MainPID"), ==, main_pid);
	step_done(&l, &m, "3 hand-off, reload");

	/* 4. -> Debian's haproxy.service: the historic override goes. */
	migrate = migrate_on(f->c);
	bridge_start(f->c);
	graceful_stop(f->c, NEW, port);
	RUN(f->c, "systemctl disable " NEW);
	RUN(f->c, "rm -rf " UNIT_DIR "/" NEW ".d " UNIT_DIR "/" OLD " "
		  UNIT_DIR "/" OLD ".d");
	RUN(f->c, "systemctl daemon-reload");
	put_text(f->c, UNIT_DIR "/" OLD ".d/test.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	RUN(f->c, "systemctl daemon-reload && systemctl enable --now " OLD);
	bridge_stop(f->c, port);
	migrate_back(f->c, migrate);
	g_clear_pointer(&migrate, g_free);
	g_clear_pointer(&out, g_free);
	out = prop(f->c, OLD, "FragmentPath");
	g_assert_true(g_str_has_suffix(out, "/lib/systemd/system/" OLD));
	main_pid = prop_int(f->c, OLD, "MainPID");
	g_clear_pointer(&exe, g_free);
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, HAPROXY);
	worker = wait_new_answer(port, 0);
	RUN(f->c, "systemctl reload " OLD);
	wait_new_answer(port, worker);
	step_done(&l, &m, "4 " NEW " -> Debian's " OLD);
	g_assert_cmpuint(t_load_finish(&l), ==, 0);

	assert_left_alone(f->c, NEW);
	assert_prop(f->c, OLD, "NRestarts", "0");
	g_clear_pointer(&out, g_free);
	g_assert_cmpint(shell(f->c, &out, "systemctl list-units --failed "
				       "--no-legend --plain"), ==, 0);
	g_assert_cmpstr(g_strstrip(out), ==, "");
	RUN(f->c, "systemctl stop " OLD);
}

/*
 * What the shortcuts cost, measured for doc/migration.md rather than
 * promised: run with HSW_UNITMOVE_MEASURE=1 (prove -v shows the counts).
 * Asserted is only what does not depend on timing: a unit whose main
 * process is signalled by hand comes back through Restart=always, masked
 * at runtime or not.
 */
static guint load_step(struct t_load *l, struct mark *m, const char *what)
{
	struct mark d = load_since(l, m);

	g_test_message("measured: %s: %u requests, %u failed", what,
		       d.requests, d.failures);
	return d.failures;
}

static void test_shortcuts(struct fixture *f, gconstpointer data)
{
	guint16 port = t_free_port();
	struct mark m = { 0 };
	struct t_load l;
	GPid main_pid;

	if (!g_getenv("HSW_UNITMOVE_MEASURE")) {
		g_test_skip("a measurement: HSW_UNITMOVE_MEASURE=1 runs it");
		return;
	}
	if (!fx_deb_copied(f))
		return;
	RUN(f->c, "dpkg -i /tmp/hsw.deb >/dev/null");
	put_config(f->c, CFG, port, NULL);
	put_text(f->c, UNIT_DIR "/" NEW ".d/test.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	RUN(f->c, "systemctl daemon-reload && systemctl start " NEW);
	t_load_start_paced(&l, port, PACE_US);
	g_assert_true(t_load_wait_answers(&l, wait_new_answer(port, 0), 10));
	load_since(&l, &m);

	for (guint i = 0; i < 3; i++) {
		RUN(f->c, "systemctl restart " NEW);
		g_assert_true(t_load_wait_answers(&l, wait_new_answer(port, 0),
						  10));
		load_step(&l, &m, "systemctl restart");
	}
	RUN(f->c, "systemctl reload " NEW);
	load_step(&l, &m, "systemctl reload");

	/* SIGUSR1 by hand, Restart=always: started again. */
	main_pid = prop_int(f->c, NEW, "MainPID");
	RUN(f->c, "systemctl kill -s SIGUSR1 --kill-who=main " NEW);
	g_assert_true(wait_gone_in(f->c, main_pid));
	g_assert_true(wait_props(f->c, NEW, (const char *const[]){
		"NRestarts", "1", "ActiveState", "active", NULL }));
	g_assert_true(t_load_wait_answers(&l, wait_new_answer(port, 0), 10));
	load_step(&l, &m, "kill -s SIGUSR1, Restart=always");

	/* The same, masked at runtime first: not started again, and
	 * nothing serves until it is unmasked and started. */
	main_pid = prop_int(f->c, NEW, "MainPID");
	RUN(f->c, "systemctl mask --runtime " NEW);
	RUN(f->c, "systemctl kill -s SIGUSR1 --kill-who=main " NEW);
	g_assert_true(wait_gone_in(f->c, main_pid));
	g_assert_true(wait_props(f->c, NEW, (const char *const[]){
		"MainPID", "0", NULL }));
	shell(f->c, NULL, "systemctl show -p ActiveState,SubState,Result,"
		  "NRestarts,LoadState " NEW);
	RUN(f->c, "systemctl unmask --runtime " NEW);
	shell(f->c, NULL, "systemctl reset-failed " NEW "; systemctl start "
		  NEW);
	g_assert_true(t_load_wait_answers(&l, wait_new_answer(port, 0), 10));
	load_step(&l, &m, "mask --runtime, kill -s SIGUSR1, unmask, start");

	/* A stop with nothing else serving: refused until the next start. */
	RUN(f->c, "systemctl disable --now " NEW);
	RUN(f->c, "systemctl start " NEW);
	g_assert_true(t_load_wait_answers(&l, wait_new_answer(port, 0), 10));
	load_step(&l, &m, "disable --now, then start");
	t_load_finish(&l);
	RUN(f->c, "systemctl stop " NEW);
}

/* A network namespace of its own: the move sets a sysctl of it. */
static const struct boot with_dpkg = { .tag = "mv", .dpkg = TRUE,
				       .private_net = TRUE };
/* Debian 13: systemd 257, haproxy 3.0, its own dpkg database. */
static const struct boot trixie = { .tag = "mv13", .tree = trixie_tree,
				    .private_net = TRUE };

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	container_handlers_install();
	g_test_add("/unitmove/historic-to-upstream", struct fixture,
		   &with_dpkg, fx_setup, test_unitmove, fx_teardown);
	g_test_add("/unitmove/debian13/historic-to-upstream", struct fixture,
		   &trixie, fx_setup, test_unitmove, fx_teardown);
	g_test_add("/unitmove/shortcuts-measured", struct fixture, &with_dpkg,
		   fx_setup, test_shortcuts, fx_teardown);
	return g_test_run();
}
