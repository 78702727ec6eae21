/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The 1.x command line: every argument belongs to haproxy, except the
 * wrapper's own options, which are long options (--name or --name=value)
 * that haproxy never accepts. Parsing here is pure: no I/O, no globals.
 */
#pragma once

#include <glib.h>

/* How a generation of haproxy is started, chosen from its version. */
enum launch_mode {
	LAUNCH_DS,	/* haproxy < 1.8: "-Ds", the 1.x systemd mode */
	LAUNCH_DB,	/* haproxy >= 1.8: "-db", one foreground process */
	LAUNCH_MW,	/* haproxy >= 1.8: "-Ws", a master and its workers */
};

/* A command line that haproxy answers at once, with no supervision. */
enum oneshot {
	ONESHOT_NONE,
	ONESHOT_CHECK,		/* -c, -cc <cond> */
	ONESHOT_VERSION,	/* -v, -vv, -vq... */
};

struct wrapper_args {
	/* "--name[=value]" tokens, in order, for GOption (NULL-terminated). */
	GStrv wrapper_opts;
	/* haproxy's arguments before a user "--", without -D*, -Ds, -db, -sf/-st. */
	GStrv haproxy_args;
	/* Arguments after the user's "--" (config files); NULL if no "--". */
	GStrv config_tail;
	/* -p, last one wins, made relative to -C like haproxy does; or NULL. */
	gchar *pidfile;
	/* Pids the user gave with -sf or -st; used by the first generation only. */
	GArray *user_old_pids;	/* of GPid */
	gboolean user_old_hard;	/* they came with -st */
	gboolean master_worker;	/* the user gave -W, -Ws or -S */
	gboolean master_cli;	/* the user gave -S: a master CLI, >= 1.9 */
	enum oneshot oneshot;
};

#define WRAPPER_ARGS_ERROR (wrapper_args_error_quark())
GQuark wrapper_args_error_quark(void);

enum wrapper_args_error_code {
	WRAPPER_ARGS_ERROR_USAGE,
};

/*
 * Split argv (argv[0] excluded) into wrapper options and haproxy arguments.
 * cwd is the directory a relative -C is taken against. Fails on input that
 * no haproxy would accept either in the wrapper's context: a value-taking
 * flag at the end, a non-numeric -sf/-st pid. -W/-Ws are taken out and
 * noted as a request for master-worker mode; so is -S (a master CLI, which
 * only a master has), kept with its value for haproxy. out is overwritten,
 * not freed first. With both -v and -c, oneshot is ONESHOT_VERSION:
 * haproxy answers -v first.
 */
gboolean wrapper_args_parse(int argc, char *const *argv, const char *cwd,
			    struct wrapper_args *out, GError **error);
void wrapper_args_clear(struct wrapper_args *a);

/* haproxy's own argv, as a running haproxy would show it, to match the
 * configuration files of instances we did not start. */
GStrv own_haproxy_argv(const struct wrapper_args *args);

/* The flag that starts haproxy in this mode: "-Ds", "-db" or "-Ws". */
const char *launch_mode_flag(enum launch_mode mode);

struct haproxy_version;

/*
 * The argv of one haproxy generation: haproxy_path, the user's arguments,
 * the wrapper's extra arguments (NULL-terminated, may be NULL), the mode
 * flag, "-sf" (or "-st" when hard) with old_pids then witness, and the
 * user's "--" tail last. witness <= 0 and n_old == 0 omit -sf entirely.
 * v is the haproxy to run (NULL: one that knows "--"); haproxy < 1.6 has
 * no "--", so the tail's files become "-f FILE" there.
 */
GStrv haproxy_argv_build(const char *haproxy_path, enum launch_mode mode,
			 const struct haproxy_version *v,
			 const struct wrapper_args *a,
			 const char *const *extra, const GPid *old_pids,
			 guint n_old, GPid witness, gboolean hard);

/* -f, -p, -C... and -cc take the next argument, whatever it looks like. */
gboolean haproxy_flag_takes_value(const char *arg);

/* The argv for a one-shot command: haproxy_path, the user's arguments and
 * the user's "--" tail. */
GStrv haproxy_argv_oneshot(const char *haproxy_path,
			   const struct wrapper_args *a);
