/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What an haproxy command line says: its mode, its configuration files
 * (resolved against its directories), and whether one of them is among
 * the files looked for.
 */
#pragma once

#include <string.h>

#include <glib.h>

/* What an haproxy command line says; strings borrowed from its argv. */
struct hap_cmdline {
	gboolean mworker;	/* -W, -Ws */
	gboolean ds;		/* -Ds: 1.x systemd mode; -D from 1.8 on */
	gboolean renamed;	/* argv[0] "...-master": a 1.7 -Ds parent */
	const char *basedir;	/* the last -C */
	const char *pidfile;	/* the last -p; NULL: none */
	GPtrArray *files;	/* -f values, then the "--" tail */
};

static inline const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* haproxy, haproxy-2.6, haproxy26, haproxy-master; not the wrappers
 * (haproxy-systemd-wrapper), which run haproxy rather than being it. */
static inline gboolean haproxy_name(const char *path)
{
	const char *base = base_name(path);

	return g_str_has_prefix(base, "haproxy") && !strstr(base, "wrapper");
}

void hap_cmdline_parse(const char *const *argv, struct hap_cmdline *c);
void hap_cmdline_clear(struct hap_cmdline *c);
/* c's files, absolute and normalised, once each (see below). */
GStrv hap_cmdline_files(const struct hap_cmdline *c, const char *cwd,
			gboolean in_basedir);

/* c's pidfile (the last -p), absolute and normalised as its files are;
 * NULL when it has none or its directory is unknown. */
gchar *hap_cmdline_pidfile(const struct hap_cmdline *c, const char *cwd,
			   gboolean in_basedir);

/*
 * The configuration files an haproxy command line loads (argv[0] included
 * and ignored): every -f value and everything after "--", in order, once
 * each, made absolute and normalised (".", "..", "//"; symlinks are left
 * alone). Relative names are taken against the last -C directory, and a
 * relative -C against cwd; in_basedir says cwd already is that directory
 * (a running haproxy has changed into it before loading its files). With
 * cwd NULL, relative names that need it are left out.
 */
GStrv foreign_argv_config_files(const char *const *argv, const char *cwd,
				gboolean in_basedir);

/* The files looked for (struct config_target), from names taken against
 * the current directory; the empty ones are left out. */
GPtrArray *config_targets_new(const char *const *files);
/*
 * Adds the wrapper's own fragment (path: RUNDIR/listeners.cfg, which every
 * generation it starts loads besides the configuration; may be NULL) to
 * targets: a file of the set when the same path leads to the same file
 * (device and inode), never by its name alone nor by its inode alone,
 * and never required.
 */
void config_targets_add_own(GPtrArray *targets, const char *path);
/* Is path (absolute, normalised) one of targets, by name or by device and
 * inode? The wrapper's own fragment alone is not. */
gboolean config_matches(GPtrArray *targets, const char *path);
/* Are files (absolute, normalised; NULL-terminated) the whole set of
 * targets: each one of them, and every one of them, by name or by device
 * and inode, the wrapper's own fragment allowed besides? With root (a process's "/proc/PID/root", in another mount
 * namespace), each file is looked at through it, by device and inode only. */
gboolean config_set_equal(GPtrArray *targets, const char *const *files,
			  const char *root);
