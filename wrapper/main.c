/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * haproxy-systemd-wrapper: keeps haproxy running under systemd the way
 * haproxy 1.5-era unit files expect, on any haproxy from 1.5 to 3.x.
 */
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fdlimit.h"
#include "base/log.h"
#include "legacy/args.h"
#include "legacy/launch.h"
#include "wrapper/client.h"
#include "wrapper/rundir.h"
#include "wrapper/signals.h"
#include "wrapper/supervisor.h"
#include "wrapper/selfupgrade/image.h"

struct cli {
	struct wrapper_options opts;
	gchar *self_upgrade;
	gchar *seamless;
	gchar *takeover;
	gchar *reuseport;
	gchar *master_worker;
	gchar *fd_store;
	gint stop_timeout;
	gint ready_timeout;
	gint drain_timeout;
	gboolean help;
	gboolean version;
	gboolean debug;
	gboolean upgrade_check;
	gboolean upgrade_dry_run;
	/* client commands */
	gboolean reload;
	gboolean hard_reload;
	gboolean status;
	gboolean json;
	gchar *format;
	gboolean handoff;
};

static const char summary[] =
	"Runs haproxy under systemd as the 1.x haproxy-systemd-wrapper did:\n"
	"every argument goes to haproxy; SIGUSR2 or SIGHUP reloads, SIGTERM or\n"
	"SIGINT stops, SIGUSR1 stops gracefully. The wrapper's own options are\n"
	"long options, written --name=value, before any \"--\".";

/* How a client command finds its wrapper (see rundir_client_paths()). */
static const char client_help[] =
	"Client commands (--status, --reload, --hard-reload, --handoff) talk\n"
	"to the control socket in the running wrapper's runtime directory,\n"
	"the first of:\n"
	"  1. the directory --runtime-dir=DIR names;\n"
	"  2. $RUNTIME_DIRECTORY (systemd's RuntimeDirectory=, set for\n"
	"     ExecReload=);\n"
	"  3. with -p PIDFILE, the directory of the wrapper started with that\n"
	"     -p: " RUNDIR_BASE "/NAME, NAME made from the path\n"
	"     (-p /run/haproxy.pid: run-haproxy);\n"
	"  4. with none of them, the packaged unit's service (-p "
	RUNDIR_PACKAGED_PIDFILE "),\n"
	"     else a wrapper started without -p.\n"
	"For another instance, give its -p, e.g.\n"
	"  " LOG_IDENT " --status -p /run/haproxy-other.pid\n";

static GOptionContext *option_context(struct cli *c)
{
	const GOptionEntry entries[] = {
		{ "haproxy", 0, 0, G_OPTION_ARG_FILENAME, &c->opts.haproxy,
		  "Run this haproxy (a path, or a name looked up in PATH)",
		  "PATH" },
		{ "self-upgrade", 0, 0, G_OPTION_ARG_STRING, &c->self_upgrade,
		  "Re-execute a replaced wrapper binary on reload: auto "
		  "(default), always, never", "WHEN" },
		{ "stop-timeout", 0, 0, G_OPTION_ARG_INT, &c->stop_timeout,
		  "After SIGTERM/SIGINT, SIGKILL what is left after this many "
		  "seconds (default 10; 0: never)", "SECONDS" },
		{ "ready-timeout", 0, 0, G_OPTION_ARG_INT, &c->ready_timeout,
		  "Give up on a haproxy that has not bound its addresses after "
		  "this many seconds (default 0: wait)", "SECONDS" },
		{ "max-old-workers", 0, 0, G_OPTION_ARG_INT,
		  &c->opts.max_old_workers,
		  "SIGTERM the oldest draining generations beyond N "
		  "(default: no bound)", "N" },
		{ "drain-timeout", 0, 0, G_OPTION_ARG_INT, &c->drain_timeout,
		  "SIGTERM a draining generation this long after its reload "
		  "(default 0: none)", "SECONDS" },
		{ "seamless-reload", 0, 0, G_OPTION_ARG_STRING, &c->seamless,
		  "Hand listening sockets to the new haproxy (-x, haproxy >= "
		  "1.8): auto (default) or off", "WHEN" },
		{ "takeover", 0, 0, G_OPTION_ARG_STRING, &c->takeover,
		  "At start, take over haproxy instances this wrapper did not "
		  "start (same pidfile or configuration): auto (default) or "
		  "off", "WHEN" },
		{ "reuseport-migration", 0, 0, G_OPTION_ARG_STRING,
		  &c->reuseport,
		  "Keep the connections queued on a closing haproxy's "
		  "listeners (a BPF program per SO_REUSEPORT group, Linux >= "
		  "5.14): auto (default) or off", "WHEN" },
		{ "master-worker", 0, 0, G_OPTION_ARG_STRING,
		  &c->master_worker,
		  "Run haproxy (>= 1.8) as a master and its workers (-Ws), "
		  "reloaded in place: auto (default: when the configuration "
		  "needs it, nbproc > 1 before 2.5), on (also -W/-Ws) or off",
		  "WHEN" },
		{ "fd-store", 0, 0, G_OPTION_ARG_STRING, &c->fd_store,
		  "Keep the listening sockets in systemd's fd store, open "
		  "across a restart (the unit's FileDescriptorStoreMax=; "
		  "haproxy >= 1.8): auto (default: when systemd says the unit "
		  "has one), on or off", "WHEN" },
		{ "debug", 0, 0, G_OPTION_ARG_NONE, &c->debug,
		  "Also log every step of the reload state machine (<7> "
		  "\"reload: A --EVENT--> B\" lines)", NULL },
		{ "runtime-dir", 0, 0, G_OPTION_ARG_FILENAME,
		  &c->opts.runtime_dir,
		  "Directory of the control socket (default: "
		  "$RUNTIME_DIRECTORY, else " RUNDIR_BASE "/NAME)", "DIR" },
		{ "reload", 0, 0, G_OPTION_ARG_NONE, &c->reload,
		  "Client: reload the running wrapper; exits 0 once the new "
		  "haproxy serves, 1 if the reload failed", NULL },
		{ "hard-reload", 0, 0, G_OPTION_ARG_NONE, &c->hard_reload,
		  "Client: reload with -st (old haproxy stops at once)", NULL },
		{ "handoff", 0, 0, G_OPTION_ARG_NONE, &c->handoff,
		  "Client: replace the running wrapper, same pid, by haproxy "
		  "-Ws (for a unit moving to upstream's)", NULL },
		{ "status", 0, 0, G_OPTION_ARG_NONE, &c->status,
		  "Client: print the running wrapper's generations", NULL },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &c->json,
		  "With --status: as JSON", NULL },
		{ "format", 0, 0, G_OPTION_ARG_STRING, &c->format,
		  "With --status: text (default), json or openmetrics "
		  "(node_exporter's textfile collector)", "FORMAT" },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &c->version,
		  "Print the wrapper's version", NULL },
		{ "help", 0, 0, G_OPTION_ARG_NONE, &c->help,
		  "Show this help", NULL },
		{ "upgrade-check", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE,
		  &c->upgrade_check, NULL, NULL },
		{ UPGRADE_DRY_RUN, 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE,
		  &c->upgrade_dry_run, NULL, NULL },
		{ NULL },
	};
	GOptionContext *ctx = g_option_context_new("[HAPROXY-ARGUMENTS...]");

	g_option_context_set_help_enabled(ctx, FALSE);
	g_option_context_set_summary(ctx, summary);
	g_option_context_set_description(ctx, client_help);
	g_option_context_add_main_entries(ctx, entries, NULL);
	return ctx;
}

static gboolean parse_self_upgrade(const char *s, enum self_upgrade *out)
{
	if (!s || g_str_equal(s, "auto"))
		*out = SELF_UPGRADE_AUTO;
	else if (g_str_equal(s, "always"))
		*out = SELF_UPGRADE_ALWAYS;
	else if (g_str_equal(s, "never"))
		*out = SELF_UPGRADE_NEVER;
	else
		return FALSE;
	return TRUE;
}

/* An "auto" (the default, when value is NULL) or "off" option. */
static gboolean parse_auto_off(const char *value, const char *option,
			       gboolean *on, GError **error)
{
	*on = !value || g_str_equal(value, "auto");
	if (*on || g_str_equal(value, "off"))
		return TRUE;
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "%s takes auto or off", option);
	return FALSE;
}

static gboolean parse_fd_store(const char *value,
			       enum fdstore_policy *out, GError **error)
{
	if (!value || g_str_equal(value, "auto"))
		*out = FDSTORE_AUTO;
	else if (g_str_equal(value, "on"))
		*out = FDSTORE_ON;
	else if (g_str_equal(value, "off"))
		*out = FDSTORE_OFF;
	else
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--fd-store takes auto, on or off");
	return !(error && *error);
}

static gboolean parse_master_worker(const char *value, gboolean asked,
				    enum mw_policy *out, GError **error)
{
	if (!value || g_str_equal(value, "auto"))
		*out = asked ? MW_POLICY_ON : MW_POLICY_AUTO;
	else if (g_str_equal(value, "on"))
		*out = MW_POLICY_ON;
	else if (g_str_equal(value, "off") && !asked)
		*out = MW_POLICY_OFF;
	else if (g_str_equal(value, "off"))
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "-W, -Ws and -S ask for master-worker mode, which "
			    "--master-worker=off refuses");
	else
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--master-worker takes auto, on or off");
	return !(error && *error);
}

/* A test build (t/haproxy-systemd-wrapper-next-rejecting): an image that
 * no longer takes one of today's options. */
static gboolean option_rejected(const struct wrapper_args *args,
				GError **error)
{
#ifdef TEST_REJECTED_OPTION
	for (char **o = args->wrapper_opts; o && *o; o++) {
		if (g_str_has_prefix(*o, TEST_REJECTED_OPTION)) {
			g_set_error(error, G_OPTION_ERROR,
				    G_OPTION_ERROR_UNKNOWN_OPTION,
				    "unknown option %s", *o);
			return TRUE;
		}
	}
#endif
	return FALSE;
}

/* GOption sees only the tokens wrapper_args_parse set apart as ours. */
static gboolean parse_wrapper_options(struct cli *c, GOptionContext *ctx,
				      const struct wrapper_args *args,
				      GError **error)
{
	g_autoptr(GPtrArray) v = g_ptr_array_new();
	int n;
	char **argv;

	g_ptr_array_add(v, (char *)LOG_IDENT);
	for (char **o = args->wrapper_opts; o && *o; o++)
		g_ptr_array_add(v, *o);
	g_ptr_array_add(v, NULL);
	n = v->len - 1;
	argv = (char **)v->pdata;
	if (option_rejected(args, error) ||
	    !g_option_context_parse(ctx, &n, &argv, error))
		return FALSE;
	if (n > 1) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "unexpected argument %s", argv[1]);
		return FALSE;
	}
	if (!parse_self_upgrade(c->self_upgrade, &c->opts.self_upgrade)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--self-upgrade takes auto, always or never");
		return FALSE;
	}
	if (c->stop_timeout < 0 || c->ready_timeout < 0 ||
	    c->drain_timeout < 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "timeouts are seconds, 0 or more");
		return FALSE;
	}
	if (c->opts.max_old_workers < -1) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--max-old-workers takes 0 or more");
		return FALSE;
	}
	if (!parse_auto_off(c->seamless, "--seamless-reload",
			    &c->opts.seamless, error) ||
	    !parse_auto_off(c->takeover, "--takeover", &c->opts.takeover,
			    error) ||
	    !parse_auto_off(c->reuseport, "--reuseport-migration",
			    &c->opts.reuseport_migration, error) ||
	    !parse_master_worker(c->master_worker, args->master_worker,
				 &c->opts.master_worker, error) ||
	    !parse_fd_store(c->fd_store, &c->opts.fd_store, error))
		return FALSE;
	if (c->reload + c->hard_reload + c->status + c->handoff > 1) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--reload, --hard-reload, --status and --handoff "
			    "exclude each other");
		return FALSE;
	}
	if (c->format && !g_str_equal(c->format, "text") &&
	    !g_str_equal(c->format, "json") &&
	    !g_str_equal(c->format, "openmetrics")) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--format takes text, json or openmetrics");
		return FALSE;
	}
	log_set_steps(c->debug);
	c->opts.stop_timeout_s = c->stop_timeout;
	c->opts.ready_timeout_s = c->ready_timeout;
	c->opts.drain_timeout_s = c->drain_timeout;
	return TRUE;
}

static int usage_error(const char *msg)
{
	log_err("%s (see --help)", msg);
	return EXIT_USAGE;
}

/* The control socket in dir, if it is there and trusted: its path. NULL
 * and error otherwise; a RUNDIR_ERROR other than RUNDIR_ERROR_OS is a
 * socket or directory another user could have planted. */
static gchar *trusted_control_socket(const char *dir, GError **error)
{
	int dirfd = rundir_open(dir, RUNDIR_CLIENT, error);
	gboolean trusted = dirfd >= 0 &&
			   rundir_socket_trusted(dirfd, RUNDIR_CONTROL_SOCKET,
						 error);

	if (dirfd >= 0)
		close(dirfd);
	return trusted ? rundir_control_socket(dir) : NULL;
}

static gboolean planted(const GError *error)
{
	return error->domain == RUNDIR_ERROR && error->code != RUNDIR_ERROR_OS;
}

static const char *client_command(const struct cli *c)
{
	return c->reload ? "reload" :
	       c->hard_reload ? "hard-reload" :
	       c->handoff ? "handoff" :
	       c->json || !g_strcmp0(c->format, "json") ? "status json" :
	       !g_strcmp0(c->format, "openmetrics") ? "status openmetrics" :
	       "status";
}

/* Client commands find the wrapper from the same command line; with no
 * -p, the packaged unit's service first (rundir_client_paths()). */
static int run_client(const struct cli *c, const struct wrapper_args *args)
{
	g_auto(GStrv) dirs = rundir_client_paths(c->opts.runtime_dir,
						 args->pidfile);
	g_autoptr(GError) first_error = NULL;
	g_autofree gchar *socket = NULL;

	for (char **dir = dirs; *dir; dir++) {
		g_autoptr(GError) error = NULL;
		g_autofree gchar *found = trusted_control_socket(*dir, &error);

		if (found)
			return client_run(found, client_command(c));
		/* A socket another user could have planted must not answer. */
		if (planted(error)) {
			log_err("%s", error->message);
			return EXIT_USAGE;
		}
		if (!first_error)
			first_error = g_steal_pointer(&error);
	}
	for (char **dir = dirs; *dir; dir++) {
		g_autofree gchar *path = rundir_handoff_note(*dir);
		g_autofree gchar *note = NULL;

		/* The loop above refused a directory another user could
		 * have planted a note in. */
		if (!g_file_get_contents(path, &note, NULL, NULL))
			continue;
		fprintf(stderr, "%s: no wrapper answers at %s: %s", LOG_IDENT,
			*dir, note);
		return EXIT_CLIENT_UNREACHABLE;
	}
	socket = rundir_control_socket(dirs[0]);
	fprintf(stderr, "%s: cannot reach the wrapper at %s: %s%s\n",
		LOG_IDENT, socket, first_error->message,
		args->pidfile || c->opts.runtime_dir ? "" :
		" (another instance: give its -p PIDFILE or --runtime-dir)");
	return EXIT_CLIENT_UNREACHABLE;
}

/* -c, -v...: haproxy answers at once; nothing to supervise. */
static int run_oneshot(const struct wrapper_args *args,
		       const struct wrapper_options *opts)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *self = g_file_read_link("/proc/self/exe", NULL);
	g_autofree gchar *path = haproxy_locate(opts->haproxy, self, &error);
	g_auto(GStrv) argv = NULL;

	if (!path) {
		log_err("%s", error->message);
		return EXIT_HAPROXY_NOT_FOUND;
	}
	argv = haproxy_argv_oneshot(path, args);
	return haproxy_exec(argv);
}

static void cli_clear(struct cli *c)
{
	g_free(c->opts.haproxy);
	g_free(c->opts.runtime_dir);
	g_free(c->self_upgrade);
	g_free(c->seamless);
	g_free(c->takeover);
	g_free(c->reuseport);
	g_free(c->master_worker);
	g_free(c->fd_store);
	g_free(c->format);
}

/*
 * Descriptors the wrapper was started with are nobody's business but its
 * own (a handed-over state names the ones it takes back): none may reach
 * haproxy -Ws through the hand-off's execve. A one-shot run keeps them
 * (-f /dev/fd/N).
 */
static void keep_inherited_fds_private(void)
{
	g_autoptr(GDir) d = NULL;
	const char *name;

	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	d = g_dir_open("/proc/self/fd", 0, NULL);
	while (d && (name = g_dir_read_name(d))) {
		int fd = atoi(name);
		int flags = fd > 2 ? fcntl(fd, F_GETFD) : -1;

		if (flags >= 0 && !(flags & FD_CLOEXEC))
			fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
	}
}

/* What a well-formed command line asks for. */
static int dispatch(struct cli *c, struct wrapper_args *args,
		    GOptionContext *ctx, char **orig_argv)
{
	struct supervisor *s;
	int code;

	if (c->help) {
		g_autofree gchar *help = g_option_context_get_help(ctx, TRUE, NULL);

		fputs(help, stdout);
		return 0;
	}
	if (c->version) {
		printf("%s %s\n", LOG_IDENT, WRAPPER_VERSION);
		return 0;
	}
	if (c->upgrade_check) {
		upgrade_check_print();
		return 0;
	}
	if (c->upgrade_dry_run)
		return upgrade_dry_run() ? 0 : 1;
	if (c->reload || c->hard_reload || c->status || c->handoff) {
		signals_unblock();
		return run_client(c, args);
	}
	if (args->oneshot != ONESHOT_NONE)
		return run_oneshot(args, &c->opts);
	keep_inherited_fds_private();
	/* What it holds grows with the configuration; haproxy gets the
	 * unit's limit back (base/fdlimit.h). */
	fdlimit_raise();
	s = supervisor_new(args, &c->opts, orig_argv);
	code = supervisor_run(s);
	supervisor_free(s);
	return code;
}

int main(int argc, char **argv)
{
	/* First, before GLib can start a thread that would take them. */
	signals_block();

	g_auto(GStrv) orig_argv = g_strdupv(argv);
	g_autofree gchar *cwd = g_get_current_dir();
	g_autoptr(GOptionContext) ctx = NULL;
	g_autoptr(GError) error = NULL;
	struct wrapper_args args = { 0 };
	struct cli c = { .stop_timeout = 10, .opts.max_old_workers = -1 };
	int code;

	ctx = option_context(&c);
	if (!wrapper_args_parse(argc - 1, argv + 1, cwd, &args, &error) ||
	    !parse_wrapper_options(&c, ctx, &args, &error))
		code = usage_error(error->message);
	else
		code = dispatch(&c, &args, ctx, orig_argv);
	wrapper_args_clear(&args);
	cli_clear(&c);
	return code;
}
