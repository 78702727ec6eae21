/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The first start: a takeover, or the pidfile's strangers noticed. See
 * migrate/firststart.h. */
#include "migrate/firststart.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/log.h"
#include "base/proc.h"
#include "legacy/args.h"
#include "legacy/pidfile.h"
#include "migrate/cmdline.h"
#include "migrate/find.h"
#include "migrate/identity.h"
#include "wrapper/steering/reuseport.h"

struct first_start {
	const struct wrapper_args *args;
	gboolean takeover_asked;	/* --takeover */
	struct gen_table *gt;
	struct reloader *rl;
	const struct rundir_use *rt;
	struct reuseport *rp;
	struct metrics *metrics;
	struct replacement *replacement;	/* their rows, once leaving */
	first_start_report_fn report;
	gpointer data;
	struct takeover *takeover;	/* foreign instances, first start */
	/* No haproxy in the pidfile: the search waits until generation 1
	 * serves (it reads every process: long on a busy host). */
	gboolean late;
	guint64 self_start;		/* ours, from stat: what started
					 * later is a restart by hand */
	guint late_timer;		/* the late search, from the loop */
	gboolean foreign_steerable;	/* every group of theirs steers */
	gboolean retrying;		/* generation 1 failed beside them */
	int failed_code;		/* generation 1's failure, if the */
	gchar *failed_msg;		/* search ran for it */
};

struct first_start *first_start_new(const struct wrapper_args *args,
				    gboolean takeover, struct gen_table *gt,
				    struct reloader *rl,
				    const struct rundir_use *rt,
				    struct reuseport *rp, struct metrics *m,
				    struct replacement *rep,
				    first_start_report_fn report,
				    gpointer data)
{
	struct first_start *f = g_new0(struct first_start, 1);

	*f = (struct first_start){
		.args = args, .takeover_asked = takeover, .gt = gt, .rl = rl,
		.rt = rt, .rp = rp, .metrics = m, .replacement = rep,
		.report = report, .data = data,
	};
	return f;
}

void first_start_free(struct first_start *f)
{
	if (!f)
		return;
	first_start_cancel(f);
	takeover_free(f->takeover);
	g_free(f->failed_msg);
	g_free(f);
}

/* Did every group of the instances found get its steering program? */
static gboolean foreign_steerable(const struct first_start *f)
{
	/* Whatever made generation 1 fail beside them, the second try has
	 * them on its -sf list: their pause is what lets it bind. */
	return f->takeover && takeover_instances(f->takeover)->len > 0 &&
	       f->foreign_steerable && !f->retrying;
}

GArray *first_start_sf_pids(struct first_start *f, gboolean may_hold_back,
			    gboolean *held_back)
{
	*held_back = may_hold_back && foreign_steerable(f);
	return f->takeover ? takeover_targets(f->takeover)
			   : g_array_new(FALSE, FALSE, sizeof(GPid));
}

static void leaving_row(struct foreign *fo, int pidfd, gpointer data)
{
	struct first_start *f = data;

	replacement_taken_over(f->replacement, fo, pidfd);
}

/* Told to leave (-sf, or our soft stop), nothing else serves them: they
 * are ours, in the one store of what we did not start (the adopted), so
 * that the stop ends them and they cross our own exec. */
static void hand_over(struct first_start *f)
{
	if (f->takeover)
		takeover_hand_over(f->takeover, leaving_row, f);
}

void first_start_stop_foreign(struct first_start *f,
			      const struct generation *g)
{
	if (!f->takeover)
		return;
	reuseport_steer_generation(f->rp, g);
	takeover_soft_stop(f->takeover);
}

struct takeover *first_start_takeover(const struct first_start *f)
{
	return f->takeover;
}

/* A pidfile naming live processes we did not start: say so, touch none. */
static void pidfile_notice_strangers(struct first_start *f)
{
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GError) error = NULL;
	guint invalid = 0;

	if (!f->args->pidfile)
		return;
	if (!pidfile_read(f->args->pidfile, &pids, &invalid, &error)) {
		log_warn("ignoring pidfile: %s", error->message);
		return;
	}
	if (invalid)
		log_notice("pidfile %s holds %u token(s) that are not pids",
			   f->args->pidfile, invalid);
	for (guint i = 0; i < pids->len; i++) {
		GPid pid = g_array_index(pids, GPid, i);
		g_autofree gchar *exe = proc_exe(pid);
		g_autofree gchar *shown = NULL;

		if (!exe && kill(pid, 0) < 0 && errno == ESRCH)
			continue;
		/* Another user may have named that executable. */
		shown = exe ? escape_untrusted(exe, 0)
			    : g_strdup("unknown program");
		log_notice("pidfile %s names pid %d (%s), which this wrapper "
			   "did not start; it gets no signal from us",
			   f->args->pidfile, pid, shown);
	}
}

static void on_takeover_settled(gpointer data)
{
	struct first_start *f = data;

	/* Before they close their listeners (our generation's -sf, or our
	 * soft stop once it serves and is steered to). */
	f->foreign_steerable = reuseport_attach_foreign(
		f->rp, takeover_instances(f->takeover));
	reloader_post(f->rl, RE_SETTLED, NULL);
}

/* The search for what serves this configuration or pidfile (settled is
 * called from the loop once they handle SIGUSR1). */
static void search(struct first_start *f, takeover_fn settled)
{
	g_auto(GStrv) argv = own_haproxy_argv(f->args);
	g_autofree gchar *cwd = g_get_current_dir();

	takeover_free(f->takeover);
	f->takeover = takeover_begin(f->args->pidfile,
				     (const char *const *)argv, cwd,
				     f->rt->expose_cfg, f->self_start,
				     settled, f);
}

/* The first generation: after a takeover of what already runs, if any. */
void first_start_begin(struct first_start *f)
{
	g_autoptr(GPtrArray) skipped = NULL;
	g_auto(GStrv) argv = NULL, configs = NULL;
	g_autofree gchar *cwd = NULL, *distrust = NULL;

	if (!f->takeover_asked) {
		pidfile_notice_strangers(f);
		reloader_post(f->rl, RE_SETTLED, NULL);
		return;
	}
	/* Whoever could write it chose what it names: no search at all. */
	distrust = pidfile_distrust_reason(f->args->pidfile);
	if (distrust) {
		log_notice("pidfile: %s: nothing is taken over at this start",
			   distrust);
		pidfile_notice_strangers(f);
		reloader_post(f->rl, RE_SETTLED, NULL);
		return;
	}
	/* A -D sharing our pidfile: haproxy's own -sf takes it over. Else
	 * start at once, and look once we serve (SO_REUSEPORT: beside any
	 * instance we would find). */
	argv = own_haproxy_argv(f->args);
	cwd = g_get_current_dir();
	configs = foreign_argv_config_files((const char *const *)argv, cwd,
					    FALSE);
	if (!foreign_pidfile_check(PROC_ROOT, f->args->pidfile,
				   (const char *const *)configs,
				   f->rt->expose_cfg, getpid(), &skipped)) {
		struct proc_stat st;

		foreign_log_skipped(skipped);
		f->late = TRUE;
		if (proc_stat_at(PROC_ROOT, getpid(), &st, NULL))
			f->self_start = st.start_time;
		/* A step, not an event: told with --debug only. */
		log_step("no haproxy in the pidfile: looking for other "
			 "instances once generation 1 serves");
		reloader_post(f->rl, RE_SETTLED, NULL);
		return;
	}
	/* On a busy host the search takes long: haproxy -v runs meanwhile. */
	f->report(FIRST_START_SEARCHING, f->data);
	search(f, on_takeover_settled);
}

/* Found once ours serves beside them: their queues migrate to our
 * listeners, then they are soft-stopped as -sf would. */
static void on_late_settled(gpointer data)
{
	struct first_start *f = data;
	const GPtrArray *found = takeover_instances(f->takeover);

	/* Nothing found is nothing happened: told with --debug only. */
	if (!found->len) {
		log_step("looked for foreign haproxy instances after the "
			 "start: 0 found");
		return;
	}
	log_info("looked for foreign haproxy instances after the start: "
		 "%u found", found->len);
	reuseport_attach_foreign(f->rp, found);
	f->metrics->takeovers = takeover_taken(f->takeover);
	/* Their listeners close on the soft stop: ours get the handshakes
	 * first. */
	if (f->gt->current)
		reuseport_steer_generation(f->rp, f->gt->current);
	takeover_soft_stop(f->takeover);
	hand_over(f);
}

static gboolean on_late_search(gpointer data)
{
	struct first_start *f = data;

	f->late_timer = 0;
	search(f, on_late_settled);
	return G_SOURCE_REMOVE;
}

/*
 * A second after READY=1: haproxy binds, tells us, then finishes its own
 * start (threads, the first accept) while we would be reading every
 * process's stat; on a host with 10,000 processes that made its first
 * answer 6 ms later. What the search finds serves beside ours meanwhile.
 */
#define LATE_SEARCH_DELAY_MS 1000

void first_start_serving(struct first_start *f)
{
	if (!f->late) {
		hand_over(f);
		return;
	}
	f->late = FALSE;
	f->late_timer = g_timeout_add(LATE_SEARCH_DELAY_MS, on_late_search, f);
}

/* What generation 1's failure found: retried with their -sf, or the
 * failure stands as it was. */
static void on_fallback_settled(gpointer data)
{
	struct first_start *f = data;

	if (takeover_instances(f->takeover)->len) {
		on_takeover_settled(f);
		return;
	}
	reloader_post(f->rl, RE_FAILED, &(struct reload_input){
		.exit_code = f->failed_code, .message = f->failed_msg });
}

gboolean first_start_retry(struct first_start *f, int exit_code,
			   const char *msg)
{
	/* Once: a second failure is the first start's. */
	if (!f->late)
		return FALSE;
	f->late = FALSE;
	f->retrying = TRUE;
	f->failed_code = exit_code;
	f->failed_msg = g_strdup(msg);
	log_notice("%s; looking for haproxy instances that may hold its "
		   "addresses", msg);
	search(f, on_fallback_settled);
	return TRUE;
}

void first_start_cancel(struct first_start *f)
{
	g_clear_handle_id(&f->late_timer, g_source_remove);
	if (f->takeover)
		takeover_cancel(f->takeover);
}
