/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/generation.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/proc.h"

static void cohort_free(struct worker_cohort *c)
{
	if (c->drain_timer)
		g_source_remove(c->drain_timer);
	g_array_unref(c->pids);
	g_free(c);
}

struct generation *generation_new(guint number, enum launch_mode mode,
				  const char *version)
{
	struct generation *g = g_new0(struct generation, 1);

	g->number = number;
	g->mode = mode;
	g->state = GEN_STARTING;
	g->started_us = g_get_real_time();
	g_strlcpy(g->version, version, sizeof(g->version));
	g->workers = g_array_new(FALSE, FALSE, sizeof(GPid));
	g->cohorts = g_ptr_array_new_with_free_func(
		(GDestroyNotify)cohort_free);
	return g;
}

void generation_free(struct generation *g)
{
	witness_stop(&g->witness);
	if (g->child_source)
		g_source_remove(g->child_source);
	if (g->drain_timer)
		g_source_remove(g->drain_timer);
	if (g->stop_check_timer)
		g_source_remove(g->stop_check_timer);
	g_array_unref(g->workers);
	g_ptr_array_unref(g->cohorts);
	g_free(g);
}

const char *generation_state_name(enum gen_state state)
{
	switch (state) {
	case GEN_STARTING:
		return "starting";
	case GEN_CURRENT:
		return "current";
	case GEN_DRAINING:
		return "draining";
	}
	return "unknown";
}

void generation_sf_pids(const struct generation *g, GArray *pids)
{
	g_autoptr(GArray) workers = NULL;

	if (g->exited)
		return;
	/* A master soft-stops its workers itself. */
	if (g->mode == LAUNCH_DB || g->mode == LAUNCH_MW) {
		g_array_append_val(pids, g->pid);
		return;
	}
	workers = proc_children(g->pid);
	if (workers->len == 0)
		g_array_append_val(pids, g->pid);
	else
		g_array_append_vals(pids, workers->data, workers->len);
}

static void relay(GPid pid, int sig, gboolean log_relay)
{
	if (log_relay)
		log_debug("%s -> %d.", signal_name(sig), pid);
}

gboolean generation_signal_child(GPid pid, int sig)
{
	int fd = proc_open_if_child_of(pid, getpid());
	gboolean sent;

	/* Without pidfds, kill(): its child watch has not fired, and that is
	 * the best there is. */
	if (fd < 0 && errno == ENOSYS)
		return kill(pid, sig) == 0;
	if (fd < 0)
		return FALSE;
	sent = proc_pidfd_signal(fd, sig);
	close(fd);
	return sent;
}

static void signal_direct(const struct generation *g, int sig,
			  gboolean log_relay)
{
	relay(g->pid, sig, log_relay);
	generation_signal_child(g->pid, sig);
}

static guint signal_workers(const struct generation *g, int sig,
			    gboolean log_relay)
{
	g_autoptr(GArray) workers = proc_children(g->pid);
	guint sent = 0;

	for (guint i = 0; i < workers->len; i++) {
		GPid w = g_array_index(workers, GPid, i);
		int fd = proc_open_if_child_of(w, g->pid);

		if (fd < 0)
			continue;
		relay(w, sig, log_relay);
		if (proc_pidfd_signal(fd, sig))
			sent++;
		close(fd);
	}
	return sent;
}

void generation_signal(const struct generation *g, int sig,
		       gboolean log_relay)
{
	if (g->exited)
		return;
	/* A master relays every signal but SIGKILL to its workers. */
	if (g->mode == LAUNCH_DB || g->state == GEN_STARTING ||
	    (g->mode == LAUNCH_MW && sig != SIGKILL)) {
		signal_direct(g, sig, log_relay);
		return;
	}
	if (signal_workers(g, sig, log_relay) == 0 || sig == SIGKILL)
		signal_direct(g, sig, log_relay);
}

void generation_prune_cohorts(struct generation *g)
{
	for (guint i = 0; i < g->cohorts->len;) {
		struct worker_cohort *c = g_ptr_array_index(g->cohorts, i);

		/* Gone, or its pid is already another's (a current worker). */
		for (guint j = 0; j < c->pids->len;) {
			GPid pid = g_array_index(c->pids, GPid, j);

			if (g->exited || proc_parent(pid) != g->pid ||
			    proc_pids_contain(g->workers, pid))
				g_array_remove_index(c->pids, j);
			else
				j++;
		}
		if (c->pids->len == 0)
			g_ptr_array_remove_index(g->cohorts, i);
		else
			i++;
	}
}

guint cohort_signal(const struct worker_cohort *c, int sig)
{
	guint sent = 0;

	if (c->master->exited)
		return 0;
	for (guint i = 0; i < c->pids->len; i++) {
		GPid w = g_array_index(c->pids, GPid, i);
		int fd = proc_open_if_child_of(w, c->master->pid);

		if (fd < 0)
			continue;
		log_debug("%s -> %d.", signal_name(sig), w);
		if (proc_pidfd_signal(fd, sig))
			sent++;
		close(fd);
	}
	return sent;
}
