/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Generations that no longer serve (wrapper/drain.h). */
#include "wrapper/drain.h"

#include <poll.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "base/log.h"
#include "base/proc.h"
#include "base/procnet.h"
#include "wrapper/signals.h"

static gboolean on_drain_deadline(gpointer data)
{
	struct generation *g = data;

	g->drain_timer = 0;
	log_notice("generation %u (pid %d) still draining after its deadline; "
		   "SIGTERM", g->number, g->pid);
	generation_signal(g, SIGTERM, TRUE);
	return G_SOURCE_REMOVE;
}

static void start_drain_clock(struct generation *g, guint drain_timeout_s)
{
	if (drain_timeout_s && !g->drain_timer)
		g->drain_timer = g_timeout_add_seconds(drain_timeout_s,
						       on_drain_deadline, g);
}

/* A master's superseded workers count as old generations too. */
static guint master_cohorts_draining(struct generation *g)
{
	guint n = 0;

	for (guint i = 0; i < g->cohorts->len; i++) {
		struct worker_cohort *c = g_ptr_array_index(g->cohorts, i);

		n += !c->terminated;
	}
	return n;
}

/* The oldest draining cohorts of the masters go first: they are older
 * than any generation started since (the masters came before them). */
static guint bound_master_cohorts(struct gen_table *t, gint max_old,
				  guint draining)
{
	for (guint i = 0; i < t->gens->len; i++) {
		struct generation *g = g_ptr_array_index(t->gens, i);

		for (guint j = 0; j < g->cohorts->len &&
				  draining > (guint)max_old;
		     j++) {
			struct worker_cohort *c =
				g_ptr_array_index(g->cohorts, j);
			g_autofree gchar *pids = NULL;

			if (c->terminated)
				continue;
			pids = pids_text(c->pids);
			log_notice("more than %d old generation(s) draining: "
				   "SIGTERM to workers %s of generation %u",
				   max_old, pids, g->number);
			cohort_signal(c, SIGTERM);
			c->terminated = TRUE;
			draining--;
		}
	}
	return draining;
}

/* More than max-old-workers generations draining: the oldest go now. */
void drain_bound(struct gen_table *t, gint max_old)
{
	guint draining = 0;

	if (max_old < 0)
		return;
	for (guint i = 0; i < t->gens->len; i++) {
		struct generation *g = g_ptr_array_index(t->gens, i);

		generation_prune_cohorts(g);
		draining += master_cohorts_draining(g);
		if (g->state == GEN_DRAINING && !g->terminated)
			draining++;
	}
	draining = bound_master_cohorts(t, max_old, draining);
	for (guint i = 0; i < t->gens->len &&
			  draining > (guint)max_old; i++) {
		struct generation *g = g_ptr_array_index(t->gens, i);

		if (g->state != GEN_DRAINING || g->terminated)
			continue;
		log_notice("more than %d old generation(s) draining: SIGTERM "
			   "to generation %u (pid %d)", max_old,
			   g->number, g->pid);
		generation_signal(g, SIGTERM, TRUE);
		g->terminated = TRUE;
		draining--;
	}
}

/*
 * With -x the old generation holds the very sockets the new one took over
 * and accepts on them until it has acted on its soft stop, which was sent
 * together with the witness's signal. Wait for it to let go, bounded and
 * only during a reload, so that a reload reported done means that new
 * connections reach the new configuration. If it cannot be told (no
 * pidfd_getfd), the verdict comes as it would without -x.
 */
#define RELEASE_LIMIT_MS 200

static void wait_listeners_released(struct generation *old,
				    struct generation *g)
{
	g_autoptr(GHashTable) inodes = NULL;
	gint64 deadline = g_get_monotonic_time() + RELEASE_LIMIT_MS * 1000LL;
	int pidfd;

	/* A reaped pid may already be someone else's: never look at it. */
	if (!g->took_listeners || old->mode != LAUNCH_DB || old->exited ||
	    g->exited)
		return;
	inodes = proc_listening_inodes(g->pid);
	if (!inodes || g_hash_table_size(inodes) == 0)
		return;
	pidfd = pidfd_open(old->pid, 0);
	if (pidfd < 0)
		return;
	while (proc_holds_any_socket(old->pid, inodes)) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		if (g_get_monotonic_time() >= deadline) {
			log_debug("generation %u (pid %d) still holds its "
				  "listeners after %d ms", old->number,
				  old->pid, RELEASE_LIMIT_MS);
			break;
		}
		/* Woken at once if it exits. */
		poll(&p, 1, 1);
	}
	close(pidfd);
}

/*
 * haproxy can lose the -sf signal it gets from its successor [observed
 * 2.4.0, an old generation started under a second before]: it then
 * serves on, holding its listeners, and never drains. A generation that
 * still listens this long after its successor is ready gets the signal
 * again, from us, once. A soft-stopping haproxy closes every listener
 * (stats sockets too) at once, so listening means it has not acted.
 */
#define STOP_CHECK_MS 1000

static gboolean still_listens(GPid pid)
{
	g_autoptr(GHashTable) inodes = proc_listening_inodes(pid);

	return inodes && g_hash_table_size(inodes) > 0;
}

/* The -db process, or any of the -Ds parent's workers. */
static gboolean generation_listens(const struct generation *g)
{
	g_autoptr(GArray) workers = NULL;

	if (g->mode == LAUNCH_DB)
		return still_listens(g->pid);
	workers = proc_children(g->pid);
	for (guint i = 0; i < workers->len; i++)
		if (still_listens(g_array_index(workers, GPid, i)))
			return TRUE;
	return FALSE;
}

static gboolean on_stop_check(gpointer data)
{
	struct generation *g = data;

	g->stop_check_timer = 0;
	if (g->exited || g->terminated || !generation_listens(g))
		return G_SOURCE_REMOVE;
	log_warn("generation %u (pid %d) still listens %d ms after its "
		 "successor was ready: its stop signal was lost; sending %s "
		 "again", g->number, g->pid, STOP_CHECK_MS,
		 signal_name(g->stop_signal));
	generation_signal(g, g->stop_signal, TRUE);
	return G_SOURCE_REMOVE;
}

static void start_stop_check(struct generation *old, gboolean hard)
{
	/* A master soft-stops its own workers: not ours to check. */
	if (old->mode == LAUNCH_MW || old->exited || old->stop_check_timer)
		return;
	old->stop_signal = hard ? SIGTERM : SIGUSR1;
	old->stop_check_timer = g_timeout_add(STOP_CHECK_MS, on_stop_check,
					      old);
}

void drain_begin(struct generation *old, struct generation *g, gboolean hard,
		 guint drain_timeout_s)
{
	wait_listeners_released(old, g);
	old->state = GEN_DRAINING;
	old->draining_since_us = g_get_real_time();
	/* A -Ds parent may have forked workers after we listed them for
	 * -sf; a second SIGUSR1 to the others is harmless. Left off the
	 * -sf list, the old one gets it from us only now. */
	if (g->stops_predecessors && !hard)
		log_info("generation %u serves and is steered to; SIGUSR1 -> "
			 "generation %u (pid %d): soft stop", g->number,
			 old->number, old->pid);
	if ((old->mode == LAUNCH_DS || g->stops_predecessors) && !hard)
		generation_signal(old, SIGUSR1, FALSE);
	start_drain_clock(old, drain_timeout_s);
	start_stop_check(old, hard);
}
