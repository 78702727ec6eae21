/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reload state machine (see reloader.h) as one table: the dispatcher
 * finds the row of (state, event), runs its action, which picks the next
 * state among those the row allows, and set_state() makes the change.
 */
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
	struct supervisor *ctx;		/* opaque: its effects' own */
	enum reload_state state;
	enum reload_event event;	/* the one being handled */
	guint ready_timeout_s;		/* 0: a load may take for ever */
	guint deadline;			/* while loading: RE_TIMEOUT */

	/* The attempt under way or last: numbered, 0 the first start. A
	 * client waits for the first attempt after its request. */
	guint attempt;
	gboolean first;			/* the first start, not yet serving */
	gboolean hard;			/* -st */
	int signal;			/* that asked; 0: a client */
	gint64 started_us;		/* monotonic */
	gboolean skip_upgrade;		/* it follows our own exec */
	gchar *upgrade_refused;		/* why not, told to the waiters */
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
		r->ops->answer(w->client, text);
		g_ptr_array_remove_index(r->waiters, i);
	}
}

static gboolean stopping(struct reloader *r)
{
	return r->ops->stopping(r->ctx);
}

static void schedule_pending(struct reloader *r)
{
	/* From the loop, not from inside whichever event ended this one. */
	if (r->pending.on)
		r->ops->schedule_pending(r->ctx);
}

/* A start or a reload is under way: it owns an attempt (a hand-off is
 * no attempt). */
static gboolean in_attempt(enum reload_state s)
{
	return s != RS_IDLE && s != RS_HANDING_OFF;
}

/* A generation or a master loads: the attempt's deadline runs. */
static gboolean loads(enum reload_state s)
{
	return s == RS_LOADING || s == RS_MASTER_SETTLING ||
	       s == RS_MASTER_VERDICT;
}

static gboolean on_deadline(gpointer data)
{
	struct reloader *r = data;

	r->deadline = 0;
	reloader_post(r, RE_TIMEOUT, NULL);
	return G_SOURCE_REMOVE;
}

/*
 * Every change of state goes through here, as the one debug line per
 * event. What the old state owned and the new one does not is released:
 * the attempt's timers and helpers when it ends (IDLE) or when the
 * loading generation is given up (a retry), the deadline when nothing
 * loads any more; at IDLE, what the attempt knew, and what is pending
 * runs next. What the new state begins with follows.
 */
static void set_state(struct reloader *r, enum reload_state next)
{
	enum reload_state from = r->state;

	if (next != from &&
	    (from == RS_LOADING || (in_attempt(from) && next == RS_IDLE)))
		r->ops->end_attempt(r->ctx);
	if (loads(from) && !loads(next))
		g_clear_handle_id(&r->deadline, g_source_remove);
	r->state = next;
	log_step("reload: %s --%s--> %s", reload_state_name(from),
		 reload_event_name(r->event), reload_state_name(next));
	if (!loads(from) && loads(next) && r->ready_timeout_s)
		r->deadline = g_timeout_add_seconds(r->ready_timeout_s,
						    on_deadline, r);
	if (next == from)
		return;
	switch (next) {
	case RS_IDLE:
		r->skip_upgrade = FALSE;
		g_clear_pointer(&r->upgrade_refused, g_free);
		schedule_pending(r);
		break;
	case RS_CHECKING_UPGRADE:
		r->ops->begin_upgrade(r->ctx);
		break;
	case RS_PROBING:
		r->ops->probe(r->ctx);
		break;
	default:
		break;
	}
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

/* The verdict, told; the attempt ends on the way to IDLE. */
static enum reload_state finish(struct reloader *r, gboolean ok,
				const char *msg)
{
	/* A refused self-upgrade is told on the verdict's line. */
	g_autofree gchar *answer = g_strdup_printf(
		"%s%s%s%s", ok ? "ok " : "error: ", msg,
		r->upgrade_refused ? "; not upgraded: " : "",
		r->upgrade_refused ? r->upgrade_refused : "");

	if (r->attempt > 0)
		record(r, ok, msg);
	/* systemd waits for READY=1 after RELOADING=1, failed or not. */
	if (!stopping(r))
		r->ops->notify_ready(r->ctx);
	answer_upto(r, r->attempt, answer);
	return RS_IDLE;
}

/* Nothing serves: the wrapper stops, and this attempt ends with it. */
static enum reload_state stop_service(struct reloader *r, int exit_code)
{
	r->pending.on = FALSE;
	r->ops->stop_service(r->ctx, exit_code);
	answer_upto(r, G_MAXUINT, "error: stopping");
	return finish(r, FALSE, "stopping");
}

static enum reload_state fail(struct reloader *r, int exit_code,
			      const char *msg)
{
	if (r->first && !stopping(r)) {
		g_autofree gchar *answer = g_strdup_printf("error: %s", msg);

		r->ops->log_failure(r->ctx, FAILURE_FIRST_START, msg);
		answer_upto(r, G_MAXUINT, answer);
		return stop_service(r, exit_code);
	}
	if (r->lost.on && r->lost.replaced) {
		/* As if it had ended outside a reload: maybe a restart by
		 * hand; stopping if nothing replaced it. */
		r->reloads_failed++;
		r->ops->log_failure(r->ctx, FAILURE_REPLACED, msg);
		r->lost.on = FALSE;
		r->lost.replaced = FALSE;
		r->ops->search(r->ctx, FALSE);
		return finish(r, FALSE, msg);
	}
	if (r->lost.on && !r->ops->adopted_serving(r->ctx)) {
		r->ops->log_failure(r->ctx, FAILURE_NONE_SERVING, msg);
		return stop_service(r, r->lost.exit_code);
	}
	r->reloads_failed++;
	r->ops->log_failure(r->ctx, FAILURE_KEPT, msg);
	return finish(r, FALSE, msg);
}

/* ---- the actions: each returns the next state, one its row allows ---- */

static enum reload_state launch(struct reloader *r,
				const struct haproxy_version *v)
{
	/* The one serving ended during this reload, as a replaced one
	 * does: what replaced it goes on the -sf list, once found. */
	if (r->ops->launch_must_wait(r->ctx)) {
		r->launch_version = *v;
		return RS_AWAITING_SEARCH;
	}
	switch (r->ops->launch(r->ctx, v)) {
	case LAUNCH_GENERATION:
		return RS_LOADING;
	case LAUNCH_MASTER:
		return RS_MASTER_SETTLING;
	case LAUNCH_FAILED:
		break;
	}
	/* Its RE_FAILED, queued, ends the attempt. */
	return r->state;
}

static enum reload_state begin(struct reloader *r, int sig, gboolean hard)
{
	r->attempt++;
	r->hard = hard;
	r->signal = sig;
	r->started_us = g_get_monotonic_time();
	/* After our own exec this is the same reload: the old image said
	 * it began, systemd heard of it, and the new image does not upgrade
	 * again. */
	if (r->skip_upgrade)
		return RS_PROBING;
	log_notice("%sreloading on %s.", hard ? "hard-" : "",
		   sig ? signal_name(sig) : "request");
	r->ops->notify_reloading(r->ctx);
	if (r->ops->upgrade_wanted(r->ctx) == UPGRADE_YES)
		return RS_CHECKING_UPGRADE;
	return RS_PROBING;
}

static enum reload_state start(struct reloader *r,
			       const struct reload_input *in)
{
	r->started_us = g_get_monotonic_time();
	return RS_STARTING;
}

static enum reload_state resume(struct reloader *r,
				const struct reload_input *in)
{
	r->first = FALSE;
	r->skip_upgrade = TRUE;
	r->pending.on = in->pending;
	r->pending.signal = in->pending_signal;
	/* Nothing pending: no hard flag for the next request to inherit. */
	r->pending.hard = in->pending && in->pending_hard;
	/* The same attempt, carried on by the new image. */
	r->attempt = in->attempt - 1;
	return begin(r, in->signal, in->hard);
}

static enum reload_state request(struct reloader *r,
				 const struct reload_input *in)
{
	const char *who = in->signal ? signal_name(in->signal)
				     : "control request";
	gboolean hard;

	if (stopping(r)) {
		log_notice("ignoring %s: stopping", who);
		if (in->client)
			r->ops->answer(in->client, "error: stopping");
		return r->state;
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
		return r->state;
	}
	/* One more was to run from the loop: this attempt is it. */
	hard = in->hard || (r->pending.on && r->pending.hard);
	r->pending.on = FALSE;
	r->pending.hard = FALSE;
	return begin(r, in->signal, hard);
}

static enum reload_state run_pending(struct reloader *r,
				     const struct reload_input *in)
{
	enum reload_state next;

	if (!r->pending.on || stopping(r) || r->ops->searching(r->ctx))
		return r->state;
	r->pending.on = FALSE;
	next = begin(r, r->pending.signal, r->pending.hard);
	r->pending.hard = FALSE;
	return next;
}

static enum reload_state upgrade_refused(struct reloader *r,
					 const struct reload_input *in)
{
	g_free(r->upgrade_refused);
	r->upgrade_refused = g_strdup(in->message);
	return RS_PROBING;
}

static enum reload_state probed(struct reloader *r,
				const struct reload_input *in)
{
	return launch(r, in->version);
}

/* The search's end: a launch that waited for it goes on, with what
 * replaced ours on its -sf list, or with nothing to add (SEARCH_OVER: a
 * launcher started by hand ended without a daemon, ours serves). */
static enum reload_state search_over(struct reloader *r,
				     const struct reload_input *in)
{
	enum reload_state next = r->state;

	if (r->state == RS_AWAITING_SEARCH)
		next = launch(r, &r->launch_version);
	schedule_pending(r);
	return next;
}

static enum reload_state replaced(struct reloader *r,
				  const struct reload_input *in)
{
	/* It serves now, whatever becomes of a loading one. */
	r->lost.on = FALSE;
	return search_over(r, in);
}

static enum reload_state serving(struct reloader *r,
				 const struct reload_input *in)
{
	r->lost.on = FALSE;
	/* Its predecessor ended during its start: from its -sf, or from a
	 * restart by hand that it must not serve next to. */
	if (r->lost.replaced) {
		r->lost.replaced = FALSE;
		r->ops->search(r->ctx, TRUE);
	}
	return RS_LOADING;
}

static enum reload_state serving_lost(struct reloader *r,
				      const struct reload_input *in)
{
	r->lost.on = TRUE;
	r->lost.exit_code = in->exit_code;
	r->lost.replaced = in->replaced;
	return RS_LOADING;
}

static enum reload_state ready(struct reloader *r,
			       const struct reload_input *in)
{
	/* A first start stopped while it loads is no reload either. */
	if (r->first)
		r->first = FALSE;
	else
		r->reloads++;
	return finish(r, TRUE, in->message);
}

static enum reload_state failed(struct reloader *r,
				const struct reload_input *in)
{
	return fail(r, in->exit_code, in->message);
}

static enum reload_state child_exit(struct reloader *r,
				    const struct reload_input *in)
{
	if (stopping(r))
		return finish(r, FALSE, "stopped while starting");
	/* Settled again: a foreign haproxy may hold its addresses, its
	 * pids go on the next -sf. */
	if (r->first && r->ops->retry_first &&
	    r->ops->retry_first(r->ctx, in->exit_code, in->message))
		return RS_STARTING;
	return fail(r, in->exit_code, in->message);
}

static enum reload_state retry(struct reloader *r,
			       const struct reload_input *in)
{
	/* The launch waits for the search: -sf what replaced it. */
	if (r->lost.replaced)
		r->ops->search(r->ctx, FALSE);
	r->lost.replaced = FALSE;
	return RS_PROBING;
}

static enum reload_state kill_loading(struct reloader *r,
				      const struct reload_input *in)
{
	r->ops->kill_loading(r->ctx);
	return RS_LOADING;
}

static enum reload_state master_timeout(struct reloader *r,
					const struct reload_input *in)
{
	/* Its old workers serve: leave the master be. */
	g_autofree gchar *why = r->ops->master_timeout_text(
		r->ctx, r->state == RS_MASTER_SETTLING);

	return fail(r, 1, why);
}

static enum reload_state handoff(struct reloader *r,
				 const struct reload_input *in)
{
	return r->first || stopping(r) ? RS_IDLE : RS_HANDING_OFF;
}

/* Every stop: the waiters told, nothing more to run. A generation still
 * loading is the stop's to end, within --stop-timeout: no deadline. */
static enum reload_state stop(struct reloader *r,
			      const struct reload_input *in)
{
	g_clear_handle_id(&r->deadline, g_source_remove);
	r->pending.on = FALSE;
	answer_upto(r, G_MAXUINT, "error: stopping");
	return r->state;
}

static enum reload_state stop_handoff(struct reloader *r,
				      const struct reload_input *in)
{
	stop(r, in);
	/* Not a reload: nothing to record, its client told. */
	r->ops->abandon_handoff(r->ctx);
	return RS_IDLE;
}

static enum reload_state stop_attempt(struct reloader *r,
				      const struct reload_input *in)
{
	stop(r, in);
	return finish(r, FALSE, "stopping");
}

/* ---- the table ---- */

#define S(state) (1u << (state))
#define ANY ((1u << RELOAD_STATES) - 1)
#define ATTEMPT (ANY & ~S(RS_IDLE) & ~S(RS_HANDING_OFF))
#define BEGUN (S(RS_CHECKING_UPGRADE) | S(RS_PROBING))
#define LAUNCHED (S(RS_AWAITING_SEARCH) | S(RS_LOADING) | S(RS_MASTER_SETTLING))
#define ROW(f, e, a, t) \
	{ .from = (f), .event = (e), .to = (t), .act = (a), .action = #a }

/*
 * The whole machine. The first row whose from holds the state and whose
 * event is the one posted runs; a pair without a row is ignored.
 * RELOAD_SAME: the state stays what it was. A row without an action goes
 * to its one next state. doc/internals.md shows this table (make
 * diagram-check).
 */
static const struct reload_transition table[] = {
	ROW(S(RS_IDLE), RE_START, start, S(RS_STARTING)),
	ROW(S(RS_IDLE), RE_RESUME, resume, S(RS_PROBING)),
	ROW(S(RS_IDLE), RE_REQUEST, request, BEGUN | S(RS_IDLE)),
	ROW(ANY, RE_REQUEST, request, RELOAD_SAME),
	ROW(S(RS_IDLE), RE_RUN_PENDING, run_pending, BEGUN | S(RS_IDLE)),
	ROW(S(RS_STARTING), RE_SETTLED, NULL, S(RS_PROBING)),
	ROW(S(RS_CHECKING_UPGRADE), RE_UPGRADE_REFUSED, upgrade_refused,
	    S(RS_PROBING)),
	ROW(S(RS_PROBING), RE_PROBED, probed, LAUNCHED | S(RS_PROBING)),
	ROW(S(RS_AWAITING_SEARCH), RE_REPLACED, replaced, LAUNCHED),
	ROW(ANY, RE_REPLACED, replaced, RELOAD_SAME),
	ROW(S(RS_AWAITING_SEARCH), RE_SEARCH_OVER, search_over, LAUNCHED),
	ROW(ANY, RE_SEARCH_OVER, search_over, RELOAD_SAME),
	ROW(S(RS_MASTER_SETTLING), RE_SIGNALLED, NULL, S(RS_MASTER_VERDICT)),
	ROW(S(RS_LOADING), RE_SERVING, serving, S(RS_LOADING)),
	ROW(S(RS_LOADING), RE_SERVING_LOST, serving_lost, S(RS_LOADING)),
	ROW(S(RS_LOADING) | S(RS_MASTER_VERDICT), RE_READY, ready,
	    S(RS_IDLE)),
	ROW(ATTEMPT, RE_FAILED, failed, S(RS_IDLE)),
	ROW(S(RS_LOADING), RE_CHILD_EXIT, child_exit,
	    S(RS_IDLE) | S(RS_STARTING)),
	ROW(S(RS_LOADING), RE_RETRY, retry, S(RS_PROBING)),
	ROW(S(RS_LOADING), RE_TIMEOUT, kill_loading, S(RS_LOADING)),
	ROW(S(RS_MASTER_SETTLING) | S(RS_MASTER_VERDICT), RE_TIMEOUT,
	    master_timeout, S(RS_IDLE)),
	ROW(S(RS_IDLE), RE_HANDOFF, handoff, S(RS_HANDING_OFF) | S(RS_IDLE)),
	ROW(S(RS_HANDING_OFF), RE_HANDOFF_OVER, NULL, S(RS_IDLE)),
	ROW(S(RS_IDLE) | S(RS_LOADING), RE_STOP, stop, RELOAD_SAME),
	ROW(S(RS_HANDING_OFF), RE_STOP, stop_handoff, S(RS_IDLE)),
	ROW(ATTEMPT & ~S(RS_LOADING), RE_STOP, stop_attempt, S(RS_IDLE)),
};

const struct reload_transition *reload_transitions(guint *n)
{
	*n = G_N_ELEMENTS(table);
	return table;
}

static const struct reload_transition *row_of(enum reload_state s,
					      enum reload_event ev)
{
	for (guint i = 0; i < G_N_ELEMENTS(table); i++)
		if (table[i].event == ev && (table[i].from & S(s)))
			return &table[i];
	return NULL;
}

/* The only next state of a row without an action. */
static enum reload_state only_state(guint to)
{
	return (enum reload_state)g_bit_nth_lsf(to, -1);
}

static void handle(struct reloader *r, enum reload_event ev,
		   const struct reload_input *in)
{
	enum reload_state from = r->state;
	const struct reload_transition *t = row_of(from, ev);
	enum reload_state next = from;

	r->event = ev;
	if (t)
		next = t->act ? t->act(r, in) : only_state(t->to);
	/* An action that ends where its row does not say is a bug. */
	g_assert(!t || (t->to & S(next)) ||
		 ((t->to & RELOAD_SAME) && next == from));
	set_state(r, next);
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

struct reloader *reloader_new(const struct reloader_ops *ops,
			      struct supervisor *sv)
{
	struct reloader *r = g_new0(struct reloader, 1);

	r->ops = ops;
	r->ctx = sv;
	/* Nothing served yet: START begins the first start, RESUME ends
	 * it (the old image's generations serve). */
	r->first = TRUE;
	r->waiters = g_ptr_array_new_with_free_func(g_free);
	g_queue_init(&r->queue);
	return r;
}

void reloader_free(struct reloader *r)
{
	if (!r)
		return;
	g_clear_handle_id(&r->deadline, g_source_remove);
	g_queue_clear_full(&r->queue, (GDestroyNotify)queued_free);
	g_ptr_array_unref(r->waiters);
	reload_report_clear(&r->last);
	g_free(r->upgrade_refused);
	g_free(r);
}

void reloader_set_ready_timeout(struct reloader *r, guint seconds)
{
	r->ready_timeout_s = seconds;
}

enum reload_state reloader_state(const struct reloader *r)
{
	return r->state;
}

gboolean reloader_busy(const struct reloader *r)
{
	return r->state != RS_IDLE;
}

gboolean reloader_first_start(const struct reloader *r)
{
	return r->first;
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
