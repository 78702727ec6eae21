/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reload state machine without processes (t/lib/reloader.h): reloads
 * from a request to their answer, their failures and timeouts, and across
 * a self-upgrade. Stops: t/unit/reloader-stop.c; the generation serving
 * lost or replaced by hand: t/unit/reloader-lost.c. */
#include <signal.h>
#include <stdio.h>

#include "t/lib/reloader.h"

/* ---- reloads ---- */

static void test_reload_ok(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	ready("generation 2 serving");
	assert_state(RS_IDLE);
	expect("READY=1", "answer 1: ok generation 2 serving", "end attempt",
	       NULL);
	g_assert_cmpuint(reloader_reloads(F.r), ==, 1);
	g_assert_cmpuint(reloader_attempt(F.r), ==, 1);
	g_assert_true(reloader_last(F.r)->valid);
	g_assert_true(reloader_last(F.r)->ok);
	g_assert_cmpstr(reloader_last(F.r)->message, ==,
			"generation 2 serving");
	teardown();
}

/* Requests during a reload make one more, which answers all of them;
 * a hard one among them makes it hard. */
static void test_coalesced(void)
{
	int sig;
	gboolean hard;

	setup();
	first_start();
	reload_to_loading(1);
	request(2, 0, FALSE);
	request(0, SIGUSR2, TRUE);
	request(3, 0, FALSE);
	assert_state(RS_LOADING);
	expect(NULL);
	g_assert_true(reloader_pending(F.r, &sig, &hard));
	g_assert_true(hard);
	ready("generation 2 serving");
	/* Only the client of the attempt that ended is answered. */
	expect("READY=1", "answer 1: ok generation 2 serving", "end attempt",
	       "schedule pending", NULL);
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_PROBING);
	g_assert_true(reloader_hard(F.r));
	g_assert_false(reloader_pending(F.r, NULL, NULL));
	probed("2.6.12");
	ready("generation 3 serving");
	expect("RELOADING=1", "probe", "launch 2.6.12", "READY=1",
	       "answer 2: ok generation 3 serving",
	       "answer 3: ok generation 3 serving", "end attempt", NULL);
	/* One more, not one per request. */
	g_assert_cmpuint(reloader_attempt(F.r), ==, 2);
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_IDLE);
	expect(NULL);
	teardown();
}

/* Requests during the first start wait for it. */
static void test_request_while_starting(void)
{
	setup();
	post(RE_START, NULL);
	post(RE_SETTLED, NULL);
	request(1, 0, FALSE);
	/* The loop may run it early: it still waits. */
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_PROBING);
	probed("2.6.12");
	ready("generation 1 serving");
	expect("probe", "launch 2.6.12", "READY=1", "end attempt",
	       "schedule pending", NULL);
	post(RE_RUN_PENDING, NULL);
	probed("2.6.12");
	ready("generation 2 serving");
	expect("RELOADING=1", "probe", "launch 2.6.12", "READY=1",
	       "answer 1: ok generation 2 serving", "end attempt", NULL);
	teardown();
}

static void test_failed(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	post(RE_CHILD_EXIT, &(struct reload_input){
		.exit_code = 1,
		.message = "generation 2 (pid 9) exited 1 before it was ready" });
	assert_state(RS_IDLE);
	expect("failed (kept): generation 2 (pid 9) exited 1 before it was "
	       "ready", "READY=1", "answer 1: error: generation 2 (pid 9) "
	       "exited 1 before it was ready", "end attempt", NULL);
	g_assert_cmpuint(reloader_reloads_failed(F.r), ==, 1);
	g_assert_cmpuint(reloader_reloads(F.r), ==, 0);
	g_assert_false(reloader_last(F.r)->ok);
	/* A failure before the launch, too. */
	request(2, 0, FALSE);
	failed(69, "haproxy not found");
	expect("RELOADING=1", "probe", "failed (kept): haproxy not found",
	       "READY=1", "answer 2: error: haproxy not found", "end attempt",
	       NULL);
	g_assert_cmpuint(reloader_reloads_failed(F.r), ==, 2);
	teardown();
}

/* Nothing served yet: the wrapper stops, with the failure's status. */
static void test_first_start_failed(void)
{
	setup();
	post(RE_START, NULL);
	post(RE_SETTLED, NULL);
	request(1, 0, FALSE);
	failed(127, "haproxy not found");
	assert_state(RS_IDLE);
	expect("probe", "failed (first start): haproxy not found",
	       "answer 1: error: haproxy not found", "stop service 127",
	       "end attempt", NULL);
	g_assert_false(reloader_last(F.r)->valid);
	request(2, 0, FALSE);
	expect("answer 2: error: stopping", NULL);
	teardown();
}

/* The machine is the one home of "first start": it holds from START
 * until the first generation serves (READY), through a request that
 * waits for it, and no longer for the reload that runs after it. */
static void test_first_start_owner(void)
{
	setup();
	/* Before START too: status says "starting". */
	g_assert_true(reloader_first_start(F.r));
	post(RE_START, NULL);
	g_assert_true(reloader_first_start(F.r));
	post(RE_SETTLED, NULL);
	request(1, SIGUSR2, FALSE);
	probed("2.6.12");
	assert_state(RS_LOADING);
	g_assert_true(reloader_first_start(F.r));
	post(RE_SERVING, NULL);
	g_assert_true(reloader_first_start(F.r));
	ready("generation 1 serving");
	g_assert_false(reloader_first_start(F.r));
	expect("probe", "launch 2.6.12", "READY=1", "end attempt",
	       "schedule pending", NULL);
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_PROBING);
	g_assert_false(reloader_first_start(F.r));
	probed("2.6.12");
	ready("generation 2 serving");
	expect("RELOADING=1", "probe", "launch 2.6.12", "READY=1",
	       "answer 1: ok generation 2 serving", "end attempt", NULL);
	g_assert_cmpuint(reloader_reloads(F.r), ==, 1);
	teardown();
}

/* A first start that failed stays one (the wrapper stops with its exit
 * code); one stopped while it loads ends when it serves, no reload. */
static void test_first_start_owner_ends(void)
{
	setup();
	post(RE_START, NULL);
	post(RE_SETTLED, NULL);
	failed(127, "haproxy not found");
	expect("probe", "failed (first start): haproxy not found",
	       "stop service 127", "end attempt", NULL);
	g_assert_true(reloader_first_start(F.r));
	teardown();

	setup();
	post(RE_START, NULL);
	post(RE_SETTLED, NULL);
	probed("2.6.12");
	post(RE_STOP, NULL);
	g_assert_true(reloader_first_start(F.r));
	ready("generation 1 serving");
	g_assert_false(reloader_first_start(F.r));
	g_assert_cmpuint(reloader_reloads(F.r), ==, 0);
	teardown();
}

/* A new image resumes what the old one ran: no first start. */
static void test_first_start_not_after_resume(void)
{
	setup();
	post(RE_RESUME, &(struct reload_input){ .attempt = 3 });
	g_assert_false(reloader_first_start(F.r));
	teardown();
}

/* ---- a master's verdict and timeouts ---- */

/* Effects that post events synchronously are handled after the event
 * that caused them, in order. */
static void test_master_verdict(void)
{
	setup();
	first_start();
	F.launch = LAUNCH_MASTER;
	request(1, 0, FALSE);
	probed("2.8.1");
	post(RE_SIGNALLED, NULL);
	assert_state(RS_MASTER_VERDICT);
	ready("generation 1 (master pid 7) serving with workers 8");
	assert_state(RS_IDLE);
	expect("RELOADING=1", "probe", "launch 2.8.1", "READY=1",
	       "answer 1: ok generation 1 (master pid 7) serving with "
	       "workers 8", "end attempt", NULL);
	g_assert_cmpuint(reloader_reloads(F.r), ==, 1);
	teardown();
}

static void test_timeouts(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	post(RE_TIMEOUT, NULL);
	assert_state(RS_LOADING);
	expect("kill loading", NULL);
	post(RE_CHILD_EXIT, &(struct reload_input){
		.exit_code = 137, .message = "killed" });
	expect("failed (kept): killed", "READY=1", "answer 1: error: killed",
	       "end attempt", NULL);
	F.launch = LAUNCH_MASTER;
	request(2, 0, FALSE);
	probed("2.8.1");
	post(RE_TIMEOUT, NULL);
	expect("RELOADING=1", "probe", "launch 2.8.1",
	       "failed (kept): no SIGUSR2 handler", "READY=1",
	       "answer 2: error: no SIGUSR2 handler", "end attempt", NULL);
	request(3, 0, FALSE);
	probed("2.8.1");
	post(RE_SIGNALLED, NULL);
	assert_state(RS_MASTER_VERDICT);
	post(RE_TIMEOUT, NULL);
	expect("RELOADING=1", "probe", "launch 2.8.1",
	       "failed (kept): no verdict", "READY=1",
	       "answer 3: error: no verdict", "end attempt", NULL);
	teardown();
}

/* ---- a self-upgrade ---- */

/* The new wrapper image refused its dry run: this one reloads, and the
 * answer says why it did not upgrade. */
static void test_upgrade_refused(void)
{
	setup();
	first_start();
	F.upgrade = UPGRADE_YES;
	request(1, 0, FALSE);
	assert_state(RS_CHECKING_UPGRADE);
	post(RE_UPGRADE_REFUSED, &(struct reload_input){
		.message = "/usr/sbin/w --upgrade-dry-run exited 64" });
	assert_state(RS_PROBING);
	probed("2.6.12");
	ready("generation 2 serving");
	expect("RELOADING=1", "dry run", "probe", "launch 2.6.12", "READY=1",
	       "answer 1: ok generation 2 serving; not upgraded: "
	       "/usr/sbin/w --upgrade-dry-run exited 64", "end attempt",
	       NULL);
	/* The next one does not carry the refusal. */
	F.upgrade = UPGRADE_NO;
	reload_to_loading(2);
	ready("generation 3 serving");
	expect("READY=1", "answer 2: ok generation 3 serving", "end attempt",
	       NULL);
	teardown();
}

/* After our own exec the same attempt goes on, told to systemd once. */
static void test_resume(void)
{
	setup();
	F.upgrade = UPGRADE_YES;
	reloader_add_waiter(F.r, CLIENT(1), 4);
	post(RE_RESUME, &(struct reload_input){ .signal = SIGUSR2,
						.attempt = 4,
						.pending = TRUE });
	assert_state(RS_PROBING);
	g_assert_cmpuint(reloader_attempt(F.r), ==, 4);
	probed("2.6.12");
	ready("generation 5 serving");
	expect("probe", "launch 2.6.12", "READY=1",
	       "answer 1: ok generation 5 serving", "end attempt",
	       "schedule pending", NULL);
	/* The pending one may upgrade again. */
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_CHECKING_UPGRADE);
	expect("RELOADING=1", "dry run", NULL);
	teardown();
}

/* A request that begins an attempt while one more waits to run from the
 * loop (the last attempt just ended) takes it along: one reload, not
 * two, and as hard as either asked. Found by t/unit/reloader-props. */
static void test_request_takes_pending(void)
{
	setup();
	first_start();
	reload_to_loading(1);
	request(2, 0, TRUE);
	failed(1, "bad config");
	expect("failed (kept): bad config", "READY=1",
	       "answer 1: error: bad config", "end attempt",
	       "schedule pending", NULL);
	/* A client's request comes before the loop runs the pending one. */
	request(3, 0, FALSE);
	assert_state(RS_PROBING);
	g_assert_true(reloader_hard(F.r));
	g_assert_false(reloader_pending(F.r, NULL, NULL));
	probed("2.6.12");
	ready("generation 3 serving");
	expect("RELOADING=1", "probe", "launch 2.6.12", "READY=1",
	       "answer 2: ok generation 3 serving",
	       "answer 3: ok generation 3 serving", "end attempt", NULL);
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_IDLE);
	g_assert_cmpuint(reloader_attempt(F.r), ==, 2);
	teardown();
}

/* A state that says nothing is pending carries no hard flag into the
 * next request, whatever its pending_hard says. Found by
 * t/unit/reloader-props. */
static void test_resume_no_pending_hard(void)
{
	gboolean hard;

	setup();
	post(RE_RESUME, &(struct reload_input){ .signal = SIGUSR2,
						.attempt = 1,
						.pending_hard = TRUE });
	assert_state(RS_PROBING);
	request(1, 0, FALSE);
	g_assert_true(reloader_pending(F.r, NULL, &hard));
	g_assert_false(hard);
	teardown();
}

/* A hand-off that ends short of its exec runs what came meanwhile. */
static void test_handoff_refused(void)
{
	setup();
	first_start();
	post(RE_HANDOFF, NULL);
	request(1, 0, FALSE);
	post(RE_HANDOFF_OVER, NULL);
	assert_state(RS_IDLE);
	expect("schedule pending", NULL);
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_PROBING);
	teardown();
}

/* faststart: generation 1 ended unready and the search that waited runs:
 * settled again, the first start goes on (still the first: no reload
 * counted); found nothing, the failure it had is the first start's. */
static void test_first_start_retried(void)
{
	setup();
	F.retry_first = TRUE;
	post(RE_START, NULL);
	post(RE_SETTLED, NULL);
	probed("2.6.12");
	post(RE_CHILD_EXIT, &(struct reload_input){ .exit_code = 1,
						    .message = "no bind" });
	assert_state(RS_STARTING);
	expect("probe", "launch 2.6.12", "retry first 1: no bind",
	       "end attempt", NULL);
	post(RE_SETTLED, NULL);
	probed("2.6.12");
	ready("generation 2 serving");
	assert_state(RS_IDLE);
	expect("probe", "launch 2.6.12", "READY=1", "end attempt", NULL);
	g_assert_cmpuint(reloader_attempt(F.r), ==, 0);
	g_assert_cmpuint(reloader_reloads(F.r), ==, 0);
	teardown();

	setup();
	F.retry_first = TRUE;
	post(RE_START, NULL);
	post(RE_SETTLED, NULL);
	probed("2.6.12");
	post(RE_CHILD_EXIT, &(struct reload_input){ .exit_code = 1,
						    .message = "no bind" });
	F.retry_first = FALSE;
	failed(1, "no bind");
	expect("probe", "launch 2.6.12", "retry first 1: no bind",
	       "end attempt", "failed (first start): no bind",
	       "stop service 1", "end attempt", NULL);
	assert_state(RS_IDLE);
	teardown();
}

/* The states of a row's set: "any", "any but A | B" or "A | B", and
 * "same" for RELOAD_SAME. */
static gchar *states_text(guint set)
{
	guint all = (1u << RELOAD_STATES) - 1;
	guint states = set & all;
	g_autoptr(GPtrArray) names = g_ptr_array_new_null_terminated(
		RELOAD_STATES + 1, NULL, TRUE);
	const char *prefix = "";
	g_autofree gchar *joined = NULL;

	if (states == all)
		return g_strdup("any");
	if (__builtin_popcount(states) > RELOAD_STATES / 2) {
		prefix = "any but ";
		states = all & ~states;
	}
	for (guint s = 0; s < RELOAD_STATES; s++)
		if (states & (1u << s))
			g_ptr_array_add(names, (gpointer)reload_state_name(s));
	if (set & RELOAD_SAME)
		g_ptr_array_add(names, (gpointer)"same");
	joined = g_strjoinv(" | ", (gchar **)names->pdata);
	return g_strconcat(prefix, joined, NULL);
}

/* The table as doc/internals.md shows it (make diagram-check). */
static void print_diagram(void)
{
	guint n;
	const struct reload_transition *t = reload_transitions(&n);

	for (guint i = 0; i < n; i++) {
		g_autofree gchar *from = states_text(t[i].from);
		g_autofree gchar *to = states_text(t[i].to);
		g_autofree gchar *edge = g_strdup_printf(
			"%s --%s--> %s", from, reload_event_name(t[i].event),
			to);

		if (t[i].act)
			printf("%-58s (%s)\n", edge, t[i].action);
		else
			printf("%s\n", edge);
	}
}

/* Each row names some state and event, and a row without an action
 * goes to one state: the dispatcher relies on it. */
static void test_table_well_formed(void)
{
	guint n;
	const struct reload_transition *t = reload_transitions(&n);

	for (guint i = 0; i < n; i++) {
		g_assert_cmpuint(t[i].from, !=, 0);
		g_assert_cmpuint(t[i].from & RELOAD_SAME, ==, 0);
		g_assert_cmpuint(t[i].to, !=, 0);
		g_assert_cmpint(t[i].event, <, RELOAD_EVENTS);
		if (!t[i].act)
			g_assert_cmpuint(__builtin_popcount(t[i].to), ==, 1);
		if (t[i].to & RELOAD_SAME)
			g_assert_nonnull(t[i].act);
	}
}

/* ---- the attempt's deadline ---- */

/* The machine's one timer runs while a generation or a master loads, and
 * goes with the load: at its verdict, a retry, the stop. */
static void test_deadline(void)
{
	setup();
	reloader_set_ready_timeout(F.r, 30);
	post(RE_START, NULL);
	post(RE_SETTLED, NULL);
	g_assert_false(t_timer_armed());
	probed("2.6.12");
	assert_state(RS_LOADING);
	g_assert_true(t_timer_armed());
	ready("generation 1 serving");
	g_assert_false(t_timer_armed());

	F.launch = LAUNCH_MASTER;
	request(1, 0, FALSE);
	probed("2.6.12");
	assert_state(RS_MASTER_SETTLING);
	g_assert_true(t_timer_armed());
	post(RE_SIGNALLED, NULL);
	g_assert_true(t_timer_armed());
	ready("master reloaded");
	g_assert_false(t_timer_armed());

	F.launch = LAUNCH_GENERATION;
	request(2, 0, FALSE);
	probed("2.6.12");
	post(RE_RETRY, NULL);
	assert_state(RS_PROBING);
	g_assert_false(t_timer_armed());
	probed("2.6.12");
	g_assert_true(t_timer_armed());
	/* The stop's own timer bounds a generation still loading. */
	post(RE_STOP, NULL);
	assert_state(RS_LOADING);
	g_assert_false(t_timer_armed());
	teardown();
}

static gboolean on_guard(gpointer data)
{
	*(gboolean *)data = TRUE;
	return G_SOURCE_REMOVE;
}

/* When it passes, the machine posts RE_TIMEOUT itself, once: the loading
 * generation is killed. */
static void test_deadline_fires(void)
{
	gboolean late = FALSE;
	guint guard;

	setup();
	reloader_set_ready_timeout(F.r, 1);
	first_start();
	reload_to_loading(1);
	guard = g_timeout_add_seconds(30, on_guard, &late);
	while (!F.effects->len && !late)
		g_main_context_iteration(NULL, TRUE);
	g_assert_false(late);
	g_source_remove(guard);
	expect("kill loading", NULL);
	assert_state(RS_LOADING);
	g_assert_false(t_timer_armed());
	teardown();
}

int main(int argc, char **argv)
{
	if (argc == 2 && g_str_equal(argv[1], "--diagram")) {
		print_diagram();
		return 0;
	}
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/reloader/table/well-formed", test_table_well_formed);
	g_test_add_func("/reloader/deadline", test_deadline);
	g_test_add_func("/reloader/deadline-fires", test_deadline_fires);
	g_test_add_func("/reloader/reload/ok", test_reload_ok);
	g_test_add_func("/reloader/reload/coalesced", test_coalesced);
	g_test_add_func("/reloader/reload/while-starting",
			test_request_while_starting);
	g_test_add_func("/reloader/reload/failed", test_failed);
	g_test_add_func("/reloader/reload/first-start-failed",
			test_first_start_failed);
	g_test_add_func("/reloader/reload/master-verdict", test_master_verdict);
	g_test_add_func("/reloader/timeouts", test_timeouts);
	g_test_add_func("/reloader/reload/first-start-retried",
			test_first_start_retried);
	g_test_add_func("/reloader/first-start/owner",
			test_first_start_owner);
	g_test_add_func("/reloader/first-start/owner-ends",
			test_first_start_owner_ends);
	g_test_add_func("/reloader/first-start/not-after-resume",
			test_first_start_not_after_resume);
	g_test_add_func("/reloader/reload/upgrade-refused",
			test_upgrade_refused);
	g_test_add_func("/reloader/reload/resume", test_resume);
	g_test_add_func("/reloader/reload/request-takes-pending",
			test_request_takes_pending);
	g_test_add_func("/reloader/reload/resume-no-pending-hard",
			test_resume_no_pending_hard);
	g_test_add_func("/reloader/handoff/refused", test_handoff_refused);
	return g_test_run();
}
