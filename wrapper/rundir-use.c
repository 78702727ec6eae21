/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/rundir-use.h"

#include <unistd.h>

#include "base/log.h"
#include "wrapper/rundir.h"
#include "wrapper/selfupgrade/state.h"
#include "wrapper/options.h"
#include "wrapper/versioncache/vcache.h"

/* The fragment that makes every generation expose its listening sockets
 * on a private socket, from which the next one takes them (-x). */
static gboolean write_expose_config(struct rundir_use *rt, int dirfd,
				    GError **error)
{
	g_autofree gchar *word = rundir_config_word(rt->expose_sock, error);
	g_autofree gchar *text = NULL;

	if (!word)
		return FALSE;
	text = g_strdup_printf(
		"# Written by " LOG_IDENT ": lets a reloaded haproxy take over\n"
		"# the listening sockets of the previous one (-x).\n"
		"global\n"
		"    stats socket %s mode 600 level admin expose-fd listeners\n",
		word);
	return rundir_write_file(dirfd, RUNDIR_EXPOSE_CONFIG, text, error);
}

int rundir_use_setup(struct rundir_use *rt, const char *runtime_dir,
		  const char *pidfile, gboolean seamless,
		  control_fn on_control, gpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *control = NULL;
	int dirfd;

	rt->dir = rundir_path(runtime_dir, pidfile);
	rt->derived = rundir_is_default(runtime_dir);
	dirfd = rundir_open(rt->dir, RUNDIR_OWNER, &error);
	if (dirfd < 0) {
		/* A new image after an upgrade must not orphan haproxy. */
		if (!g_error_matches(error, RUNDIR_ERROR, RUNDIR_ERROR_OS) &&
		    !g_getenv(STATE_ENV)) {
			log_err("%s", error->message);
			return EXIT_USAGE;
		}
		log_warn("%s: no control socket, no seamless reload",
			 error->message);
		return 0;
	}
	control = rundir_control_socket(rt->dir);
	rt->control = control_listen(control, on_control, data, &error);
	if (!rt->control) {
		log_warn("%s: no control socket", error->message);
		/* Another live wrapper owns this directory: its listeners
		 * socket is not ours to take sockets from. */
		if (g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_EXIST)) {
			close(dirfd);
			return 0;
		}
		g_clear_error(&error);
	}
	rt->ours = TRUE;
	/* A hand-off's note is about a wrapper that is no more. */
	{
		g_autofree gchar *note = rundir_handoff_note(rt->dir);

		unlink(note);
	}
	if (seamless) {
		rt->expose_sock = rundir_expose_socket(rt->dir);
		rt->expose_cfg = rundir_expose_config(rt->dir);
		if (!write_expose_config(rt, dirfd, &error)) {
			log_warn("%s: no seamless reload", error->message);
			g_clear_pointer(&rt->expose_cfg, g_free);
			g_clear_pointer(&rt->expose_sock, g_free);
		}
	}
	close(dirfd);
	return 0;
}

void rundir_use_teardown(struct rundir_use *rt)
{
	g_clear_pointer(&rt->control, control_free);
	/* Every haproxy of ours is gone: their listeners socket too. */
	if (rt->expose_cfg) {
		unlink(rt->expose_cfg);
		unlink(rt->expose_sock);
	}
	/* The directory is removed only when it is empty (a socket haproxy
	 * left keeps it), and only one this wrapper verified as its own. */
	if (!rt->ours)
		return;
	/* The directory named after the pidfile is ours alone, and nobody
	 * removes it after us (systemd removes its RuntimeDirectory=; one
	 * given by --runtime-dir is the administrator's, the version kept
	 * there for the next start): one left per pidfile ever used would
	 * pile up in /run. A version cached there only saves the next start
	 * one "haproxy -v". */
	if (rt->derived) {
		g_autofree gchar *cache = g_build_filename(rt->dir, VCACHE_FILE,
							   NULL);

		unlink(cache);
	}
	rmdir(rt->dir);
}

void rundir_use_clear(struct rundir_use *rt)
{
	g_free(rt->dir);
	g_free(rt->expose_cfg);
	g_free(rt->expose_sock);
	*rt = (struct rundir_use){ 0 };
}
