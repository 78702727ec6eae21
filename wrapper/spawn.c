/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Starting a generation, the reload machine's PROBING and LOADING steps:
 * locate haproxy, know its version, choose the mode, spawn it with its
 * -sf list and -x, and hear its witness; or have the serving master
 * reload itself (wrapper/master.c). */
#include "wrapper/supervisor-int.h"
#include "wrapper/vcache.h"

static void on_witness(int signo, GPid sender, gpointer data)
{
	struct supervisor *s = data;
	struct generation *g = s->gt.starting;

	if (!g || sender != g->pid) {
		log_debug("witness: ignoring %s from pid %d", signal_name(signo),
			  sender);
		return;
	}
	switch (signo) {
	case SIGUSR1:
	case SIGTERM:
		sv_generation_ready(s, g);
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

static gboolean on_ready_timeout(gpointer data)
{
	struct supervisor *s = data;

	s->ready_timer = 0;
	sv_post(s, RE_TIMEOUT, NULL);
	return G_SOURCE_REMOVE;
}

void sv_kill_loading(void *ctx)
{
	struct supervisor *s = ctx;

	log_err("generation %u (pid %d) not ready after %us; killing it",
		s->gt.starting->number, s->gt.starting->pid,
		s->opts->ready_timeout_s);
	generation_signal(s->gt.starting, SIGKILL, FALSE);
}

gchar *sv_master_timeout_text(void *ctx, gboolean settling)
{
	struct supervisor *s = ctx;
	/* The master may have ended meanwhile (a restart by hand). */
	GPid pid = s->gt.current ? s->gt.current->pid : 0;

	return g_strdup_printf("the haproxy master (pid %d) %s within %us",
			       pid,
			       settling ? "did not handle SIGUSR2"
					: "gave no verdict",
			       s->opts->ready_timeout_s);
}

/* Old pids for -sf: every live generation's, then the user's own -sf/-st
 * pids for the first generation only. */
GArray *sv_generations_sf_pids(struct supervisor *s)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));

	for (guint i = 0; i < s->gt.gens->len; i++)
		generation_sf_pids(g_ptr_array_index(s->gt.gens, i), pids);
	return pids;
}

static GArray *old_pids(struct supervisor *s, gboolean *hard)
{
	GArray *pids = sv_generations_sf_pids(s);

	*hard = FALSE;
	if (s->gt.next_number == 1 && s->args->user_old_pids) {
		g_array_append_vals(pids, s->args->user_old_pids->data,
				    s->args->user_old_pids->len);
		*hard = s->args->user_old_hard;
	}
	if (s->gt.next_number == 1 && s->takeover) {
		g_autoptr(GArray) foreign = takeover_targets(s->takeover);

		g_array_append_vals(pids, foreign->data, foreign->len);
	}
	{
		g_autoptr(GArray) adopted = adopt_targets(s->adopt);

		g_array_append_vals(pids, adopted->data, adopted->len);
	}
	return pids;
}

/* The serving generation's listeners socket, if a new one can take its
 * sockets from there (-x fails hard on a missing socket: check first). */
gboolean sv_can_take_listeners(struct supervisor *s)
{
	return s->gt.current && s->gt.current->exposes && !s->gt.current->exited &&
	       g_file_test(s->rt.expose_sock, G_FILE_TEST_EXISTS);
}

/* Our own additions to haproxy's arguments, for this generation. */
static GStrv extra_args(struct supervisor *s, const struct haproxy_version *v,
			gboolean *exposes)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	const char *user_socket = g_getenv("HAPROXY_STATS_SOCKET");

	*exposes = FALSE;
	if (haproxy_version_compare(v, 1, 8, 0) < 0)
		return g_strv_builder_end(b);
	if (user_socket && *user_socket) {
		/* The 1.x wrapper's never-released -x variable: the user
		 * vouches that this socket exposes its listeners. */
		if (s->gt.current && g_file_test(user_socket, G_FILE_TEST_EXISTS)) {
			g_strv_builder_add(b, "-x");
			g_strv_builder_add(b, user_socket);
		}
		return g_strv_builder_end(b);
	}
	if (!s->rt.expose_cfg)
		return g_strv_builder_end(b);
	g_strv_builder_add(b, "-f");
	g_strv_builder_add(b, s->rt.expose_cfg);
	*exposes = TRUE;
	if (sv_can_take_listeners(s)) {
		g_strv_builder_add(b, "-x");
		g_strv_builder_add(b, s->rt.expose_sock);
	}
	return g_strv_builder_end(b);
}

/* Without -x (haproxy < 1.8) a closing listener drops its accept queue,
 * unless the kernel moves it to a sibling (Linux >= 5.14). */
static void notice_migrate_req(struct supervisor *s)
{
	g_autofree gchar *value = NULL;

	if (s->told_migrate_req || reuseport_usable(s->reuseport))
		return;
	s->told_migrate_req = TRUE;
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

/* While haproxy loads: the ready timeout, and systemd's patience. */
static void start_load_timers(struct supervisor *s)
{
	if (s->opts->ready_timeout_s)
		s->ready_timer = g_timeout_add_seconds(s->opts->ready_timeout_s,
						       on_ready_timeout, s);
	/* Only under systemd: no wakeup for nobody. */
	if (g_getenv("NOTIFY_SOCKET"))
		s->extend_timer = g_timeout_add_seconds(EXTEND_EVERY_S,
							on_extend, s);
}

/* A master tells its readiness on our notify socket; the others, through
 * the witness at the end of their -sf list. */
static gboolean prepare_readiness(struct supervisor *s, struct generation *g,
				  const char **notify_socket, GError **error)
{
	*notify_socket = NULL;
	if (g->mode != LAUNCH_MW)
		return witness_start(&g->witness, on_witness, s, error);
	*notify_socket = sv_master_notify_socket(s, error);
	if (!*notify_socket)
		g_prefix_error(error, "master-worker mode: ");
	return *notify_socket != NULL;
}

static gboolean spawn_generation(struct supervisor *s,
				 const struct haproxy_version *v,
				 enum launch_mode mode)
{
	const char *notify_socket;
	g_autoptr(GError) error = NULL;
	g_autoptr(GArray) pids = NULL;
	g_auto(GStrv) argv = NULL;
	g_auto(GStrv) extra = NULL;
	struct generation *g;
	gboolean hard, exposes;

	if (mode == LAUNCH_DS)
		notice_migrate_req(s);
	g = generation_new(s->gt.next_number, mode, v->full);
	if (!prepare_readiness(s, g, &notify_socket, &error)) {
		generation_free(g);
		sv_launch_failed(s, EXIT_OS_ERROR, "%s", error->message);
		return FALSE;
	}
	pids = old_pids(s, &hard);
	g->sf_adopted = adopt_serving(s->adopt);
	hard = hard || reloader_hard(s->reloader);
	extra = extra_args(s, v, &exposes);
	g->exposes = exposes;
	g->took_listeners = g_strv_contains((const char *const *)extra, "-x");
	argv = haproxy_argv_build(s->haproxy_path, mode, v, s->args,
				  (const char *const *)extra,
				  (GPid *)pids->data, pids->len,
				  g->witness.pid, hard);
	if (!haproxy_spawn(argv, notify_socket, &g->pid, &error)) {
		generation_free(g);
		sv_launch_failed(s, spawn_exit_code(error,
						    EXIT_HAPROXY_NOT_EXECUTABLE),
				 "cannot run %s: %s", s->haproxy_path,
				 error->message);
		return FALSE;
	}
	gen_table_add_starting(&s->gt, g);
	sv_watch_generation(s, g);
	start_load_timers(s);
	return TRUE;
}

/* Say why the launch mode is not the obvious one, once per change. */
static void tell_mode(struct supervisor *s, enum launch_mode mode,
		      const char *why)
{
	if (s->told_mode_valid && s->told_mode == mode)
		return;
	s->told_mode = mode;
	s->told_mode_valid = TRUE;
	if (*why)
		log_notice("%s: running haproxy with %s", why,
			   launch_mode_flag(mode));
}

static enum launch_mode choose_mode(struct supervisor *s,
				    const struct haproxy_version *v)
{
	g_autofree gchar *cwd = g_get_current_dir();
	struct config_hints hints;
	enum launch_mode mode;
	const char *why;

	config_hints_read(s->args, cwd, &hints);
	mode = mw_choose_mode(v, s->opts->master_worker, &hints, &why);
	tell_mode(s, mode, why);
	return mode;
}

/* The search for a haproxy that replaced the one serving during this
 * reload runs: what it finds goes on the -sf list. */
gboolean sv_launch_must_wait(void *ctx)
{
	struct supervisor *s = ctx;

	if (!adopt_searching(s->adopt))
		return FALSE;
	log_info("generation %u waits for the search for a haproxy "
		 "that replaced the one serving", s->gt.next_number);
	return TRUE;
}

/* A serving master reloads itself; anything else means a new generation. */
enum launch_kind sv_launch(void *ctx, const struct haproxy_version *v)
{
	struct supervisor *s = ctx;
	struct generation *c = s->gt.current;
	enum launch_mode mode = choose_mode(s, v);

	if (mode == LAUNCH_MW && c && c->mode == LAUNCH_MW && !c->exited) {
		start_load_timers(s);
		master_link_reload(s->master, c, v->full,
				   reloader_hard(s->reloader));
		return LAUNCH_MASTER;
	}
	return spawn_generation(s, v, mode) ? LAUNCH_GENERATION
					    : LAUNCH_FAILED;
}

/* The version is known: refused for this command line, or on. */
static void version_known(struct supervisor *s,
			  const struct haproxy_version *v)
{
	const char *refusal = mw_version_refusal(v, s->args);

	if (refusal) {
		sv_launch_failed(s, EXIT_USAGE, "%s: haproxy %s", refusal,
				 v->full);
		return;
	}
	sv_post(s, RE_PROBED, &(struct reload_input){ .version = v });
}

static gboolean same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static gboolean vcache_lookup(struct supervisor *s, const struct stat *st)
{
	return s->vcache.path && g_str_equal(s->vcache.path, s->haproxy_path) &&
	       same_file(&s->vcache.st, st);
}

/* The binary a version probe runs, as it was when the probe started. */
struct probed {
	struct supervisor *s;
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
static void vcache_keep(struct supervisor *s, const struct probed *p,
			const struct haproxy_version *v)
{
	struct stat now;

	if (stat(p->path, &now) < 0 || !same_file(&now, &p->st) ||
	    now.st_ctim.tv_sec != p->st.st_ctim.tv_sec ||
	    now.st_ctim.tv_nsec != p->st.st_ctim.tv_nsec)
		return;
	g_free(s->vcache.path);
	s->vcache.path = g_strdup(p->path);
	s->vcache.st = p->st;
	s->vcache.version = *v;
	sv_vcache_store(s);
}

static void on_version(const char *output, int wait_status,
		       const GError *error, gpointer data)
{
	struct probed *p = data;
	struct supervisor *s = p->s;
	/* An early probe's outcome waits in the cache for sv_probe(); a
	 * failure is met again there, and reported. */
	gboolean wanted = reloader_state(s->reloader) == RS_PROBING;
	struct haproxy_version v;

	s->probe = NULL;
	if (error) {
		if (wanted)
			sv_launch_failed(s,
					 spawn_exit_code(error, EXIT_NO_VERSION),
					 "%s -v: %s", p->path, error->message);
		return;
	}
	if (!haproxy_version_parse(output, &v)) {
		g_autofree gchar *how = describe_wait_status(wait_status);

		if (wanted)
			sv_launch_failed(s, EXIT_NO_VERSION,
					 "%s -v %s and printed no haproxy "
					 "version", p->path, how);
		return;
	}
	vcache_keep(s, p, &v);
	if (wanted)
		version_known(s, &v);
}

static void start_version_probe(struct supervisor *s, const struct stat *st)
{
	char *argv[] = { s->haproxy_path, (char *)"-v", NULL };
	struct probed *p = g_new0(struct probed, 1);

	*p = (struct probed){ .s = s, .path = g_strdup(s->haproxy_path),
			      .st = *st };
	s->probe = probe_start(argv, VERSION_PROBE_TIMEOUT_MS, on_version, p);
	probe_own_data(s->probe, probed_free);
}

/* haproxy located anew, as the 1.x wrapper did at every spawn, and able
 * to run; else, when report, the launch fails. */
static gboolean locate(struct supervisor *s, struct stat *st, gboolean report)
{
	g_autoptr(GError) error = NULL;
	int code = 0;

	g_free(s->haproxy_path);
	s->haproxy_path = haproxy_locate(s->opts->haproxy, s->up.image.path, &error);
	if (!s->haproxy_path)
		code = EXIT_HAPROXY_NOT_FOUND;
	else if (stat(s->haproxy_path, st) < 0)
		code = EXIT_HAPROXY_NOT_FOUND;
	else if (access(s->haproxy_path, X_OK) < 0)
		code = EXIT_HAPROXY_NOT_EXECUTABLE;
	if (!code)
		return TRUE;
	if (!report)
		return FALSE;
	if (error)
		sv_launch_failed(s, code, "%s", error->message);
	else
		sv_launch_failed(s, code, "%s: %s", s->haproxy_path,
				 g_strerror(errno));
	return FALSE;
}

/* The version of haproxy, from the cache or by running haproxy -v. */
void sv_probe(void *ctx)
{
	struct supervisor *s = ctx;
	struct stat st;

	/* The first start's early one goes on: on_version() sees us wait. */
	if (s->probe && reloader_attempt(s->reloader) == 0)
		return;
	if (!locate(s, &st, TRUE))
		return;
	if (vcache_lookup(s, &st) || sv_vcache_load(s, &st)) {
		version_known(s, &s->vcache.version);
		return;
	}
	start_version_probe(s, &st);
}

/* At the first start, before the search for foreign instances (long on a
 * busy host): haproxy -v runs meanwhile when the version is not cached. */
void sv_probe_early(struct supervisor *s)
{
	struct stat st;

	if (s->probe || !locate(s, &st, FALSE) || vcache_lookup(s, &st) ||
	    sv_vcache_load(s, &st))
		return;
	start_version_probe(s, &st);
}

