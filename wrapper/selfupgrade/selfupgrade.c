/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The self-upgrade (wrapper/selfupgrade/selfupgrade.h): whether a reload upgrades
 * the wrapper first, the new image's dry run and exec, and what the new
 * image keeps of the upgrade state. Not the hand-off (migrate/handoff.c). */
#include "wrapper/selfupgrade/selfupgrade.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/log.h"
#include "base/proc.h"
#include "migrate/adopt.h"
#include "migrate/replacement.h"
#include "wrapper/child.h"
#include "wrapper/gentable.h"
#include "wrapper/metrics.h"
#include "wrapper/mworker/link.h"
#include "wrapper/mworker/notify.h"
#include "wrapper/hastderr.h"
#include "wrapper/options.h"
#include "wrapper/rundir.h"
#include "wrapper/rundir-use.h"
#include "wrapper/signals.h"
#include "wrapper/selfupgrade/image.h"
#include "wrapper/selfupgrade/state.h"

struct selfupgrade {
	struct selfupgrade_uses u;	/* its owners' */
	selfupgrade_report_fn report;
	gpointer data;
	char **orig_argv;	/* our command line, for the exec */
	struct self_image image;
	gboolean possible;	/* /proc/self/exe could be read */
	struct probe *dry_run;	/* under way, or NULL */
};

/* ---- what the other owners hold ---- */

/* Does a master of ours run (the new image must take masters)? */
static gboolean masters_running(const struct selfupgrade *u)
{
	return gen_table_find_master(u->u.gt, 0) != NULL;
}

/* A master's notify socket, inheritable for the exec (-1: none). */
static int notify_fd(struct selfupgrade *u)
{
	return masters_running(u) ? master_link_upgrade_fd(u->u.master) : -1;
}

/* The counters that cross the exec (takeovers, adoptions). */
static void save_counters(const struct selfupgrade *u,
			  struct upgrade_state *h)
{
	h->takeovers = u->u.metrics->takeovers;
	h->restarts_adopted = u->u.metrics->restarts_adopted;
	h->adoptions = u->u.metrics->adoptions;
}

static void restore_counters(struct selfupgrade *u,
			     const struct upgrade_state *h)
{
	u->u.metrics->takeovers = h->takeovers;
	u->u.metrics->restarts_adopted = h->restarts_adopted;
	u->u.metrics->adoptions = h->adoptions;
}

/* The new image: the old one's notify socket (-1: none, or not ours),
 * kept or closed. A master reports to the path in its NOTIFY_SOCKET:
 * the socket bound there comes over with us, or is bound anew. */
static void adopt_notify(struct selfupgrade *u, int fd)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *path = NULL;
	gboolean masters = masters_running(u);

	if (fd >= 0) {
		path = rundir_notify_socket(u->u.rt->dir);
		if (!masters || !master_link_adopt(u->u.master, fd, path))
			close(fd);
	}
	if (masters && !master_link_socket(u->u.master, &error))
		log_warn("%s", error->message);
}

/* The new image serves with what it adopted; the machine's RESUME
 * tells it no first start runs. */
static void resumed(struct selfupgrade *u)
{
	u->u.metrics->adoptions += u->u.gt->gens->len;
}

/* ---- our own image ---- */

struct selfupgrade *selfupgrade_new(const struct selfupgrade_uses *uses,
				    char **orig_argv,
				    selfupgrade_report_fn report,
				    gpointer data)
{
	struct selfupgrade *u = g_new0(struct selfupgrade, 1);

	u->u = *uses;
	u->report = report;
	u->data = data;
	u->orig_argv = orig_argv;
	u->possible = self_image_init(&u->image);
	if (!u->possible && uses->opts->self_upgrade != SELF_UPGRADE_NEVER)
		log_warn("cannot read /proc/self/exe: self-upgrade disabled");
	return u;
}

void selfupgrade_free(struct selfupgrade *u)
{
	if (!u)
		return;
	selfupgrade_cancel(u);
	self_image_clear(&u->image);
	g_free(u);
}

const char *selfupgrade_image_path(const struct selfupgrade *u)
{
	return u->image.path;
}

void selfupgrade_cancel(struct selfupgrade *u)
{
	g_clear_pointer(&u->dry_run, probe_cancel);
}

/* ---- the optional self upgrade before a reload ---- */

/* The new image refused (or could not run) the dry run: this one
 * reloads, and says why to whoever waits. */
static void upgrade_refuse(struct selfupgrade *u, const char *why)
{
	g_autofree gchar *told = g_strdup_printf("%s --upgrade-dry-run %s",
						 u->image.path, why);

	log_err("not upgrading: %s --upgrade-dry-run %s; reloading with the "
		"running wrapper", u->image.path, why);
	reloader_post(u->u.reloader, RE_UPGRADE_REFUSED, &(struct reload_input){
		.message = told });
}

/* ---- what the old image hands over ---- */

/* The waiting clients' descriptors, to stay open across the exec. */
static GArray *upgrade_waiters(struct selfupgrade *u)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(struct upgrade_waiter));
	const GPtrArray *waiters = reloader_waiters(u->u.reloader);

	for (guint i = 0; i < waiters->len; i++) {
		struct waiter *w = g_ptr_array_index((GPtrArray *)waiters, i);
		struct upgrade_waiter hw = {
			.fd = control_client_fd(w->client),
			.target = w->target,
		};

		g_array_append_val(out, hw);
	}
	return out;
}

/* Inheritable just for the exec; close-on-exec again if it failed, or
 * a later exec (the hand-off) would carry them. */
static void fds_inheritable(struct selfupgrade *u, gboolean yes)
{
	const GPtrArray *waiters = reloader_waiters(u->u.reloader);

	for (guint i = 0; i < waiters->len; i++) {
		struct waiter *w = g_ptr_array_index((GPtrArray *)waiters, i);

		control_client_inheritable(w->client, yes);
	}
	if (yes)
		notify_fd(u);
	else
		master_link_reclaim_fd(u->u.master);
	/* haproxy's stderr: what it writes meanwhile waits in the pipe. */
	ha_stderr_inheritable(u->u.hastderr, yes);
}

/* The upgrade state as it is now, serialized. */
static gchar *state_now(struct selfupgrade *u)
{
	struct reloader *r = u->u.reloader;
	int pending_signal;
	gboolean pending_hard;
	gboolean pending = reloader_pending(r, &pending_signal, &pending_hard);
	struct upgrade_state h = {
		.next_number = u->u.gt->next_number,
		.reloads = reloader_reloads(r),
		.reloads_failed = reloader_reloads_failed(r),
		.reload_signal = reloader_signal(r),
		.reload_pending = pending,
		.attempt = reloader_attempt(r),
		.hard = reloader_hard(r),
		.pending_hard = pending_hard,
		.gens = u->u.gt->gens,
		.adopted = adopt_rows(replacement_adopt(u->u.replacement)),
		.waiters = upgrade_waiters(u),
		.notify_fd = notify_fd(u),
		.pidfile_pid = u->u.gt->pidfile_pid,
	};
	gchar *state;
	int rfd, wfd;

	ha_stderr_fds(u->u.hastderr, &rfd, &wfd);
	h.stderr_rfd = rfd;
	h.stderr_wfd = wfd;
	save_counters(u, &h);
	state = state_serialize(&h);
	g_array_unref(h.adopted);
	g_array_unref(h.waiters);
	return state;
}

static void on_upgrade_dry_run(const char *output, int wait_status,
			       const GError *error, gpointer data)
{
	struct selfupgrade *u = data;
	g_autofree gchar *state = NULL;
	g_autofree gchar *how = NULL;
	int sig;

	u->dry_run = NULL;
	if (error) {
		upgrade_refuse(u, error->message);
		return;
	}
	if (!upgrade_check_passed(output, wait_status,
				  masters_running(u))) {
		how = describe_wait_status(wait_status);
		upgrade_refuse(u, WIFEXITED(wait_status) &&
					  WEXITSTATUS(wait_status) == 0
				  ? "gave an unexpected answer" : how);
		return;
	}
	/* A second install meanwhile: what passed is not what would run. */
	if (!upgrade_dry_run_same_image(&u->image)) {
		upgrade_refuse(u, "passed, but the file was replaced during "
			       "its dry run");
		return;
	}
	/* Waiters may have come meanwhile: the state is taken anew. */
	state = state_now(u);
	sig = reloader_signal(u->u.reloader);
	log_notice("re-executing on %s.", sig ? signal_name(sig) : "request");
	fds_inheritable(u, TRUE);
	upgrade_exec(&u->image, u->orig_argv, state);
	fds_inheritable(u, FALSE);
	upgrade_refuse(u, "could not be executed");
}

/* The new image parses this very command line and state, as the exec
 * would, and exits without acting: only then is it executed. */
void selfupgrade_begin(struct selfupgrade *u)
{
	g_autofree gchar *state = state_now(u);

	fds_inheritable(u, FALSE);
	u->dry_run = upgrade_dry_run_start(&u->image, u->orig_argv, state,
					   on_upgrade_dry_run, u);
}

enum upgrade_choice selfupgrade_wanted(struct selfupgrade *u)
{
	gboolean wanted;

	if (!u->possible)
		return UPGRADE_NO;
	switch (u->u.opts->self_upgrade) {
	case SELF_UPGRADE_ALWAYS:
		wanted = TRUE;
		break;
	case SELF_UPGRADE_NEVER:
		wanted = FALSE;
		break;
	case SELF_UPGRADE_AUTO:
	default:
		wanted = self_image_replaced(&u->image);
		break;
	}
	return wanted ? UPGRADE_YES : UPGRADE_NO;
}

/* ---- a new image after a self upgrade: what it keeps of the state ---- */

static gboolean fd_is_socket(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* A leaked variable may name anyone: only our children. */
static void keep_our_children(GPtrArray *gens)
{
	GPid self = getpid();

	for (guint i = 0; i < gens->len;) {
		struct generation *g = g_ptr_array_index(gens, i);

		if (proc_parent(g->pid) == self) {
			i++;
			continue;
		}
		log_warn("handover names pid %d, not our child; ignored",
			 g->pid);
		generation_free(g_ptr_array_steal_index(gens, i));
	}
}

/* Children of ours the state does not name (the old image's helpers,
 * or generations of an unreadable token): stopped, and said. */
static void discard_strays(const GPtrArray *gens)
{
	g_autoptr(GArray) keep = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_autoptr(GArray) kids = proc_children(getpid());

	for (guint i = 0; i < gens->len; i++) {
		struct generation *g = g_ptr_array_index((GPtrArray *)gens, i);

		g_array_append_val(keep, g->pid);
	}
	for (guint i = 0; i < kids->len; i++) {
		GPid pid = g_array_index(kids, GPid, i);
		g_autofree gchar *exe = NULL, *shown = NULL;

		if (proc_pids_contain(keep, pid))
			continue;
		exe = proc_exe(pid);
		/* Its path is anyone's choice: a newline in it would start
		 * a line of ours. */
		shown = exe ? escape_untrusted(exe, 0)
			    : g_strdup("unknown program");
		log_warn("pid %d (%s), a child the handover does not name: "
			 "killed", pid, shown);
	}
	child_discard_strays(keep);
}

/* Only sockets: a leaked variable may name any descriptor. */
static void keep_socket_waiters(GArray *waiters)
{
	for (guint i = 0; i < waiters->len;) {
		struct upgrade_waiter *hw =
			&g_array_index(waiters, struct upgrade_waiter, i);

		if (fd_is_socket(hw->fd))
			i++;
		else
			g_array_remove_index(waiters, i);
	}
}

/* The state the old image left in the environment (FALSE: none; the
 * variable is gone either way), kept only where a leaked variable
 * cannot abuse it. */
static gboolean take_state(struct upgrade_state *h, const char *notify_path)
{
	const char *text = g_getenv(STATE_ENV);

	if (!text)
		return FALSE;
	if (!state_parse(text, h)) {
		guint bad = state_salvage(text, h);

		/* Starting anew would leave the old image's generations, our
		 * children, running unsupervised beside the new one. */
		log_warn("%s could not be read in full (%u part(s) ignored): "
			 "adopting the generations it names, stopping the "
			 "children it does not", STATE_ENV, bad);
	}
	g_unsetenv(STATE_ENV);
	keep_our_children(h->gens);
	discard_strays(h->gens);
	keep_socket_waiters(h->waiters);
	/* Any other descriptor is left alone: it may be anyone's. */
	if (h->notify_fd >= 0 &&
	    !(notify_path && mw_notify_fd_is(h->notify_fd, notify_path)))
		h->notify_fd = -1;
	return TRUE;
}

/* No control socket in this image: the client would wait, unanswered,
 * as long as the wrapper runs. Told (one try, never a wait), closed. */
static void refuse_waiter(int fd)
{
	static const char text[] = "error: the upgraded wrapper has no "
				   "control socket; the reload goes on "
				   "unreported\n";

	if (send(fd, text, sizeof(text) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		errno = 0;
	close(fd);
}

static gboolean adopt_generations(struct selfupgrade *u,
				  struct upgrade_state *h)
{
	struct gen_table *gt = u->u.gt;
	struct adopt *adopted;

	/* Not our children: each proven again, or left alone. */
	replacement_restore(u->u.replacement, h->adopted);
	adopted = replacement_adopt(u->u.replacement);
	while (h->gens->len) {
		struct generation *g = g_ptr_array_steal_index(h->gens, 0);

		gen_table_add_adopted(gt, g);
		/* Same instance, same runtime directory, same fragment. */
		g->exposes = u->u.rt->expose_cfg && g->mode != LAUNCH_DS;
		if (g->mode == LAUNCH_MW) {
			g_autoptr(GArray) w = proc_children(g->pid);

			g_array_append_vals(g->workers, w->data, w->len);
		}
		/* Ours again: its end is watched. */
		u->report(SELFUPGRADE_ADOPTED, g, u->data);
	}
	/* A leaked variable must not even renumber a fresh start. */
	if (gt->gens->len || adopt_alive(adopted)) {
		/* Or the pidfile it wrote is left behind at our exit. */
		gen_table_restore(gt, h->next_number, h->pidfile_pid);
		/* Counters, not reset by a package upgrade. */
		reloader_set_counters(u->u.reloader, h->reloads,
				      h->reloads_failed);
		restore_counters(u, h);
	}
	if (!gt->current && !adopt_serving(adopted)) {
		log_warn("handover has no serving generation; starting anew");
		return FALSE;
	}
	resumed(u);
	log_notice("%s %s running, adopted %u generation(s)", LOG_IDENT,
		   WRAPPER_VERSION, gt->gens->len);
	return TRUE;
}

/* Clients that were waiting for the reload this image now carries out. */
static void adopt_waiters(struct selfupgrade *u, struct upgrade_state *h,
			  gboolean adopted)
{
	for (guint i = 0; i < h->waiters->len; i++) {
		struct upgrade_waiter *hw =
			&g_array_index(h->waiters, struct upgrade_waiter, i);
		struct control_client *c;

		if (!u->u.rt->control) {
			refuse_waiter(hw->fd);
			continue;
		}
		c = control_adopt(u->u.rt->control, hw->fd);
		if (!c)
			continue;
		if (!adopted) {
			control_reply(c, "error: the upgraded wrapper could "
					 "not take over; starting anew");
			continue;
		}
		reloader_add_waiter(u->u.reloader, c, hw->target);
	}
}

gboolean selfupgrade_restore(struct selfupgrade *u)
{
	g_autofree gchar *notify_path =
		u->u.rt->dir ? rundir_notify_socket(u->u.rt->dir) : NULL;
	struct upgrade_state h;
	gboolean adopted;

	if (!take_state(&h, notify_path))
		return FALSE;
	adopted = adopt_generations(u, &h);
	adopt_notify(u, h.notify_fd);
	/* Only the two ends of one pipe; anything else is left alone. */
	if (h.stderr_rfd)
		ha_stderr_adopt(u->u.hastderr, h.stderr_rfd, h.stderr_wfd);
	adopt_waiters(u, &h, adopted);
	if (adopted) {
		reloader_post(u->u.reloader, RE_RESUME, &(struct reload_input){
			.signal = h.reload_signal,
			.hard = h.hard,
			.attempt = h.attempt,
			.pending = h.reload_pending,
			.pending_signal = h.reload_signal,
			.pending_hard = h.pending_hard,
		});
	}
	upgrade_state_clear(&h);
	return adopted;
}
