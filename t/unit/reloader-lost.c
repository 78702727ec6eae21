/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reload state machine (t/lib/reloader.h): the generation serving ends
 * while the next one loads, or is replaced by hand (a search for what
 * replaced it), and reloads wait for that search. */
#include <signal.h>

#include "t/lib/reloader.h"

/* ---- the one serving ends while the next loads ---- */

/* Usually the new one's own soft stop, seen before its readiness. */
static void test_old_exits_before_ready(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	post(RE_SERVING_LOST, &(struct reload_input){ .exit_code = 0 });
	assert_state(RS_LOADING);
	post(RE_SERVING, NULL);
	ready("generation 2 serving");
	expect("READY=1", "answer 1: ok generation 2 serving", "end attempt",
	       NULL);
	teardown();
}

/* ... and if the new one fails, nothing serves: the wrapper stops with
 * the old one's status. */
static void test_old_exits_then_new_fails(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	request(2, 0, FALSE);
	post(RE_SERVING_LOST, &(struct reload_input){ .exit_code = 3 });
	post(RE_CHILD_EXIT, &(struct reload_input){
		.exit_code = 1, .message = "generation 2 exited 1" });
	assert_state(RS_IDLE);
	expect("failed (none serving): generation 2 exited 1",
	       "stop service 3", "answer 1: error: stopping",
	       "answer 2: error: stopping", "end attempt", NULL);
	g_assert_false(reloader_pending(F.r, NULL, NULL));
	teardown();
}

/* An adopted haproxy serves: the failed reload leaves it serving. */
static void test_old_exits_adopted_serves(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	post(RE_SERVING_LOST, &(struct reload_input){ .exit_code = 1 });
	F.adopted_serving = TRUE;
	failed(1, "bad config");
	expect("failed (kept): bad config", "READY=1",
	       "answer 1: error: bad config", "end attempt", NULL);
	teardown();
}

/* ---- a generation replaced by hand ---- */

/* The one serving ended as a replaced one does during the reload: a
 * ready successor looks (quickly) for what replaced it. */
static void test_replaced_during_reload(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	post(RE_SERVING_LOST, &(struct reload_input){ .exit_code = 0,
						      .replaced = TRUE });
	post(RE_SERVING, NULL);
	ready("generation 2 serving");
	expect("search quick", "READY=1", "answer 1: ok generation 2 serving",
	       "end attempt", NULL);
	teardown();
}

/* ... a failed successor: not a crash, a search (the full one). */
static void test_replaced_then_failed(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	post(RE_SERVING_LOST, &(struct reload_input){ .exit_code = 0,
						      .replaced = TRUE });
	failed(1, "bad config");
	assert_state(RS_IDLE);
	expect("failed (replaced): bad config", "search slow", "READY=1",
	       "answer 1: error: bad config", "end attempt", NULL);
	g_assert_cmpuint(reloader_reloads_failed(F.r), ==, 1);
	teardown();
}

/* ... a successor that was to take its listeners starts again. */
static void test_replaced_then_retry(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	post(RE_SERVING_LOST, &(struct reload_input){ .replaced = TRUE });
	post(RE_RETRY, NULL);
	assert_state(RS_PROBING);
	expect("search slow", "end attempt", "probe", NULL);
	teardown();
}

/* While a search runs, a reload waits for it; a launch waits for its
 * outcome, which goes on the -sf list. */
static void test_search_holds_reloads(void)
{
	setup();
	first_start();
	F.searching = TRUE;
	request(1, SIGUSR2, FALSE);
	assert_state(RS_IDLE);
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_IDLE);
	expect(NULL);
	F.searching = FALSE;
	post(RE_SEARCH_OVER, NULL);
	expect("schedule pending", NULL);
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_PROBING);
	F.must_wait = TRUE;
	probed("2.6.12");
	assert_state(RS_AWAITING_SEARCH);
	F.must_wait = FALSE;
	post(RE_REPLACED, NULL);
	assert_state(RS_LOADING);
	expect("RELOADING=1", "probe", "launch 2.6.12", NULL);
	teardown();
}

/* A launch waiting for a search that then finds nothing (a launcher
 * started by hand exited without a daemon) goes on: ours still serves. */
static void test_search_over_resumes_launch(void)
{
	setup();
	first_start();
	request(1, SIGUSR2, FALSE);
	F.must_wait = TRUE;
	probed("2.6.12");
	assert_state(RS_AWAITING_SEARCH);
	F.must_wait = FALSE;
	post(RE_SEARCH_OVER, NULL);
	assert_state(RS_LOADING);
	expect("RELOADING=1", "probe", "launch 2.6.12", NULL);
	teardown();
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/reloader/lost/old-exits-before-ready",
			test_old_exits_before_ready);
	g_test_add_func("/reloader/lost/then-new-fails",
			test_old_exits_then_new_fails);
	g_test_add_func("/reloader/lost/adopted-serves",
			test_old_exits_adopted_serves);
	g_test_add_func("/reloader/replaced/during-reload",
			test_replaced_during_reload);
	g_test_add_func("/reloader/replaced/then-failed",
			test_replaced_then_failed);
	g_test_add_func("/reloader/replaced/then-retry",
			test_replaced_then_retry);
	g_test_add_func("/reloader/replaced/search-holds-reloads",
			test_search_holds_reloads);
	g_test_add_func("/reloader/replaced/search-over-resumes-launch",
			test_search_over_resumes_launch);
	return g_test_run();
}
