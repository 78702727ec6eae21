/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a generation's start and end mean. See wrapper/outcome.h. */
#include "wrapper/outcome.h"

#include <signal.h>

#include "base/log.h"
#include "base/proc.h"
#include "migrate/adopt.h"
#include "migrate/firststart.h"
#include "migrate/replacement.h"
#include "wrapper/drain.h"
#include "wrapper/fdstore/fdstore.h"
#include "wrapper/hastderr.h"
#include "wrapper/reloader.h"
#include "wrapper/steering/reuseport.h"
#include "wrapper/supervisor.h"

/* ---- it ends ---- */

static void forget_generation(struct supervisor *sv, struct generation *g)
{
	gen_table_forget(&sv->gt, g);
	lifecycle_quit_if_done(&sv->life);
}

static void on_generation_exit(GPid pid, int status, gpointer data);

void outcome_watch(struct supervisor *sv, struct generation *g)
{
	g->child_source = g_child_watch_add(g->pid, on_generation_exit, sv);
}

/* Ending before it was ready is a failure, whatever the status: an exit
 * 0 passed on would end a failed first start with success. */
int unready_exit_code(int wait_status)
{
	int code = shell_status(wait_status);

	return code ? code : 1;
}

/* The processes of every generation but g: their stderr lines are not
 * about g's start (a 3.1+ master's worker that loads is not listed). */
static GArray *other_generations_pids(struct supervisor *sv,
				      const struct generation *g)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));

	for (guint i = 0; i < sv->gt.gens->len; i++) {
		const struct generation *o = g_ptr_array_index(sv->gt.gens, i);

		if (o == g)
			continue;
		g_array_append_val(pids, o->pid);
		if (o->workers)
			g_array_append_vals(pids, o->workers->data,
					    o->workers->len);
	}
	return pids;
}

/* What haproxy said of g's failed start, after the pipe is read: g's own
 * [ALERT], or one of the worker a 3.1+ master forks to load. */
static gchar *start_failure_alert(struct supervisor *sv,
				  const struct generation *g)
{
	g_autoptr(GArray) others = NULL;

	if (g->mode != LAUNCH_MW)
		return ha_stderr_alert(sv->hastderr, g->pid, g->stderr_mark);
	others = other_generations_pids(sv, g);
	return ha_stderr_alert_but(sv->hastderr, others, g->stderr_mark);
}

/* The generation being started ended before it was ready. */
static void starting_generation_exited(struct supervisor *sv,
				       struct generation *g, int status)
{
	g_autofree gchar *how = describe_wait_status(status);
	g_autofree gchar *msg = NULL;
	g_autofree gchar *what = NULL;
	g_autofree gchar *alert = start_failure_alert(sv, g);
	guint number = g->number;
	GPid pid = g->pid;
	int code = unready_exit_code(status);
	gboolean addr_in_use = g->warned_addr_in_use;

	/* It was to take its listeners (-x) from the one serving, which
	 * ended meanwhile (a restart by hand): again, without -x. */
	if (g->took_listeners && !sv->gt.current &&
	    lifecycle_running(&sv->life)) {
		log_notice("generation %u (pid %d) %s: the one serving, whose "
			   "listeners it was to take, ended while it loaded; "
			   "starting it again", number, pid, how);
		forget_generation(sv, g);
		reloader_post(sv->reloader, RE_RETRY, NULL);
		return;
	}
	gen_table_fail(&sv->gt, g, how, reloader_attempt(sv->reloader));
	forget_generation(sv, g);
	if (lifecycle_stopping(&sv->life))
		log_info("generation %u (pid %d) %s while starting", number,
			 pid, how);
	/* Ending before it was ready is a failure, whatever the status;
	 * what haproxy said of it, if it did. */
	what = g_strdup_printf("generation %u (pid %d) %s%s before it was "
			       "ready", number, pid, addr_in_use ?
			       "could not bind its addresses and " : "", how);
	msg = alert ? g_strdup_printf("%s: %s", what, alert)
		    : g_steal_pointer(&what);
	reloader_post(sv->reloader, RE_CHILD_EXIT, &(struct reload_input){
		.exit_code = code, .message = msg });
}

/* The serving generation ended without being asked to: the service is
 * down, so stop the rest and exit with its status for Restart=. */
static void current_generation_exited(struct supervisor *sv,
				      struct generation *g, int status)
{
	g_autofree gchar *how = describe_wait_status(status);
	struct log_event ev;
	int exit_code;

	if (sv->gt.starting) {
		log_info("generation %u (pid %d) %s while generation %u "
			 "starts", g->number, g->pid, how, sv->gt.starting->number);
		/* Most likely the starting one's own -sf, seen before its
		 * witness; or a restart by hand, whose instance is not on
		 * its -sf list: looked for once the reload decides. */
		gboolean replaced = sv->opts->takeover &&
				    ended_as_replaced(status);

		if (replaced)
			replacement_remember(sv->replacement, g, status);
		reloader_post(sv->reloader, RE_SERVING_LOST,
			      &(struct reload_input){
			.exit_code = lost_exit_code(g->mode, status),
			.replaced = replaced });
		forget_generation(sv, g);
		return;
	}
	/* --takeover=off: instances we did not start are not ours. */
	if (sv->opts->takeover && ended_as_replaced(status)) {
		replacement_look_for(sv->replacement, g, status);
		forget_generation(sv, g);
		return;
	}
	ev = reloader_event(sv->reloader, MSGID_GENERATION_LOST, g->number,
			    g->pid, NULL);
	wlog_event(&ev, LOG_ERR, "generation %u (pid %d), the one serving, %s "
		   "on its own; stopping", g->number, g->pid, how);
	/* Read before g is freed. */
	exit_code = lost_exit_code(g->mode, status);
	forget_generation(sv, g);
	lifecycle_stop(&sv->life, SIGTERM, exit_code);
}

static void on_generation_exit(GPid pid, int status, gpointer data)
{
	struct supervisor *sv = data;
	struct generation *g = gen_table_find(&sv->gt, pid);
	g_autofree gchar *how = describe_wait_status(status);

	g_spawn_close_pid(pid);
	if (!g)
		return;
	g->child_source = 0;
	g->exited = TRUE;
	/* Its exit may be seen before the witness's last reports: read
	 * them first (a "ready" makes it the serving generation). */
	if (g == sv->gt.starting)
		witness_flush(&g->witness);
	if (g == sv->gt.starting) {
		starting_generation_exited(sv, g, status);
	} else if (g == sv->gt.current && !lifecycle_stopping(&sv->life)) {
		current_generation_exited(sv, g, status);
	} else {
		log_info("generation %u (pid %d) finished: %s", g->number,
			 g->pid, how);
		forget_generation(sv, g);
	}
}

/* ---- it serves ---- */

void outcome_serve(struct supervisor *sv, struct generation *g)
{
	struct generation *old = sv->gt.current;
	struct takeover *takeover;
	struct log_event ev;
	gboolean first;

	witness_stop(&g->witness);
	g->state = GEN_CURRENT;
	gen_table_set_serving(&sv->gt, g);
	/* Its predecessor ended during its start: from its -sf, or from a
	 * restart by hand that it must not serve next to. */
	reloader_post(sv->reloader, RE_SERVING, NULL);
	/* Started with their pids after -sf: they leave now; any found
	 * since (a launcher's daemon) is told to. */
	if (g->sf_adopted)
		adopt_superseded(replacement_adopt(sv->replacement));
	/* Left off its -sf list: handshakes go to it first, then the old
	 * one gets its soft stop (drain_begin). */
	if (old && g->stops_predecessors)
		reuseport_steer_generation(sv->reuseport, g);
	if (g->stops_foreign)
		first_start_stop_foreign(sv->first, g);
	replacement_retire_adopted(sv->replacement);
	if (old)
		drain_begin(old, g, reloader_hard(sv->reloader),
			    sv->opts->drain_timeout_s);
	drain_bound(&sv->gt, sv->opts->max_old_workers);
	gen_table_publish(&sv->gt, sv->args->pidfile, g);
	gen_table_clear_failed(&sv->gt);
	ev = reloader_event(sv->reloader, MSGID_RELOAD_OK, g->number, g->pid,
			    "ok");
	if (g->mode == LAUNCH_MW) {
		g_autofree gchar *workers = pids_text(g->workers);

		wlog_event(&ev, LOG_NOTICE, "generation %u ready: master pid "
			   "%d, workers %s, haproxy %s", g->number, g->pid,
			   workers, g->version);
	} else {
		wlog_event(&ev, LOG_NOTICE, "generation %u ready: pid %d, "
			   "haproxy %s", g->number, g->pid, g->version);
	}
	takeover = first_start_takeover(sv->first);
	/* Still the first start until READY below, which ends it. */
	first = reloader_first_start(sv->reloader) &&
		!lifecycle_stopping(&sv->life);
	if (first && takeover)
		sv->metrics.takeovers = takeover_taken(takeover);
	if (first)
		first_start_serving(sv->first);
	{
		g_autofree gchar *msg = g_strdup_printf(
			"generation %u (pid %d) serving", g->number, g->pid);

		reloader_post(sv->reloader, RE_READY,
			      &(struct reload_input){ .message = msg });
	}
	g->steerable = reuseport_attach_generation(sv->reuseport, g);
	fdstore_serving(sv->rt.fdstore, g);
}

void outcome_master_reloaded(struct supervisor *sv, struct generation *g)
{
	fdstore_serving(sv->rt.fdstore, g);
}

void outcome_replacement(enum replacement_report what, gpointer data)
{
	struct supervisor *sv = data;

	switch (what) {
	case REPLACEMENT_FOUND:
		supervisor_status_tell(sv);
		break;
	case REPLACEMENT_NONE:
		if (lifecycle_stopping(&sv->life))
			break;
		/* During a reload its generation decides (current_lost). */
		if (!sv->gt.current && !sv->gt.starting)
			lifecycle_stop(&sv->life, SIGTERM,
				       replacement_not_found(sv->replacement));
		else
			reloader_post(sv->reloader, RE_SEARCH_OVER, NULL);
		break;
	case REPLACEMENT_GONE:
		lifecycle_quit_if_done(&sv->life);
		break;
	}
}
