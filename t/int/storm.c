/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A reload storm against the real haproxy, on
 * 127.0.0.1: 1000 SIGUSR2 sent at full rate (batches of tight kill()
 * loops) while 4 loops of synchronous `--reload` clients (a fresh client
 * process each time) and a load of fresh connections run.
 *
 * Asserted: every client exits 0; the reloads coalesce (few "executing"
 * lines) and never overlap; the wrapper never has more than a few haproxy
 * processes below it (sampled after every batch of signals and every
 * client's exit); no request of the load fails; once settled (a last
 * `--reload` returned 0, `--status` shows the serving generation only)
 * no child of the wrapper is a zombie; SIGTERM then ends it with 0 and
 * leaves nothing behind.
 *
 * And, for the soak's flat descriptor count: reloads that re-execute the
 * wrapper itself (--self-upgrade=always) leave it no descriptor more.
 *
 * Waits are on real events (log lines, client exits, process exits,
 * sockets answering, the wrapper's answers), all bounded. The test
 * process is a child subreaper: whatever the wrapper would orphan comes
 * back to it, where "nothing left" is checked.
 */
#include "t/lib/harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/storm.h"

#define HAPROXY "/usr/sbin/haproxy"

#define SIGNALS		1000	/* SIGUSR2 in all */
#define BATCHES		20	/* sent in this many tight loops */
#define LOOPS		4	/* concurrent loops of --reload clients */
#define RUNS		20	/* clients per loop, one after the other */
#define CLIENTS		(LOOPS * RUNS)
#define LOADERS		3	/* load threads, a fresh connection a request */
#define LOAD_SECONDS	120

/* The bounds asserted: far below one reload a request. */
#define MAX_EXECUTING	(CLIENTS + 10)
#define MAX_HAPROXY	8

/* ---- safety net: a failed assertion aborts; leave no process behind ---- */

static GPid live_clients[LOOPS + 1];	/* slot LOOPS: the main thread's */


/* ---- client commands, run as processes, from any thread ---- */



/* ---- the --reload loops: RUNS clients each, one after the other ---- */

struct loop {
	guint index;
	const char *rundir_opt;
	int done_fd;		/* eventfd: +1 for every client that ended */
	guint ok;
	guint failed;
	GString *failures;	/* one line per failed client */
};

static gpointer loop_run(gpointer data)
{
	struct loop *l = data;
	const guint64 one = 1;

	for (guint i = 0; i < RUNS; i++) {
		g_autofree gchar *out = NULL;
		g_autofree gchar *err = NULL;
		int code = run_client("--reload", NULL, l->rundir_opt,
				      &live_clients[l->index], &out, &err);

		/* "ok generation N (pid P) serving" on stdout. */
		if (code == 0 && strstr(out, ANSWER_OK_GENERATION)) {
			l->ok++;
		} else {
			l->failed++;
			g_string_append_printf(
				l->failures, "loop %u client %u: exit %d, "
				"stdout \"%s\", stderr \"%s\"\n", l->index, i,
				code, g_strchomp(out), g_strchomp(err));
		}
		if (write(l->done_fd, &one, sizeof(one)) != sizeof(one))
			g_string_append(l->failures, "eventfd write failed\n");
	}
	return NULL;
}

/* ---- the load: fresh connections, in threads ---- */





/* ---- what runs below the wrapper ---- */








/* ---- the storm ---- */

struct storm {
	struct t_site site;	/* the real haproxy, --runtime-dir */
	int done_fd;
	guint done;		/* clients ended so far */
	guint samples;
	guint max_haproxy;
	guint max_below;
	gchar *max_haproxy_procs;
};

/* How many haproxy processes the wrapper has now; the maximum so far. */
static void sample(struct storm *st)
{
	g_autoptr(GArray) below = tree_below(st->site.w->pid);
	guint haproxy = count_comm(below, "haproxy");

	st->samples++;
	st->max_below = MAX(st->max_below, below->len);
	if (haproxy > st->max_haproxy) {
		st->max_haproxy = haproxy;
		g_free(st->max_haproxy_procs);
		st->max_haproxy_procs = describe_procs(below);
	}
	if (haproxy > MAX_HAPROXY)
		g_test_message("%u haproxy processes: %s", haproxy,
			       st->max_haproxy_procs);
	g_assert_cmpuint(haproxy, <=, MAX_HAPROXY);
}

/* Wait (bounded) for the clients that ended to reach want, reading the
 * wrapper's stderr meanwhile (a full pipe would block it), and sampling
 * the processes at each client's end. */
static void wait_clients(struct storm *st, guint want)
{
	gint64 deadline = t_deadline(T_WAIT);

	while (st->done < want && t_ms_left(deadline)) {
		struct pollfd p[2] = {
			{ .fd = st->done_fd, .events = POLLIN },
			{ .fd = st->site.w->err_fd, .events = POLLIN },
		};
		guint64 n;

		if (poll(p, 2, t_ms_left(deadline)) <= 0)
			continue;
		if (p[1].revents)
			wrapper_pump(st->site.w, 0);
		if (p[0].revents &&
		    read(st->done_fd, &n, sizeof(n)) == sizeof(n)) {
			st->done += n;
			sample(st);
		}
	}
	if (st->done < want)
		g_test_message("only %u of %u clients ended in time", st->done,
			       want);
	g_assert_cmpuint(st->done, >=, want);
}

/* self_upgrade: the wrapper's --self-upgrade= option. */
static void storm_start(struct storm *st, const char *self_upgrade)
{
	const char *const opts[] = { self_upgrade, NULL };
	GPid gen1;

	t_site_init(&st->site);
	t_site_config(&st->site, NULL);
	st->site.with_runtime_dir = TRUE;
	st->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	g_assert_cmpint(st->done_fd, >=, 0);
	t_site_start_wrapper(&st->site, NULL, opts);
	gen1 = wrapper_wait_ready(st->site.w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	g_assert_cmpint(t_wait_serving(st->site.port, T_WAIT), ==, gen1);
}

static void storm_clear(struct storm *st)
{
	t_site_clear(&st->site);
	if (st->done_fd >= 0)
		close(st->done_fd);
	g_free(st->max_haproxy_procs);
}

/*
 * Reloads never overlap: after each "executing" line (a new generation),
 * that generation is ready or the reload failed before the next one. The
 * number of "executing" lines.
 */
static guint assert_one_at_a_time(Wrapper *w)
{
	gboolean busy = FALSE;
	guint executing = 0;

	wrapper_pump(w, 0);
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		if (strstr(line, LOG_EXECUTING)) {
			if (busy)
				g_test_message("overlapping reload at line "
					       "%u: %s", i, line);
			g_assert_false(busy);
			busy = TRUE;
			executing++;
		} else if (strstr(line, LOG_READY_PID) ||
			   strstr(line, LOG_RELOAD_FAILED)) {
			busy = FALSE;
		}
	}
	return executing;
}

/* 1000 SIGUSR2 in BATCHES tight loops, spread over the clients' run:
 * after each batch, the next share of the clients must have ended. */
static void send_storm(struct storm *st)
{
	for (guint b = 0; b < BATCHES; b++) {
		for (guint i = 0; i < SIGNALS / BATCHES; i++)
			g_assert_cmpint(kill(st->site.w->pid, SIGUSR2), ==, 0);
		sample(st);
		wait_clients(st, CLIENTS * (b + 1) / BATCHES);
	}
}

/* The number after "key": in a `--status --json` answer (the first one). */
static guint json_uint(const char *json, const char *key)
{
	g_autofree gchar *quoted = g_strdup_printf("\"%s\":", key);
	const char *at = strstr(json, quoted);

	g_assert_nonnull(at);
	return (guint)strtoul(at + strlen(quoted), NULL, 10);
}

/* `--status --json`: the pids of every generation that is not the
 * current one (draining, starting, failed); the current one's in
 * *current, the whole answer in *text if not NULL. */
static GArray *others_in_status(struct storm *st, GPid *current,
				gchar **text)
{
	static const char gen[] = "{\"number\":";
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	GArray *others = g_array_new(FALSE, FALSE, sizeof(GPid));
	int code = run_client("--status", "--json", st->site.rundir_opt,
			      &live_clients[LOOPS], &out, &err);

	if (code != 0)
		g_test_message("--status --json: exit %d, %s", code, err);
	g_assert_cmpint(code, ==, 0);
	wrapper_pump(st->site.w, 0);
	*current = 0;
	/* {"number":N,"pid":P,"haproxy":...,"state":"current"}, in
	 * "generations" (a foreign process has no "number"). */
	for (const char *g = strstr(out, gen); g; g = strstr(g + 1, gen)) {
		const char *state = strstr(g, "\"state\":\"");
		GPid pid = t_pid_in(g, "\"pid\":");

		g_assert_nonnull(state);
		g_assert_cmpint(pid, >, 0);
		if (g_str_has_prefix(state, "\"state\":\"current\""))
			*current = pid;
		else
			g_array_append_val(others, pid);
	}
	if (text)
		*text = g_steal_pointer(&out);
	return others;
}

/* Until `--status` shows the current generation only, once the others it
 * listed have exited (bounded). Returns the serving pid. */
static GPid wait_settled(struct storm *st)
{
	gint64 deadline = t_deadline(T_WAIT);
	GPid current = 0;

	for (;;) {
		g_autofree gchar *text = NULL;
		g_autoptr(GArray) others = others_in_status(st, &current,
							    &text);

		if (!others->len)
			break;
		if (!t_ms_left(deadline)) {
			g_test_message("not settled:\n%s", text);
			g_assert_cmpuint(others->len, ==, 0);
		}
		for (guint i = 0; i < others->len; i++) {
			GPid pid = g_array_index(others, GPid, i);

			g_assert_true(t_wait_gone(pid, t_ms_left(deadline)));
		}
	}
	g_assert_cmpint(current, >, 0);
	return current;
}

/* One `--reload`, which must exit 0. */
static void reload_ok(struct storm *st)
{
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	int code = run_client("--reload", NULL, st->site.rundir_opt,
			      &live_clients[LOOPS], &out, &err);

	if (code != 0)
		g_test_message("--reload: exit %d, %s", code, err);
	g_assert_cmpint(code, ==, 0);
	wrapper_pump(st->site.w, 0);
}

/* Settled: a last `--reload` returned 0, and only its generation is left. */
static GPid settle(struct storm *st)
{
	reload_ok(st);
	return wait_settled(st);
}

/*
 * No zombie among the wrapper's children. One just killed (the last
 * reload's witness) may not be reaped yet: a zombie is only one if it is
 * still there after the wrapper has answered a few more clients.
 */
static void assert_no_zombies(struct storm *st, GPid current)
{
	gint64 deadline = t_deadline(T_WAIT);
	guint round_trips = 0, transient = 0;

	for (;;) {
		g_autoptr(GArray) kids = tree_below(st->site.w->pid);
		g_autofree gchar *text = describe_procs(kids);
		guint zombies = 0;

		for (guint i = 0; i < kids->len; i++) {
			struct proc_entry *e = entry_at(kids, i);

			zombies += e->ppid == st->site.w->pid && e->state == 'Z';
		}
		if (!zombies) {
			g_test_message("after the storm, below the wrapper: %s "
				       "(%u zombie(s) reaped late)", text,
				       transient);
			/* The serving haproxy alone. */
			g_assert_cmpuint(kids->len, ==, 1);
			g_assert_cmpint(entry_at(kids, 0)->pid, ==, current);
			return;
		}
		if (round_trips >= 5 || !t_ms_left(deadline)) {
			g_test_message("zombies below the wrapper: %s", text);
			g_assert_cmpuint(zombies, ==, 0);
		}
		transient = zombies;
		round_trips++;
		g_array_unref(others_in_status(st, &current, NULL));
	}
}

/* SIGTERM: exit 0, every process that was below the wrapper gone, and
 * none left to our subreaper. */
static void storm_stop(struct storm *st)
{
	g_autoptr(GArray) below = tree_below(st->site.w->pid);
	g_autoptr(GArray) left = NULL;
	int status;

	wrapper_signal(st->site.w, SIGTERM);
	status = wrapper_wait_exit(st->site.w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 0);
	for (guint i = 0; i < below->len; i++)
		g_assert_true(t_wait_gone(entry_at(below, i)->pid, T_WAIT));
	left = proc_children(getpid());
	for (guint i = 0; i < left->len; i++) {
		g_autofree gchar *path = g_strdup_printf(
			"/proc/%d/comm", g_array_index(left, GPid, i));
		g_autofree gchar *comm = NULL;

		g_file_get_contents(path, &comm, NULL, NULL);
		g_test_message("left behind: pid %d %s",
			       g_array_index(left, GPid, i),
			       comm ? g_strchomp(comm) : "?");
		/* Reap the orphan (a zombie now, or killed): ours. */
		kill(g_array_index(left, GPid, i), SIGKILL);
		waitpid(g_array_index(left, GPid, i), NULL, 0);
	}
	g_assert_cmpuint(left->len, ==, 0);
}

static void test_storm(void)
{
	struct storm st = { .done_fd = -1 };
	struct loop loops[LOOPS];
	GThread *loop_threads[LOOPS];
	GThread *load_threads[LOADERS];
	struct load load = { 0 };
	g_autoptr(GString) failures = g_string_new(NULL);
	g_autofree gchar *on_usr2 = g_strdup_printf(LOG_RELOADING_ON_FMT,
						    "SIGUSR2");
	g_autofree gchar *on_request = g_strdup_printf(LOG_RELOADING_ON_FMT,
						       "request");
	guint ok = 0, failed = 0, executing, reloads_failed;
	guint begun_usr2, begun_request, reloads_done, before;
	g_autofree gchar *json = NULL;
	GPid current;

	if (!t_have_haproxy()) {
		g_test_skip("no " HAPROXY);
		return;
	}
	/* Others may rebuild the wrapper meanwhile: no re-exec on a new
	 * binary in the middle of the storm. */
	storm_start(&st, "--self-upgrade=never");

	load.port = st.site.port;
	load.until = g_get_monotonic_time() + LOAD_SECONDS * G_USEC_PER_SEC;
	g_mutex_init(&load.lock);
	g_cond_init(&load.changed);
	for (guint i = 0; i < LOADERS; i++)
		load_threads[i] = g_thread_new("load", load_run, &load);
	/* Under load before the first signal. */
	before = load_more(&load, 100);

	for (guint i = 0; i < LOOPS; i++) {
		loops[i] = (struct loop){
			.index = i,
			.rundir_opt = st.site.rundir_opt,
			.done_fd = st.done_fd,
			.failures = g_string_new(NULL),
		};
		loop_threads[i] = g_thread_new("reload", loop_run, &loops[i]);
	}
	send_storm(&st);
	wait_clients(&st, CLIENTS);
	for (guint i = 0; i < LOOPS; i++) {
		g_thread_join(loop_threads[i]);
		ok += loops[i].ok;
		failed += loops[i].failed;
		g_string_append(failures, loops[i].failures->str);
		g_string_free(loops[i].failures, TRUE);
	}
	sample(&st);
	g_test_message("clients: %u exited 0, %u failed%s%s", ok, failed,
		       failed ? ":\n" : "", failures->str);
	g_assert_cmpuint(failed, ==, 0);
	g_assert_cmpuint(ok, ==, CLIENTS);

	/* Settled, still under load. */
	current = settle(&st);
	load_stop(&load);
	for (guint i = 0; i < LOADERS; i++)
		g_thread_join(load_threads[i]);

	executing = assert_one_at_a_time(st.site.w);
	reloads_failed = wrapper_count_log(st.site.w, LOG_RELOAD_FAILED);
	begun_usr2 = wrapper_count_log(st.site.w, on_usr2);
	begun_request = wrapper_count_log(st.site.w, on_request);
	/* The wrapper's own count of the reloads done. */
	g_array_unref(others_in_status(&st, &current, &json));
	reloads_done = json_uint(json, "reloads");
	g_test_message("%u SIGUSR2 and %u --reload clients (+1 last): %u "
		       "executing line(s) (generation 1 included; reloads "
		       "begun on SIGUSR2 %u, on request %u), %u failed "
		       "reload(s), %u done (--status --json)", SIGNALS, CLIENTS,
		       executing, begun_usr2, begun_request, reloads_failed,
		       reloads_done);
	g_test_message("haproxy processes below the wrapper: at most %u over "
		       "%u samples (all processes below it: at most %u); at "
		       "the maximum: %s", st.max_haproxy, st.samples,
		       st.max_below, st.max_haproxy_procs);
	g_test_message("load: %u requests (%u before the storm), %u failed%s%s",
		       load.requests, before, load.failures,
		       load.failures ? ", first: " : "",
		       load.failures ? load.first_failure : "");

	g_assert_cmpuint(reloads_failed, ==, 0);
	g_assert_cmpuint(executing, <=, MAX_EXECUTING);
	/* Every reload begun started one generation (none failed), after
	 * generation 1; the last --reload's at least. A request begins at
	 * most one: the others joined one in progress. */
	g_assert_cmpuint(executing, ==, 1 + begun_usr2 + begun_request);
	g_assert_cmpuint(begun_usr2 + begun_request, >=, 1);
	g_assert_cmpuint(begun_request, <=, CLIENTS + 1);
	/* And each one begun was done: none failed, none left pending. */
	g_assert_cmpuint(reloads_done, ==, begun_usr2 + begun_request);
	/* The sampler saw the serving haproxy: the bound above held on a
	 * real count. */
	g_assert_cmpuint(st.max_haproxy, >=, 1);
	/* The load ran through the storm, and was bounded by the stop. */
	g_assert_cmpuint(load.requests, >, before);
	g_assert_cmpuint(load.requests, <, LOAD_MAX);
	g_assert_cmpuint(load.failures, ==, 0);

	assert_no_zombies(&st, current);
	storm_stop(&st);
	g_free(load.first_failure);
	g_mutex_clear(&load.lock);
	g_cond_clear(&load.changed);
	storm_clear(&st);
}

/* ---- descriptors across the wrapper's own re-exec ---- */

/* The wrapper's descriptors: their number, and "fd->target" in *text. */
static guint wrapper_fds(GPid pid, gchar **text)
{
	g_autofree gchar *dir = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	g_autoptr(GString) s = g_string_new(NULL);
	const char *name;
	guint n = 0;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		g_autofree gchar *link = g_file_read_link(path, NULL);

		g_string_append_printf(s, "%s%s->%s", n ? " " : "", name,
				       link ? link : "?");
		n++;
	}
	*text = g_string_free(g_steal_pointer(&s), FALSE);
	return n;
}

/*
 * Every reload re-executes the wrapper (--self-upgrade=always), as a
 * package upgrade does once: it must not carry a descriptor more each
 * time. Counted once settled (the serving generation alone), against a
 * fresh start in the same state.
 */
static void test_reexec_descriptors(void)
{
	struct storm st = { .done_fd = -1 };
	g_autofree gchar *first = NULL;
	g_autoptr(GString) series = g_string_new(NULL);
	guint baseline, worst = 0;

	if (!t_have_haproxy()) {
		g_test_skip("no " HAPROXY);
		return;
	}
	storm_start(&st, "--self-upgrade=always");
	wait_settled(&st);
	baseline = wrapper_fds(st.site.w->pid, &first);
	g_string_append_printf(series, "%u", baseline);
	for (guint i = 0; i < 5; i++) {
		g_autofree gchar *text = NULL;
		guint n;

		reload_ok(&st);
		g_assert_nonnull(wrapper_wait_log(st.site.w, LOG_REEXECUTING,
						  T_WAIT));
		wait_settled(&st);
		n = wrapper_fds(st.site.w->pid, &text);
		g_string_append_printf(series, " %u", n);
		if (n > worst) {
			worst = n;
			if (n > baseline)
				g_test_message("after %u re-exec(s): %s", i + 1,
					       text);
		}
	}
	g_test_message("descriptors, fresh start then after each re-exec: "
		       "%s (fresh start: %s)", series->str, first);
	/* One re-exec a reload: the re-executed image carries the same
	 * reload on and does not upgrade again. */
	g_assert_cmpuint(wrapper_count_log(st.site.w, LOG_REEXECUTING), ==, 5);
	storm_stop(&st);
	storm_clear(&st);
	/* Not an abort: see main(). */
	if (worst > baseline)
		g_test_fail_printf("the wrapper keeps %u descriptor(s) more "
				   "after 5 re-execs than at a fresh start "
				   "(%u): %s", worst - baseline, baseline,
				   series->str);
}

int main(int argc, char **argv)
{
	g_autofree char **args = g_new0(char *, argc + 2);

	/* A check that fails without aborting (g_test_fail_printf) says
	 * "not ok" and goes on: GLib's "Bail out!" would stop prove, and so
	 * every test file after this one in `make check`. */
	args[0] = argv[0];
	args[1] = (char *)"--keep-going";
	memcpy(args + 2, argv + 1, (argc - 1) * sizeof(*args));
	argc++;
	argv = args;
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();
	/* What the wrapper leaves behind comes back to us. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	g_unsetenv("NOTIFY_SOCKET");
	g_unsetenv("WATCHDOG_USEC");
	g_unsetenv("WATCHDOG_PID");
	g_unsetenv("RUNTIME_DIRECTORY");
	g_unsetenv("HAPROXY_STATS_SOCKET");

	g_test_add_func("/storm/usr2-and-reload-clients-under-load",
			test_storm);
	g_test_add_func("/storm/reexec-keeps-descriptors",
			test_reexec_descriptors);
	return g_test_run();
}
