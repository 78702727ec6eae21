/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reload state machine (t/lib/reloader.h): a stop in each state of a
 * reload answers its clients "stopping", sends no READY=1 and runs nothing
 * after. */
#include <signal.h>

#include "t/lib/reloader.h"

static void test_stop_while_probing(void)
{
	setup();
	first_start();
	request(1, 0, FALSE);
	request(2, 0, FALSE);
	post(RE_STOP, NULL);
	assert_state(RS_IDLE);
	/* No READY=1 while stopping; nothing runs after. */
	expect("RELOADING=1", "probe", "answer 1: error: stopping",
	       "answer 2: error: stopping", "end attempt", NULL);
	g_assert_false(reloader_pending(F.r, NULL, NULL));
	g_assert_cmpstr(reloader_last(F.r)->message, ==, "stopping");
	/* A late version changes nothing. */
	probed("2.6.12");
	request(3, SIGUSR2, FALSE);
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_IDLE);
	expect("answer 3: error: stopping", NULL);
	teardown();
}

static void test_stop_while_master_settles(void)
{
	setup();
	first_start();
	F.launch = LAUNCH_MASTER;
	request(1, 0, FALSE);
	probed("2.8.1");
	assert_state(RS_MASTER_SETTLING);
	post(RE_STOP, NULL);
	assert_state(RS_IDLE);
	expect("RELOADING=1", "probe", "launch 2.8.1",
	       "answer 1: error: stopping", "end attempt", NULL);
	/* The master's late SIGUSR2 and verdict are no longer a reload. */
	post(RE_SIGNALLED, NULL);
	ready("generation 1 reloaded");
	assert_state(RS_IDLE);
	expect(NULL);
	teardown();
}

static void test_stop_during_handoff(void)
{
	setup();
	first_start();
	post(RE_HANDOFF, NULL);
	assert_state(RS_HANDING_OFF);
	g_assert_true(reloader_busy(F.r));
	request(1, 0, FALSE);
	expect(NULL);
	post(RE_STOP, NULL);
	assert_state(RS_IDLE);
	/* Both clients told; the hand-off is no reload: nothing recorded. */
	expect("answer 1: error: stopping", "abandon hand-off", NULL);
	g_assert_false(reloader_last(F.r)->valid);
	post(RE_HANDOFF_OVER, NULL);
	expect(NULL);
	teardown();
}

/* A loading generation is killed by the stop: its end ends the attempt. */
static void test_stop_while_loading(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	post(RE_STOP, NULL);
	assert_state(RS_LOADING);
	expect("answer 1: error: stopping", NULL);
	post(RE_CHILD_EXIT, &(struct reload_input){
		.exit_code = 143, .message = "generation 2 killed" });
	assert_state(RS_IDLE);
	expect("end attempt", NULL);
	g_assert_cmpstr(reloader_last(F.r)->message, ==,
			"stopped while starting");
	teardown();
}

/* A first start stopped while it loads, then ready: still no reload
 * (the status counts none). Found by t/unit/reloader-props. */
static void test_stop_first_start_loading(void)
{
	setup();
	post(RE_START, NULL);
	post(RE_SETTLED, NULL);
	probed("2.6.12");
	post(RE_STOP, NULL);
	assert_state(RS_LOADING);
	ready("generation 1 serving");
	assert_state(RS_IDLE);
	expect("probe", "launch 2.6.12", "end attempt", NULL);
	g_assert_cmpuint(reloader_reloads(F.r), ==, 0);
	g_assert_cmpuint(reloader_reloads_failed(F.r), ==, 0);
	teardown();
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/reloader/stop/while-probing",
			test_stop_while_probing);
	g_test_add_func("/reloader/stop/while-master-settles",
			test_stop_while_master_settles);
	g_test_add_func("/reloader/stop/during-handoff",
			test_stop_during_handoff);
	g_test_add_func("/reloader/stop/while-loading",
			test_stop_while_loading);
	g_test_add_func("/reloader/stop/first-start-loading",
			test_stop_first_start_loading);
	return g_test_run();
}
