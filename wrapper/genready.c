/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A generation that serves, and what it means. See wrapper/genready.h. */
#include "wrapper/genready.h"

#include "base/log.h"
#include "migrate/adopt.h"
#include "wrapper/drain.h"
#include "wrapper/mworker/link.h"

void gen_ready_serve(const struct gen_ready *r, struct generation *g)
{
	struct generation *old = r->gt->current;
	struct takeover *takeover;
	struct log_event ev;

	witness_stop(&g->witness);
	g->state = GEN_CURRENT;
	gen_table_set_serving(r->gt, g);
	/* Its predecessor ended during its start: from its -sf, or from a
	 * restart by hand that it must not serve next to. */
	reloader_post(r->reloader, RE_SERVING, NULL);
	/* Started with their pids after -sf: they leave now; any found
	 * since (a launcher's daemon) is told to. */
	if (g->sf_adopted)
		adopt_superseded(replacement_adopt(r->replacement));
	/* Left off its -sf list: handshakes go to it first, then the old
	 * one gets its soft stop (drain_begin). */
	if (old && g->stops_predecessors)
		reuseport_steer_generation(r->reuseport, g);
	if (g->stops_foreign)
		first_start_stop_foreign(r->first, g);
	replacement_retire_adopted(r->replacement);
	if (old)
		drain_begin(old, g, reloader_hard(r->reloader),
			    r->opts->drain_timeout_s);
	drain_bound(r->gt, r->opts->max_old_workers);
	gen_table_publish(r->gt, r->args->pidfile, g);
	failed_generation_clear(&r->gt->failed);
	ev = reloader_event(r->reloader, MSGID_RELOAD_OK, g->number, g->pid,
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
	takeover = first_start_takeover(r->first);
	if (r->life->phase == PHASE_STARTING && takeover)
		r->metrics->takeovers = takeover_taken(takeover);
	if (r->life->phase == PHASE_STARTING) {
		lifecycle_set_running(r->life);
		first_start_serving(r->first);
	}
	{
		g_autofree gchar *msg = g_strdup_printf(
			"generation %u (pid %d) serving%s", g->number, g->pid,
			reloader_upgrade_postponed(r->reloader) ?
			"; wrapper upgrade postponed (an adopted haproxy ran): "
			"reload again" : "");

		reloader_post(r->reloader, RE_READY,
			      &(struct reload_input){ .message = msg });
	}
	g->steerable = reuseport_attach_generation(r->reuseport, g);
	fdstore_serving(r->fdstore, g);
}
