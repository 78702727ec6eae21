/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "migrate/identity.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/proc.h"
#include "migrate/cmdline.h"
#include "migrate/trust.h"

/* A ppid chain longer than this is a loop in a broken proc tree. */
#define ANCESTORS_MAX 4096

struct identity {
	gchar *proc_root;
	GPid self;
	gchar *pidfile;		/* absolute, normalised; NULL: none */
	gchar *distrust;	/* why the pidfile cannot be trusted */
	GPtrArray *targets;	/* config_targets_new() */
	gchar *mnt_ns, *net_ns;	/* ours; NULL: unreadable */
	gchar *cgroup;		/* ours; NULL: unreadable */
	struct launch_ids launch;	/* who our haproxy runs as */
};

/* Why the file at path (lstat'ed as st) cannot be trusted, or NULL. */
static gchar *file_distrust(const char *path, const struct stat *st)
{
	g_autofree gchar *name = escape_untrusted(path, ESCAPE_QUOTE_MAX);
	struct stat target;

	if (!trusted_owner(st->st_uid))
		return g_strdup_printf("pidfile %s belongs to uid %u", name,
				       (guint)st->st_uid);
	if (S_ISLNK(st->st_mode)) {
		if (stat(path, &target) != 0)
			return NULL;	/* a dangling link names nothing */
		if (!trusted_owner(target.st_uid))
			return g_strdup_printf("pidfile %s links to a file of "
					       "uid %u", name,
					       (guint)target.st_uid);
		st = &target;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return g_strdup_printf("pidfile %s can be written by other "
				       "users (mode %04o)", name,
				       (guint)(st->st_mode & 07777));
	return NULL;
}

/*
 * Whoever can write the pidfile chooses what it names: only root and the
 * wrapper's user may, directly or by replacing it in its directory.
 */
static gchar *pidfile_distrust(const char *pidfile)
{
	g_autofree gchar *dir = g_path_get_dirname(pidfile);
	g_autofree gchar *dname = escape_untrusted(dir, ESCAPE_QUOTE_MAX);
	struct stat d, f;

	if (stat(dir, &d) != 0)
		/* No directory: no pidfile, nothing it could name. */
		return errno == ENOENT ? NULL
			: g_strdup_printf("pidfile directory %s cannot be "
					  "read (%s)", dname,
					  g_strerror(errno));
	if (!trusted_owner(d.st_uid))
		return g_strdup_printf("pidfile directory %s belongs to uid %u",
				       dname, (guint)d.st_uid);
	if ((d.st_mode & (S_IWGRP | S_IWOTH)) && !(d.st_mode & S_ISVTX))
		return g_strdup_printf("pidfile directory %s can be written by "
				       "other users and is not sticky", dname);
	if (lstat(pidfile, &f) != 0)
		return errno == ENOENT ? NULL
			: g_strdup_printf("pidfile cannot be read (%s)",
					  g_strerror(errno));
	return file_distrust(pidfile, &f);
}

gchar *pidfile_distrust_reason(const char *pidfile)
{
	g_autofree gchar *path = NULL;

	if (!pidfile || !*pidfile)
		return NULL;
	path = g_canonicalize_filename(pidfile, NULL);
	return pidfile_distrust(path);
}

static gchar *read_link(const char *path)
{
	return g_file_read_link(path, NULL);
}

static gchar *ns_of(const char *proc_root, GPid pid, const char *ns)
{
	g_autofree gchar *path = pid > 0
		? g_strdup_printf("%s/%d/ns/%s", proc_root, pid, ns)
		: g_strdup_printf("/proc/self/ns/%s", ns);

	return read_link(path);
}

/* The cgroup systemd manages: the v2 "0::" line, else v1's name=systemd. */
static gchar *cgroup_of(const char *proc_root, GPid pid)
{
	g_autofree gchar *path = pid > 0
		? g_strdup_printf("%s/%d/cgroup", proc_root, pid)
		: g_strdup("/proc/self/cgroup");
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;
	gchar *v1 = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return NULL;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i]; i++) {
		if (g_str_has_prefix(lines[i], "0::")) {
			g_free(v1);
			return g_strdup(lines[i] + 3);
		}
		if (!v1 && strstr(lines[i], ":name=systemd:"))
			v1 = g_strdup(strstr(lines[i], ":name=systemd:") + 14);
	}
	return v1;
}

struct identity *identity_new(const char *proc_root, const char *pidfile,
			      const char *const *config_files,
			      const char *fragment, GPid self)
{
	struct identity *id = g_new0(struct identity, 1);

	id->proc_root = g_strdup(proc_root);
	id->self = self;
	if (pidfile && *pidfile) {
		id->pidfile = g_canonicalize_filename(pidfile, NULL);
		id->distrust = pidfile_distrust(id->pidfile);
	}
	id->targets = config_targets_new(config_files);
	config_targets_add_own(id->targets, fragment);
	launch_ids_init(&id->launch, config_files);
	/* The calling process's own, whatever tree proc_root shows. */
	id->mnt_ns = ns_of(NULL, 0, "mnt");
	id->net_ns = ns_of(NULL, 0, "net");
	id->cgroup = cgroup_of(NULL, 0);
	return id;
}

void identity_free(struct identity *id)
{
	if (!id)
		return;
	g_free(id->proc_root);
	g_free(id->pidfile);
	g_free(id->distrust);
	g_ptr_array_unref(id->targets);
	launch_ids_clear(&id->launch);
	g_free(id->mnt_ns);
	g_free(id->net_ns);
	g_free(id->cgroup);
	g_free(id);
}

const char *identity_pidfile_distrust(const struct identity *id)
{
	return id->distrust;
}

gboolean identity_may_own(const struct identity *id,
			  const struct proc_ids *ids)
{
	return launch_ids_may_own(&id->launch, ids);
}

gboolean identity_may_own_uid(const struct identity *id, guint32 uid)
{
	return launch_ids_may_be(&id->launch, uid);
}

/* b. this wrapper could have started it (migrate/trust.h). */
static gchar *credentials_refusal(const struct identity *id, GPid pid)
{
	g_autoptr(GError) error = NULL;
	struct proc_ids p;

	if (!proc_ids_at(id->proc_root, pid, &p, &error))
		return g_strdup_printf("its credentials cannot be read (%s)",
				       error->message);
	return launch_ids_refusal(&id->launch, &p);
}

#define OTHER_MNT "it runs in another mnt namespace, where "

/*
 * Its sockets must be in our network namespace. Its mount namespace may
 * differ (a unit with PrivateTmp= or ProtectSystem= has one of its own),
 * but then its names prove nothing: *root gets the root its paths are
 * looked at through ("/proc/PID/root"), so that only the files they lead
 * to there count (a container's file mounted at the same path is another
 * file). NULL: the same namespace, names compared as they are.
 */
static gchar *namespace_refusal(const struct identity *id, GPid pid,
				gchar **root)
{
	g_autofree gchar *net = ns_of(id->proc_root, pid, "net");
	g_autofree gchar *mnt = ns_of(id->proc_root, pid, "mnt");

	*root = NULL;
	if (!net || !id->net_ns || !mnt || !id->mnt_ns)
		return g_strdup("its namespaces cannot be compared with ours");
	if (strcmp(net, id->net_ns) != 0)
		return g_strdup("it runs in another net namespace");
	if (strcmp(mnt, id->mnt_ns) != 0)
		*root = g_strdup_printf("%s/%d/root", id->proc_root, pid);
	return NULL;
}

/* Do the process's name its (looked at through root, unless NULL) and our
 * name ours lead to the same file? */
static gboolean same_file(const char *its, const char *root, const char *ours)
{
	g_autofree gchar *seen = root ? g_strconcat(root, its, NULL) : NULL;
	struct stat x, y;

	if (!root && strcmp(its, ours) == 0)
		return TRUE;
	return stat(seen ? seen : its, &x) == 0 && stat(ours, &y) == 0 &&
	       x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static gchar *pidfile_refusal(const struct identity *id,
			      const struct hap_cmdline *c, const char *cwd,
			      const char *root)
{
	g_autofree gchar *its = hap_cmdline_pidfile(c, cwd, TRUE);
	g_autofree gchar *name = NULL;

	if (!id->pidfile)
		return g_strdup("this wrapper has no pidfile to tell its own "
				"haproxy by");
	if (!its)
		return g_strdup("its command line names no pidfile (-p)");
	if (same_file(its, root, id->pidfile))
		return NULL;
	name = escape_untrusted(its, ESCAPE_QUOTE_MAX);
	return g_strdup_printf("%sits pidfile is %s, not ours",
			       root ? OTHER_MNT : "", name);
}

static gchar *config_refusal(const struct identity *id,
			     const struct hap_cmdline *c, const char *cwd,
			     const char *root)
{
	g_auto(GStrv) files = hap_cmdline_files(c, cwd, TRUE);

	if (config_set_equal(id->targets, (const char *const *)files, root))
		return NULL;
	return g_strdup_printf("%sits configuration files are not exactly "
			       "ours", root ? OTHER_MNT : "");
}

static gboolean is_wrapper(const char *proc_root, GPid pid,
			   const struct proc_stat *st)
{
	g_autofree gchar *exe = NULL;

	if (g_str_has_prefix(st->comm, "haproxy-systemd"))
		return TRUE;
	exe = proc_exe_at(proc_root, pid, NULL, NULL);
	return exe && strstr(base_name(exe), "systemd-wrapper");
}

/* Another wrapper supervises it: that wrapper's service, not ours. */
static gchar *ancestor_refusal(const struct identity *id, GPid pid)
{
	struct proc_stat st;

	if (!proc_stat_at(id->proc_root, pid, &st, NULL))
		return g_strdup("its parent cannot be read");
	for (guint n = 0; st.ppid > 1 && n < ANCESTORS_MAX; n++) {
		GPid up = st.ppid;

		if (up == id->self)
			return NULL;
		if (!proc_stat_at(id->proc_root, up, &st, NULL))
			return NULL;	/* gone: nothing above it now */
		if (is_wrapper(id->proc_root, up, &st))
			return g_strdup_printf("it runs under another wrapper "
					       "(pid %d)", up);
	}
	return NULL;
}

static const char *leaf_of(const char *cgroup)
{
	const char *slash = strrchr(cgroup, '/');

	return slash ? slash + 1 : cgroup;
}

/* Another unit's haproxy is that unit's to stop; a shell's scope is not a
 * service. */
static gchar *cgroup_refusal(const struct identity *id, GPid pid)
{
	g_autofree gchar *its = cgroup_of(id->proc_root, pid);
	g_autofree gchar *name = NULL;

	if (!its)
		return g_strdup("its cgroup cannot be read");
	if ((id->cgroup && strcmp(its, id->cgroup) == 0) ||
	    !g_str_has_suffix(leaf_of(its), ".service"))
		return NULL;
	name = escape_untrusted(leaf_of(its), ESCAPE_QUOTE_MAX);
	return g_strdup_printf("it belongs to another systemd service (%s)",
			       name);
}

gchar *identity_refusal(const struct identity *id, GPid pid,
			const char *const *argv, const char *cwd)
{
	g_autofree gchar *root = NULL;
	struct hap_cmdline c;
	gchar *why;

	if (id->distrust)
		return g_strdup(id->distrust);
	why = namespace_refusal(id, pid, &root);
	if (!why)
		why = credentials_refusal(id, pid);
	hap_cmdline_parse(argv, &c);
	if (!why)
		why = pidfile_refusal(id, &c, cwd, root);
	if (!why)
		why = config_refusal(id, &c, cwd, root);
	hap_cmdline_clear(&c);
	if (!why)
		why = ancestor_refusal(id, pid);
	if (!why)
		why = cgroup_refusal(id, pid);
	if (why && !g_str_has_suffix(why, "left alone")) {
		gchar *told = g_strconcat(why, ": not this service's own; "
					  "left alone", NULL);

		g_free(why);
		why = told;
	}
	return why;
}
