/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adoption racing the wrapper's own reload: a restart by hand while a
 * generation starts (with and without -x), while the version probe runs,
 * after a failed reload, or gone before it was ready; and a stop while a
 * generation loads after the one serving died. The real haproxy. Every
 * wait is on a real event (a log line, a process exit, a socket
 * answering, a file's content) and
 * bounded. The daemons are not our children: they are ended by the pid
 * read, through a pidfd, after checking that it still is that process.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
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
#include "base/proc.h"
#include "t/lib/takeover.h"

/*
 * The adopted instance leaves on the soft stop of our next generation
 * before that one's witness reports: the reload decides, as for our own
 * generations, and no search for a replacement starts. A Lua file that
 * keeps haproxy loading for a second gives time to stop the witness.
 */
static void test_adopted_gone_before_ready(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *exec2 = NULL, *lua = NULL, *ended = NULL;
	g_autofree gchar *extra = NULL, *cfg = NULL;
	g_autoptr(GArray) sf = NULL;
	GPid pid, witness, gen2;

	if (!have_haproxy_for(FALSE, TRUE))
		return;
	daemon_site_init(&s);
	start_serving(&s, NULL, &w);
	pid = restart_adopted(&s, w);

	lua = t_write_file(s.dir, "slow.lua", "local t = os.clock()\n"
			   "while os.clock() - t < 1 do end\n");
	extra = g_strdup_printf("global\n    lua-load %s\n", lua);
	cfg = t_write_config(s.dir, "haproxy.cfg", s.port, extra);
	wrapper_signal(w, SIGUSR2);
	exec2 = g_strdup(wrapper_wait_log(w, LOG_EXECUTING, T_WAIT));
	sf = sf_pid_list(exec2);
	g_assert_cmpuint(sf->len, ==, 2);
	g_assert_cmpint(g_array_index(sf, GPid, 0), ==, pid);
	witness = g_array_index(sf, GPid, 1);
	g_assert_cmpint(proc_parent(witness), ==, w->pid);
	g_assert_cmpint(kill(witness, SIGSTOP), ==, 0);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	ended = g_strdup_printf(LOG_ADOPTED_ENDED_STARTING_FMT, 2);
	g_assert_nonnull(wrapper_wait_log(w, ended, T_WAIT));
	g_assert_cmpint(kill(witness, SIGCONT), ==, 0);

	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, gen2);
	g_assert_null(wrapper_find_log(w, LOG_REPLACED_ADOPTED));
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/* Serving generation 1, the wrapper's environment defining HOLD_VAR (for
 * held_config); the pid that answers. */
static GPid start_serving_holdable(struct t_site *s, const char *option,
				   Wrapper **w)
{
	const char *env[] = { HOLD_VAR "=1", NULL };
	GPid gen1;

	*w = start_wrapper_env(s, option, NULL, env);
	gen1 = wrapper_wait_ready(*w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	return answering_for(s->port, gen1);
}

/* The service's file from now on keeps the wrapper's haproxy loading
 * until open_load_gate() (held_config_text, "load"), then reads more; a
 * restart by hand (HOLD_VAR not in its environment) loads the very same
 * file at once, without more. */
static void held_config(struct t_site *s, const char *more)
{
	g_autofree gchar *held = held_config_text(s->dir, "load");
	g_autofree gchar *text = g_strdup_printf(".if defined(" HOLD_VAR ")\n"
						 "%s%s.endif\n", held, more);

	g_free(t_write_config(s->dir, "haproxy.cfg", s->port, text));
}

/* The generation held loading goes on: after this, not before. */
static void open_load_gate(struct t_site *s)
{
	g_free(t_write_file(s->dir, "load.gate", ""));
}

/*
 * A restart by hand while our reload's generation loads: the instance it
 * started is adopted (it serves once generation 1 has gone), and leaves
 * when our next generation is ready; under load from the restart on,
 * without a failed request, and the wrapper keeps running.
 */
static void check_during_reload_start(const char *option)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *adopting = NULL;
	g_autofree gchar *ready2 = NULL, *leaves = NULL;
	gboolean seamless = !option;
	struct t_load l;
	GPid gen1, pid, gen2, serving;

	if (!have_haproxy_for(TRUE, TRUE))
		return;
	daemon_site_init(&s);
	gen1 = start_serving_holdable(&s, option, &w);
	held_config(&s, "");
	wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, LOG_EXECUTING, T_WAIT));
	pid = restart_by_hand(&s, "-sf", FALSE);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	ready2 = g_strdup_printf(LOG_READY_FMT, 2);
	g_assert_null(wrapper_find_log(w, ready2));
	/* Requests from the restart by hand on, across its leaving. */
	t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, pid, 20));
	/* Generation 2 loads on only now, generation 1 gone: a -x has
	 * nothing to take. */
	open_load_gate(&s);
	adopting = g_strdup_printf(LOG_ADOPTING "%d", pid);
	if (seamless) {
		/* Generation 2 was to take generation 1's listeners (-x):
		 * 2.6 fails when they are gone; it starts again, as 3,
		 * after the search, with the adopted one after -sf. */
		g_assert_nonnull(wrapper_wait_log(w, LOG_ENDED_WHILE_LOADED,
						  T_WAIT));
		g_assert_nonnull(wrapper_wait_log(w, adopting, T_WAIT));
		gen2 = wrapper_wait_ready(w, 3, T_WAIT);
	} else {
		/* Generation 2 serves, then finds it and tells it to go. */
		gen2 = wrapper_wait_ready(w, 2, T_WAIT);
		g_assert_nonnull(wait_log_anywhere(w, adopting));
		leaves = g_strdup_printf(LOG_HAND_RESTART_LEAVES_FMT,
					 "SIGUSR1");
		g_assert_nonnull(wait_log_anywhere(w, leaves));
	}
	g_assert_cmpint(gen2, >, 0);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	serving = answering_for(s.port, gen2);
	g_assert_true(t_load_wait_answers(&l, serving, 20));
	/* It closed listeners nobody handed over. */
	finish_across_reset_window(&l);
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);
	g_assert_cmpint(t_wait_pidfile(s.pidfile), ==, gen2);

	assert_reload_loses_nothing(&s, serving);
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

static void test_adopt_during_reload_start(void)
{
	check_during_reload_start(NULL);
}

/* Without -x, generation 2 serves with the adopted one off its -sf list:
 * the wrapper sends it the soft stop itself. */
static void test_adopt_during_reload_start_no_x(void)
{
	check_during_reload_start("--seamless-reload=off");
}

/*
 * A restart by hand while our reload's generation loads a configuration
 * that then fails: the reload fails, the instance started by hand is
 * adopted and serves, the wrapper keeps running, and the next reload
 * takes it over.
 */
static void test_adopt_failed_reload(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *adopting = NULL;
	GPid gen1, pid, gen3;

	if (!have_haproxy_for(TRUE, TRUE))
		return;
	daemon_site_init(&s);
	gen1 = start_serving_holdable(&s, "--seamless-reload=off", &w);
	held_config(&s, "    no-such-keyword here\n");
	wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, LOG_EXECUTING, T_WAIT));
	pid = restart_by_hand(&s, "-sf", FALSE);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_null(wrapper_find_log(w, LOG_RELOAD_FAILED));
	open_load_gate(&s);
	g_assert_nonnull(wrapper_wait_log(w, LOG_RELOAD_FAILED, T_WAIT));
	adopting = g_strdup_printf(LOG_ADOPTING "%d", pid);
	g_assert_nonnull(wait_log_anywhere(w, adopting));
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);
	g_assert_cmpint(wait_answered_by(s.port, pid), ==, pid);

	g_free(t_write_config(s.dir, "haproxy.cfg", s.port, NULL));
	wrapper_signal(w, SIGUSR2);
	gen3 = wrapper_wait_ready(w, 3, T_WAIT);
	g_assert_cmpint(gen3, >, 0);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	g_assert_cmpint(wait_answered_by(s.port, gen3), ==, gen3);
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/* A haproxy for the wrapper whose -v waits (bounded) for dir/gate and
 * says so in dir/probe.log; every run goes to the real one. */
static gchar *gated_haproxy(const char *dir, const char *variant)
{
	g_autofree gchar *bin = g_build_filename(dir, "bin", NULL);
	g_autofree gchar *text = g_strdup_printf(
		"#!/bin/sh\n# %s\n"
		"if [ \"$1\" = -v ]; then\n"
		"  echo probing >> %s/probe.log\n  i=0\n"
		"  while [ ! -e %s/gate ] && [ $i -lt 1000 ]; do\n"
		"    sleep 0.01; i=$((i + 1))\n  done\nfi\n"
		"exec %s \"$@\"\n", variant, dir, dir, HAPROXY);
	gchar *path = g_build_filename(bin, "haproxy", NULL);

	g_assert_cmpint(g_mkdir_with_parents(bin, 0755), ==, 0);
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
	g_assert_cmpint(chmod(path, 0755), ==, 0);
	return path;
}

/*
 * A restart by hand while our reload's "haproxy -v" runs: the generation
 * waits for the search, and the instance it adopts is on its -sf list.
 * What keeps the search going once generation 1 has gone: a second
 * haproxy for the same configuration held loading (its own pidfile)
 * until the generation is seen waiting.
 */
static void test_adopt_during_probe(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *haproxy = NULL, *option = NULL, *gate = NULL;
	g_autofree gchar *probe_log = NULL, *probing = NULL, *held = NULL;
	g_autofree gchar *slow_cfg = NULL;
	g_autofree gchar *exec2 = NULL, *adopting = NULL, *slow_text = NULL;
	g_autofree gchar *second_gate = NULL, *second_held = NULL;
	g_autoptr(GArray) sf = NULL;
	g_autoptr(GError) error = NULL;
	GPid gen1, pid, launcher, second, gen2;

	if (!have_haproxy_for(TRUE, TRUE))
		return;
	daemon_site_init(&s);
	gate = g_build_filename(s.dir, "gate", NULL);
	probe_log = g_build_filename(s.dir, "probe.log", NULL);
	g_assert_true(g_file_set_contents(gate, "", 0, NULL));
	haproxy = gated_haproxy(s.dir, "1");
	option = g_strdup_printf("--haproxy=%s", haproxy);
	gen1 = start_serving(&s, option, &w);
	/* The service's file: held for the second launcher alone. */
	slow_text = held_config_text_if(s.dir, "second", HOLD_VAR);
	slow_cfg = t_write_config(s.dir, "haproxy.cfg", s.port, slow_text);
	second_gate = g_build_filename(s.dir, "second.gate", NULL);
	second_held = g_build_filename(s.dir, "second.held", NULL);

	/* A new script (no cached version), its -v closed. */
	g_assert_cmpint(unlink(gate), ==, 0);
	g_free(gated_haproxy(s.dir, "2"));
	wrapper_signal(w, SIGUSR2);
	probing = t_wait_file_line(probe_log, "probing", NULL, 2, T_WAIT);
	g_assert_nonnull(probing);

	launcher = start_daemon_by_hand(&s, HOLD_VAR);
	/* Loading: a launcher the search must wait for, not one it may
	 * miss by looking before the exec. */
	held = t_wait_file_line(second_held, "held", NULL, 1, T_WAIT);
	g_assert_nonnull(held);
	pid = restart_by_hand(&s, "-sf", FALSE);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_nonnull(wrapper_wait_log(w, LOG_LOOKING_FOR_REPLACEMENT,
					  T_WAIT));
	g_assert_true(g_file_set_contents(gate, "", 0, NULL));
	g_assert_nonnull(wrapper_wait_log(w, LOG_WAITS_FOR_SEARCH, T_WAIT));
	g_assert_true(g_file_set_contents(second_gate, "", 0, NULL));

	adopting = g_strdup_printf(LOG_ADOPTING "%d", pid);
	g_assert_nonnull(wait_log_anywhere(w, adopting));
	g_assert_cmpint(t_wait_child(launcher, T_WAIT), ==, 0);
	/* Written as its launcher exits, before any generation of ours. */
	second = wait_pidfile_other(s.pidfile, pid);
	g_assert_cmpint(second, >, 0);
	t_remember(second, HAPROXY);
	g_assert_cmpint(proc_parent(second), !=, w->pid);
	exec2 = g_strdup(wrapper_wait_log(w, LOG_EXECUTING, T_WAIT));
	sf = sf_pid_list(exec2);
	g_assert_true(proc_pids_contain(sf, pid));
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	/* Taken over too: on the -sf list, or (found still loading, its
	 * daemon adopted later) retired once generation 2 serves. */
	g_assert_true(t_wait_gone(second, T_WAIT));
	g_assert_cmpint(answering_for(s.port, gen2), ==, gen2);
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/*
 * The one serving dies (SIGKILL) while generation 2 loads, to take its
 * listeners (-x); then a stop, generation 2 still loading. The stop ends
 * it: the wrapper exits without starting it again (the retry without -x
 * is for a running service, not one stopping).
 */
static void test_stop_after_serving_died_during_load(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *held = NULL, *held_line = NULL, *died = NULL;
	GPid gen1;

	if (!have_haproxy_for(TRUE, TRUE))
		return;
	daemon_site_init(&s);
	gen1 = start_serving_holdable(&s, NULL, &w);
	held_config(&s, "");
	wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, LOG_EXECUTING, T_WAIT));
	held = g_build_filename(s.dir, "load.held", NULL);
	held_line = t_wait_file_line(held, "held", NULL, 1, T_WAIT);
	g_assert_nonnull(held_line);

	/* Our own generation 1, by the pid the wrapper reported. */
	g_assert_cmpint(kill(gen1, SIGKILL), ==, 0);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	died = g_strdup_printf(LOG_KILLED_WHILE_STARTS_FMT, gen1, 2);
	g_assert_nonnull(wrapper_wait_log(w, died, T_WAIT));

	wrapper_signal(w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(w, T_WAIT), !=, -1);
	g_assert_null(wrapper_find_log(w, LOG_ENDED_WHILE_LOADED));
	g_assert_null(wrapper_executing_line(w, 3));
	daemon_site_clear(&s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();

	g_test_add_func("/adopt/during-reload-start",
			test_adopt_during_reload_start);
	g_test_add_func("/adopt/during-reload-start-no-x",
			test_adopt_during_reload_start_no_x);
	g_test_add_func("/adopt/during-probe", test_adopt_during_probe);
	g_test_add_func("/adopt/failed-reload", test_adopt_failed_reload);
	g_test_add_func("/adopt/stop-after-serving-died-during-load",
			test_stop_after_serving_died_during_load);
	g_test_add_func("/adopt/gone-before-ready",
			test_adopted_gone_before_ready);
	return g_test_run();
}
