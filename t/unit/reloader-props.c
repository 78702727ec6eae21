/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reload machine's rules (doc/internals.md, "The machine's rules")
 * checked over generated event sequences, without processes: fake
 * effects that keep a model of what was asked, and a check of every rule
 * after every event. A failing sequence is shrunk (events dropped while
 * it still fails) and printed. HSW_PROPS_SEED=N replays a run,
 * HSW_PROPS_RUNS=N sets how many sequences it tries.
 *
 * Also: the launcher's load timers go with the attempt that armed them,
 * a generation that ended unready never passes an exit 0 on, and the
 * upgrade state carries the reload across our own exec.
 */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wrapper/launcher.h"
#include "wrapper/mworker/link.h"
#include "wrapper/outcome.h"
#include "wrapper/reloader.h"
#include "wrapper/options.h"
#include "wrapper/rundir-use.h"
#include "wrapper/selfupgrade/state.h"

#include "t/lib/reloader.h"

#define DEFAULT_RUNS 100000
#define MAX_STEPS 40
#define MAX_CLIENTS (MAX_STEPS + 8)

/* One input of a sequence: an event and what the environment answers
 * the machine's queries meanwhile. */
struct step {
	enum reload_event ev;	/* or STEP_SEARCH: a search begins */
	gboolean hard;
	int sig;		/* REQUEST: 0 for a client */
	int code;		/* FAILED, CHILD_EXIT */
	int lost_code;		/* SERVING_LOST */
	gboolean replaced;	/* SERVING_LOST */
	enum upgrade_choice upgrade;
	enum launch_kind launch;
	gboolean must_wait;
	gboolean retry_first;
	gboolean adopted_serving;
	/* RESUME */
	guint attempt;
	gboolean pending, pending_hard;
};

#define STEP_SEARCH ((enum reload_event)100)

/* The environment, the model of what was asked, and the first rule
 * broken. */
struct model {
	const struct step *now;		/* the step being posted */
	gboolean timer;			/* the load timers, armed */
	gboolean scheduled;		/* RUN_PENDING asked for */

	guint clients;			/* client n: 1..clients */
	guint answers[MAX_CLIENTS + 1];
	guint target[MAX_CLIENTS + 1];	/* the first attempt after it */
	gboolean accepted[MAX_CLIENTS + 1];

	gboolean lost_zero;		/* the serving one exited 0 */
	gboolean want_hard;		/* a hard request since the last begin */
	gboolean pending;		/* a request waits for the next attempt */
	gboolean begin_allowed;		/* the event posted may begin one */
	guint begun;			/* attempts begun */
	guint last_attempt;
	guint notified_ready;
	guint failures_counted;		/* KEPT and REPLACED */
	guint oks;			/* ok verdicts of attempts > 0 */

	gchar *broken;
};

static struct model M;

/* The events posted in each state: a generator that never gets to a
 * pair of the machine's table checks nothing there. */
static guint posted[RELOAD_STATES][RELOAD_EVENTS];

static void broken(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

static void broken(const char *fmt, ...)
{
	va_list ap;

	if (M.broken)
		return;
	va_start(ap, fmt);
	M.broken = g_strdup_vprintf(fmt, ap);
	va_end(ap);
}

static enum reload_state state(void)
{
	return reloader_state(F.r);
}

static gboolean attempt_state(enum reload_state s)
{
	return s != RS_IDLE && s != RS_HANDING_OFF;
}

static gboolean loads(enum reload_state s)
{
	return s == RS_LOADING || s == RS_MASTER_SETTLING ||
	       s == RS_MASTER_VERDICT;
}

/* An attempt began (each begins with RELOADING=1 or, after our exec,
 * with the probe): the rules on hard and pending. */
static void observe_begin(void)
{
	guint a = reloader_attempt(F.r);

	if (a == M.last_attempt)
		return;
	M.last_attempt = a;
	M.begun++;
	if (!M.begin_allowed)
		broken("attempt %u began on %s, with nothing asked", a,
		       reload_event_name(M.now->ev));
	M.begin_allowed = FALSE;
	if (reloader_hard(F.r) != M.want_hard)
		broken("attempt %u runs %s, asked %s", a,
		       reloader_hard(F.r) ? "hard" : "soft",
		       M.want_hard ? "hard" : "soft");
	M.want_hard = FALSE;
	M.pending = FALSE;
}

/* ---- what the machine does, told by the fake (t/lib/reloader.c) ---- */

static void observe_launch(void)
{
	if (state() != RS_PROBING && state() != RS_AWAITING_SEARCH)
		broken("launch in %s", reload_state_name(state()));
	if (M.timer)
		broken("launch with the last load's timers armed");
	M.timer = F.launch != LAUNCH_FAILED;
	if (F.launch == LAUNCH_FAILED)
		reloader_post(F.r, RE_FAILED, &(struct reload_input){
			.exit_code = 70, .message = "cannot run" });
}

static void observe_answer(guint n, const char *text)
{
	if (n == 0 || n > M.clients) {
		broken("answer to unknown client %u", n);
		return;
	}
	if (M.answers[n]++)
		broken("client %u answered twice: %s", n, text);
	/* An ok from an attempt begun before the request would lie. */
	if (g_str_has_prefix(text, "ok ") &&
	    reloader_attempt(F.r) < M.target[n])
		broken("client %u (for attempt %u) told ok by attempt %u", n,
		       M.target[n], reloader_attempt(F.r));
}

static void observe(const struct fake_call *c)
{
	switch (c->op) {
	case FO_NOTIFY_RELOADING:
		observe_begin();
		break;
	case FO_BEGIN_UPGRADE:
		if (state() != RS_CHECKING_UPGRADE)
			broken("dry run in %s", reload_state_name(state()));
		break;
	case FO_PROBE:
		observe_begin();
		if (state() != RS_PROBING)
			broken("probe in %s", reload_state_name(state()));
		break;
	case FO_LAUNCH:
		observe_launch();
		break;
	case FO_KILL_LOADING:
		if (state() != RS_LOADING)
			broken("kill of the loading one in %s",
			       reload_state_name(state()));
		break;
	case FO_SEARCH:
		F.searching = TRUE;
		break;
	case FO_LOG_FAILURE:
		if (c->how == FAILURE_KEPT || c->how == FAILURE_REPLACED)
			M.failures_counted++;
		break;
	case FO_STOP_SERVICE:
		if (c->code == 0 && !M.lost_zero)
			broken("the service stops with 0 after a failure");
		break;
	case FO_NOTIFY_READY:
		M.notified_ready++;
		break;
	case FO_ANSWER:
		observe_answer(c->client, c->text);
		break;
	case FO_END_ATTEMPT:
		M.timer = FALSE;
		break;
	case FO_SCHEDULE_PENDING:
		M.scheduled = TRUE;
		break;
	default:
		break;
	}
}

/* The machine of a sequence, its effects told to observe(). */
static void machine_new(void)
{
	setup();
	F.observe = observe;
}

/* ---- one step, and the rules after it ---- */

/* A REQUEST: the model notes what the machine must do with it. */
static struct reload_input request_input(const struct step *st)
{
	struct reload_input in = { .signal = st->sig, .hard = st->hard };

	if (st->sig == 0 && M.clients < MAX_CLIENTS) {
		guint n = ++M.clients;

		in.client = (struct control_client *)GUINT_TO_POINTER(n);
		M.accepted[n] = !F.stopping;
		M.target[n] = reloader_attempt(F.r) + 1;
	}
	if (F.stopping)
		return in;
	M.want_hard = M.want_hard || st->hard;
	if (state() == RS_IDLE && !F.searching)
		M.begin_allowed = TRUE;
	else
		M.pending = TRUE;
	return in;
}

static void post_step(const struct step *st)
{
	struct haproxy_version v = { .major = 2, .minor = 6 };
	struct reload_input in = {
		.exit_code = st->code,
		.message = "event",
		.replaced = st->replaced,
	};
	enum reload_state before = state();
	guint ready_before = M.notified_ready;
	guint oks_before = reloader_reloads(F.r);
	gboolean stopping_before = F.stopping;

	M.now = st;
	F.adopted_serving = st->adopted_serving;
	F.upgrade = st->upgrade;
	F.must_wait = st->must_wait;
	F.launch = st->launch;
	F.retry_first = st->retry_first;
	g_strlcpy(v.full, "2.6.12", sizeof(v.full));
	switch ((int)st->ev) {
	case STEP_SEARCH:
		F.searching = TRUE;
		return;
	case RE_REQUEST:
		in = request_input(st);
		break;
	case RE_RUN_PENDING:
		M.scheduled = FALSE;
		M.begin_allowed = M.pending;
		break;
	case RE_RESUME:
		/* Only a new image posts it, as its first event. */
		if (before != RS_IDLE || reloader_attempt(F.r) != 0 ||
		    F.stopping || st->attempt == 0)
			return;
		in = (struct reload_input){
			.signal = SIGUSR2, .hard = st->hard,
			.attempt = st->attempt, .pending = st->pending,
			.pending_signal = SIGUSR2,
			.pending_hard = st->pending_hard,
		};
		M.want_hard = st->hard;
		M.begin_allowed = TRUE;
		M.last_attempt = st->attempt - 1;
		break;
	case RE_PROBED:
		in.version = &v;
		break;
	case RE_SERVING_LOST:
		in.exit_code = st->lost_code;
		M.lost_zero = M.lost_zero || st->lost_code == 0;
		break;
	case RE_REPLACED:
	case RE_SEARCH_OVER:
		F.searching = FALSE;
		break;
	case RE_TIMEOUT:
		/* Only an armed timer fires, once. */
		if (!M.timer)
			return;
		M.timer = FALSE;
		break;
	case RE_STOP:
		F.stopping = TRUE;
		break;
	default:
		break;
	}
	reloader_post(F.r, st->ev, &in);
	posted[before][st->ev]++;
	if (st->ev == RE_RESUME) {
		M.pending = st->pending;
		M.want_hard = st->pending && st->pending_hard;
	}
	M.begin_allowed = FALSE;
	if (F.stopping) {
		M.pending = FALSE;
		M.want_hard = FALSE;
	}

	/* An attempt's end: one READY=1 unless stopping, its timers gone. */
	if (attempt_state(before) && state() == RS_IDLE && !F.stopping &&
	    M.notified_ready != ready_before + 1)
		broken("attempt %u ended with %u READY=1",
		       reloader_attempt(F.r), M.notified_ready - ready_before);
	if (!(attempt_state(before) && state() == RS_IDLE) &&
	    M.notified_ready != ready_before)
		broken("READY=1 on %s in %s", reload_state_name(before),
		       reload_event_name(st->ev));
	if (M.timer && !loads(state()))
		broken("load timers armed in %s", reload_state_name(state()));
	if (reloader_reloads(F.r) > oks_before &&
	    (before == RS_IDLE || reloader_attempt(F.r) == 0))
		broken("a reload counted on %s in %s (attempt %u)",
		       reload_event_name(st->ev), reload_state_name(before),
		       reloader_attempt(F.r));
	if (reloader_reloads(F.r) > oks_before)
		M.oks++;
	if (reloader_reloads_failed(F.r) != M.failures_counted)
		broken("%u failed reloads counted, %u told",
		       reloader_reloads_failed(F.r), M.failures_counted);
	if (F.stopping && !stopping_before) {
		/* The stop's rule: every waiter told; IDLE, or LOADING
		 * until its generation ends. */
		if (reloader_waiters(F.r)->len)
			broken("%u waiters left at the stop",
			       reloader_waiters(F.r)->len);
		if (state() != RS_IDLE && state() != RS_LOADING)
			broken("stopped in %s", reload_state_name(state()));
	}
	if (F.stopping && reloader_pending(F.r, NULL, NULL))
		broken("a reload pending while stopping");
}

/* The environment's answers once the sequence is over: every step ends,
 * no search runs, what was scheduled runs. */
static void settle(void)
{
	static const struct step plain = { .launch = LAUNCH_GENERATION };
	static const enum reload_event to_end[] = {
		[RS_IDLE] = RE_RUN_PENDING,
		[RS_STARTING] = RE_SETTLED,
		[RS_CHECKING_UPGRADE] = RE_UPGRADE_REFUSED,
		[RS_PROBING] = RE_PROBED,
		[RS_AWAITING_SEARCH] = RE_SEARCH_OVER,
		[RS_LOADING] = RE_READY,
		[RS_MASTER_SETTLING] = RE_SIGNALLED,
		[RS_MASTER_VERDICT] = RE_READY,
		[RS_HANDING_OFF] = RE_HANDOFF_OVER,
	};

	for (guint i = 0; i < 64 && !M.broken; i++) {
		struct step st = plain;

		if (F.searching) {
			st.ev = RE_SEARCH_OVER;
		} else {
			st.ev = to_end[state()];
			if (st.ev == RE_RUN_PENDING && !M.scheduled)
				return;
		}
		post_step(&st);
	}
	broken("no end in sight: %s", reload_state_name(state()));
}

/* The sequence, then its end, then a stop: the rules on requests. */
static void run_sequence(const struct step *steps, guint n)
{
	static const struct step stop = { .ev = RE_STOP };
	static const struct step exit_ = { .ev = RE_CHILD_EXIT, .code = 143 };

	g_free(M.broken);
	M = (struct model){ 0 };
	machine_new();
	for (guint i = 0; i < n && !M.broken; i++)
		post_step(&steps[i]);
	if (!M.broken)
		settle();
	if (!M.broken && !F.stopping) {
		/* Nothing left to run: every request was answered. */
		if (reloader_pending(F.r, NULL, NULL) || M.pending)
			broken("a reload pending, never run");
		for (guint c = 1; c <= M.clients; c++)
			if (M.accepted[c] && M.answers[c] != 1)
				broken("client %u answered %u times once "
				       "all ended", c, M.answers[c]);
		if (reloader_reloads(F.r) != M.oks)
			broken("%u reloads counted, %u ended ok",
			       reloader_reloads(F.r), M.oks);
	}
	if (!M.broken)
		post_step(&stop);
	if (!M.broken && state() == RS_LOADING)
		post_step(&exit_);
	if (!M.broken && state() != RS_IDLE)
		broken("not IDLE after the stop: %s",
		       reload_state_name(state()));
	for (guint c = 1; c <= M.clients && !M.broken; c++)
		if (M.answers[c] != 1)
			broken("client %u answered %u times at the stop", c,
			       M.answers[c]);
	teardown();
}

/* ---- generating, shrinking, printing ---- */

/* The supervisor posts START once, first: not among these. */
static const enum reload_event events[] = {
	RE_REQUEST, RE_REQUEST, RE_REQUEST, RE_RUN_PENDING,
	RE_RUN_PENDING, RE_SETTLED, RE_UPGRADE_REFUSED, RE_PROBED, RE_PROBED,
	RE_REPLACED, RE_SEARCH_OVER, RE_SIGNALLED, RE_SERVING, RE_READY,
	RE_READY, RE_FAILED, RE_CHILD_EXIT, RE_RETRY, RE_SERVING_LOST,
	RE_TIMEOUT, RE_TIMEOUT, RE_HANDOFF, RE_HANDOFF_OVER, RE_STOP,
	STEP_SEARCH,
};

static gboolean one_in(GRand *g, guint n)
{
	return g_rand_int_range(g, 0, n) == 0;
}

static void generate_step(GRand *g, struct step *st)
{
	/* A failure's code is never 0 (see test_unready_exit_code); the
	 * serving one may have exited 0. */
	static const int codes[] = { 1, 2, 143 };
	static const int sigs[] = { 0, 0, SIGUSR2, SIGHUP };

	*st = (struct step){
		.ev = events[g_rand_int_range(g, 0, G_N_ELEMENTS(events))],
		.hard = one_in(g, 3),
		.sig = sigs[g_rand_int_range(g, 0, G_N_ELEMENTS(sigs))],
		.code = codes[g_rand_int_range(g, 0, G_N_ELEMENTS(codes))],
		.lost_code = g_rand_int_range(g, 0, 2),
		.replaced = one_in(g, 3),
		.upgrade = one_in(g, 4) ? UPGRADE_YES : UPGRADE_NO,
		.launch = one_in(g, 4) ? g_rand_int_range(g, 0, 3)
				       : LAUNCH_GENERATION,
		.must_wait = one_in(g, 6),
		.retry_first = one_in(g, 3),
		.adopted_serving = one_in(g, 3),
	};
}

static guint generate(GRand *g, struct step *steps)
{
	guint n = g_rand_int_range(g, 1, MAX_STEPS + 1);

	for (guint i = 0; i < n; i++)
		generate_step(g, &steps[i]);
	/* Mostly a first start, at times our own exec mid-reload. */
	if (one_in(g, 8)) {
		steps[0].ev = RE_RESUME;
		steps[0].attempt = g_rand_int_range(g, 1, 5);
		steps[0].pending = one_in(g, 2);
		steps[0].pending_hard = one_in(g, 2);
	} else if (!one_in(g, 8)) {
		steps[0].ev = RE_START;
	}
	return n;
}

static gboolean fails(const struct step *steps, guint n)
{
	run_sequence(steps, n);
	return M.broken != NULL;
}

/* What a step's environment answers, back to the usual while the
 * sequence still fails: the reproducer shows only what matters. */
static void simplify(struct step *steps, guint n, guint i)
{
	const struct step usual = { .launch = LAUNCH_GENERATION };
	struct step *st = &steps[i], keep;

#define TRY(field)							\
	do {								\
		keep = *st;						\
		st->field = usual.field;				\
		if (!fails(steps, n))					\
			*st = keep;					\
	} while (0)
	TRY(hard);
	TRY(sig);
	TRY(replaced);
	TRY(upgrade);
	TRY(launch);
	TRY(must_wait);
	TRY(retry_first);
	TRY(adopted_serving);
	TRY(pending);
	TRY(pending_hard);
#undef TRY
}

/* Delta debugging: drop chunks of steps, halving their size, while the
 * sequence still fails. */
static guint shrink(struct step *steps, guint n)
{
	struct step trial[MAX_STEPS];

	for (guint chunk = n / 2 ? n / 2 : 1; chunk >= 1;) {
		gboolean dropped = FALSE;

		for (guint at = 0; at < n;) {
			guint len = MIN(chunk, n - at), m = 0;

			for (guint i = 0; i < n; i++)
				if (i < at || i >= at + len)
					trial[m++] = steps[i];
			if (m < n && fails(trial, m)) {
				memcpy(steps, trial, m * sizeof(*trial));
				n = m;
				dropped = TRUE;
			} else {
				at += len;
			}
		}
		if (!dropped)
			chunk /= 2;
	}
	for (guint i = 0; i < n; i++)
		simplify(steps, n, i);
	return n;
}

static gchar *describe(const struct step *st)
{
	GString *s = g_string_new(NULL);

	if ((int)st->ev == STEP_SEARCH)
		return g_string_free(g_string_assign(s, "(a search begins)"),
				     FALSE);
	g_string_append(s, reload_event_name(st->ev));
	switch (st->ev) {
	case RE_REQUEST:
		g_string_append_printf(s, " %s%s", st->hard ? "hard " : "",
				       st->sig ? signal_name(st->sig)
					       : "client");
		break;
	case RE_RESUME:
		g_string_append_printf(s, " attempt=%u%s%s%s", st->attempt,
				       st->hard ? " hard" : "",
				       st->pending ? " pending" : "",
				       st->pending_hard ? " pending_hard" : "");
		break;
	case RE_FAILED:
	case RE_CHILD_EXIT:
		g_string_append_printf(s, " code=%d", st->code);
		break;
	case RE_SERVING_LOST:
		g_string_append_printf(s, " code=%d%s", st->lost_code,
				       st->replaced ? " replaced" : "");
		break;
	default:
		break;
	}
	/* The environment's answers meanwhile, where not the usual. */
	if (st->upgrade == UPGRADE_YES)
		g_string_append(s, " [upgrade=yes]");
	if (st->launch != LAUNCH_GENERATION)
		g_string_append_printf(s, " [launch=%s]",
				       st->launch == LAUNCH_MASTER ? "master"
								   : "failed");
	if (st->must_wait)
		g_string_append(s, " [must_wait]");
	if (st->retry_first)
		g_string_append(s, " [retry_first]");
	if (st->adopted_serving)
		g_string_append(s, " [adopted_serving]");
	return g_string_free(s, FALSE);
}

/* stderr (the machine's log lines) off while it runs. */
static int quiet(void)
{
	int saved = dup(STDERR_FILENO);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	g_assert_cmpint(saved, >=, 0);
	g_assert_cmpint(null, >=, 0);
	dup2(null, STDERR_FILENO);
	close(null);
	return saved;
}

static void loud(int saved)
{
	dup2(saved, STDERR_FILENO);
	close(saved);
}

static guint64 env_number(const char *name, guint64 otherwise)
{
	const char *s = g_getenv(name);

	return s && *s ? g_ascii_strtoull(s, NULL, 10) : otherwise;
}

/* Is (s, ev) a pair of the machine's table, as the first row that
 * matches it? The generator must post each. */
static gboolean in_table(enum reload_state s, enum reload_event ev)
{
	guint n;
	const struct reload_transition *t = reload_transitions(&n);

	for (guint i = 0; i < n; i++)
		if (t[i].event == ev && (t[i].from & (1u << s)))
			return TRUE;
	return FALSE;
}

/* Some pairs are rare (a master's verdict timing out takes a long
 * sequence): a run goes on past its count until each has been posted, so
 * that a seed drawn at random cannot make the check below fail alone. */
static gboolean all_edges_posted(void)
{
	for (guint s = 0; s < RELOAD_STATES; s++)
		for (guint ev = 0; ev < RELOAD_EVENTS; ev++)
			if (in_table(s, ev) && !posted[s][ev])
				return FALSE;
	return TRUE;
}

static void assert_coverage(void)
{
	for (guint s = 0; s < RELOAD_STATES; s++)
		for (guint ev = 0; ev < RELOAD_EVENTS; ev++)
			if (in_table(s, ev) && !posted[s][ev])
				g_test_fail_printf("no %s posted in %s",
						   reload_event_name(ev),
						   reload_state_name(s));
}

static void test_rules(void)
{
	guint32 seed = env_number("HSW_PROPS_SEED", g_random_int());
	guint64 runs = env_number("HSW_PROPS_RUNS", DEFAULT_RUNS);
	g_autoptr(GRand) g = g_rand_new_with_seed(seed);
	struct step steps[MAX_STEPS];
	g_autofree gchar *why = NULL;
	guint n = 0;
	int saved;

	g_test_message("seed %u (HSW_PROPS_SEED=%u replays it), %" G_GUINT64_FORMAT
		       " sequences", seed, seed, runs);
	saved = quiet();
	for (guint64 i = 0; i < runs || (!all_edges_posted() && i < 100 * runs);
	     i++) {
		n = generate(g, steps);
		if (fails(steps, n))
			break;
		n = 0;
	}
	if (n) {
		n = shrink(steps, n);
		fails(steps, n);
	}
	loud(saved);
	if (!n) {
		assert_coverage();
		return;
	}
	why = g_strdup(M.broken);
	g_test_message("broken: %s; shrunk to %u steps:", why, n);
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *d = describe(&steps[i]);

		g_test_message("  %u. %s", i + 1, d);
	}
	g_test_fail_printf("seed %u: %s", seed, why);
}

/* ---- the launcher's load timers ---- */

/* The link never hears from the master here (no such process). */
static void no_report(enum master_link_report what, struct generation *g,
		      gpointer data)
{
	g_assert_not_reached();
}

/* No generation is spawned here: a serving master reloads itself. */
static void no_launch_report(enum launcher_report what, struct generation *g,
			     gpointer data)
{
	g_assert_not_reached();
}

/* A serving master reloads itself: the ready timeout (and systemd's
 * patience) are armed until the attempt ends, however it ends. */
static void test_launcher_timers(void)
{
	static const struct reloader_ops no_effects = { 0 };
	static char *no_args[] = { NULL };
	struct wrapper_args args = { .haproxy_args = no_args };
	struct wrapper_options opts = {
		.ready_timeout_s = 30,
		.master_worker = MW_POLICY_ON,
	};
	struct gen_table gt;
	struct rundir_use rt = { 0 };
	struct reloader *rl;
	struct master_link *m;
	struct haproxy_version v = { .major = 2, .minor = 6 };
	struct launcher *l;
	struct generation *master;

	g_strlcpy(v.full, "2.6.12", sizeof(v.full));
	gen_table_init(&gt);
	rl = reloader_new(&no_effects, NULL);
	m = master_link_new(&gt, rl, &rt, NULL, opts.max_old_workers,
			    opts.drain_timeout_s, no_report, NULL);
	master = generation_new(1, LAUNCH_MW, v.full);
	/* No such process: never signalled, the link waits for it. */
	master->pid = G_MAXINT;
	g_ptr_array_add(gt.gens, master);
	gen_table_set_serving(&gt, master);
	g_setenv("NOTIFY_SOCKET", "/nonexistent", TRUE);
	l = launcher_new(&(struct launcher_uses){
		.args = &args, .opts = &opts, .gt = &gt, .reloader = rl,
		.rt = &rt, .master = m, .self_path = "/nonexistent",
	}, no_launch_report, NULL);
	g_assert_false(t_timer_armed());
	for (guint i = 0; i < 3; i++) {
		g_assert_cmpint(launcher_launch(l, &v, FALSE, FALSE), ==,
				LAUNCH_MASTER);
		g_assert_true(t_timer_armed());
		launcher_end_attempt(l);
		/* None outlives its attempt, to fire into the next one. */
		g_assert_false(t_timer_armed());
	}
	/* At the stop too. */
	g_assert_cmpint(launcher_launch(l, &v, FALSE, FALSE), ==,
			LAUNCH_MASTER);
	g_assert_true(t_timer_armed());
	launcher_free(l);
	master_link_free(m);
	g_assert_false(t_timer_armed());
	g_unsetenv("NOTIFY_SOCKET");
	reloader_free(rl);
	gen_table_clear(&gt);
}

/* ---- a generation that ended unready ---- */

/* Whatever its wait status, it failed: never an exit 0 passed on. */
static void test_unready_exit_code(void)
{
	for (int code = 0; code < 256; code++)
		g_assert_cmpint(unready_exit_code(W_EXITCODE(code, 0)), ==,
				code ? code : 1);
	for (int sig = 1; sig < NSIG; sig++)
		g_assert_cmpint(unready_exit_code(W_EXITCODE(0, sig)), ==,
				128 + sig);
}

/* ---- the upgrade state across our own exec ---- */

static struct upgrade_state generate_state(GRand *g)
{
	static const char *const versions[] = {
		"1.5.18", "2.6.12-1+deb12u4 x:y%z", "3.4.0", "", "a b:c",
	};
	struct upgrade_state h = {
		.next_number = g_rand_int(g),
		.reloads = g_rand_int(g),
		.reloads_failed = g_rand_int(g),
		.takeovers = g_rand_int(g),
		.restarts_adopted = g_rand_int(g),
		.adoptions = g_rand_int(g),
		.reload_signal = g_rand_int_range(g, 0, NSIG),
		.reload_pending = g_rand_boolean(g),
		.attempt = g_rand_int(g),
		.hard = g_rand_boolean(g),
		.pending_hard = g_rand_boolean(g),
		.gens = g_ptr_array_new_with_free_func(
			(GDestroyNotify)generation_free),
		.waiters = g_array_new(FALSE, FALSE,
				       sizeof(struct upgrade_waiter)),
		.notify_fd = g_rand_boolean(g) ? -1 : 3,
		.pidfile_pid = g_rand_int_range(g, 0, G_MAXINT),
	};
	guint gens = g_rand_int_range(g, 0, 4);
	guint waiters = g_rand_int_range(g, 0, 4);

	for (guint i = 0; i < gens; i++) {
		struct generation *gen = generation_new(
			g_rand_int(g), g_rand_int_range(g, 0, LAUNCH_MW + 1),
			versions[g_rand_int_range(g, 0,
						  G_N_ELEMENTS(versions))]);

		gen->pid = 1000 + i;
		gen->state = g_rand_int_range(g, 0, GEN_DRAINING + 1);
		gen->started_us = (gint64)g_rand_int(g) << 20;
		g_ptr_array_add(h.gens, gen);
	}
	for (guint i = 0; i < waiters; i++) {
		struct upgrade_waiter w = { .fd = 10 + i,
					    .target = g_rand_int(g) };

		g_array_append_val(h.waiters, w);
	}
	return h;
}

static void assert_same_state(const struct upgrade_state *a,
			      const struct upgrade_state *b)
{
	g_assert_cmpuint(a->next_number, ==, b->next_number);
	g_assert_cmpuint(a->reloads, ==, b->reloads);
	g_assert_cmpuint(a->reloads_failed, ==, b->reloads_failed);
	g_assert_cmpuint(a->takeovers, ==, b->takeovers);
	g_assert_cmpuint(a->restarts_adopted, ==, b->restarts_adopted);
	g_assert_cmpuint(a->adoptions, ==, b->adoptions);
	g_assert_cmpint(a->reload_signal, ==, b->reload_signal);
	g_assert_cmpint(a->reload_pending, ==, b->reload_pending);
	g_assert_cmpuint(a->attempt, ==, b->attempt);
	g_assert_cmpint(a->hard, ==, b->hard);
	g_assert_cmpint(a->pending_hard, ==, b->pending_hard);
	g_assert_cmpint(a->notify_fd, ==, b->notify_fd);
	g_assert_cmpuint(a->pidfile_pid, ==, b->pidfile_pid);
	g_assert_cmpuint(a->gens->len, ==, b->gens->len);
	for (guint i = 0; i < a->gens->len; i++) {
		const struct generation *x = g_ptr_array_index(a->gens, i);
		const struct generation *y = g_ptr_array_index(b->gens, i);

		g_assert_cmpuint(x->number, ==, y->number);
		g_assert_cmpint(x->pid, ==, y->pid);
		g_assert_cmpint(x->mode, ==, y->mode);
		g_assert_cmpint(x->state, ==, y->state);
		g_assert_cmpint(x->started_us, ==, y->started_us);
		g_assert_cmpstr(x->version, ==, y->version);
	}
	g_assert_cmpuint(a->waiters->len, ==, b->waiters->len);
	for (guint i = 0; i < a->waiters->len; i++) {
		const struct upgrade_waiter *x =
			&g_array_index(a->waiters, struct upgrade_waiter, i);
		const struct upgrade_waiter *y =
			&g_array_index(b->waiters, struct upgrade_waiter, i);

		g_assert_cmpint(x->fd, ==, y->fd);
		g_assert_cmpuint(x->target, ==, y->target);
	}
}

/* The new image resumes the reload as the state says (as selfupgrade.c
 * posts it): the same attempt, as hard, and what was pending as hard. */
static void assert_restored(const struct upgrade_state *h)
{
	struct step st = { .launch = LAUNCH_GENERATION };
	int sig;
	gboolean hard;

	g_free(M.broken);
	M = (struct model){ .now = &st, .begin_allowed = TRUE,
			    .want_hard = h->hard };
	machine_new();
	reloader_post(F.r, RE_RESUME, &(struct reload_input){
		.signal = h->reload_signal,
		.hard = h->hard,
		.attempt = h->attempt,
		.pending = h->reload_pending,
		.pending_signal = h->reload_signal,
		.pending_hard = h->pending_hard,
	});
	g_assert_null(M.broken);
	g_assert_cmpuint(reloader_attempt(F.r), ==, h->attempt);
	g_assert_cmpint(reloader_hard(F.r), ==, h->hard);
	g_assert_cmpint(reloader_pending(F.r, &sig, &hard), ==,
			h->reload_pending);
	if (h->reload_pending)
		g_assert_cmpint(hard, ==, h->pending_hard);
	teardown();
}

static void test_state_round_trip(void)
{
	guint32 seed = env_number("HSW_PROPS_SEED", g_random_int());
	g_autoptr(GRand) g = g_rand_new_with_seed(seed);
	int saved;

	g_test_message("seed %u (HSW_PROPS_SEED=%u replays it)", seed, seed);
	saved = quiet();
	for (guint i = 0; i < 2000; i++) {
		struct upgrade_state h = generate_state(g), back;
		g_autofree gchar *text = state_serialize(&h);

		if (!state_parse(text, &back)) {
			loud(saved);
			g_error("seed %u: refused its own state: %s", seed,
				text);
		}
		assert_same_state(&h, &back);
		if (h.attempt > 0)
			assert_restored(&back);
		upgrade_state_clear(&h);
		upgrade_state_clear(&back);
	}
	loud(saved);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/reloader/props/rules", test_rules);
	g_test_add_func("/reloader/props/launcher-timers",
			test_launcher_timers);
	g_test_add_func("/reloader/props/unready-exit-code",
			test_unready_exit_code);
	g_test_add_func("/reloader/props/state-round-trip",
			test_state_round_trip);
	return g_test_run();
}
