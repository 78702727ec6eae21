/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reload state machine with fake effects: see t/lib/reloader.h. */
#include "t/lib/reloader.h"

#include <signal.h>

struct fake F;

/* The effect's line, as expect() compares them. */
static gchar *effect_text(const struct fake_call *c)
{
	static const char *const simple[] = {
		[FO_NOTIFY_RELOADING] = "RELOADING=1",
		[FO_BEGIN_UPGRADE] = "dry run",
		[FO_PROBE] = "probe",
		[FO_KILL_LOADING] = "kill loading",
		[FO_NOTIFY_READY] = "READY=1",
		[FO_END_ATTEMPT] = "end attempt",
		[FO_SCHEDULE_PENDING] = "schedule pending",
		[FO_ABANDON_HANDOFF] = "abandon hand-off",
	};
	static const char *const failures[] = {
		[FAILURE_FIRST_START] = "first start",
		[FAILURE_KEPT] = "kept",
		[FAILURE_REPLACED] = "replaced",
		[FAILURE_NONE_SERVING] = "none serving",
	};

	switch (c->op) {
	case FO_LAUNCH:
		return g_strdup_printf("launch %s", c->v->full);
	case FO_SEARCH:
		return g_strdup_printf("search %s",
				       c->quick ? "quick" : "slow");
	case FO_LOG_FAILURE:
		return g_strdup_printf("failed (%s): %s", failures[c->how],
				       c->text);
	case FO_STOP_SERVICE:
		return g_strdup_printf("stop service %d", c->code);
	case FO_ANSWER:
		return g_strdup_printf("answer %u: %s", c->client, c->text);
	case FO_RETRY_FIRST:
		return g_strdup_printf("retry first %d: %s", c->code,
				       c->text);
	default:
		return g_strdup(simple[c->op]);
	}
}

/* FX(FO_PROBE) or FX(FO_ANSWER, .client = 1, .text = ...) */
#define FX(o, ...) effect(&(struct fake_call){ .op = (o), __VA_ARGS__ })

static void effect(const struct fake_call *c)
{
	if (F.observe)
		F.observe(c);
	else
		g_ptr_array_add(F.effects, effect_text(c));
}

static gboolean op_searching(struct supervisor *sv)
{
	return F.searching;
}

static gboolean op_adopted_serving(struct supervisor *sv)
{
	return F.adopted_serving;
}

static enum upgrade_choice op_upgrade_wanted(struct supervisor *sv)
{
	return F.upgrade;
}

static void op_notify_reloading(struct supervisor *sv)
{
	FX(FO_NOTIFY_RELOADING);
}

static void op_begin_upgrade(struct supervisor *sv)
{
	FX(FO_BEGIN_UPGRADE);
}

static void op_probe(struct supervisor *sv)
{
	FX(FO_PROBE);
}

static gboolean op_launch_must_wait(struct supervisor *sv)
{
	return F.must_wait;
}

static enum launch_kind op_launch(struct supervisor *sv,
				  const struct haproxy_version *v)
{
	FX(FO_LAUNCH, .v = v);
	return F.launch;
}

static void op_kill_loading(struct supervisor *sv)
{
	FX(FO_KILL_LOADING);
}

static gchar *op_master_timeout_text(struct supervisor *sv,
				     gboolean settling)
{
	return g_strdup(settling ? "no SIGUSR2 handler" : "no verdict");
}

static void op_search(struct supervisor *sv, gboolean quick)
{
	FX(FO_SEARCH, .quick = quick);
}

static void op_log_failure(struct supervisor *sv, enum reload_failure how,
			   const char *msg)
{
	FX(FO_LOG_FAILURE, .how = how, .text = msg);
}

static void op_stop_service(struct supervisor *sv, int exit_code)
{
	FX(FO_STOP_SERVICE, .code = exit_code);
	F.stopping = TRUE;
	/* As the supervisor does: its stop is an event too. */
	reloader_post(F.r, RE_STOP, NULL);
}

static void op_notify_ready(struct supervisor *sv)
{
	FX(FO_NOTIFY_READY);
}

static void op_answer(struct control_client *c, const char *text)
{
	FX(FO_ANSWER, .client = GPOINTER_TO_UINT(c), .text = text);
}

static void op_end_attempt(struct supervisor *sv)
{
	FX(FO_END_ATTEMPT);
}

static void op_schedule_pending(struct supervisor *sv)
{
	FX(FO_SCHEDULE_PENDING);
}

static void op_abandon_handoff(struct supervisor *sv)
{
	FX(FO_ABANDON_HANDOFF);
}

static gboolean op_stopping(struct supervisor *sv)
{
	return F.stopping;
}

static gboolean op_retry_first(struct supervisor *sv, int exit_code,
			       const char *msg)
{
	FX(FO_RETRY_FIRST, .code = exit_code, .text = msg);
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
	.stopping = op_stopping,
	.retry_first = op_retry_first,
};

void setup(void)
{
	F = (struct fake){
		.effects = g_ptr_array_new_with_free_func(g_free),
		.launch = LAUNCH_GENERATION,
	};
	F.r = reloader_new(&fake_ops, NULL);
}

void teardown(void)
{
	reloader_free(F.r);
	g_ptr_array_unref(F.effects);
}

void expect(const char *first, ...)
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

void post(enum reload_event ev, const struct reload_input *in)
{
	/* As in the supervisor: the life cycle stops, then tells. */
	if (ev == RE_STOP)
		F.stopping = TRUE;
	reloader_post(F.r, ev, in);
}

void request(int client, int sig, gboolean hard)
{
	post(RE_REQUEST, &(struct reload_input){
		.client = client ? CLIENT(client) : NULL,
		.signal = sig, .hard = hard });
}

void probed(const char *version)
{
	struct haproxy_version v = { 0 };

	g_strlcpy(v.full, version, sizeof(v.full));
	post(RE_PROBED, &(struct reload_input){ .version = &v });
}

void ready(const char *msg)
{
	post(RE_READY, &(struct reload_input){ .message = msg });
}

void failed(int code, const char *msg)
{
	post(RE_FAILED, &(struct reload_input){ .exit_code = code,
						.message = msg });
}

void assert_state(enum reload_state want)
{
	g_assert_cmpstr(reload_state_name(reloader_state(F.r)), ==,
			reload_state_name(want));
}

void first_start(void)
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

void reload_to_loading(int client)
{
	request(client, client ? 0 : SIGUSR2, FALSE);
	assert_state(RS_PROBING);
	probed("2.6.12");
	assert_state(RS_LOADING);
	expect("RELOADING=1", "probe", "launch 2.6.12", NULL);
}

gboolean t_timer_armed(void)
{
	GMainContext *ctx = g_main_context_default();
	GPollFD fds[8];
	gint priority, timeout;

	g_main_context_acquire(ctx);
	g_main_context_prepare(ctx, &priority);
	g_main_context_query(ctx, G_MAXINT, &timeout, fds, G_N_ELEMENTS(fds));
	g_main_context_release(ctx);
	return timeout >= 0;
}
