/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Steering (wrapper/steering/reuseport.c): where a haproxy closes its listeners (a
 * reload without -x, a takeover), each SO_REUSEPORT group sends its new
 * handshakes to the new haproxy's socket before the old one gets its soft
 * stop. The real haproxy (Debian's 2.6, or HSW_TEST_HAPROXY's build),
 * 127.0.0.1 only.
 *
 * Whether the kernel resets a handshake at the microsecond its listener
 * closes is a matter of chance, rare and host-dependent: no load test
 * shows it within a bounded time on every host. What the fix changes is
 * deterministic, and that is what is checked: with the old haproxy
 * frozen (SIGSTOP) while the new one becomes ready, every new connection
 * must be answered by the new one. Without steering the kernel's hash
 * sends about half of them to the frozen listener (the chance that all
 * CONNECTIONS avoid it is 2^-CONNECTIONS), where they wait unanswered;
 * with it, none goes there. The old haproxy is then let go and must
 * leave, having got its soft stop from the wrapper.
 */
#include "t/lib/harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "base/proc.h"
#include "t/lib/logs.h"

#define CONNECTIONS 24

static const char *const seamless_off[] = { "--seamless-reload=off", NULL };


/* The haproxy processes of an instance whose top is pid: pid and every
 * process below it (a -Ds parent's workers), registered for the end. */
static GArray *instance_processes(GPid pid)
{
	g_autoptr(GArray) below = t_descendants(pid);
	GArray *all = g_array_new(FALSE, FALSE, sizeof(GPid));

	g_array_append_val(all, pid);
	g_array_append_vals(all, below->data, below->len);
	return all;
}

/* Registered once each (the registry is small), then stopped. */
static GPtrArray *freeze(GArray *pids)
{
	GPtrArray *procs = g_ptr_array_new();

	for (guint i = 0; i < pids->len; i++) {
		struct t_started *p = t_remember(g_array_index(pids, GPid, i),
						 t_haproxy_path());

		g_assert_true(t_signal_verified(p, SIGSTOP));
		g_assert_true(t_wait_stopped(p->pid));
		g_ptr_array_add(procs, p);
	}
	return procs;
}

static void thaw(GPtrArray *procs)
{
	for (guint i = 0; i < procs->len; i++)
		g_assert_true(t_signal_verified(g_ptr_array_index(procs, i),
						SIGCONT));
}

/* Is pid top, or below it? */
static gboolean within(GPid pid, GPid top)
{
	for (guint depth = 0; pid > 1 && depth < 4; depth++) {
		if (pid == top)
			return TRUE;
		pid = proc_parent(pid);
	}
	return FALSE;
}

static int connect_once(guint16 port)
{
	static const char req[] = "GET / HTTP/1.0\r\nHost: t\r\n\r\n";
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_assert_cmpint(fd, >=, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	g_assert_cmpint(connect(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	g_assert_cmpint(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL), ==,
			sizeof(req) - 1);
	return fd;
}

/* The pid in the answer on fd, read until the peer closes or the
 * deadline; 0 if none came. */
static GPid answer_pid(int fd, gint64 deadline)
{
	char buf[1024];
	gsize got = 0;
	const char *at;

	for (;;) {
		int left = t_ms_left(deadline);
		struct timeval tv = { .tv_sec = left / 1000,
				      .tv_usec = (left % 1000) * 1000 + 1 };
		ssize_t n;

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (got >= sizeof(buf) - 1)
			break;
		n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	buf[got] = '\0';
	at = strstr(buf, "pid=");
	return at ? (GPid)g_ascii_strtoll(at + 4, NULL, 10) : 0;
}

/*
 * CONNECTIONS new connections, all opened before any answer is read:
 * each must be answered, within the bound, by a process of top's.
 */
static void assert_all_answered_by(guint16 port, GPid top)
{
	int fds[CONNECTIONS];
	gint64 deadline;
	guint elsewhere = 0;

	for (guint i = 0; i < CONNECTIONS; i++)
		fds[i] = connect_once(port);
	deadline = t_deadline(T_WAIT);
	for (guint i = 0; i < CONNECTIONS; i++) {
		GPid pid = answer_pid(fds[i], deadline);

		if (!within(pid, top)) {
			g_test_message("connection %u: answered by pid %d, "
				       "not by %d's", i, pid, top);
			elsewhere++;
		}
		close(fds[i]);
	}
	g_assert_cmpuint(elsewhere, ==, 0);
}

/* Does text name one of pids as a word? */
static gboolean lists_any(const char *text, GArray *pids)
{
	for (guint i = 0; i < pids->len; i++) {
		g_autofree gchar *word = g_strdup_printf(
			" %d ", g_array_index(pids, GPid, i));

		if (strstr(text, word))
			return TRUE;
	}
	return FALSE;
}

/* Generation 1 ready and answering: its top pid (a -Ds parent's worker
 * answers for it). */
static GPid start_serving(struct t_site *s, const char *const *opts)
{
	GPid gen1;

	t_site_start_wrapper(s, NULL, opts);
	gen1 = wrapper_wait_ready(s->w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	g_assert_true(within(t_wait_serving(s->port, T_WAIT), gen1));
	return gen1;
}

/* The index of the first of w's lines with needle after from, or -1. */
static gint line_index(Wrapper *w, const char *needle, gint from)
{
	for (guint i = from + 1; i < w->lines->len; i++)
		if (strstr(g_ptr_array_index(w->lines, i), needle))
			return (gint)i;
	return -1;
}

/*
 * A reload without -x with the old generation frozen: the new one gets
 * every new connection, and the wrapper steered before it sent the old
 * one its soft stop. Once let go, the old one leaves.
 */
static void test_reload_steers_first(void)
{
	g_auto(TSite) s = { 0 };
	g_autoptr(GArray) old = NULL;
	g_autoptr(GPtrArray) frozen = NULL;
	g_autofree gchar *stop = NULL;
	GPid gen1, gen2;
	gint at_steer, at_stop;

	if (!t_site_init_real(&s, NULL) || t_host_migrates())
		return;
	gen1 = start_serving(&s, seamless_off);
	/* Its groups got their program: the round is logged. */
	g_assert_nonnull(wrapper_wait_log(s.w, LOG_MIGRATION_ON, T_WAIT));
	old = instance_processes(gen1);
	frozen = freeze(old);

	wrapper_signal(s.w, SIGUSR2);
	gen2 = wrapper_wait_ready(s.w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	assert_all_answered_by(s.port, gen2);

	/* Steered to the new generation, then the old one's soft stop. */
	stop = g_strdup_printf("SIGUSR1 -> generation 1 (pid %d)", gen1);
	at_steer = line_index(s.w, LOG_STEERING, -1);
	at_stop = line_index(s.w, stop, -1);
	g_assert_cmpint(at_steer, >=, 0);
	g_assert_cmpint(at_stop, >, at_steer);
	g_assert_true(within(t_pid_in(g_ptr_array_index(s.w->lines, at_steer),
				      LOG_HAPROXY_PID_KEY), gen2));

	thaw(frozen);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	t_site_stop(&s);
	t_end_all_started();
}

/*
 * A configuration that turns SO_REUSEPORT off: the new generation's
 * binds need -sf's pause of the old one, so its pid stays on the -sf
 * list, and the reload succeeds.
 */
static void test_noreuseport_keeps_sf(void)
{
	g_auto(TSite) s = { 0 };
	g_autoptr(GArray) old = NULL;
	const char *line, *sf;
	GPid gen1, gen2;

	if (!t_site_init_real(&s, NULL) || t_host_migrates() ||
	    !t_haproxy_needs(1, 6, "the noreuseport keyword"))
		return;
	gen1 = start_serving(&s, seamless_off);
	g_assert_nonnull(wrapper_wait_log(s.w, LOG_MIGRATION_ON, T_WAIT));
	/* The -db process, or the -Ds parent's workers: listed while they
	 * serve (ready waits for the fork). */
	old = instance_processes(gen1);
	t_site_config(&s, "global\n    noreuseport\n");
	wrapper_signal(s.w, SIGUSR2);
	gen2 = wrapper_wait_ready(s.w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	line = wrapper_executing_line(s.w, 2);
	g_assert_nonnull(line);
	sf = strstr(line, " -sf ");
	g_assert_nonnull(sf);
	g_assert_true(lists_any(sf, old));
	g_assert_true(within(t_wait_serving(s.port, T_WAIT), gen2));
	t_site_stop(&s);
}

/*
 * A new generation that fails (a configuration error), its predecessor
 * off its -sf list: the old one is never signalled and serves on.
 */
static void test_failed_leaves_old(void)
{
	g_auto(TSite) s = { 0 };
	GPid gen1;

	if (!t_site_init_real(&s, NULL) || t_host_migrates())
		return;
	gen1 = start_serving(&s, seamless_off);
	g_assert_nonnull(wrapper_wait_log(s.w, LOG_MIGRATION_ON, T_WAIT));
	t_site_config(&s, "    no-such-keyword\n");
	wrapper_signal(s.w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(s.w, LOG_RELOAD_FAILED, T_WAIT));
	g_assert_null(wrapper_find_log(s.w, "SIGUSR1 -> generation 1"));
	g_assert_true(within(t_wait_serving(s.port, T_WAIT), gen1));
	t_site_stop(&s);
}

/*
 * A foreign "haproxy -D" taken over at the first start, frozen: it stays
 * off generation 1's -sf list, generation 1 gets every new connection,
 * and the foreign one, let go, leaves on the wrapper's soft stop.
 */
static void test_takeover_steers_first(void)
{
	g_auto(TSite) s = { 0 };
	g_autoptr(GArray) foreign = NULL;
	g_autoptr(GPtrArray) frozen = NULL;
	const char *argv[] = { NULL, "-D", "-p", NULL, "-f", NULL, NULL };
	GPid daemon, gen1;

	if (!t_site_init_real(&s, NULL) || t_host_migrates())
		return;
	argv[0] = t_haproxy_path();
	argv[3] = s.pidfile;
	argv[5] = s.cfg;
	t_launch_daemon(s.dir, argv);
	daemon = t_wait_pidfile(s.pidfile);
	g_assert_cmpint(daemon, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	foreign = instance_processes(daemon);
	frozen = freeze(foreign);

	t_site_start_wrapper(&s, NULL, NULL);
	gen1 = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	assert_all_answered_by(s.port, gen1);

	thaw(frozen);
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	t_site_stop(&s);
	t_end_all_started();
}

/*
 * The same foreign daemon found only once generation 1 serves (its
 * pidfile gone): the wrapper steers to generation 1 before it sends the
 * soft stop, and generation 1 gets every new connection.
 */
static void test_late_takeover_steers_first(void)
{
	g_auto(TSite) s = { 0 };
	g_autoptr(GArray) foreign = NULL;
	g_autoptr(GPtrArray) frozen = NULL;
	g_autofree gchar *stop = NULL;
	const char *argv[] = { NULL, "-D", "-p", NULL, "-f", NULL, NULL };
	GPid daemon, gen1;

	if (!t_site_init_real(&s, NULL) || t_host_migrates())
		return;
	argv[0] = t_haproxy_path();
	argv[3] = s.pidfile;
	argv[5] = s.cfg;
	t_launch_daemon(s.dir, argv);
	daemon = t_wait_pidfile(s.pidfile);
	g_assert_cmpint(daemon, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	g_assert_cmpint(g_unlink(s.pidfile), ==, 0);
	foreign = instance_processes(daemon);
	frozen = freeze(foreign);

	gen1 = start_serving(&s, NULL);
	stop = g_strdup_printf("SIGUSR1 -> foreign haproxy pid %d: soft stop",
			       daemon);
	g_assert_nonnull(wrapper_wait_log(s.w, stop, T_WAIT));
	assert_all_answered_by(s.port, gen1);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_STEERING));

	thaw(frozen);
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	t_site_stop(&s);
	t_end_all_started();
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();

	g_test_add_func("/reload-steer/reload-steers-first",
			test_reload_steers_first);
	g_test_add_func("/reload-steer/noreuseport-keeps-sf",
			test_noreuseport_keeps_sf);
	g_test_add_func("/reload-steer/failed-leaves-old",
			test_failed_leaves_old);
	g_test_add_func("/reload-steer/takeover-steers-first",
			test_takeover_steers_first);
	g_test_add_func("/reload-steer/late-takeover-steers-first",
			test_late_takeover_steers_first);
	return g_test_run();
}
