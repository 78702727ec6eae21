/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fake proc trees for the unit tests of migrate/ (t/unit/migrate*.c):
 * PID/stat, PID/status, PID/cmdline, and PID/exe, PID/cwd as symlinks, in
 * a temporary directory; find_foreign() run on them.
 */
#pragma once

#include <glib.h>

#include "migrate/find.h"
#include "base/proc.h"
#include "migrate/takeover.h"

#define HAPROXY "/usr/sbin/haproxy"
#define BOTH (FOREIGN_BY_PIDFILE | FOREIGN_BY_CONFIG)

struct tree {
	gchar *dir;	/* holds proc/ and the configuration files */
	gchar *proc;
	GPtrArray *found;	/* struct foreign */
	GPtrArray *skipped;	/* struct foreign_skip */
};

struct fake {
	GPid pid, ppid, sid;
	guint64 start;
	const char *exe;	/* NULL: no exe link */
	const char *comm;	/* NULL: exe's base name (as executed) */
	const char *cwd;	/* NULL: no cwd link */
	/* "a|b|c", "@P" standing for the tree's h.pid (the wrapper's
	 * pidfile in find()); NULL: empty cmdline */
	const char *argv;
	char state;		/* 0: 'S' */
	guint32 uid, gid;	/* 0: the test's own euid, egid */
	guint32 ruid;		/* real uid; 0: uid */
	const char *mntns;	/* ns/mnt link; NULL: the test's own */
	const char *netns;	/* ns/net link; NULL: the test's own */
	const char *cgroup;	/* cgroup text; NULL: the test's own */
};

/* FAKE(t, .pid = 1, .exe = ...) */
#define FAKE(t, ...) fake(t, &(struct fake){ __VA_ARGS__ })
/* A haproxy run as HAPROXY from "/": HAP(t, pid, ppid, sid, argv), then
 * any other field of struct fake (.start = 5, ...). */
#define HAP(t, pid_, ppid_, sid_, argv_, ...) \
	FAKE(t, .pid = (pid_), .ppid = (ppid_), .sid = (sid_), \
	     .exe = HAPROXY, .cwd = "/", .argv = (argv_), ##__VA_ARGS__)

void tree_setup(struct tree *t, gconstpointer data);
void remove_tree(const char *path);
void tree_teardown(struct tree *t, gconstpointer data);
gchar *tpath(struct tree *t, const char *name);
void put(struct tree *t, GPid pid, const char *what, const char *data,
		gssize len);
void link_to(struct tree *t, GPid pid, const char *what,
		    const char *target);
void put_stat(struct tree *t, GPid pid, const char *comm, char state,
		     GPid ppid, GPid sid, guint64 start);
void put_cmdline(struct tree *t, GPid pid, const char *bars);
gchar *status_text_ruid(guint32 ruid, guint32 uid, guint32 gid,
			       guint64 blocked, guint64 caught);
gchar *status_text(guint32 uid, guint32 gid, guint64 blocked,
			  guint64 caught);
void put_status(struct tree *t, GPid pid, guint64 blocked,
		       guint64 caught);
void fake_system(struct tree *t);
gchar *write_config(struct tree *t, const char *name);
gchar *write_pidfile(struct tree *t, const char *content);
guint find(struct tree *t, const char *pidfile, const char *config,
		  GPid self);
const struct foreign *instance(struct tree *t, guint i);
const struct foreign_skip *skip(struct tree *t, guint i);
void assert_workers(const struct foreign *f, const GPid *want, guint n);
void assert_configs(const struct foreign *f, const char *want);
gchar *write_config_text(struct tree *t, const char *name,
				const char *text);
void fake(struct tree *t, const struct fake *f);
/* f's ns/mnt, ns/net and cgroup alone (fake() writes them too). */
void put_identity(struct tree *t, const struct fake *f);
void add_tree_test(const char *name,
			  void (*fn)(struct tree *, gconstpointer));
