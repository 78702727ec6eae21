/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reload state machine (see reloader.h): one transition function. */
#include "wrapper/reloader.h"

#include "base/log.h"

struct queued {
	enum reload_event ev;
	struct reload_input in;
	struct haproxy_version version;
	gchar *message;
};

struct reloader {
	const struct reloader_ops *ops;
	void *ctx;
	enum reload_state state;
	gboolean stopping;		/* a stop came: nothing new starts */

	/* The attempt under way or last: numbered, 0 the first start. A
	 * client waits for the first attempt after its request. */
	guint attempt;
	gboolean first;			/* the first start, not yet serving */
	gboolean hard;			/* -st */
	int signal;			/* that asked; 0: a client */
	gint64 started_us;		/* monotonic */
	gboolean skip_upgrade;		/* it follows our own exec */
	gchar *upgrade_refused;		/* why not, told to the waiters */
	gboolean upgrade_postponed;	/* told in its answer */
	GPtrArray *waiters;		/* struct waiter * */

	/* Any number of requests during an attempt make one more. */
	struct {
		gboolean on;
		int signal;
		gboolean hard;
	} pending;

	/* LOADING: the serving one ended meanwhile (usually the soft stop
	 * the new one sent once bound, seen before its readiness): the new
	 * one decides. */
	struct {
		gboolean on;
		int exit_code;		/* the wrapper's, if nothing serves */
		gboolean replaced;	/* as by a restart by hand: look */
	} lost;

	/* AWAITING_SEARCH: the version the launch waits with. */
	struct haproxy_version launch_version;

	struct reload_report last;
	guint reloads;
	guint reloads_failed;

	GQueue queue;			/* struct queued *, run to completion */
	gboolean dispatching;
};

static const char *const state_names[] = {
	[RS_IDLE] = "IDLE",
	[RS_STARTING] = "STARTING",
	[RS_CHECKING_UPGRADE] = "CHECKING_UPGRADE",
	[RS_PROBING] = "PROBING",
	[RS_AWAITING_SEARCH] = "AWAITING_SEARCH",
	[RS_LOADING] = "LOADING",
	[RS_MASTER_SETTLING] = "MASTER_SETTLING",
	[RS_MASTER_VERDICT] = "MASTER_VERDICT",
	[RS_HANDING_OFF] = "HANDING_OFF",
};

static const char *const event_names[] = {
	[RE_START] = "START",
	[RE_RESUME] = "RESUME",
	[RE_REQUEST] = "REQUEST",
	[RE_RUN_PENDING] = "RUN_PENDING",
	[RE_SETTLED] = "SETTLED",
	[RE_UPGRADE_REFUSED] = "UPGRADE_REFUSED",
	[RE_PROBED] = "PROBED",
	[RE_REPLACED] = "REPLACED",
	[RE_SEARCH_OVER] = "SEARCH_OVER",
	[RE_SIGNALLED] = "SIGNALLED",
	[RE_SERVING] = "SERVING",
	[RE_READY] = "READY",
	[RE_FAILED] = "FAILED",
	[RE_CHILD_EXIT] = "CHILD_EXIT",
	[RE_RETRY] = "RETRY",
	[RE_SERVING_LOST] = "SERVING_LOST",
	[RE_TIMEOUT] = "TIMEOUT",
	[RE_HANDOFF] = "HANDOFF",
	[RE_HANDOFF_OVER] = "HANDOFF_OVER",
	[RE_STOP] = "STOP",
};

const char *reload_state_name(enum reload_state state)
{
	return (guint)state < G_N_ELEMENTS(state_names) ? state_names[state]
						       : "?";
}

const char *reload_event_name(enum reload_event ev)
{
	return (guint)ev < G_N_ELEMENTS(event_names) ? event_names[ev] : "?";
}

/* ---- clients waiting, and the end of an attempt ---- */

static void answer_upto(struct reloader *r, guint upto, const char *text)
{
	for (guint i = 0; i < r->waiters->len;) {
		struct waiter *w = g_ptr_array_index(r->waiters, i);

		if (w->target > upto) {
			i++;
			continue;
		}
		r->ops->answer(r->ctx, w->client, text);
		g_ptr_array_remove_index(r->waiters, i);
	}
}

static void schedule_pending(struct reloader *r)
{
	/* From the loop, not from inside whichever event ended this one. */
	if (r->pending.on)
		r->ops->schedule_pending(r->ctx);
}

/* The end of every busy period: what is pending runs next. */
static void go_idle(struct reloader *r)
{
	r->state = RS_IDLE;
	r->skip_upgrade = FALSE;
	r->upgrade_postponed = FALSE;
	g_clear_pointer(&r->upgrade_refused, g_free);
	schedule_pending(r);
}

static void record(struct reloader *r, gboolean ok, const char *msg)
{
	reload_report_clear(&r->last);
	r->last = (struct reload_report){
		.valid = TRUE,
		.ok = ok,
		.message = g_strdup(msg),
		.ended_us = g_get_real_time(),
		.duration_us = g_get_monotonic_time() - r->started_us,
	};
}

static void finish(struct reloader *r, gboolean ok, const char *msg)
{
	/* A refused self-upgrade is told on the verdict's line. */
	g_autofree gchar *answer = g_strdup_printf(
		"%s%s%s%s", ok ? "ok " : "error: ", msg,
		r->upgrade_refused ? "; not upgraded: " : "",
		r->upgrade_refused ? r->upgrade_refused : "");

	if (r->attempt > 0)
		record(r, ok, msg);
	/* systemd waits for READY=1 after RELOADING=1, failed or not. */
	if (!r->stopping)
		r->ops->notify_ready(r->ctx);
	answer_upto(r, r->attempt, answer);
	r->ops->end_attempt(r->ctx);
	go_idle(r);
}

/* Nothing serves: the wrapper stops, and this attempt ends with it. */
static void stop_service(struct reloader *r, int exit_code)
{
	r->stopping = TRUE;
	r->pending.on = FALSE;
	r->ops->stop_service(r->ctx, exit_code);
	answer_upto(r, G_MAXUINT, "error: stopping");
	finish(r, FALSE, "stopping");
}

static void fail(struct reloader *r, int exit_code, const char *msg)
{
	if (r->first && !r->stopping) {
		g_autofree gchar *answer = g_strdup_printf("error: %s", msg);

		r->ops->log_failure(r->ctx, FAILURE_FIRST_START, msg);
		answer_upto(r, G_MAXUINT, answer);
		stop_service(r, exit_code);
		return;
	}
	if (r->lost.on && r->lost.replaced) {
		/* As if it had ended outside a reload: maybe a restart by
		 * hand; stopping if nothing replaced it. */
		r->reloads_failed++;
		r->ops->log_failure(r->ctx, FAILURE_REPLACED, msg);
		r->lost.on = FALSE;
		r->lost.replaced = FALSE;
		r->ops->search(r->ctx, FALSE);
		finish(r, FALSE, msg);
		return;
	}
	if (r->lost.on && !r->ops->adopted_serving(r->ctx)) {
		r->ops->log_failure(r->ctx, FAILURE_NONE_SERVING, msg);
		stop_service(r, r->lost.exit_code);
		return;
	}
	r->reloads_failed++;
	r->ops->log_failure(r->ctx, FAILURE_KEPT, msg);
	finish(r, FALSE, msg);
}

/* ---- the steps of an attempt ---- */

static void probe(struct reloader *r)
{
	r->state = RS_PROBING;
	r->ops->probe(r->ctx);
}

static void launch(struct reloader *r, const struct haproxy_version *v)
{
	/* The one serving ended during this reload, as a replaced one
	 * does: what replaced it goes on the -sf list, once found. */
	if (r->ops->launch_must_wait(r->ctx)) {
		r->launch_version = *v;
		r->state = RS_AWAITING_SEARCH;
		return;
	}
	switch (r->ops->launch(r->ctx, v)) {
	case LAUNCH_GENERATION:
		r->state = RS_LOADING;
		break;
	case LAUNCH_MASTER:
		r->state = RS_MASTER_SETTLING;
		break;
	case LAUNCH_FAILED:
		break;
	}
}

static void begin(struct reloader *r, int sig, gboolean hard)
{
	r->attempt++;
	r->hard = hard;
	r->signal = sig;
	r->started_us = g_get_monotonic_time();
	log_notice("%sreloading on %s.", hard ? "hard-" : "",
		   sig ? signal_name(sig) : "request");
	/* After our own exec this is the same reload: systemd heard of it,
	 * and the new image does not upgrade again. */
	if (r->skip_upgrade) {
		probe(r);
		return;
	}
	r->ops->notify_reloading(r->ctx);
	switch (r->ops->upgrade_wanted(r->ctx)) {
	case UPGRADE_YES:
		r->state = RS_CHECKING_UPGRADE;
		r->ops->begin_upgrade(r->ctx);
		return;
	case UPGRADE_POSTPONED:
		r->upgrade_postponed = TRUE;
		break;
	case UPGRADE_NO:
		break;
	}
	probe(r);
}

static void request(struct reloader *r, const struct reload_input *in)
{
	const char *who = in->signal ? signal_name(in->signal)
				     : "control request";
	gboolean hard;

	if (r->stopping) {
		log_notice("ignoring %s: stopping", who);
		if (in->client)
			r->ops->answer(r->ctx, in->client, "error: stopping");
		return;
	}
	if (in->client)
		reloader_add_waiter(r, in->client, r->attempt + 1);
	if (r->state != RS_IDLE || r->ops->searching(r->ctx)) {
		if (!r->pending.on)
			log_info("%s: a reload is in progress; one more will "
				 "follow it", who);
		r->pending.on = TRUE;
		r->pending.signal = in->signal;
		r->pending.hard = r->pending.hard || in->hard;
		return;
	}
	/* One more was to run from the loop: this attempt is it. */
	hard = in->hard || (r->pending.on && r->pending.hard);
	r->pending.on = FALSE;
	r->pending.hard = FALSE;
	begin(r, in->signal, hard);
}

static void run_pending(struct reloader *r)
{
	if (!r->pending.on || r->state != RS_IDLE || r->stopping ||
	    r->ops->searching(r->ctx))
		return;
	r->pending.on = FALSE;
	begin(r, r->pending.signal, r->pending.hard);
	r->pending.hard = FALSE;
}

static void resume(struct reloader *r, const struct reload_input *in)
{
	r->skip_upgrade = TRUE;
	r->pending.on = in->pending;
	r->pending.signal = in->pending_signal;
	/* Nothing pending: no hard flag for the next request to inherit. */
	r->pending.hard = in->pending && in->pending_hard;
	/* The same attempt, carried on by the new image. */
	r->attempt = in->attempt - 1;
	begin(r, in->signal, in->hard);
}

static void ready(struct reloader *r, const char *msg)
{
	/* A first start stopped while it loads is no reload either. */
	if (r->first)
		r->first = FALSE;
	else
		r->reloads++;
	finish(r, TRUE, msg);
}

static void timeout(struct reloader *r)
{
	g_autofree gchar *why = NULL;

	if (r->state == RS_LOADING) {
		r->ops->kill_loading(r->ctx);
		return;
	}
	/* Its old workers serve: leave the master be. */
	why = r->ops->master_timeout_text(r->ctx,
					  r->state == RS_MASTER_SETTLING);
	fail(r, 1, why);
}

static void stop(struct reloader *r)
{
	r->stopping = TRUE;
	r->pending.on = FALSE;
	answer_upto(r, G_MAXUINT, "error: stopping");
	switch (r->state) {
	case RS_IDLE:
		break;
	case RS_HANDING_OFF:
		/* Not a reload: nothing to record, its client told. */
		r->ops->abandon_handoff(r->ctx);
		go_idle(r);
		break;
	case RS_LOADING:
		/* Its end (CHILD_EXIT) or readiness ends the attempt. */
		break;
	default:
		finish(r, FALSE, "stopping");
		break;
	}
}

static gboolean busy_state(enum reload_state s)
{
	return s != RS_IDLE && s != RS_HANDING_OFF;
}

/* The transition function: state x event. Events a state does not
 * expect are ignored (and show in the debug line as a loop). */
static void handle(struct reloader *r, enum reload_event ev,
		   const struct reload_input *in)
{
	enum reload_state s = r->state;

	switch (ev) {
	case RE_START:
		if (s != RS_IDLE)
			break;
		r->first = TRUE;
		r->started_us = g_get_monotonic_time();
		r->state = RS_STARTING;
		break;
	case RE_RESUME:
		if (s == RS_IDLE)
			resume(r, in);
		break;
	case RE_REQUEST:
		request(r, in);
		break;
	case RE_RUN_PENDING:
		run_pending(r);
		break;
	case RE_SETTLED:
		if (s == RS_STARTING)
			probe(r);
		break;
	case RE_UPGRADE_REFUSED:
		if (s != RS_CHECKING_UPGRADE)
			break;
		g_free(r->upgrade_refused);
		r->upgrade_refused = g_strdup(in->message);
		probe(r);
		break;
	case RE_PROBED:
		if (s == RS_PROBING)
			launch(r, in->version);
		break;
	case RE_REPLACED:
		/* It serves now, whatever becomes of a loading one. */
		r->lost.on = FALSE;
		if (s == RS_AWAITING_SEARCH)
			launch(r, &r->launch_version);
		schedule_pending(r);
		break;
	case RE_SEARCH_OVER:
		/* Nothing to add to the -sf list (a launcher started by
		 * hand ended without a daemon): ours serves, launch. */
		if (s == RS_AWAITING_SEARCH)
			launch(r, &r->launch_version);
		schedule_pending(r);
		break;
	case RE_SIGNALLED:
		if (s == RS_MASTER_SETTLING)
			r->state = RS_MASTER_VERDICT;
		break;
	case RE_SERVING:
		if (s != RS_LOADING)
			break;
		r->lost.on = FALSE;
		/* Its predecessor ended during its start: from its -sf, or
		 * from a restart by hand that it must not serve next to. */
		if (r->lost.replaced) {
			r->lost.replaced = FALSE;
			r->ops->search(r->ctx, TRUE);
		}
		break;
	case RE_READY:
		if (s == RS_LOADING || s == RS_MASTER_VERDICT)
			ready(r, in->message);
		break;
	case RE_FAILED:
		if (busy_state(s))
			fail(r, in->exit_code, in->message);
		break;
	case RE_CHILD_EXIT:
		if (s != RS_LOADING)
			break;
		if (r->stopping) {
			finish(r, FALSE, "stopped while starting");
		} else if (r->first && r->ops->retry_first &&
			   r->ops->retry_first(r->ctx, in->exit_code,
					       in->message)) {
			/* Settled again: a foreign haproxy may hold its
			 * addresses, its pids go on the next -sf. */
			r->ops->end_attempt(r->ctx);
			r->state = RS_STARTING;
		} else {
			fail(r, in->exit_code, in->message);
		}
		break;
	case RE_RETRY:
		if (s != RS_LOADING)
			break;
		/* The launch waits for the search: -sf what replaced it. */
		if (r->lost.replaced)
			r->ops->search(r->ctx, FALSE);
		r->lost.replaced = FALSE;
		r->ops->end_attempt(r->ctx);
		probe(r);
		break;
	case RE_SERVING_LOST:
		if (s != RS_LOADING)
			break;
		r->lost.on = TRUE;
		r->lost.exit_code = in->exit_code;
		r->lost.replaced = in->replaced;
		break;
	case RE_TIMEOUT:
		if (s == RS_LOADING || s == RS_MASTER_SETTLING ||
		    s == RS_MASTER_VERDICT)
			timeout(r);
		break;
	case RE_HANDOFF:
		if (s == RS_IDLE && !r->first && !r->stopping)
			r->state = RS_HANDING_OFF;
		break;
	case RE_HANDOFF_OVER:
		if (s == RS_HANDING_OFF)
			go_idle(r);
		break;
	case RE_STOP:
		stop(r);
		break;
	}
	log_step("reload: %s --%s--> %s", reload_state_name(s),
		 reload_event_name(ev), reload_state_name(r->state));
}

/* ---- posting ---- */

static struct queued *queued_new(enum reload_event ev,
				 const struct reload_input *in)
{
	struct queued *q = g_new0(struct queued, 1);

	q->ev = ev;
	if (in)
		q->in = *in;
	if (in && in->version) {
		q->version = *in->version;
		q->in.version = &q->version;
	}
	if (in && in->message) {
		q->message = g_strdup(in->message);
		q->in.message = q->message;
	}
	return q;
}

static void queued_free(struct queued *q)
{
	g_free(q->message);
	g_free(q);
}

void reloader_post(struct reloader *r, enum reload_event ev,
		   const struct reload_input *in)
{
	struct queued *q;

	g_queue_push_tail(&r->queue, queued_new(ev, in));
	if (r->dispatching)
		return;
	r->dispatching = TRUE;
	while ((q = g_queue_pop_head(&r->queue))) {
		handle(r, q->ev, &q->in);
		queued_free(q);
	}
	r->dispatching = FALSE;
}

/* ---- life and questions ---- */

struct reloader *reloader_new(const struct reloader_ops *ops, void *ctx)
{
	struct reloader *r = g_new0(struct reloader, 1);

	r->ops = ops;
	r->ctx = ctx;
	r->waiters = g_ptr_array_new_with_free_func(g_free);
	g_queue_init(&r->queue);
	return r;
}

void reloader_free(struct reloader *r)
{
	if (!r)
		return;
	g_queue_clear_full(&r->queue, (GDestroyNotify)queued_free);
	g_ptr_array_unref(r->waiters);
	reload_report_clear(&r->last);
	g_free(r->upgrade_refused);
	g_free(r);
}

enum reload_state reloader_state(const struct reloader *r)
{
	return r->state;
}

gboolean reloader_busy(const struct reloader *r)
{
	return r->state != RS_IDLE;
}

guint reloader_attempt(const struct reloader *r)
{
	return r->attempt;
}

gboolean reloader_hard(const struct reloader *r)
{
	return r->hard;
}

int reloader_signal(const struct reloader *r)
{
	return r->signal;
}

gint64 reloader_started_us(const struct reloader *r)
{
	return r->started_us;
}

struct log_event reloader_event(const struct reloader *r,
				const char *message_id, guint number, GPid pid,
				const char *result)
{
	return (struct log_event){
		.message_id = message_id,
		.generation = number,
		.pid = pid,
		.result = result,
		.duration_us = g_get_monotonic_time() - r->started_us,
	};
}

gboolean reloader_pending(const struct reloader *r, int *sig,
			  gboolean *hard)
{
	if (sig)
		*sig = r->pending.signal;
	if (hard)
		*hard = r->pending.hard;
	return r->pending.on;
}

gboolean reloader_upgrade_postponed(const struct reloader *r)
{
	return r->upgrade_postponed;
}

const GPtrArray *reloader_waiters(const struct reloader *r)
{
	return r->waiters;
}

void reloader_add_waiter(struct reloader *r, struct control_client *c,
			 guint target)
{
	struct waiter *w = g_new0(struct waiter, 1);

	*w = (struct waiter){ .client = c, .target = target };
	g_ptr_array_add(r->waiters, w);
}

void reloader_answer_all(struct reloader *r, const char *text)
{
	answer_upto(r, G_MAXUINT, text);
}

const struct reload_report *reloader_last(const struct reloader *r)
{
	return &r->last;
}

guint reloader_reloads(const struct reloader *r)
{
	return r->reloads;
}

guint reloader_reloads_failed(const struct reloader *r)
{
	return r->reloads_failed;
}

void reloader_set_counters(struct reloader *r, guint reloads,
			   guint reloads_failed)
{
	r->reloads = reloads;
	r->reloads_failed = reloads_failed;
}
