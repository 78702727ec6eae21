/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A real systemd booted as PID 1 of a container (systemd-nspawn in a
 * cgroup of its own, see shared/docs/real-systemd.md;
 * t/container/container.c), and the checks of a unit under it
 * (t/container/unitcheck.c), for the tests that run the wrapper's units
 * under it: t/container/systemd (the host's systemd 252 and haproxy 2.6)
 * and t/container/distro (Debian's own haproxy.service, and a Debian 13
 * tree with systemd 257 and haproxy 3.0).
 *
 * The container shares the host's network namespace: haproxy listens on a
 * free port of 127.0.0.1 and the test's load client connects from here.
 * Commands run inside through `nsenter -t PID1 -a`; files are put in
 * through /proc/PID1/root. Every container is torn down in the fixture's
 * teardown, and from the SIGABRT/SIGTRAP handlers and atexit when a test
 * fails (container_handlers_install()).
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#define PROG		"haproxy-systemd-wrapper"
#define SBIN_WRAPPER	"/usr/sbin/" PROG
#define HAPROXY		"/usr/sbin/haproxy"
#define UNIT_DIR	"/etc/systemd/system"
#define CONTRIB		"contrib/systemd"

#define WAIT_MS		20000	/* bound of every polled wait */
#define POLL_MS		20
#define POLL_FIRST_MS	10	/* a polled wait's first pause ... */
#define POLL_MAX_MS	200	/* ... doubled each round up to this */
#define CMD_TIMEOUT_S	120	/* bound of every command run */

struct container {
	gchar *name;
	gchar *tmp;		/* overlay upper, dpkg copy, nspawn's log */
	gchar *log;
	GPtrArray *cgroups;	/* our cgroup directories, one a hierarchy */
	GPid nspawn;
	GPid pid1;		/* the container's systemd, host pid */
	gchar *root;		/* /proc/PID1/root */
	int host_netns;		/* private_net: the test's own, for teardown */
};

struct boot {
	const char *tag;
	gboolean dpkg;		/* the host's dpkg database, writable (overlay) */
	/* Boot this tree (-D TREE --volatile=overlay) rather than the host's
	 * root; NULL: the host's. A function, since it is built on demand. */
	const char *(*tree)(gchar **skip);
	/* A network namespace of its own (--private-network), which the
	 * test's thread enters once it is up and leaves at teardown: its
	 * sysctls (net.ipv4.*) are the container's to set, as root sets
	 * them on a host, and nothing else on this machine sees them. */
	gboolean private_net;
};

/* argv, bounded: past timeout_s its process group is ended, code 124.
 * The exit code, stdout and stderr. */
int run_argv(const char *const *argv, guint timeout_s, gchar **out,
	     gchar **err);

/* Why no container can run here, or NULL. */
gchar *cannot_run(void);
/* NULL and *skip set (the reason) when it cannot boot. */
struct container *container_boot(const struct boot *b, gchar **skip);
void container_free(struct container *c);
/* Teardown on SIGABRT (g_assert), SIGTRAP (g_error) and exit. */
void container_handlers_install(void);

/* The pause between two rounds of a polled wait, *ms from POLL_FIRST_MS
 * doubled up to POLL_MAX_MS: what comes at once is seen at once, and a
 * long wait (a drain, a timer) spawns a few commands a second, not fifty,
 * which a loaded machine would pay for. */
void poll_pause(guint *ms);

/* A command in the container: cexec(c, &out, "systemctl", "start", u, NULL) */
int cexecv(struct container *c, guint timeout_s, gchar **out, gchar **err,
	   const char *const *args);
int cexec(struct container *c, gchar **out, const char *first, ...)
	G_GNUC_NULL_TERMINATED;

/* ---- files in the container, by its paths (t/container/files.c) ---- */
gboolean exists_in(struct container *c, const char *path);
void put_file(struct container *c, const char *path, const char *content,
	      gsize len, mode_t mode);
void put_text(struct container *c, const char *path, const char *text);
void copy_in(struct container *c, const char *src, const char *dst,
	     mode_t mode);
/* The built wrapper where the units name it. */
void install_wrapper(struct container *c);
/* A shipped unit, byte for byte, and a drop-in lifting the start limit. */
void install_unit(struct container *c, const char *src, const char *name);
void put_config(struct container *c, const char *path, guint16 port,
		const char *extra);
/* A directory of the container, its owner and mode. */
void mkdir_in(struct container *c, const char *path, mode_t mode, uid_t uid,
	      gid_t gid);
uid_t owner_in(struct container *c, const char *path);

/* Poll until port answers with a pid other than not (0: any). */
GPid wait_serving(guint16 port, GPid not);

/* ---- systemd ---- */
int sctl(struct container *c, const char *verb, const char *unit);
gchar *prop(struct container *c, const char *unit, const char *name);
gint prop_int(struct container *c, const char *unit, const char *name);
void assert_prop(struct container *c, const char *unit, const char *name,
		 const char *want);
/* "generation N (pid P, haproxy V) serving; ..." -> N and P. */
gboolean unit_status_text(struct container *c, const char *unit, guint *gen,
			  GPid *pid, gchar **text);
GPid parent_of(struct container *c, GPid pid);
gchar *exe_of(struct container *c, GPid pid);
GPid pidfile_pid(struct container *c, const char *path);
/* The effective uid pid runs with (container's pid namespace), or -1. */
gint uid_of(struct container *c, GPid pid);
/* Until pid (container's pid namespace) has exited; bounded. */
gboolean wait_gone_in(struct container *c, GPid pid);
/* Host processes still in the unit's cgroup. */
guint processes_in(struct container *c, const char *control_group);
/* Poll `systemctl show` until every NAME=VALUE pair holds; bounded. */
gboolean wait_props(struct container *c, const char *unit,
		    const char *const *pairs);
/* The unit's journal at priority prio or more urgent contains needle. */
gboolean journal_has(struct container *c, const char *unit, const char *prio,
		     const char *needle);
/* Once the unit has stopped: needle is not in its journal (the last lines
 * its wrapper wrote are waited for first, not a time). */
gboolean journal_lacks(struct container *c, const char *unit,
		       const char *prio, const char *needle);

/* ---- the checks every unit passes ---- */

struct svc {
	const char *unit;
	const char *pidfile;
	guint16 port;
	gboolean notify;	/* Type=notify: synchronous start and reload */
	GPid main_pid;		/* the wrapper, container's pid namespace */
	GPid haproxy;		/* the serving haproxy */
	guint generation;
	gchar *cgroup;		/* ControlGroup= */
	GHashTable *seen;	/* every haproxy pid that served */
	gint64 reload_us_max;
	gint64 reload_us_sum;
	guint reloads;
	guint stale;		/* old haproxy answered after reload returned */
	gint64 stale_us_max;	/* ... for this long at most */
	GString *stale_log;
};

void svc_clear(struct svc *s);
/* start -> active, MainPID is the wrapper, haproxy its child serving. */
void check_start(struct container *c, struct svc *s);
/* One `systemctl reload`; n of them under a paced load. */
void check_reload(struct container *c, struct svc *s);
void check_reloads(struct container *c, struct svc *s, guint n);
/* stop -> inactive, not failed; nothing left in the cgroup; port closed. */
void check_stop(struct container *c, struct svc *s);

/* ---- fixtures: a container booted per test (data: struct boot) ---- */

struct fixture {
	struct container *c;
	gchar *skip;
};

void fx_setup(struct fixture *f, gconstpointer data);
void fx_teardown(struct fixture *f, gconstpointer data);
/* FALSE (the test skipped, with the reason) when there is no container. */
gboolean fx_ready(struct fixture *f);

/* The recommended unit as contrib ships it, as haproxy.service. */
void recommended(struct container *c, struct svc *s);

/* A Debian 13 (systemd 257, haproxy 3.0) tree, built once a week by
 * t/container/trixie-tree outside the repository; NULL and *skip (why)
 * if it cannot be built here. For struct boot's tree. */
const char *trixie_tree(gchar **skip);

/* The .deb `make deb` built (or $HSW_DEB), or NULL. */
gchar *deb_path(void);
/* The container ready and the .deb copied into it as /tmp/hsw.deb; FALSE
 * (the test skipped, with the reason) when either is missing. */
gboolean fx_deb_copied(struct fixture *f);
