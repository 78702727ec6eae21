/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A haproxy started by hand replaced the one serving: the search for it,
 * and what finding it, or not, means. See migrate/replacement.h. */
#include "migrate/replacement.h"

#include <signal.h>
#include <sys/wait.h>

#include "base/log.h"
#include "base/proc.h"
#include "wrapper/steering/reuseport.h"

struct replacement {
	const struct wrapper_args *args;
	struct gen_table *gt;
	struct reloader *rl;
	const struct rundir_use *rt;
	struct reuseport *rp;
	struct metrics *metrics;
	replacement_report_fn report;
	gpointer data;

	/* A haproxy that replaced the one serving behind our back (a
	 * restart by hand), and how ours ended, while we look for it. */
	struct adopt *adopt;
	struct {
		gboolean valid;
		guint number;
		GPid pid;
		int status;
		enum launch_mode mode;
	} replaced;
};

struct replacement *replacement_new(const struct wrapper_args *args,
				    struct gen_table *gt, struct reloader *rl,
				    const struct rundir_use *rt,
				    struct reuseport *rp, struct metrics *m,
				    replacement_report_fn report,
				    gpointer data)
{
	struct replacement *r = g_new0(struct replacement, 1);

	*r = (struct replacement){
		.args = args, .gt = gt, .rl = rl, .rt = rt, .rp = rp,
		.metrics = m, .report = report, .data = data,
	};
	return r;
}

void replacement_free(struct replacement *r)
{
	if (!r)
		return;
	adopt_free(r->adopt);
	g_free(r);
}

struct adopt *replacement_adopt(const struct replacement *r)
{
	return r->adopt;
}

guint replacement_number(const struct replacement *r)
{
	return r->replaced.number;
}

int lost_exit_code(enum launch_mode mode, int status)
{
	int code = shell_status(status);

	/* A -Ds parent exits 0 whenever its workers are gone, crashed or
	 * killed: its 0 says nothing, and must not read as success. */
	return mode == LAUNCH_DS && code == 0 ? 1 : code;
}

/* A replaced haproxy soft-stops (exit 0; a -Ds parent, a master too) or
 * dies of the SIGTERM of -st. Anything else is a crash. */
gboolean ended_as_replaced(int status)
{
	return (WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
	       (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
}

static void on_adopt(enum adopt_event event, gpointer data);

static struct adopt *adopt_of(struct replacement *r)
{
	if (!r->adopt) {
		g_auto(GStrv) argv = own_haproxy_argv(r->args);
		g_autofree gchar *cwd = g_get_current_dir();

		r->adopt = adopt_new_at(PROC_ROOT, r->args->pidfile,
					(const char *const *)argv, cwd,
					r->rt->expose_cfg, on_adopt, r);
	}
	return r->adopt;
}

void replacement_restore(struct replacement *r, const GArray *rows)
{
	if (rows->len)
		adopt_restore(adopt_of(r), rows);
}

void replacement_taken_over(struct replacement *r, struct foreign *f,
			    int pidfd)
{
	adopt_taken_over(adopt_of(r), f, pidfd);
}

void replacement_search(struct replacement *r, gboolean quick)
{
	adopt_of(r);
	if (quick)
		adopt_look(r->adopt);
	else
		adopt_search(r->adopt);
}

void replacement_remember(struct replacement *r, struct generation *g,
			  int status)
{
	r->replaced.valid = TRUE;
	r->replaced.number = g->number;
	r->replaced.pid = g->pid;
	r->replaced.status = status;
	r->replaced.mode = g->mode;
}

void replacement_look_for(struct replacement *r, struct generation *g,
			  int status)
{
	g_autofree gchar *how = describe_wait_status(status);

	log_info("generation %u (pid %d), the one serving, %s on its own; "
		 "looking for a haproxy that replaced it", g->number, g->pid,
		 how);
	replacement_remember(r, g, status);
	replacement_search(r, FALSE);
}

/* Nothing replaced the one serving: the service is down, as before. */
int replacement_not_found(struct replacement *r)
{
	int code;

	if (r->replaced.valid) {
		g_autofree gchar *how = describe_wait_status(
			r->replaced.status);

		log_err("generation %u (pid %d), the one serving, %s on its "
			"own; stopping", r->replaced.number, r->replaced.pid,
			how);
		code = lost_exit_code(r->replaced.mode, r->replaced.status);
	} else {
		/* Not our child: how it ended is unknown, and no success. */
		log_err("the adopted haproxy, the one serving, has exited on "
			"its own; stopping");
		code = 1;
	}
	r->replaced.valid = FALSE;
	return code;
}

/* The adopted instances ended while they served. */
static void adopted_lost(struct replacement *r)
{
	/* Most likely the soft stop from a successor of ours, seen before
	 * its witness: the successor decides, as for our own. Their status
	 * is unknown (not our children), and no success. */
	if (r->gt->starting) {
		log_info("the adopted haproxy ended while generation %u "
			 "starts", r->gt->starting->number);
		reloader_post(r->rl, RE_SERVING_LOST,
			      &(struct reload_input){
			.exit_code = lost_exit_code(LAUNCH_DB,
						    W_EXITCODE(1, 0)) });
		/* Not told by it: maybe replaced by hand again. */
		if (!r->gt->starting->sf_adopted)
			replacement_search(r, FALSE);
		return;
	}
	log_info("looking for a haproxy that replaced the adopted one");
	r->replaced.valid = FALSE;
	adopt_search(r->adopt);
}

static void on_adopt(enum adopt_event event, gpointer data)
{
	struct replacement *r = data;

	switch (event) {
	case ADOPT_FOUND:
		r->replaced.valid = FALSE;
		r->metrics->restarts_adopted++;
		reuseport_attach_foreign(r->rp, adopt_instances(r->adopt));
		if (r->gt->current)
			/* Found after our reload's generation was ready. */
			replacement_retire_adopted(r);
		else if (r->gt->starting)
			log_notice("an adopted haproxy serves; generation %u "
				   "replaces it once ready",
				   r->gt->starting->number);
		else
			log_notice("an adopted haproxy serves; the next reload "
				   "brings it back under the wrapper");
		/* It serves now, whatever becomes of a starting one; a
		 * launch that waited for it goes on. */
		reloader_post(r->rl, RE_REPLACED, NULL);
		r->report(REPLACEMENT_FOUND, r->data);
		break;
	case ADOPT_NONE:
		r->report(REPLACEMENT_NONE, r->data);
		break;
	case ADOPT_LOST:
		adopted_lost(r);
		break;
	case ADOPT_GONE:
		r->report(REPLACEMENT_GONE, r->data);
		break;
	}
}

void replacement_retire_adopted(struct replacement *r)
{
	int sig = reloader_hard(r->rl) ? SIGTERM : SIGUSR1;

	if (!adopt_serving(r->adopt))
		return;
	/* Its listeners close on the signal: our generation's get the
	 * handshakes first. */
	if (sig == SIGUSR1)
		reuseport_steer_generation(r->rp, r->gt->current);
	log_notice("generation %u serves; the haproxy restarted by hand "
		   "during its reload leaves (%s)", r->gt->current->number,
		   signal_name(sig));
	adopt_retire(r->adopt, sig);
}
