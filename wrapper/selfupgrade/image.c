/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/selfupgrade/image.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fdlimit.h"
#include "base/log.h"
#include "base/proc.h"
#include "legacy/launch.h"
#include "wrapper/selfupgrade/state.h"

#define UPGRADE_CHECK_TIMEOUT_MS 5000
#define UPGRADE_TAKES_MASTERS "handover master-worker"

gboolean self_image_init(struct self_image *self)
{
	struct stat st;

	*self = (struct self_image){ 0 };
	self->path = proc_exe(getpid());
	if (!self->path || stat("/proc/self/exe", &st) < 0) {
		g_clear_pointer(&self->path, g_free);
		return FALSE;
	}
	self->dev = st.st_dev;
	self->ino = st.st_ino;
	return TRUE;
}

void self_image_clear(struct self_image *self)
{
	g_clear_pointer(&self->path, g_free);
}

gboolean self_image_replaced(const struct self_image *self)
{
	struct stat st;

	/* A missing file is no upgrade: a package may be mid-install. */
	if (!self->path || stat(self->path, &st) < 0)
		return FALSE;
	return st.st_dev != self->dev || st.st_ino != self->ino;
}

struct probe *upgrade_dry_run_start(struct self_image *self,
				    char **orig_argv, const char *state,
				    probe_fn done, gpointer data)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	g_auto(GStrv) argv = NULL;
	g_auto(GStrv) envp = haproxy_environ();
	struct stat st = { 0 };

	/* Before it runs: a file replaced after this is told apart. */
	if (stat(self->path, &st) < 0)
		st = (struct stat){ 0 };
	self->tried_dev = st.st_dev;
	self->tried_ino = st.st_ino;

	g_strv_builder_add(b, self->path);
	g_strv_builder_add(b, "--" UPGRADE_DRY_RUN);
	if (orig_argv && orig_argv[0])
		g_strv_builder_addv(b, (const char **)orig_argv + 1);
	argv = g_strv_builder_end(b);
	envp = g_environ_setenv(envp, STATE_ENV, state, TRUE);
	return probe_start_env(argv, envp, UPGRADE_CHECK_TIMEOUT_MS, done,
			       data);
}

gboolean upgrade_dry_run_same_image(const struct self_image *self)
{
	struct stat st;

	return stat(self->path, &st) == 0 && st.st_ino == self->tried_ino &&
	       st.st_dev == self->tried_dev && self->tried_ino;
}

gboolean upgrade_dry_run(void)
{
	const char *text = g_getenv(STATE_ENV);
	struct upgrade_state h;
	gboolean ok;

	if (!text) {
		log_err("--" UPGRADE_DRY_RUN ": no %s", STATE_ENV);
		return FALSE;
	}
	ok = state_parse(text, &h);
	upgrade_state_clear(&h);
	if (!ok) {
		log_err("--" UPGRADE_DRY_RUN ": malformed %s", STATE_ENV);
		return FALSE;
	}
	upgrade_check_print();
	return TRUE;
}

void upgrade_check_print(void)
{
	/* The format stays last: older images check only that suffix. */
	printf("%s %s " UPGRADE_TAKES_MASTERS " state-format %d\n", LOG_IDENT,
	       WRAPPER_VERSION, STATE_FORMAT);
}

gboolean upgrade_check_passed(const char *output, int wait_status,
			      gboolean needs_master_worker)
{
	g_autofree gchar *want = g_strdup_printf(" state-format %d\n",
						 STATE_FORMAT);

	if (needs_master_worker &&
	    !strstr(output, " " UPGRADE_TAKES_MASTERS " "))
		return FALSE;
	return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0 &&
	       g_str_has_prefix(output, LOG_IDENT " ") &&
	       g_str_has_suffix(output, want);
}

void upgrade_exec(const struct self_image *self, char **argv,
		  const char *state)
{
	int saved;

	g_setenv(STATE_ENV, state, TRUE);
	/* The control signals stay blocked across execve(): whatever arrives
	 * now waits, pending, for the new image's signalfd. */
	/* The new image raises it again, and must know the unit's. */
	fdlimit_restore_for_exec();
	execv(self->path, argv);
	saved = errno;
	fdlimit_raise_again();
	g_unsetenv(STATE_ENV);
	log_notice("re-exec(%s) failed: %s.", self->path, g_strerror(saved));
}
