/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reload state machine without processes: event sequences in, states,
 * effects and the answers clients get out. */
#include <glib.h>
#include <signal.h>

#include "wrapper/reloader.h"

/* Clients are opaque to the machine: small numbers stand for them. */
#define CLIENT(n) ((struct control_client *)GINT_TO_POINTER(n))

struct fake {
	struct reloader *r;
	GPtrArray *effects;	/* "probe", "answer 1: ok ...", ... */
	gboolean searching;
	gboolean adopted_serving;
	enum upgrade_choice upgrade;
	enum launch_kind launch;
	gboolean must_wait;
	gboolean retry_first;	/* what retry_first answers */
};

static struct fake F;

static void effect(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

static void effect(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	g_ptr_array_add(F.effects, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

static gboolean op_searching(void *ctx)
{
	return F.searching;
}

static gboolean op_adopted_serving(void *ctx)
{
	return F.adopted_serving;
}

static enum upgrade_choice op_upgrade_wanted(void *ctx)
{
	return F.upgrade;
}

static void op_notify_reloading(void *ctx)
{
	effect("RELOADING=1");
}

static void op_begin_upgrade(void *ctx)
{
	effect("dry run");
}

static void op_probe(void *ctx)
{
	effect("probe");
}

static gboolean op_launch_must_wait(void *ctx)
{
	return F.must_wait;
}

static enum launch_kind op_launch(void *ctx, const struct haproxy_version *v)
{
	effect("launch %s", v->full);
	return F.launch;
}

static void op_kill_loading(void *ctx)
{
	effect("kill loading");
}

static gchar *op_master_timeout_text(void *ctx, gboolean settling)
{
	return g_strdup(settling ? "no SIGUSR2 handler" : "no verdict");
}

static void op_search(void *ctx, gboolean quick)
{
	effect("search %s", quick ? "quick" : "slow");
}

static void op_log_failure(void *ctx, enum reload_failure how,
			   const char *msg)
{
	static const char *const names[] = {
		[FAILURE_FIRST_START] = "first start",
		[FAILURE_KEPT] = "kept",
		[FAILURE_REPLACED] = "replaced",
		[FAILURE_NONE_SERVING] = "none serving",
	};

	effect("failed (%s): %s", names[how], msg);
}

static void op_stop_service(void *ctx, int exit_code)
{
	effect("stop service %d", exit_code);
	/* As the supervisor does: its stop is an event too. */
	reloader_post(F.r, RE_STOP, NULL);
}

static void op_notify_ready(void *ctx)
{
	effect("READY=1");
}

static void op_answer(void *ctx, struct control_client *c, const char *text)
{
	effect("answer %d: %s", GPOINTER_TO_INT(c), text);
}

static void op_end_attempt(void *ctx)
{
	effect("end attempt");
}

static void op_schedule_pending(void *ctx)
{
	effect("schedule pending");
}

static void op_abandon_handoff(void *ctx)
{
	effect("abandon hand-off");
}

static gboolean op_retry_first(void *ctx, int exit_code, const char *msg)
{
	effect("retry first %d: %s", exit_code, msg);
	return F.retry_first;
}

static const struct reloader_ops fake_ops = {
	.searching = op_searching,
	.adopted_serving = op_adopted_serving,
	.upgrade_wanted = op_upgrade_wanted,
	.notify_reloading = op_notify_reloading,
	.begin_upgrade = op_begin_upgrade,
	.probe = op_probe,
	.launch_must_wait = op_launch_must_wait,
	.launch = op_launch,
	.kill_loading = op_kill_loading,
	.master_timeout_text = op_master_timeout_text,
	.search = op_search,
	.log_failure = op_log_failure,
	.stop_service = op_stop_service,
	.notify_ready = op_notify_ready,
	.answer = op_answer,
	.end_attempt = op_end_attempt,
	.schedule_pending = op_schedule_pending,
	.abandon_handoff = op_abandon_handoff,
	.retry_first = op_retry_first,
};

static void setup(void)
{
	F = (struct fake){
		.effects = g_ptr_array_new_with_free_func(g_free),
		.launch = LAUNCH_GENERATION,
	};
	F.r = reloader_new(&fake_ops, NULL);
}

static void teardown(void)
{
	reloader_free(F.r);
	g_ptr_array_unref(F.effects);
}

/* The effects since the last call, in order, exactly these. */
static void expect(const char *first, ...)
{
	g_autoptr(GPtrArray) want = g_ptr_array_new();
	g_autofree gchar *got_text = NULL;
	g_autofree gchar *want_text = NULL;
	va_list ap;

	va_start(ap, first);
	for (const char *e = first; e; e = va_arg(ap, const char *))
		g_ptr_array_add(want, (gpointer)e);
	va_end(ap);
	g_ptr_array_add(want, NULL);
	g_ptr_array_add(F.effects, NULL);
	got_text = g_strjoinv(" | ", (gchar **)F.effects->pdata);
	want_text = g_strjoinv(" | ", (gchar **)want->pdata);
	g_assert_cmpstr(got_text, ==, want_text);
	g_ptr_array_set_size(F.effects, 0);
}

static void post(enum reload_event ev, const struct reload_input *in)
{
	reloader_post(F.r, ev, in);
}

static void request(int client, int sig, gboolean hard)
{
	post(RE_REQUEST, &(struct reload_input){
		.client = client ? CLIENT(client) : NULL,
		.signal = sig, .hard = hard });
}

static void probed(const char *version)
{
	struct haproxy_version v = { 0 };

	g_strlcpy(v.full, version, sizeof(v.full));
	post(RE_PROBED, &(struct reload_input){ .version = &v });
}

static void ready(const char *msg)
{
	post(RE_READY, &(struct reload_input){ .message = msg });
}

static void failed(int code, const char *msg)
{
	post(RE_FAILED, &(struct reload_input){ .exit_code = code,
						.message = msg });
}

static void assert_state(enum reload_state want)
{
	g_assert_cmpstr(reload_state_name(reloader_state(F.r)), ==,
			reload_state_name(want));
}

/* The first start, up to a serving generation: no one waits, nothing
 * is recorded as a reload. */
static void start_serving(void)
{
	post(RE_START, NULL);
	assert_state(RS_STARTING);
	post(RE_SETTLED, NULL);
	assert_state(RS_PROBING);
	probed("2.6.12");
	assert_state(RS_LOADING);
	post(RE_SERVING, NULL);
	ready("generation 1 serving");
	assert_state(RS_IDLE);
	expect("probe", "launch 2.6.12", "READY=1", "end attempt", NULL);
	g_assert_cmpuint(reloader_reloads(F.r), ==, 0);
	g_assert_false(reloader_last(F.r)->valid);
}

/* A reload asked by client n, up to its loading generation. */
static void reload_to_loading(int client)
{
	request(client, client ? 0 : SIGUSR2, FALSE);
	assert_state(RS_PROBING);
	probed("2.6.12");
	assert_state(RS_LOADING);
	expect("RELOADING=1", "probe", "launch 2.6.12", NULL);
}

/* ---- reloads ---- */

static void test_reload_ok(void)
{
	setup();
	start_serving();
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
	start_serving();
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
	start_serving();
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

/* The new wrapper image refused its dry run: this one reloads, and the
 * answer says why it did not upgrade. */
static void test_upgrade_refused(void)
{
	setup();
	start_serving();
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

/* ---- stops ---- */

static void test_stop_while_probing(void)
{
	setup();
	start_serving();
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
	start_serving();
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
	start_serving();
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

/* A hand-off that ends short of its exec runs what came meanwhile. */
static void test_handoff_refused(void)
{
	setup();
	start_serving();
	post(RE_HANDOFF, NULL);
	request(1, 0, FALSE);
	post(RE_HANDOFF_OVER, NULL);
	assert_state(RS_IDLE);
	expect("schedule pending", NULL);
	post(RE_RUN_PENDING, NULL);
	assert_state(RS_PROBING);
	teardown();
}

/* A loading generation is killed by the stop: its end ends the attempt. */
static void test_stop_while_loading(void)
{
	setup();
	start_serving();
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

/* ---- the one serving ends while the next loads ---- */

/* Usually the new one's own soft stop, seen before its readiness. */
static void test_old_exits_before_ready(void)
{
	setup();
	start_serving();
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
	start_serving();
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
	start_serving();
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
	start_serving();
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
	start_serving();
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
	start_serving();
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
	start_serving();
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
	start_serving();
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

/* ---- timeouts ---- */

static void test_timeouts(void)
{
	setup();
	start_serving();
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

/* Effects that post events synchronously are handled after the event
 * that caused them, in order. */
static void test_master_verdict(void)
{
	setup();
	start_serving();
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

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/reloader/reload/ok", test_reload_ok);
	g_test_add_func("/reloader/reload/coalesced", test_coalesced);
	g_test_add_func("/reloader/reload/while-starting",
			test_request_while_starting);
	g_test_add_func("/reloader/reload/failed", test_failed);
	g_test_add_func("/reloader/reload/first-start-failed",
			test_first_start_failed);
	g_test_add_func("/reloader/reload/upgrade-refused",
			test_upgrade_refused);
	g_test_add_func("/reloader/reload/resume", test_resume);
	g_test_add_func("/reloader/reload/master-verdict",
			test_master_verdict);
	g_test_add_func("/reloader/stop/while-probing",
			test_stop_while_probing);
	g_test_add_func("/reloader/stop/while-master-settles",
			test_stop_while_master_settles);
	g_test_add_func("/reloader/stop/during-handoff",
			test_stop_during_handoff);
	g_test_add_func("/reloader/stop/while-loading",
			test_stop_while_loading);
	g_test_add_func("/reloader/handoff/refused", test_handoff_refused);
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
	g_test_add_func("/reloader/timeouts", test_timeouts);
	g_test_add_func("/reloader/reload/first-start-retried",
			test_first_start_retried);
	return g_test_run();
}
