/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Starting a generation, the reload machine's PROBING and LOADING steps:
 * locate haproxy, know its version, choose the mode, spawn it with its
 * -sf list and -x, and hear its witness; or have the serving master
 * reload itself (wrapper/mworker/link.c). */
#include "wrapper/launcher.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/proc.h"
#include "base/procnet.h"
#include "legacy/args.h"
#include "legacy/config.h"
#include "legacy/launch.h"
#include "legacy/mworker.h"
#include "migrate/adopt.h"
#include "migrate/firststart.h"
#include "migrate/replacement.h"
#include "wrapper/fdstore/fdstore.h"
#include "wrapper/gentable.h"
#include "wrapper/hastderr.h"
#include "wrapper/mworker/link.h"
#include "wrapper/options.h"
#include "wrapper/sdnotify.h"
#include "wrapper/probe.h"
#include "wrapper/rundir-use.h"
#include "wrapper/signals.h"
#include "wrapper/steering/reuseport.h"
#include "wrapper/versioncache/vcache.h"

#define VERSION_PROBE_TIMEOUT_MS 10000
/* While haproxy loads, systemd is told every EXTEND_EVERY_S that it is
 * still alive, and given EXTEND_BY_US more. */
#define EXTEND_EVERY_S 10
#define EXTEND_BY_US (30 * G_USEC_PER_SEC)

struct launcher {
	struct launcher_uses u;		/* its owners' */
	const char *self_path;
	launcher_report_fn report;
	gpointer data;

	struct probe *probe;		/* "haproxy -v" under way */
	guint extend_timer;
	guint ds_fork_timer;		/* a bound -Ds parent, not forked yet */
	gint64 ds_fork_deadline;
	gchar *haproxy_path;		/* of the generation being started */
	struct version_cache vcache;
	gboolean told_migrate_req;
	gboolean config_noreuseport;	/* at the last choice of mode */
	enum launch_mode told_mode;	/* the last mode a notice was about */
	gboolean told_mode_valid;
};

struct launcher *launcher_new(const struct launcher_uses *uses,
			      launcher_report_fn report, gpointer data)
{
	struct launcher *l = g_new0(struct launcher, 1);

	*l = (struct launcher){ .u = *uses, .self_path = uses->self_path,
				.report = report, .data = data };
	return l;
}

void launcher_cancel(struct launcher *l)
{
	g_clear_pointer(&l->probe, probe_cancel);
	/* A generation still loading at the stop is the stop's to end, in
	 * --stop-timeout: no EXTEND_TIMEOUT_USEC= stretches systemd's stop
	 * timeout (nor does the machine's ready timeout kill it). */
	g_clear_handle_id(&l->extend_timer, g_source_remove);
}

static void clear_attempt(struct launcher *l)
{
	g_clear_handle_id(&l->extend_timer, g_source_remove);
	g_clear_handle_id(&l->ds_fork_timer, g_source_remove);
	g_clear_pointer(&l->haproxy_path, g_free);
}

void launcher_end_attempt(struct launcher *l)
{
	clear_attempt(l);
	master_link_abandon(l->u.master);
}

void launcher_free(struct launcher *l)
{
	if (!l)
		return;
	launcher_cancel(l);
	clear_attempt(l);
	g_free(l->vcache.path);
	g_free(l);
}

static void launch_failed(struct launcher *l, int exit_code, const char *fmt,
			  ...) G_GNUC_PRINTF(3, 4);

/* RE_FAILED, with its message. */
static void launch_failed(struct launcher *l, int exit_code, const char *fmt,
			  ...)
{
	g_autofree gchar *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	reloader_post(l->u.reloader, RE_FAILED, &(struct reload_input){
		.exit_code = exit_code, .message = msg });
}

/*
 * haproxy before 1.8 signals its -sf pids (the witness among them) once
 * bound, before its -Ds parent forks the workers, writes their pids to
 * the pidfile and closes its own copies of the listeners. Ready is when
 * it has: else the pidfile is still empty, and a reload right then
 * would send its -sf to the parent, which never acts on it. Bounded: a
 * parent that never gets there is taken as ready all the same.
 */
#define DS_FORK_LIMIT_MS 2000

static gboolean ds_forked(const struct generation *g)
{
	g_autoptr(GArray) workers = proc_children(g->pid);
	g_autoptr(GHashTable) listening = NULL;

	if (workers->len == 0)
		return FALSE;
	listening = proc_listening_inodes(g->pid);
	return !listening || g_hash_table_size(listening) == 0;
}

static gboolean on_ds_fork_check(gpointer data)
{
	struct launcher *l = data;
	struct generation *g = l->u.gt->starting;

	/* Its exit, if it came first, is the verdict. */
	if (!g || g->exited) {
		l->ds_fork_timer = 0;
		return G_SOURCE_REMOVE;
	}
	if (!ds_forked(g) && g_get_monotonic_time() < l->ds_fork_deadline)
		return G_SOURCE_CONTINUE;
	l->ds_fork_timer = 0;
	l->report(LAUNCHER_SERVES, g, l->data);
	return G_SOURCE_REMOVE;
}

static void generation_bound(struct launcher *l, struct generation *g)
{
	if (g->mode != LAUNCH_DS || ds_forked(g)) {
		l->report(LAUNCHER_SERVES, g, l->data);
		return;
	}
	if (l->ds_fork_timer)
		return;
	l->ds_fork_deadline = g_get_monotonic_time() +
			      DS_FORK_LIMIT_MS * G_TIME_SPAN_MILLISECOND;
	l->ds_fork_timer = g_timeout_add(1, on_ds_fork_check, l);
}

static void on_witness(int signo, GPid sender, gpointer data)
{
	struct launcher *l = data;
	struct generation *g = l->u.gt->starting;

	if (!g || sender != g->pid) {
		log_debug("witness: ignoring %s from pid %d", signal_name(signo),
			  sender);
		return;
	}
	switch (signo) {
	case SIGUSR1:
	case SIGTERM:
		generation_bound(l, g);
		break;
	case SIGTTOU:
		if (!g->warned_addr_in_use)
			log_warn("generation %u: an address is in use; haproxy "
				 "retries while asking old processes to pause",
				 g->number);
		g->warned_addr_in_use = TRUE;
		break;
	case SIGTTIN:
		log_info("generation %u gave up binding; old processes were "
			 "told to resume", g->number);
		break;
	}
}

void launcher_kill_loading(struct launcher *l)
{
	log_err("generation %u (pid %d) not ready after %us; killing it",
		l->u.gt->starting->number, l->u.gt->starting->pid,
		l->u.opts->ready_timeout_s);
	generation_signal(l->u.gt->starting, SIGKILL, FALSE);
}

gchar *launcher_master_timeout_text(struct launcher *l, gboolean settling)
{
	/* The master may have ended meanwhile (a restart by hand). */
	GPid pid = l->u.gt->current ? l->u.gt->current->pid : 0;

	return g_strdup_printf("the haproxy master (pid %d) %s within %us",
			       pid,
			       settling ? "did not handle SIGUSR2"
					: "gave no verdict",
			       l->u.opts->ready_timeout_s);
}

/* Old pids for -sf: every live generation's, then the user's own -sf/-st
 * pids for the first generation only. */
static GArray *generations_sf_pids(struct launcher *l)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));

	for (guint i = 0; i < l->u.gt->gens->len; i++)
		generation_sf_pids(g_ptr_array_index(l->u.gt->gens, i), pids);
	return pids;
}

/* -dR: haproxy binds without SO_REUSEPORT. */
static gboolean args_disable_reuseport(const struct wrapper_args *a)
{
	for (char **arg = a->haproxy_args; arg && *arg; arg++)
		if (g_str_has_prefix(*arg, "-dR"))
			return TRUE;
	return FALSE;
}

static gboolean binds_without_reuseport(struct launcher *l)
{
	return l->config_noreuseport || args_disable_reuseport(l->u.args);
}

/*
 * The -sf list. own_held_back: our own generations are left off (see
 * can_hold_back_own). may_hold_back_foreign: the same is possible for the
 * instances taken over, *foreign_held_back says whether it was done.
 */
static GArray *old_pids(struct launcher *l, gboolean first, gboolean *hard,
			gboolean own_held_back, gboolean may_hold_back_foreign,
			gboolean *foreign_held_back)
{
	GArray *pids = own_held_back ? g_array_new(FALSE, FALSE, sizeof(GPid))
				     : generations_sf_pids(l);

	*hard = FALSE;
	if (first && l->u.args->user_old_pids) {
		g_array_append_vals(pids, l->u.args->user_old_pids->data,
				    l->u.args->user_old_pids->len);
		*hard = l->u.args->user_old_hard;
	}
	*foreign_held_back = FALSE;
	if (first) {
		/* Taken over at the first start: those whose every group
		 * steers are soft-stopped by us once it serves. */
		g_autoptr(GArray) foreign = first_start_sf_pids(
			l->u.first, may_hold_back_foreign && !*hard,
			foreign_held_back);

		if (*foreign_held_back) {
			g_autofree gchar *text = pids_text(foreign);

			log_info("foreign haproxy pids %s stay off -sf: they "
				 "get their soft stop once generation 1 "
				 "serves and is steered to", text);
		} else {
			g_array_append_vals(pids, foreign->data, foreign->len);
		}
	}
	{
		g_autoptr(GArray) adopted = adopt_targets(
			replacement_adopt(l->u.replacement));

		g_array_append_vals(pids, adopted->data, adopted->len);
	}
	return pids;
}

/*
 * Can the new generation be started without its predecessors on its -sf
 * list, for the wrapper to soft-stop them once new handshakes are steered
 * to it? Only where its binds cannot need them out of the way: every
 * group of the serving generation has SO_REUSEPORT and its steering
 * program, and neither the configuration nor the command line turns
 * SO_REUSEPORT off (-sf's pause and retry is what lets such a bind
 * succeed). A new generation that fails then leaves the old one serving,
 * never signalled. Not with -x (nothing closes), -st, or a master (it
 * soft-stops its own workers).
 */
static gboolean can_hold_back_own(struct launcher *l, enum launch_mode mode,
				  gboolean hard, gboolean takes_listeners)
{
	const struct generation *c = l->u.gt->current;

	return mode != LAUNCH_MW && !hard && !takes_listeners && c &&
	       c->mode != LAUNCH_MW && !c->exited && c->steerable &&
	       !binds_without_reuseport(l);
}

/* The serving generation's listeners socket, if a new one can take its
 * sockets from there (-x fails hard on a missing socket: check first). */
static gboolean can_take_listeners(struct launcher *l)
{
	const struct generation *c = l->u.gt->current;

	return c && c->exposes && !c->exited &&
	       g_file_test(l->u.rt->expose_sock, G_FILE_TEST_EXISTS);
}

/* Our own additions to haproxy's arguments, for this generation. */
static GStrv extra_args(struct launcher *l, const struct haproxy_version *v,
			enum launch_mode mode, gboolean first,
			gboolean *exposes)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	const char *user_socket = g_getenv("HAPROXY_STATS_SOCKET");
	/* The first start: the sockets systemd kept across a restart, if
	 * any (decided once; what cannot be used is dropped now). */
	const char *kept = first ? fdstore_first_source(l->u.rt->fdstore, v,
							mode) : NULL;

	*exposes = FALSE;
	if (haproxy_version_compare(v, 1, 8, 0) < 0)
		return g_strv_builder_end(b);
	if (user_socket && *user_socket) {
		/* The 1.x wrapper's never-released -x variable: the user
		 * vouches that this socket exposes its listeners. */
		if (l->u.gt->current &&
		    g_file_test(user_socket, G_FILE_TEST_EXISTS)) {
			g_strv_builder_add(b, "-x");
			g_strv_builder_add(b, user_socket);
		} else if (kept) {
			g_strv_builder_add(b, "-x");
			g_strv_builder_add(b, kept);
		}
		return g_strv_builder_end(b);
	}
	if (l->u.rt->expose_cfg) {
		g_strv_builder_add(b, "-f");
		g_strv_builder_add(b, l->u.rt->expose_cfg);
		*exposes = TRUE;
	}
	if (*exposes && can_take_listeners(l)) {
		g_strv_builder_add(b, "-x");
		g_strv_builder_add(b, l->u.rt->expose_sock);
	} else if (kept) {
		g_strv_builder_add(b, "-x");
		g_strv_builder_add(b, kept);
	}
	return g_strv_builder_end(b);
}

/* Without -x (haproxy < 1.8) a closing listener drops its accept queue,
 * unless the kernel moves it to a sibling (Linux >= 5.14). */
static void notice_migrate_req(struct launcher *l)
{
	g_autofree gchar *value = NULL;

	if (l->told_migrate_req || reuseport_usable(l->u.reuseport))
		return;
	l->told_migrate_req = TRUE;
	if (g_file_get_contents("/proc/sys/net/ipv4/tcp_migrate_req", &value,
				NULL, NULL) && g_str_has_prefix(value, "1"))
		return;
	log_notice("haproxy < 1.8 cannot hand its listeners over on reload; "
		   "set net.ipv4.tcp_migrate_req=1 (Linux >= 5.14) so that "
		   "connections queued on the old listeners are not reset");
}

static gboolean on_extend(gpointer data)
{
	notify_extend_timeout(EXTEND_BY_US);
	return G_SOURCE_CONTINUE;
}

/*
 * The wrapper's exit status for a command it could not run: as a shell
 * says it for a missing or non-executable file, an OS error for the rest
 * (fork, pipes, memory); otherwise, what the caller chose.
 */
static int spawn_exit_code(const GError *error, int otherwise)
{
	if (error->domain != G_SPAWN_ERROR)
		return otherwise;
	switch (error->code) {
	case G_SPAWN_ERROR_NOENT:
		return EXIT_HAPROXY_NOT_FOUND;
	case G_SPAWN_ERROR_ACCES:
	case G_SPAWN_ERROR_PERM:
	case G_SPAWN_ERROR_NOEXEC:
		return EXIT_HAPROXY_NOT_EXECUTABLE;
	default:
		return EXIT_OS_ERROR;
	}
}

/* While haproxy loads: systemd's patience (the ready timeout is the
 * reload machine's). */
static void start_load_timers(struct launcher *l)
{
	/* Only under systemd: no wakeup for nobody. */
	if (g_getenv("NOTIFY_SOCKET"))
		l->extend_timer = g_timeout_add_seconds(EXTEND_EVERY_S,
							on_extend, l);
}

/* A master tells its readiness on our notify socket; the others, through
 * the witness at the end of their -sf list. */
static gboolean prepare_readiness(struct launcher *l, struct generation *g,
				  const char **notify_socket, GError **error)
{
	*notify_socket = NULL;
	if (g->mode != LAUNCH_MW)
		return witness_start(&g->witness, on_witness, l, error);
	*notify_socket = master_link_socket(l->u.master, error);
	if (!*notify_socket)
		g_prefix_error(error, "master-worker mode: ");
	return *notify_socket != NULL;
}

static gboolean spawn_generation(struct launcher *l,
				 const struct haproxy_version *v,
				 enum launch_mode mode, gboolean first,
				 gboolean hard_asked)
{
	const char *notify_socket;
	g_autoptr(GError) error = NULL;
	g_autoptr(GArray) pids = NULL;
	g_auto(GStrv) argv = NULL;
	g_auto(GStrv) extra = NULL;
	struct generation *g;
	gboolean hard, exposes;

	if (mode == LAUNCH_DS)
		notice_migrate_req(l);
	g = generation_new(l->u.gt->next_number, mode, v->full);
	if (!prepare_readiness(l, g, &notify_socket, &error)) {
		generation_free(g);
		launch_failed(l, EXIT_OS_ERROR, "%s", error->message);
		return FALSE;
	}
	extra = extra_args(l, v, mode, first, &exposes);
	g->exposes = exposes;
	g->took_listeners = g_strv_contains((const char *const *)extra, "-x");
	g->stops_predecessors = can_hold_back_own(l, mode, hard_asked,
						  g->took_listeners);
	pids = old_pids(l, first, &hard, g->stops_predecessors,
			mode != LAUNCH_MW && !hard_asked &&
			!binds_without_reuseport(l),
			&g->stops_foreign);
	g->sf_adopted = adopt_serving(replacement_adopt(l->u.replacement));
	hard = hard || hard_asked;
	argv = haproxy_argv_build(l->haproxy_path, mode, v, l->u.args,
				  (const char *const *)extra,
				  (GPid *)pids->data, pids->len,
				  g->witness.pid, hard);
	g->stderr_mark = ha_stderr_mark(l->u.hastderr);
	if (!haproxy_spawn(argv, notify_socket,
			   ha_stderr_writer(l->u.hastderr), &g->pid,
			   &error)) {
		generation_free(g);
		launch_failed(l, spawn_exit_code(error,
						    EXIT_HAPROXY_NOT_EXECUTABLE),
				 "cannot run %s: %s", l->haproxy_path,
				 error->message);
		return FALSE;
	}
	gen_table_add_starting(l->u.gt, g);
	fdstore_launched(l->u.rt->fdstore, g);
	l->report(LAUNCHER_SPAWNED, g, l->data);
	start_load_timers(l);
	return TRUE;
}

/* Say why the launch mode is not the obvious one, once per change. */
static void tell_mode(struct launcher *l, enum launch_mode mode,
		      const char *why)
{
	if (l->told_mode_valid && l->told_mode == mode)
		return;
	l->told_mode = mode;
	l->told_mode_valid = TRUE;
	if (*why)
		log_notice("%s: running haproxy with %s", why,
			   launch_mode_flag(mode));
}

static enum launch_mode choose_mode(struct launcher *l,
				    const struct haproxy_version *v)
{
	g_autofree gchar *cwd = g_get_current_dir();
	struct config_hints hints;
	enum launch_mode mode;
	const char *why;

	config_hints_read(l->u.args, cwd, &hints);
	l->config_noreuseport = hints.noreuseport;
	mode = mw_choose_mode(v, l->u.opts->master_worker, &hints, &why);
	tell_mode(l, mode, why);
	return mode;
}

/* The search for a haproxy that replaced the one serving during this
 * reload runs: what it finds goes on the -sf list. */
gboolean launcher_must_wait(struct launcher *l)
{
	if (!adopt_searching(replacement_adopt(l->u.replacement)))
		return FALSE;
	log_info("generation %u waits for the search for a haproxy "
		 "that replaced the one serving", l->u.gt->next_number);
	return TRUE;
}

/* A serving master reloads itself; anything else means a new generation. */
enum launch_kind launcher_launch(struct launcher *l,
				 const struct haproxy_version *v,
				 gboolean first_start, gboolean hard)
{
	struct generation *c = l->u.gt->current;
	enum launch_mode mode = choose_mode(l, v);

	if (mode == LAUNCH_MW && c && c->mode == LAUNCH_MW && !c->exited) {
		start_load_timers(l);
		master_link_reload(l->u.master, c, v->full, hard);
		return LAUNCH_MASTER;
	}
	return spawn_generation(l, v, mode, first_start, hard)
		       ? LAUNCH_GENERATION : LAUNCH_FAILED;
}

/* The version is known: refused for this command line, or on. */
static void version_known(struct launcher *l,
			  const struct haproxy_version *v)
{
	const char *refusal = mw_version_refusal(v, l->u.args);

	if (refusal) {
		launch_failed(l, EXIT_USAGE, "%s: haproxy %s", refusal,
				 v->full);
		return;
	}
	reloader_post(l->u.reloader, RE_PROBED,
		      &(struct reload_input){ .version = v });
}

/* Our runtime directory, if the version cache may live there. */
static const char *rundir_trusted(struct launcher *l)
{
	return l->u.rt->ours ? l->u.rt->dir : NULL;
}

static gboolean same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static gboolean vcache_lookup(struct launcher *l, const struct stat *st)
{
	return l->vcache.path && g_str_equal(l->vcache.path, l->haproxy_path) &&
	       same_file(&l->vcache.st, st);
}

static gboolean vcache_load(struct launcher *l, const struct stat *st)
{
	return version_cache_load(&l->vcache, rundir_trusted(l),
				  l->haproxy_path, st);
}

/* The binary a version probe runs, as it was when the probe started. */
struct probed {
	struct launcher *l;
	gchar *path;
	struct stat st;
};

static void probed_free(gpointer data)
{
	struct probed *p = data;

	g_free(p->path);
	g_free(p);
}

/* Kept for the binary probed, unless it changed since: its outcome may
 * wait for the end of the search for foreign instances. */
static void vcache_keep(struct launcher *l, const struct probed *p,
			const struct haproxy_version *v)
{
	struct stat now;

	if (stat(p->path, &now) < 0 || !same_file(&now, &p->st) ||
	    now.st_ctim.tv_sec != p->st.st_ctim.tv_sec ||
	    now.st_ctim.tv_nsec != p->st.st_ctim.tv_nsec)
		return;
	g_free(l->vcache.path);
	l->vcache.path = g_strdup(p->path);
	l->vcache.st = p->st;
	l->vcache.version = *v;
	version_cache_store(&l->vcache, rundir_trusted(l));
}

static void on_version(const char *output, int wait_status,
		       const GError *error, gpointer data)
{
	struct probed *p = data;
	struct launcher *l = p->l;
	/* An early probe's outcome waits in the cache for launcher_probe();
	 * a failure is met again there, and reported. */
	gboolean wanted = reloader_state(l->u.reloader) == RS_PROBING;
	struct haproxy_version v;

	l->probe = NULL;
	if (error) {
		if (wanted)
			launch_failed(l, spawn_exit_code(error, EXIT_NO_VERSION),
				      "%s -v: %s", p->path, error->message);
		return;
	}
	if (!haproxy_version_parse(output, &v)) {
		g_autofree gchar *how = describe_wait_status(wait_status);

		if (wanted)
			launch_failed(l, EXIT_NO_VERSION,
				      "%s -v %s and printed no haproxy version",
				      p->path, how);
		return;
	}
	vcache_keep(l, p, &v);
	if (wanted)
		version_known(l, &v);
}

static void start_version_probe(struct launcher *l, const struct stat *st)
{
	char *argv[] = { l->haproxy_path, (char *)"-v", NULL };
	struct probed *p = g_new0(struct probed, 1);

	*p = (struct probed){ .l = l, .path = g_strdup(l->haproxy_path),
			      .st = *st };
	l->probe = probe_start(argv, VERSION_PROBE_TIMEOUT_MS, on_version, p);
	probe_own_data(l->probe, probed_free);
}

/* haproxy located anew, as the 1.x wrapper did at every spawn, and able
 * to run; else, when report, the launch fails. */
static gboolean locate(struct launcher *l, struct stat *st, gboolean report)
{
	g_autoptr(GError) error = NULL;
	int code = 0;

	g_free(l->haproxy_path);
	l->haproxy_path = haproxy_locate(l->u.opts->haproxy, l->self_path,
					 &error);
	if (!l->haproxy_path)
		code = EXIT_HAPROXY_NOT_FOUND;
	else if (stat(l->haproxy_path, st) < 0)
		code = EXIT_HAPROXY_NOT_FOUND;
	else if (access(l->haproxy_path, X_OK) < 0)
		code = EXIT_HAPROXY_NOT_EXECUTABLE;
	if (!code)
		return TRUE;
	if (!report)
		return FALSE;
	if (error)
		launch_failed(l, code, "%s", error->message);
	else
		launch_failed(l, code, "%s: %s", l->haproxy_path,
			      g_strerror(errno));
	return FALSE;
}

/* The version of haproxy, from the cache or by running haproxy -v. */
void launcher_probe(struct launcher *l, gboolean first_start)
{
	struct stat st;

	/* The first start's early one goes on: on_version() sees us wait. */
	if (l->probe && first_start)
		return;
	if (!locate(l, &st, TRUE))
		return;
	if (vcache_lookup(l, &st) || vcache_load(l, &st)) {
		version_known(l, &l->vcache.version);
		return;
	}
	start_version_probe(l, &st);
}

/* At the first start, before the search for foreign instances (long on a
 * busy host): haproxy -v runs meanwhile when the version is not cached. */
void launcher_probe_early(struct launcher *l)
{
	struct stat st;

	if (l->probe || !locate(l, &st, FALSE) || vcache_lookup(l, &st) ||
	    vcache_load(l, &st))
		return;
	start_version_probe(l, &st);
}

/* -Ws, -x from the serving generation, -sf every live generation. */
GStrv launcher_master_argv(struct launcher *l, const char *path)
{
	const char *const take[] = { "-x", l->u.rt->expose_sock, NULL };
	g_autoptr(GArray) pids = generations_sf_pids(l);

	return haproxy_argv_build(path, LAUNCH_MW, NULL, l->u.args,
				  can_take_listeners(l) ? take : NULL,
				  (GPid *)pids->data, pids->len, 0, FALSE);
}
