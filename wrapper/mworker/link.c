/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Master-worker mode behind the wrapper: the generation is a haproxy
 * master (-Ws) that reloads itself in place on SIGUSR2. The wrapper keeps
 * the stable pid, the status and the synchronous reload: it signals the
 * master, and takes the verdict from what the master says on a private
 * NOTIFY_SOCKET and, where that says too little (haproxy < 2.7), from the
 * master's children: a load that worked started a new worker.
 */
#include "wrapper/mworker/link.h"

#include <errno.h>
#include <signal.h>

#include "base/proc.h"
#include "base/log.h"
#include "wrapper/drain.h"
#include "wrapper/hastderr.h"
#include "wrapper/reloader.h"
#include "wrapper/mworker/notify.h"
#include "wrapper/rundir.h"

/* What a master of ours is to us, when it speaks. */
enum master_role {
	MASTER_OTHER,		/* draining: its words change nothing */
	MASTER_STARTING,	/* its first load decides its start */
	MASTER_SERVING,		/* serving; a load now is not ours */
	MASTER_RELOADING,	/* serving, our SIGUSR2 sent: its verdict */
};

struct master_link {
	struct gen_table *gt;
	struct reloader *rl;
	const struct rundir_use *rt;
	struct ha_stderr *hastderr;
	gint max_old_workers;
	guint drain_timeout_s;
	master_link_report_fn report;
	gpointer data;
	struct mw_notify *notify;
	/* While a reload of the serving master is ours: its children before
	 * our SIGUSR2, and the wait until it can take the signal. */
	GArray *before;
	GPid target;
	gboolean hard;
	guint settle_timer;
	gint64 settle_deadline;
	gchar version[64];
	gboolean reloading_seen;	/* RELOADING=1 since our SIGUSR2 */
	guint64 stderr_mark;	/* haproxy's stderr since then (hastderr.h) */
	/* A verdict said, told once its master settles (target's). */
	struct {
		enum master_role role;
		enum mw_verdict verdict;	/* NONE: none held */
		gchar *status;
	} held;
};

/* A 2.5+ master re-executes itself after every load; a SIGUSR2 that came
 * before its new image installs handlers would kill it. */
#define SETTLE_POLL_MS 10
#define SETTLE_LIMIT_MS 5000

/* The pids of now not in before. */
static GArray *pids_minus(const GArray *now, const GArray *before)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(GPid));

	for (guint i = 0; i < now->len; i++) {
		GPid pid = g_array_index(now, GPid, i);

		if (!proc_pids_contain(before, pid))
			g_array_append_val(out, pid);
	}
	return out;
}

static void stop_waiting(struct master_link *m)
{
	g_clear_handle_id(&m->settle_timer, g_source_remove);
	g_clear_pointer(&m->before, g_array_unref);
	m->held.verdict = MW_VERDICT_NONE;
	g_clear_pointer(&m->held.status, g_free);
}

/* Can the master take its next command? From 2.5 to 3.0 it executes
 * itself again after each load; until the new image handles SIGUSR2, the
 * signal may be lost and its master CLI refuses connections. */
static gboolean master_settled(GPid pid)
{
	return proc_catches_signal_at(PROC_ROOT, pid, SIGUSR2);
}

/* ---- the workers a reload supersedes ---- */

static gboolean on_cohort_deadline(gpointer data)
{
	struct worker_cohort *c = data;
	g_autofree gchar *pids = pids_text(c->pids);

	c->drain_timer = 0;
	log_notice("workers %s of generation %u still draining after their "
		   "deadline; SIGTERM", pids, c->master->number);
	cohort_signal(c, SIGTERM);
	c->terminated = TRUE;
	return G_SOURCE_REMOVE;
}

static void retire_workers(struct master_link *m, struct generation *g,
			   gboolean hard)
{
	struct worker_cohort *c;

	if (g->workers->len == 0)
		return;
	c = g_new0(struct worker_cohort, 1);
	*c = (struct worker_cohort){
		.master = g,
		.pids = g_steal_pointer(&g->workers),
		.since_us = g_get_real_time(),
	};
	g->workers = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_ptr_array_add(g->cohorts, c);
	if (hard) {
		cohort_signal(c, SIGTERM);
		c->terminated = TRUE;
	} else if (m->drain_timeout_s) {
		c->drain_timer = g_timeout_add_seconds(
			m->drain_timeout_s, on_cohort_deadline, c);
	}
}

/* ---- what a master is to us, and what its words mean ---- */

/* A live master of ours with that pid, or NULL. */
static struct generation *find_master(struct master_link *m, GPid pid)
{
	return pid ? gen_table_find_master(m->gt, pid) : NULL;
}

static enum master_role master_role(struct master_link *m,
				    const struct generation *g)
{
	if (g == m->gt->starting)
		return MASTER_STARTING;
	if (g != m->gt->current)
		return MASTER_OTHER;
	/* Our SIGUSR2 was sent: its load is the one a verdict is about. */
	return reloader_state(m->rl) == RS_MASTER_VERDICT
	       ? MASTER_RELOADING : MASTER_SERVING;
}

static void reload_failed(struct master_link *m, const char *msg)
{
	reloader_post(m->rl, RE_FAILED,
		      &(struct reload_input){ .exit_code = 1,
					      .message = msg });
}

/* Workers were retired: the bound on draining ones applies. */
static void workers_retired(struct master_link *m)
{
	drain_bound(m->gt, m->max_old_workers);
}

/* The reload loaded: fresh workers serve, the others retired. */
static void reload_ok(struct master_link *m, struct generation *g,
		      const GArray *fresh)
{
	g_autofree gchar *pids = pids_text(fresh);
	g_autofree gchar *msg = NULL;
	struct log_event ev;

	drain_bound(m->gt, m->max_old_workers);
	gen_table_clear_failed(m->gt);
	ev = reloader_event(m->rl, MSGID_RELOAD_OK, g->number, g->pid,
			    "ok");
	wlog_event(&ev, LOG_NOTICE, "generation %u reloaded: master pid %d, "
		   "workers %s, haproxy %s", g->number, g->pid, pids,
		   g->version);
	msg = g_strdup_printf("generation %u (master pid %d) serving with "
			      "workers %s", g->number, g->pid, pids);
	reloader_post(m->rl, RE_READY,
		      &(struct reload_input){ .message = msg });
}

/* ---- a reload's verdict ---- */

static void reload_loaded(struct master_link *m, struct generation *g,
			  GArray *fresh)
{
	stop_waiting(m);
	generation_prune_cohorts(g);
	retire_workers(m, g, m->hard);
	g_array_append_vals(g->workers, fresh->data, fresh->len);
	/* The master re-executes its own binary: the version the wrapper
	 * found is the one it runs when both are the same file. */
	g_strlcpy(g->version, m->version, sizeof(g->version));
	m->report(MASTER_RELOADED, g, m->data);
	reload_ok(m, g, fresh);
}

static void reload_verdict(struct master_link *m, struct generation *g,
			   enum mw_verdict verdict, const char *status)
{
	g_autoptr(GArray) now = proc_children(g->pid);
	g_autoptr(GArray) fresh = pids_minus(now, m->before);
	g_autofree gchar *msg = NULL;
	g_autofree gchar *alert = NULL;

	if (verdict == MW_VERDICT_ASK_WORKERS)
		verdict = fresh->len ? MW_VERDICT_LOADED : MW_VERDICT_FAILED;
	if (verdict == MW_VERDICT_LOADED && fresh->len) {
		reload_loaded(m, g, fresh);
		return;
	}
	/* The master said why on its stderr before it told us (or the
	 * worker it forked to load, 3.1 and later): not an old worker. */
	alert = ha_stderr_alert_but(m->hastderr, m->before,
				    m->stderr_mark);
	stop_waiting(m);
	if (verdict == MW_VERDICT_LOADED)
		msg = g_strdup_printf("the haproxy master says \"%s\" but "
				      "has no new worker", status);
	else
		msg = g_strdup_printf("the haproxy master did not load the "
				      "new configuration (%s)",
				      status ? status
					     : "it started no new worker");
	if (alert) {
		gchar *told = g_strdup_printf("%s: %s", msg, alert);

		g_free(msg);
		msg = told;
	}
	reload_failed(m, msg);
}

/* A master reloaded by someone else (a SIGUSR2 straight to it): follow. */
static void reloaded_behind_our_back(struct master_link *m,
				     struct generation *g)
{
	g_autoptr(GArray) now = proc_children(g->pid);
	g_autoptr(GArray) fresh = NULL;
	g_autofree gchar *pids = NULL;

	generation_prune_cohorts(g);
	fresh = pids_minus(now, g->workers);
	for (guint i = 0; i < g->cohorts->len; i++) {
		struct worker_cohort *c = g_ptr_array_index(g->cohorts, i);
		g_autoptr(GArray) rest = pids_minus(fresh, c->pids);

		g_array_set_size(fresh, 0);
		g_array_append_vals(fresh, rest->data, rest->len);
	}
	if (fresh->len == 0)
		return;
	pids = pids_text(fresh);
	log_notice("the haproxy master (pid %d) was reloaded without us; "
		   "its workers are now %s", g->pid, pids);
	retire_workers(m, g, FALSE);
	g_array_append_vals(g->workers, fresh->data, fresh->len);
	workers_retired(m);
	m->report(MASTER_RELOADED, g, m->data);
}

static void master_ready(struct master_link *m, struct generation *g,
			 enum mw_verdict verdict, const char *status)
{
	g_autoptr(GArray) workers = NULL;

	if (verdict == MW_VERDICT_FAILED) {
		/* Not seen on a first load, which fails by exiting. */
		log_warn("generation %u (pid %d) says \"%s\"", g->number,
			 g->pid, status);
		return;
	}
	workers = proc_children(g->pid);
	g_array_append_vals(g->workers, workers->data, workers->len);
	m->report(MASTER_SERVES, g, m->data);
}

static void tell_verdict(struct master_link *m, struct generation *g,
			 enum master_role role, enum mw_verdict verdict,
			 const char *status)
{
	if (role == MASTER_STARTING)
		master_ready(m, g, verdict, status);
	else
		reload_verdict(m, g, verdict, status);
}

static gboolean on_settle_poll(gpointer data);

/*
 * The verdict is told once the master can take the next command: systemd
 * lets `systemctl start` or `reload` return at it, and a script's next
 * line may be a reload or a command on the master CLI.
 */
static void hold_verdict(struct master_link *m, struct generation *g,
			 enum master_role role, enum mw_verdict verdict,
			 const char *status)
{
	/* One already waits: its bound stays; a failure said since wins. */
	if (m->held.verdict != MW_VERDICT_NONE) {
		if (verdict == MW_VERDICT_FAILED) {
			m->held.verdict = verdict;
			g_free(m->held.status);
			m->held.status = g_strdup(status);
		}
		return;
	}
	if (master_settled(g->pid)) {
		tell_verdict(m, g, role, verdict, status);
		return;
	}
	m->held.role = role;
	m->held.verdict = verdict;
	m->held.status = g_strdup(status);
	m->target = g->pid;
	m->settle_deadline = g_get_monotonic_time() + SETTLE_LIMIT_MS * 1000LL;
	if (!m->settle_timer)
		m->settle_timer = g_timeout_add(SETTLE_POLL_MS, on_settle_poll,
						m);
}

/* The held verdict, now told: the master settled or its time ran out. */
static void release_verdict(struct master_link *m, struct generation *g,
			    gboolean settled)
{
	g_autofree gchar *status = g_steal_pointer(&m->held.status);
	enum mw_verdict verdict = m->held.verdict;

	m->held.verdict = MW_VERDICT_NONE;
	/* Gone meanwhile: a first start's end is told by its exit; a
	 * reload's may not be (a master replaced by hand). */
	if (!g) {
		if (m->held.role == MASTER_RELOADING)
			reload_failed(m, "the haproxy master ended before it "
				      "could take commands again after its "
				      "load");
		return;
	}
	if (!settled)
		log_warn("the haproxy master (pid %d) has not settled %d ms "
			 "after its load", g->pid, SETTLE_LIMIT_MS);
	tell_verdict(m, g, m->held.role, verdict, status);
}

static void on_master_message(const struct mw_message *msg, GPid sender,
			      gpointer data)
{
	struct master_link *m = data;
	struct generation *g = find_master(m, sender);
	enum mw_verdict verdict = mw_message_verdict(msg);
	enum master_role role;

	if (!g) {
		log_debug("notify socket: ignoring pid %d, not a master of ours",
			  sender);
		return;
	}
	if (msg->stopping)
		log_info("generation %u (pid %d) is stopping", g->number,
			 g->pid);
	role = master_role(m, g);
	if (role == MASTER_RELOADING && msg->reloading)
		m->reloading_seen = TRUE;
	if (verdict == MW_VERDICT_NONE)
		return;
	if (role == MASTER_STARTING ||
	    (role == MASTER_RELOADING && m->reloading_seen))
		hold_verdict(m, g, role, verdict, msg->status);
	else if (role == MASTER_RELOADING)
		/* The end of a load from before our SIGUSR2 (one whose
		 * verdict timed out): ours is still to come. */
		log_debug("generation %u: an earlier load ended", g->number);
	else if (role == MASTER_SERVING)
		reloaded_behind_our_back(m, g);
}

/* ---- the notify socket ---- */

const char *master_link_socket(struct master_link *m, GError **error)
{
	const char *rundir = m->rt->ours ? m->rt->dir : NULL;
	g_autofree gchar *path = NULL;

	if (m->notify)
		return mw_notify_path(m->notify);
	if (!rundir) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "no runtime directory of our own for its notify "
			    "socket");
		return NULL;
	}
	path = rundir_notify_socket(rundir);
	m->notify = mw_notify_listen(path, on_master_message, m, error);
	return m->notify ? mw_notify_path(m->notify) : NULL;
}

gboolean master_link_adopt(struct master_link *m, int fd, const char *path)
{
	m->notify = mw_notify_adopt(fd, path, on_master_message, m);
	return m->notify != NULL;
}

int master_link_upgrade_fd(struct master_link *m)
{
	return m->notify ? mw_notify_upgrade_fd(m->notify) : -1;
}

void master_link_reclaim_fd(struct master_link *m)
{
	if (m->notify)
		mw_notify_reclaim_fd(m->notify);
}

struct master_link *master_link_new(struct gen_table *gt, struct reloader *rl,
				    const struct rundir_use *rt,
				    struct ha_stderr *hastderr,
				    gint max_old_workers,
				    guint drain_timeout_s,
				    master_link_report_fn report,
				    gpointer data)
{
	struct master_link *m = g_new0(struct master_link, 1);

	m->gt = gt;
	m->rl = rl;
	m->rt = rt;
	m->hastderr = hastderr;
	m->max_old_workers = max_old_workers;
	m->drain_timeout_s = drain_timeout_s;
	m->report = report;
	m->data = data;
	return m;
}

void master_link_free(struct master_link *m)
{
	if (!m)
		return;
	stop_waiting(m);
	g_clear_pointer(&m->notify, mw_notify_free);
	g_free(m);
}

/* ---- a reload: SIGUSR2 once the master can take it ---- */

static void send_reload(struct master_link *m, struct generation *g)
{
	g_autofree gchar *msg = NULL;
	gboolean sent;
	int saved;

	/* Before the signal: the new worker may be forked at once. */
	g_clear_pointer(&m->before, g_array_unref);
	m->before = proc_children(g->pid);
	m->reloading_seen = FALSE;
	m->stderr_mark = ha_stderr_mark(m->hastderr);
	log_debug("SIGUSR2 -> %d.", g->pid);
	sent = generation_signal_child(g->pid, SIGUSR2);
	saved = errno;
	if (!sent) {
		stop_waiting(m);
		msg = g_strdup_printf("cannot signal the haproxy master "
				      "(pid %d): %s", g->pid,
				      g_strerror(saved));
		reload_failed(m, msg);
		return;
	}
	reloader_post(m->rl, RE_SIGNALLED, NULL);
}

static gboolean on_settle_poll(gpointer data)
{
	struct master_link *m = data;
	struct generation *g = find_master(m, m->target);
	g_autofree gchar *msg = NULL;

	if (m->held.verdict != MW_VERDICT_NONE) {
		gboolean settled = g && master_settled(g->pid);

		if (g && !settled &&
		    g_get_monotonic_time() < m->settle_deadline)
			return G_SOURCE_CONTINUE;
		m->settle_timer = 0;
		release_verdict(m, g, settled);
		return G_SOURCE_REMOVE;
	}
	if (g && master_settled(g->pid)) {
		m->settle_timer = 0;
		send_reload(m, g);
		return G_SOURCE_REMOVE;
	}
	if (g && g_get_monotonic_time() < m->settle_deadline)
		return G_SOURCE_CONTINUE;
	m->settle_timer = 0;
	stop_waiting(m);
	msg = g_strdup_printf("the haproxy master (pid %d) has not handled "
			      "SIGUSR2 for %d ms", m->target, SETTLE_LIMIT_MS);
	reload_failed(m, msg);
	return G_SOURCE_REMOVE;
}

void master_link_reload(struct master_link *m, struct generation *g,
			const char *version, gboolean hard)
{
	g_strlcpy(m->version, version, sizeof(m->version));
	m->target = g->pid;
	m->hard = hard;
	if (master_settled(g->pid)) {
		send_reload(m, g);
		return;
	}
	/* Waiting counts as loading: "before" marks the reload as ours. */
	m->before = g_array_new(FALSE, FALSE, sizeof(GPid));
	m->settle_deadline = g_get_monotonic_time() + SETTLE_LIMIT_MS * 1000LL;
	m->settle_timer = g_timeout_add(SETTLE_POLL_MS, on_settle_poll, m);
}

void master_link_abandon(struct master_link *m)
{
	stop_waiting(m);
}
