/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A haproxy the wrapper did not start, set up by hand: the one way every
 * takeover and adoption test (t/int/takeover*.c, adopt*.c, migrat*.c,
 * identity.c, upgrade.c) starts its foreign instance.
 */
#pragma once

#include "t/lib/harness.h"

/* How it is set up, in a directory dir. */
struct t_foreign {
	/* NULL: t/fake/fake-haproxy copied as dir/bin/haproxy (a file of its
	 * own, named haproxy as the wrapper's identity rules want), its event
	 * log in *log (dir/fake.log). */
	const char *program;
	const char *const *args;	/* argv[0] excluded, NULL-terminated */
	const char *const *env;		/* NAME, VALUE pairs added; may be NULL */
	gchar **log;
	/* It daemonises: its launcher's exit waited for (output in
	 * dir/launch.log); with pidfile, the pid written there (other than
	 * old), registered (t_remember) by the file it runs: exe, else the
	 * program (absolute paths); else 0.
	 * Unset: our child, stdout to /dev/null, registering it the
	 * caller's. */
	gboolean daemon;
	const char *pidfile;
	GPid old;
	const char *exe;		/* the file it execs in the end */
	struct t_started **started;	/* set: the daemon's registration */
	GSpawnChildSetupFunc child_setup;	/* our child's, before exec */
};

GPid t_foreign_start(const char *dir, const struct t_foreign *f);
/* T_FOREIGN(dir, .program = HAPROXY, .args = ..., .daemon = TRUE, ...) */
#define T_FOREIGN(dir, ...) \
	t_foreign_start(dir, &(struct t_foreign){ __VA_ARGS__ })
/* "PROGRAM -D -p pidfile -f cfg" in dir: the daemon's pid, registered. */
GPid t_foreign_daemon(const char *dir, const char *program,
		      const char *pidfile, const char *cfg);
/* The first pid in pidfile once it is not old (bounded); 0 if never. */
GPid wait_pidfile_other(const char *pidfile, GPid old);
/* A copy of program as sub/name (sub created): its path. */
gchar *copy_program(const char *sub, const char *program, const char *name);
