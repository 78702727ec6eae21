/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A generated life under a real systemd: the package installed (the
 * tree's wrapper over its binary) and its recommended unit (haproxy-systemd-wrapper.service, contrib's
 * haproxy.service) started under systemd 252 (the host's root,
 * t/container/container.c) and again in the Debian 13 tree (systemd 257,
 * haproxy 3.0), a load of requests from this process on 127.0.0.1, and a
 * random sequence of what an administrator, a crash or a package does:
 *
 *   reload          systemctl reload
 *   bad-reload      a configuration haproxy refuses, systemctl reload
 *                   (which must fail), the configuration put back
 *   sighup          SIGHUP to the main process (a reload)
 *   restart         systemctl restart
 *   kill-main       SIGKILL to the main process (Restart=always)
 *   kill-haproxy    SIGKILL to the serving haproxy
 *   freeze          the wrapper stopped for 1 s (SIGSTOP, SIGCONT)
 *   self-upgrade    the wrapper's binary replaced by the other version's,
 *                   then systemctl reload: the same MainPID on it
 *   package         dpkg -i of the other version's package
 *   fd-shortage     the wrapper's soft RLIMIT_NOFILE cut to what it holds
 *                   plus 2, systemctl reload (which may fail), the limit
 *                   put back, systemctl reload (which must succeed)
 *
 * After every event, once it has happened (the unit active and running,
 * a new haproxy answering where the event makes one), and once the
 * generations it ended have drained: not one request of the event's load
 * was refused, none failed either but the one in flight at a hard stop
 * (restart, kill-main, kill-haproxy: see lost_at_most()), the load was
 * answered by the serving haproxy, the unit's main process is the wrapper
 * on the version installed last, and the container's haproxy processes
 * are exactly one, in the unit's cgroup, a child of the main process,
 * named by the pidfile, answering the load.
 *
 *   HSW_LIFE_SEED=N     the sequence (printed at the start; random if unset)
 *   HSW_LIFE_EVENTS=M   its length (default 10; `make life`: 60)
 *   HSW_LIFE_PACE_US=U  the load's pause between requests (default 2000;
 *                       0: one request after the other)
 *   HSW_LIFE_START_LIMIT=unit  keep the unit's start limit (systemd's
 *                       default) instead of lifting it
 *
 * The first ten events are the ten kinds, each once, in the seed's order:
 * every run meets each of them; then they are drawn at random.
 *
 * An event that cannot run here (the next package or wrapper not built)
 * is drawn again from the others, and said.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t/container/container.h"
#include "t/lib/harness.h"

#define UNIT		PROG ".service"
#define CFG		"/etc/haproxy/haproxy.cfg"
#define PIDFILE		"/run/haproxy.pid"
#define NEXT_VERSION	WRAPPER_VERSION "+next"
#define DEB_N		"/tmp/hsw-n.deb"
#define DEB_NEXT	"/tmp/hsw-next.deb"
#define WRAPPER_N	"/tmp/hsw-n"
#define WRAPPER_NEXT	"/tmp/hsw-next"
#define PACE_US		2000
#define DEFAULT_EVENTS	EV_COUNT

enum event {
	EV_RELOAD,
	EV_BAD_RELOAD,
	EV_SIGHUP,
	EV_RESTART,
	EV_KILL_MAIN,
	EV_KILL_HAPROXY,
	EV_FREEZE,
	EV_SELF_UPGRADE,
	EV_PACKAGE,
	EV_FD_SHORTAGE,
	EV_COUNT
};

static const char *const event_names[EV_COUNT] = {
	"reload", "bad-reload", "sighup", "restart", "kill-main",
	"kill-haproxy", "freeze", "self-upgrade", "package", "fd-shortage",
};

struct life {
	struct container *c;
	guint16 port;
	struct t_load load;
	guint requests;		/* every event's load, added */
	guint pace_us;		/* between two requests of the load */
	GPid main_pid;		/* container's pid namespace */
	GPid haproxy;
	gboolean next;		/* the +next version is the one installed */
	gboolean have_next_deb;
	gboolean have_next_wrapper;
	GString *log;		/* event, requests, failures: the summary */
};

/* A command run by sh in the container; its exit code, its output
 * logged. */
static int G_GNUC_PRINTF(2, 3) sh(struct life *l, const char *fmt, ...)
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
	code = cexecv(l->c, CMD_TIMEOUT_S, &o, &e, argv);
	g_test_message("# %s\n%s%s[exit %d]", cmd, o ? o : "", e ? e : "",
		       code);
	return code;
}

#define RUN(l, ...) g_assert_cmpint(sh(l, __VA_ARGS__), ==, 0)

/* ---- the container's haproxy processes, from the host's /proc ---- */

/* The last pid of NSpid: pid's number in the container. */
static GPid container_pid(const char *host_pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%s/status", host_pid);
	g_autofree gchar *text = NULL;
	g_autofree gchar *line = NULL;
	g_auto(GStrv) w = NULL;
	const char *at;
	guint n;

	if (!g_file_get_contents(path, &text, NULL, NULL) ||
	    !(at = strstr(text, "\nNSpid:")))
		return 0;
	line = g_strndup(at + 7, strcspn(at + 7, "\n"));
	w = g_strsplit_set(line, " \t", -1);
	n = g_strv_length(w);
	while (n > 0 && !*w[n - 1])
		n--;
	return n ? atoi(w[n - 1]) : 0;
}

struct proc {
	GPid pid;		/* container's */
	GPid ppid;		/* container's */
	gboolean in_unit;
};

/* Every haproxy process of the container: in the unit's cgroup or not. */
static GArray *haproxies(struct life *l)
{
	g_autofree gchar *cg = prop(l->c, UNIT, "ControlGroup");
	g_autofree gchar *box = g_strdup_printf("/%s/payload/", l->c->name);
	g_autofree gchar *unit = g_strdup_printf("/%s/payload%s\n",
						 l->c->name, cg);
	g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
	GArray *all = g_array_new(FALSE, FALSE, sizeof(struct proc));
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *cgf = g_strdup_printf("/proc/%s/cgroup", name);
		g_autofree gchar *statf = g_strdup_printf("/proc/%s/stat", name);
		g_autofree gchar *cgt = NULL;
		g_autofree gchar *stat = NULL;
		g_autofree gchar *ppid = NULL;
		struct proc p = { 0 };
		const char *end;

		if (!g_ascii_isdigit(*name) ||
		    !g_file_get_contents(cgf, &cgt, NULL, NULL) ||
		    !strstr(cgt, box) ||
		    !g_file_get_contents(statf, &stat, NULL, NULL) ||
		    !g_str_has_prefix(strchr(stat, '(') ?: "", "(haproxy) ") ||
		    !(end = strrchr(stat, ')')))
			continue;
		/* ") S PPID ..." */
		ppid = g_strdup_printf("%d", atoi(end + 4));
		p.pid = container_pid(name);
		p.ppid = container_pid(ppid);
		p.in_unit = cg && *cg && strstr(cgt, unit) != NULL;
		g_array_append_val(all, p);
	}
	return all;
}

static gchar *procs_text(GArray *all)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < all->len; i++) {
		struct proc *p = &g_array_index(all, struct proc, i);

		g_string_append_printf(s, " pid %d (parent %d, %s);", p->pid,
				       p->ppid, p->in_unit ? "in the unit" :
				       "STRAY");
	}
	return g_string_free(s, FALSE);
}

/* Exactly one haproxy in the container, in the unit, the main process's
 * child: once the generations an event ended have drained (bounded by
 * WAIT_MS, beyond hard-stop-after). Its pid. */
static GPid settled_haproxy(struct life *l)
{
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;
	guint pause = 0;

	for (;;) {
		g_autoptr(GArray) all = haproxies(l);
		struct proc *p = all->len ? &g_array_index(all, struct proc, 0)
					  : NULL;

		if (all->len == 1 && p->in_unit && p->ppid == l->main_pid)
			return p->pid;
		if (g_get_monotonic_time() > deadline) {
			g_autofree gchar *text = procs_text(all);

			g_error("not exactly our one haproxy (main pid %d):%s",
				l->main_pid, text);
		}
		poll_pause(&pause);
	}
}

/* ---- the checks after every event ---- */

/* A hard stop of the serving haproxy (SIGTERM at a restart, SIGKILL with
 * or after the main process) resets what it accepted and has not answered
 * yet: the load's one request in flight, at most (doc/figures.md, "the
 * requests in flight at the hard stop"). What waits in the listeners'
 * queues survives in systemd's store, and nothing is ever refused. */
static guint lost_at_most(enum event ev)
{
	return ev == EV_RESTART || ev == EV_KILL_MAIN ||
	       ev == EV_KILL_HAPROXY;
}

static void check(struct life *l, guint i, enum event ev)
{
	g_autofree gchar *exe = NULL;
	g_autofree gchar *status = NULL;
	guint requests, failures, refused;

	g_assert_true(wait_props(l->c, UNIT, (const char *const[]){
		"ActiveState", "active", "SubState", "running", NULL }));
	l->main_pid = prop_int(l->c, UNIT, "MainPID");
	g_assert_cmpint(l->main_pid, >, 0);
	exe = exe_of(l->c, l->main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	l->haproxy = settled_haproxy(l);
	/* The pidfile names it, and it alone. */
	g_assert_cmpint(pidfile_pid(l->c, PIDFILE), ==, l->haproxy);
	/* The load reaches it: the event is behind the load too. */
	g_assert_true(t_load_wait_answers(&l->load, l->haproxy,
					  t_load_answers(&l->load,
							 l->haproxy) + 3));
	/* The version installed last runs (--status names it). */
	g_assert_cmpint(cexec(l->c, &status, SBIN_WRAPPER, "--status", "-p",
			      PIDFILE, NULL), ==, 0);
	if (l->next != (strstr(status, NEXT_VERSION) != NULL))
		g_error("after %s the wrapper should run %s: %s",
			event_names[ev], l->next ? NEXT_VERSION :
			WRAPPER_VERSION, status);

	/* One load an event (a load's thread stops after two minutes
	 * whatever happens): it ends here, its failures are this event's. */
	failures = t_load_finish(&l->load);
	requests = l->load.requests;
	refused = l->load.refused;
	l->requests += requests;
	g_string_append_printf(l->log, "  %2u %-13s %5u requests, %u failed\n",
			       i + 1, event_names[ev], requests, failures);
	g_test_message("event %u %s: %u requests, %u failed (%u refused); "
		       "main pid %d, haproxy %d", i + 1, event_names[ev],
		       requests, failures, refused, l->main_pid, l->haproxy);
	if (refused)
		g_error("event %u (%s): %u request(s) refused", i + 1,
			event_names[ev], refused);
	if (failures > lost_at_most(ev))
		g_error("event %u (%s) failed %u request(s), %u at most in "
			"flight at its hard stop", i + 1, event_names[ev],
			failures, lost_at_most(ev));
}

/* ---- the events ---- */

/* Until the main process is a new one (bounded). */
static void wait_new_main(struct life *l, GPid old)
{
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;
	guint pause = 0;
	GPid now;

	while ((now = prop_int(l->c, UNIT, "MainPID")) == old || now <= 0) {
		if (g_get_monotonic_time() > deadline)
			g_error("MainPID still %d", now);
		poll_pause(&pause);
	}
}

static void ev_bad_reload(struct life *l)
{
	GPid before = t_http_pid(l->port);

	put_config(l->c, CFG, l->port, "    no-such-keyword here\n");
	g_assert_cmpint(sh(l, "systemctl reload " UNIT), !=, 0);
	put_config(l->c, CFG, l->port, NULL);
	/* The running haproxy serves on. */
	g_assert_cmpint(t_http_pid(l->port), ==, before);
}

/* The other version's binary put in place as dpkg does (a new file
 * renamed over the old one), then a reload moves the wrapper onto it. */
static void ev_self_upgrade(struct life *l)
{
	l->next = !l->next;
	RUN(l, "cp %s " SBIN_WRAPPER ".new && mv " SBIN_WRAPPER ".new "
	       SBIN_WRAPPER, l->next ? WRAPPER_NEXT : WRAPPER_N);
	RUN(l, "systemctl reload " UNIT);
	g_assert_cmpint(prop_int(l->c, UNIT, "MainPID"), ==, l->main_pid);
}

static void ev_package(struct life *l)
{
	l->next = !l->next;
	RUN(l, "dpkg -i %s >/dev/null", l->next ? DEB_NEXT : DEB_N);
	g_assert_cmpint(prop_int(l->c, UNIT, "MainPID"), ==, l->main_pid);
}

/* Descriptors cut to what the wrapper holds plus two: a reload may fail
 * for want of them, and nothing may be lost; with the limit back, the
 * next reload works. */
static void ev_fd_shortage(struct life *l)
{
	g_autofree gchar *fds = g_strdup_printf("%s/proc/%d/fd", l->c->root,
						l->main_pid);
	g_autoptr(GDir) d = g_dir_open(fds, 0, NULL);
	guint held = 0;
	g_autofree gchar *soft = NULL;
	g_autofree gchar *cmd = g_strdup_printf(
		"prlimit --pid %d --nofile --raw --noheadings -o SOFT",
		l->main_pid);

	g_assert_nonnull(d);
	while (g_dir_read_name(d))
		held++;
	g_assert_cmpint(cexec(l->c, &soft, "sh", "-c", cmd, NULL), ==, 0);
	g_strstrip(soft);
	RUN(l, "prlimit --pid %d --nofile=%u:", l->main_pid, held + 2);
	sh(l, "systemctl reload " UNIT);
	RUN(l, "prlimit --pid %d --nofile=%s:", l->main_pid, soft);
	RUN(l, "systemctl reload " UNIT);
}

static void ev_freeze(struct life *l)
{
	g_autofree gchar *stat = g_strdup_printf("%s/proc/%d/stat", l->c->root,
						 l->main_pid);
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;

	RUN(l, "kill -STOP %d", l->main_pid);
	for (;;) {
		g_autofree gchar *text = NULL;
		const char *end;

		g_assert_true(g_file_get_contents(stat, &text, NULL, NULL));
		end = strrchr(text, ')');
		if (end && end[2] == 'T')
			break;
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_usleep(5 * 1000);
	}
	/* The freeze is the event: a second without the wrapper. */
	g_usleep(G_USEC_PER_SEC);
	RUN(l, "kill -CONT %d", l->main_pid);
}

static void run_event(struct life *l, enum event ev)
{
	GPid main_pid = l->main_pid, haproxy = l->haproxy;

	switch (ev) {
	case EV_RELOAD:
		RUN(l, "systemctl reload " UNIT);
		break;
	case EV_BAD_RELOAD:
		ev_bad_reload(l);
		break;
	case EV_SIGHUP:
		RUN(l, "systemctl kill -s HUP --kill-who=main " UNIT);
		/* Its reload is asynchronous: done when another answers. */
		g_assert_cmpint(wait_serving(l->port, haproxy), >, 0);
		break;
	case EV_RESTART:
		RUN(l, "systemctl restart " UNIT);
		break;
	case EV_KILL_MAIN:
		RUN(l, "systemctl kill -s KILL --kill-who=main " UNIT);
		wait_new_main(l, main_pid);
		break;
	case EV_KILL_HAPROXY:
		RUN(l, "kill -KILL %d", haproxy);
		g_assert_cmpint(wait_serving(l->port, haproxy), >, 0);
		break;
	case EV_FREEZE:
		ev_freeze(l);
		break;
	case EV_SELF_UPGRADE:
		ev_self_upgrade(l);
		break;
	case EV_PACKAGE:
		ev_package(l);
		break;
	case EV_FD_SHORTAGE:
		ev_fd_shortage(l);
		break;
	case EV_COUNT:
		g_assert_not_reached();
	}
}

static gboolean can_run(struct life *l, enum event ev)
{
	if (ev == EV_PACKAGE)
		return l->have_next_deb;
	if (ev == EV_SELF_UPGRADE)
		return l->have_next_wrapper;
	return TRUE;
}

static guint env_uint(const char *name, guint dflt)
{
	const char *v = g_getenv(name);

	return v && *v ? (guint)g_ascii_strtoull(v, NULL, 10) : dflt;
}

/* The higher version's .deb (make deb-next), or NULL. */
static gchar *next_deb_path(void)
{
	const char *env = g_getenv("HSW_DEB_NEXT");
	g_autoptr(GDir) d = NULL;
	const char *name;

	if (env)
		return g_strdup(env);
	d = g_dir_open("build/deb-next", 0, NULL);
	while (d && (name = g_dir_read_name(d)))
		if (g_str_has_prefix(name, PROG "_") &&
		    g_str_has_suffix(name, ".deb"))
			return g_build_filename("build/deb-next", name, NULL);
	return NULL;
}

static void test_life(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *next_deb = next_deb_path();
	const char *seed_env = g_getenv("HSW_LIFE_SEED");
	guint32 seed = seed_env && *seed_env ?
		(guint32)g_ascii_strtoull(seed_env, NULL, 10) :
		g_random_int();
	guint events = env_uint("HSW_LIFE_EVENTS", DEFAULT_EVENTS);
	g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
	struct life l = { .c = f->c, .port = t_free_port(),
			  .pace_us = env_uint("HSW_LIFE_PACE_US", PACE_US) };
	enum event order[EV_COUNT];

	g_test_message("seed %u: replay with HSW_LIFE_SEED=%u "
		       "HSW_LIFE_EVENTS=%u (load: a request every %u us "
		       "at most)", seed, seed, events, l.pace_us);
	if (!fx_deb_copied(f))
		return;
	l.log = g_string_new(NULL);
	/* A build machine's policy-rc.d would forbid the maintainer
	 * scripts' deb-systemd-invoke (the container's /usr is a copy). */
	RUN(&l, "rm -f /usr/sbin/policy-rc.d");
	RUN(&l, "dpkg -i /tmp/hsw.deb >/dev/null && cp /tmp/hsw.deb " DEB_N);
	/* The tree's own wrapper, as the other container tests run it: the
	 * package's is built from the same sources, but the tree's is what
	 * a change (or a planted bug) reaches first. */
	install_wrapper(f->c);
	if (next_deb && g_file_test(next_deb, G_FILE_TEST_EXISTS)) {
		copy_in(f->c, next_deb, DEB_NEXT, 0644);
		l.have_next_deb = TRUE;
	}
	if (g_file_test("t/" PROG "-next", G_FILE_TEST_IS_EXECUTABLE)) {
		copy_in(f->c, "./" PROG, WRAPPER_N, 0755);
		copy_in(f->c, "t/" PROG "-next", WRAPPER_NEXT, 0755);
		l.have_next_wrapper = TRUE;
	}
	put_config(f->c, CFG, l.port, NULL);
	/* A life restarts more often than systemd's default start limit
	 * (5 starts in 10 s) allows: lifted, as the other container tests
	 * lift it, unless HSW_LIFE_START_LIMIT=unit asks for the unit's
	 * own. */
	if (g_strcmp0(g_getenv("HSW_LIFE_START_LIMIT"), "unit") != 0)
		put_text(f->c, UNIT_DIR "/" UNIT ".d/test.conf",
			 "[Unit]\nStartLimitIntervalSec=0\n");
	RUN(&l, "systemctl daemon-reload && systemctl enable --now " UNIT);
	l.main_pid = prop_int(f->c, UNIT, "MainPID");
	l.haproxy = settled_haproxy(&l);

	for (guint i = 0; i < EV_COUNT; i++)
		order[i] = i;
	for (guint i = EV_COUNT - 1; i > 0; i--) {
		guint j = g_rand_int_range(rand, 0, i + 1);
		enum event t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (guint i = 0; i < events; i++) {
		/* Every kind once, in a random order, then any. */
		enum event ev = i < EV_COUNT ? order[i] :
			(enum event)g_rand_int_range(rand, 0, EV_COUNT);

		while (!can_run(&l, ev)) {
			g_test_message("(%s cannot run here: not built)",
				       event_names[ev]);
			ev = (enum event)g_rand_int_range(rand, 0, EV_COUNT);
		}
		g_test_message("event %u of %u: %s", i + 1, events,
			       event_names[ev]);
		/* Its load, running before the event. */
		t_load_start_paced(&l.load, l.port, l.pace_us);
		g_assert_true(t_load_wait_answers(&l.load, l.haproxy, 3));
		run_event(&l, ev);
		check(&l, i, ev);
	}
	g_test_message("seed %u, %u events, %u requests, 0 failed:\n%s", seed,
		       events, l.requests, l.log->str);
	RUN(&l, "systemctl stop " UNIT);
	assert_prop(f->c, UNIT, "ActiveState", "inactive");
	g_string_free(l.log, TRUE);
}

/* Its own network namespace: nothing else on this machine meets its
 * port. */
static const struct boot host = { .tag = "life", .dpkg = TRUE,
				  .private_net = TRUE };
static const struct boot trixie = { .tag = "life13", .tree = trixie_tree,
				    .private_net = TRUE };

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	container_handlers_install();
	g_test_add("/life/systemd252", struct fixture, &host, fx_setup,
		   test_life, fx_teardown);
	g_test_add("/life/debian13/systemd257", struct fixture, &trixie,
		   fx_setup, test_life, fx_teardown);
	return g_test_run();
}
