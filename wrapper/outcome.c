/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The end of a generation, and what it means. See wrapper/genexit.h. */
#include "wrapper/genexit.h"

#include <signal.h>

#include "base/log.h"

struct gen_exits {
	struct gen_table *gt;
	struct lifecycle *life;
	struct reloader *reloader;
	struct replacement *replacement;
	const struct wrapper_options *opts;
};

struct gen_exits *gen_exits_new(struct gen_table *gt, struct lifecycle *life,
				struct reloader *reloader,
				struct replacement *replacement,
				const struct wrapper_options *opts)
{
	struct gen_exits *e = g_new0(struct gen_exits, 1);

	e->gt = gt;
	e->life = life;
	e->reloader = reloader;
	e->replacement = replacement;
	e->opts = opts;
	return e;
}

void gen_exits_free(struct gen_exits *e)
{
	g_free(e);
}

static void forget_generation(struct gen_exits *e, struct generation *g)
{
	gen_table_forget(e->gt, g);
	lifecycle_quit_if_done(e->life);
}

static void on_generation_exit(GPid pid, int status, gpointer data);

void gen_exits_watch(struct gen_exits *e, struct generation *g)
{
	g->child_source = g_child_watch_add(g->pid, on_generation_exit, e);
}

/* Ending before it was ready is a failure, whatever the status: an exit
 * 0 passed on would end a failed first start with success. */
int unready_exit_code(int wait_status)
{
	int code = shell_status(wait_status);

	return code ? code : 1;
}

/* The generation being started ended before it was ready. */
static void starting_generation_exited(struct gen_exits *e,
				       struct generation *g, int status)
{
	g_autofree gchar *how = describe_wait_status(status);
	g_autofree gchar *msg = NULL;
	guint number = g->number;
	GPid pid = g->pid;
	int code = unready_exit_code(status);
	gboolean addr_in_use = g->warned_addr_in_use;

	/* It was to take its listeners (-x) from the one serving, which
	 * ended meanwhile (a restart by hand): again, without -x. */
	if (g->took_listeners && !e->gt->current && e->life->phase == PHASE_RUNNING) {
		log_notice("generation %u (pid %d) %s: the one serving, whose "
			   "listeners it was to take, ended while it loaded; "
			   "starting it again", number, pid, how);
		forget_generation(e, g);
		reloader_post(e->reloader, RE_RETRY, NULL);
		return;
	}
	failed_generation_clear(&e->gt->failed);
	e->gt->failed = (struct failed_generation){
		.valid = TRUE,
		.number = number,
		.pid = pid,
		.started_us = g->started_us,
		.how = g_strdup(how),
		.attempt = reloader_attempt(e->reloader),
	};
	g_strlcpy(e->gt->failed.version, g->version, sizeof(e->gt->failed.version));
	forget_generation(e, g);
	if (e->life->phase == PHASE_STOPPING)
		log_info("generation %u (pid %d) %s while starting", number,
			 pid, how);
	/* Ending before it was ready is a failure, whatever the status. */
	msg = g_strdup_printf("generation %u (pid %d) %s%s before it was ready",
			      number, pid, addr_in_use ?
			      "could not bind its addresses and " : "", how);
	reloader_post(e->reloader, RE_CHILD_EXIT, &(struct reload_input){
		.exit_code = code, .message = msg });
}

/* The serving generation ended without being asked to: the service is
 * down, so stop the rest and exit with its status for Restart=. */
static void current_generation_exited(struct gen_exits *e,
				      struct generation *g, int status)
{
	g_autofree gchar *how = describe_wait_status(status);
	struct log_event ev;

	if (e->gt->starting) {
		log_info("generation %u (pid %d) %s while generation %u "
			 "starts", g->number, g->pid, how, e->gt->starting->number);
		/* Most likely the starting one's own -sf, seen before its
		 * witness; or a restart by hand, whose instance is not on
		 * its -sf list: looked for once the reload decides. */
		gboolean replaced = e->opts->takeover &&
				    ended_as_replaced(status);

		if (replaced)
			replacement_remember(e->replacement, g, status);
		reloader_post(e->reloader, RE_SERVING_LOST,
			      &(struct reload_input){
			.exit_code = lost_exit_code(g->mode, status),
			.replaced = replaced });
		forget_generation(e, g);
		return;
	}
	/* --takeover=off: instances we did not start are not ours. */
	if (e->opts->takeover && ended_as_replaced(status)) {
		replacement_look_for(e->replacement, g, status);
		forget_generation(e, g);
		return;
	}
	ev = reloader_event(e->reloader, MSGID_GENERATION_LOST, g->number,
			    g->pid, NULL);
	wlog_event(&ev, LOG_ERR, "generation %u (pid %d), the one serving, %s "
		   "on its own; stopping", g->number, g->pid, how);
	lifecycle_set_exit_code(e->life, lost_exit_code(g->mode, status));
	forget_generation(e, g);
	lifecycle_begin_stop(e->life, SIGTERM);
}

static void on_generation_exit(GPid pid, int status, gpointer data)
{
	struct gen_exits *e = data;
	struct generation *g = gen_table_find(e->gt, pid);
	g_autofree gchar *how = describe_wait_status(status);

	g_spawn_close_pid(pid);
	if (!g)
		return;
	g->child_source = 0;
	g->exited = TRUE;
	/* Its exit may be seen before the witness's last reports: read
	 * them first (a "ready" makes it the serving generation). */
	if (g == e->gt->starting)
		witness_flush(&g->witness);
	if (g == e->gt->starting) {
		starting_generation_exited(e, g, status);
	} else if (g == e->gt->current && e->life->phase != PHASE_STOPPING) {
		current_generation_exited(e, g, status);
	} else {
		log_info("generation %u (pid %d) finished: %s", g->number,
			 g->pid, how);
		forget_generation(e, g);
	}
}

