/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A haproxy the wrapper did not start, set up by hand: see t/lib/foreign.h. */
#include "t/lib/foreign.h"

#include <sys/stat.h>

#include "legacy/pidfile.h"

GPid wait_pidfile_other(const char *pidfile, GPid old)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	do {
		g_autoptr(GArray) pids = NULL;

		if (pidfile_read(pidfile, &pids, NULL, NULL) && pids->len &&
		    g_array_index(pids, GPid, 0) != old)
			return g_array_index(pids, GPid, 0);
		g_usleep(5 * 1000);
	} while (g_get_monotonic_time() < end);
	return 0;
}

/* A copy of program as sub/name (sub created): its path. */
gchar *copy_program(const char *sub, const char *program, const char *name)
{
	gchar *path = g_build_filename(sub, name, NULL);
	g_autofree gchar *data = NULL;
	gsize len;

	g_assert_cmpint(g_mkdir_with_parents(sub, 0755), ==, 0);
	g_assert_true(g_file_get_contents(program, &data, &len, NULL));
	g_assert_true(g_file_set_contents(path, data, len, NULL));
	g_assert_cmpint(chmod(path, 0755), ==, 0);
	return path;
}

/* Its argv and environment, the fake copied into dir where wanted. */
static char **foreign_argv(const char *dir, const struct t_foreign *f,
			   gchar ***envp)
{
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);

	*envp = g_get_environ();
	if (f->program) {
		g_ptr_array_add(argv, g_strdup(f->program));
	} else {
		g_autofree gchar *fake = g_build_filename(t_dir(),
						"fake/fake-haproxy", NULL);
		g_autofree gchar *bin = g_build_filename(dir, "bin", NULL);

		g_ptr_array_add(argv, copy_program(bin, fake, "haproxy"));
		*f->log = g_build_filename(dir, "fake.log", NULL);
		*envp = g_environ_setenv(*envp, "FAKE_HAPROXY_LOG",
					    *f->log, TRUE);
	}
	for (const char *const *e = f->env; e && e[0] && e[1]; e += 2)
		*envp = g_environ_setenv(*envp, e[0], e[1], TRUE);
	for (const char *const *a = f->args; a && *a; a++)
		g_ptr_array_add(argv, g_strdup(*a));
	g_ptr_array_add(argv, NULL);
	return (char **)g_ptr_array_free(argv, FALSE);
}

/* A daemon's pid, once in its pidfile, registered: by the file it runs
 * (device and inode), as exe or its program say. */
static GPid foreign_daemon_pid(char **argv, const struct t_foreign *f)
{
	const char *exe = f->exe ? f->exe : argv[0];
	struct t_started *p;
	GPid pid;

	if (!f->pidfile)
		return 0;
	pid = f->old ? wait_pidfile_other(f->pidfile, f->old)
		     : t_wait_pidfile(f->pidfile);
	g_assert_cmpint(pid, >, 0);
	g_assert_true(g_path_is_absolute(exe));
	/* Interned: the registration outlives argv. */
	p = t_remember(pid, g_intern_string(exe));
	if (f->started)
		*f->started = p;
	return pid;
}

GPid t_foreign_start(const char *dir, const struct t_foreign *f)
{
	g_auto(GStrv) envp = NULL;
	g_auto(GStrv) argv = foreign_argv(dir, f, &envp);
	g_autoptr(GError) error = NULL;
	GPid pid;

	if (f->daemon) {
		/* What t_launch_daemon runs: no log, no environment. */
		g_assert_true(f->program && !f->env && !f->child_setup);
		t_launch_daemon(dir, (const char *const *)argv);
		return foreign_daemon_pid(argv, f);
	}
	g_assert_true(g_spawn_async(dir, argv, envp,
				    G_SPAWN_DO_NOT_REAP_CHILD |
				    G_SPAWN_STDOUT_TO_DEV_NULL, f->child_setup,
				    NULL, &pid, &error));
	g_assert_no_error(error);
	return pid;
}

GPid t_foreign_daemon(const char *dir, const char *program,
		      const char *pidfile, const char *cfg)
{
	return T_FOREIGN(dir, .program = program, .daemon = TRUE,
			 .pidfile = pidfile,
			 .args = (const char *const[]){ "-D", "-p", pidfile,
							"-f", cfg, NULL });
}
