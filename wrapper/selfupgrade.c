/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The self-upgrade, supervisor side: whether a reload upgrades the
 * wrapper first, the new image's dry run and exec (wrapper/upgrade.c),
 * and the upgrade state: what the old image passes on across its own
 * exec (wrapper/state.c), and how the new one takes generations and
 * waiting clients back. Not the hand-off (handoff.c: exec into -Ws).
 * The log lines still say "handover": users grep them. */
#include "wrapper/supervisor-int.h"

#include <sys/socket.h>

/* ---- our own image ---- */

void sv_self_upgrade_init(struct supervisor *s, char **orig_argv)
{
	s->up.orig_argv = orig_argv;
	s->up.possible = self_image_init(&s->up.image);
	if (!s->up.possible && s->opts->self_upgrade != SELF_UPGRADE_NEVER)
		log_warn("cannot read /proc/self/exe: self-upgrade disabled");
}

void sv_self_upgrade_clear(struct supervisor *s)
{
	self_image_clear(&s->up.image);
}

/* ---- what the old image hands over ---- */

/* The waiting clients' descriptors, to stay open across the exec. */
static GArray *upgrade_waiters(struct supervisor *s)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(struct upgrade_waiter));
	const GPtrArray *waiters = reloader_waiters(s->reloader);

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

/* A master's notify socket, inheritable for the exec; -1 without one. */
static int upgrade_notify_fd(struct supervisor *s)
{
	return sv_master_running(s) ? master_link_upgrade_fd(s->master) : -1;
}

/* Is fd the notify socket of this instance (handed over)? */
static gboolean notify_fd_is_ours(struct supervisor *s, int fd)
{
	g_autofree gchar *path = NULL;

	if (!s->rt.dir)
		return FALSE;
	path = rundir_notify_socket(s->rt.dir);
	return mw_notify_fd_is(fd, path);
}

static gboolean adopt_notify_fd(struct supervisor *s, int fd)
{
	g_autofree gchar *path = NULL;

	if (!s->rt.dir)
		return FALSE;
	path = rundir_notify_socket(s->rt.dir);
	return master_link_adopt(s->master, fd, path);
}

/* Inheritable just for the exec; close-on-exec again if it failed, or
 * a later exec (the hand-off) would carry them. */
void sv_upgrade_fds_inheritable(struct supervisor *s, gboolean yes)
{
	const GPtrArray *waiters = reloader_waiters(s->reloader);

	for (guint i = 0; i < waiters->len; i++) {
		struct waiter *w = g_ptr_array_index((GPtrArray *)waiters, i);

		control_client_inheritable(w->client, yes);
	}
	if (yes)
		upgrade_notify_fd(s);
	else
		master_link_reclaim_fd(s->master);
}

struct upgrade_state sv_upgrade_state_of(struct supervisor *s)
{
	struct reloader *r = s->reloader;
	int pending_signal;
	gboolean pending_hard;
	gboolean pending = reloader_pending(r, &pending_signal, &pending_hard);

	return (struct upgrade_state){
		.next_number = s->gt.next_number,
		.reloads = reloader_reloads(r),
		.reloads_failed = reloader_reloads_failed(r),
		.takeovers = s->takeovers,
		.restarts_adopted = s->restarts_adopted,
		.adoptions = s->adoptions,
		.reload_signal = reloader_signal(r),
		.reload_pending = pending,
		.attempt = reloader_attempt(r),
		.hard = reloader_hard(r),
		.pending_hard = pending_hard,
		.gens = s->gt.gens,
		.waiters = upgrade_waiters(s),
		.notify_fd = upgrade_notify_fd(s),
	};
}

/* ---- a new image after a self upgrade takes the generations back ---- */

static gboolean fd_is_socket(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Children of ours the state does not name (the old image's helpers,
 * or generations of an unreadable token): stopped, and said. */
static void child_discard_strays_of(struct supervisor *s)
{
	g_autoptr(GArray) keep = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_autoptr(GArray) kids = proc_children(getpid());

	for (guint i = 0; i < s->gt.gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gt.gens, i);

		g_array_append_val(keep, g->pid);
	}
	for (guint i = 0; i < kids->len; i++) {
		GPid pid = g_array_index(kids, GPid, i);
		g_autofree gchar *exe = NULL;

		if (proc_pids_contain(keep, pid))
			continue;
		exe = proc_exe(pid);
		log_warn("pid %d (%s), a child the handover does not name: "
			 "killed", pid, exe ? exe : "unknown program");
	}
	child_discard_strays(keep);
}

static gboolean adopt(struct supervisor *s, struct upgrade_state *h)
{
	GPid self = getpid();

	while (h->gens->len) {
		struct generation *g = g_ptr_array_steal_index(h->gens, 0);

		/* A leaked variable may name anyone: only our children. */
		if (proc_parent(g->pid) != self) {
			log_warn("handover names pid %d, not our child; ignored",
				 g->pid);
			generation_free(g);
			continue;
		}
		gen_table_add_adopted(&s->gt, g);
		/* Same instance, same runtime directory, same fragment. */
		g->exposes = s->rt.expose_cfg && g->mode != LAUNCH_DS;
		if (g->mode == LAUNCH_MW) {
			g_autoptr(GArray) w = proc_children(g->pid);

			g_array_append_vals(g->workers, w->data, w->len);
		}
		sv_watch_generation(s, g);
	}
	child_discard_strays_of(s);
	/* A leaked variable must not even renumber a fresh start. */
	if (s->gt.gens->len) {
		s->gt.next_number = h->next_number;
		/* Counters, not reset by a package upgrade. */
		reloader_set_counters(s->reloader, h->reloads,
				      h->reloads_failed);
		s->takeovers = h->takeovers;
		s->restarts_adopted = h->restarts_adopted;
		s->adoptions = h->adoptions;
	}
	if (!s->gt.current) {
		log_warn("handover has no serving generation; starting anew");
		return FALSE;
	}
	sv_set_running(s);
	s->adoptions += s->gt.gens->len;
	log_notice("%s %s running, adopted %u generation(s)", LOG_IDENT,
		   WRAPPER_VERSION, s->gt.gens->len);
	return TRUE;
}

/* No control socket in this image: the client would wait, unanswered,
 * as long as the wrapper runs. Told (one try, never a wait), closed. */
static void tell_unadoptable(int fd)
{
	static const char text[] = "error: the upgraded wrapper has no "
				   "control socket; the reload goes on "
				   "unreported\n";

	if (send(fd, text, sizeof(text) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		errno = 0;
	close(fd);
}

/* Clients that were waiting for the reload this image now carries out. */
static void adopt_waiters(struct supervisor *s, struct upgrade_state *h,
			  gboolean adopted)
{
	for (guint i = 0; i < h->waiters->len; i++) {
		struct upgrade_waiter *hw =
			&g_array_index(h->waiters, struct upgrade_waiter, i);
		struct control_client *c;

		/* Only sockets: a leaked variable may name any descriptor. */
		if (!fd_is_socket(hw->fd))
			continue;
		if (!s->rt.control) {
			tell_unadoptable(hw->fd);
			continue;
		}
		c = control_adopt(s->rt.control, hw->fd);
		if (!c)
			continue;
		if (!adopted) {
			control_reply(c, "error: the upgraded wrapper could "
					 "not take over; starting anew");
			continue;
		}
		reloader_add_waiter(s->reloader, c, hw->target);
	}
}

/* A master reports to the path in its NOTIFY_SOCKET: the socket bound
 * there comes over with us, or is bound anew. */
static void adopt_notify(struct supervisor *s, struct upgrade_state *h)
{
	g_autoptr(GError) error = NULL;
	gboolean masters = sv_master_running(s);

	/* A leaked variable may name any descriptor: only ours is closed. */
	if (h->notify_fd >= 0 &&
	    notify_fd_is_ours(s, h->notify_fd) &&
	    (!masters || !adopt_notify_fd(s, h->notify_fd)))
		close(h->notify_fd);
	if (masters && !sv_master_notify_socket(s, &error))
		log_warn("%s", error->message);
}

gboolean sv_restore_upgrade_state(struct supervisor *s)
{
	const char *text = g_getenv(STATE_ENV);
	struct upgrade_state h;
	gboolean adopted;

	if (!text)
		return FALSE;
	if (!state_parse(text, &h)) {
		guint bad = state_salvage(text, &h);

		/* Starting anew would leave the old image's generations, our
		 * children, running unsupervised beside the new one. */
		log_warn("%s could not be read in full (%u part(s) ignored): "
			 "adopting the generations it names, stopping the "
			 "children it does not", STATE_ENV, bad);
	}
	g_unsetenv(STATE_ENV);
	adopted = adopt(s, &h);
	adopt_notify(s, &h);
	adopt_waiters(s, &h, adopted);
	if (adopted) {
		sv_post(s, RE_RESUME, &(struct reload_input){
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

/* ---- the optional self upgrade before a reload ---- */

/* The new image refused (or could not run) the dry run: this one
 * reloads, and says why to whoever waits. */
static void upgrade_refuse(struct supervisor *s, const char *why)
{
	g_autofree gchar *told = g_strdup_printf("%s --upgrade-dry-run %s",
						 s->up.image.path, why);

	log_err("not upgrading: %s --upgrade-dry-run %s; reloading with the "
		"running wrapper", s->up.image.path, why);
	sv_post(s, RE_UPGRADE_REFUSED, &(struct reload_input){
		.message = told });
}

static void on_upgrade_dry_run(const char *output, int wait_status,
			       const GError *error, gpointer data)
{
	struct supervisor *s = data;
	g_autofree gchar *state = NULL;
	g_autofree gchar *how = NULL;
	struct upgrade_state h;

	s->probe = NULL;
	if (error) {
		upgrade_refuse(s, error->message);
		return;
	}
	if (!upgrade_check_passed(output, wait_status, sv_master_running(s))) {
		how = describe_wait_status(wait_status);
		upgrade_refuse(s, WIFEXITED(wait_status) &&
					  WEXITSTATUS(wait_status) == 0
				  ? "gave an unexpected answer" : how);
		return;
	}
	/* A second install meanwhile: what passed is not what would run. */
	if (!upgrade_dry_run_same_image(&s->up.image)) {
		upgrade_refuse(s, "passed, but the file was replaced during "
			       "its dry run");
		return;
	}
	/* Waiters may have come meanwhile: the state is taken anew. */
	h = sv_upgrade_state_of(s);
	state = state_serialize(&h);
	g_array_unref(h.waiters);
	log_notice("re-executing on %s.", reloader_signal(s->reloader) ?
		   signal_name(reloader_signal(s->reloader)) : "request");
	sv_upgrade_fds_inheritable(s, TRUE);
	upgrade_exec(&s->up.image, s->up.orig_argv, state);
	sv_upgrade_fds_inheritable(s, FALSE);
	upgrade_refuse(s, "could not be executed");
}

/* The new image parses this very command line and state, as the exec
 * would, and exits without acting: only then is it executed. */
void sv_begin_upgrade(void *ctx)
{
	struct supervisor *s = ctx;
	g_autofree gchar *state = NULL;
	struct upgrade_state h = sv_upgrade_state_of(s);

	state = state_serialize(&h);
	g_array_unref(h.waiters);
	sv_upgrade_fds_inheritable(s, FALSE);
	s->probe = upgrade_dry_run_start(&s->up.image, s->up.orig_argv, state,
					 on_upgrade_dry_run, s);
}

enum upgrade_choice sv_upgrade_wanted(void *ctx)
{
	struct supervisor *s = ctx;
	gboolean wanted;

	if (!s->up.possible)
		return UPGRADE_NO;
	switch (s->opts->self_upgrade) {
	case SELF_UPGRADE_ALWAYS:
		wanted = TRUE;
		break;
	case SELF_UPGRADE_NEVER:
		wanted = FALSE;
		break;
	case SELF_UPGRADE_AUTO:
	default:
		wanted = self_image_replaced(&s->up.image);
		break;
	}
	/* The handed-over state has no room for adopted instances: this
	 * reload brings them under us first, the next one upgrades. */
	if (wanted && adopt_alive(s->adopt)) {
		log_notice("not upgrading the wrapper on this reload: a haproxy "
			   "adopted after a restart by hand runs; this reload "
			   "takes it over, the next one upgrades");
		return UPGRADE_POSTPONED;
	}
	return wanted ? UPGRADE_YES : UPGRADE_NO;
}
