/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wrapper under a real systemd (252, Debian 12): each test boots
 * systemd as PID 1 of a container (systemd-nspawn -D / --volatile=yes, in a
 * cgroup of its own, see shared/docs/real-systemd.md), installs the built
 * wrapper and the shipped units of contrib/systemd (or the .deb), drives
 * them with `nsenter -t PID1 -a systemctl ...` and checks what a user of
 * systemd sees: states, MainPID, reloads that finish when systemctl
 * returns, restarts, clean stops, no process left behind.
 *
 * The container shares the host's network namespace: haproxy listens on a
 * free port of 127.0.0.1 and the test's load client connects from here.
 * The container's /usr is the host's under a writable overlay whose upper
 * layer is a temporary directory, so that the wrapper is installed where
 * the units name it, /usr/sbin, and `dpkg -i` works.
 *
 * Every wait is on a real event (systemctl returning, a property polled
 * with a bound, a socket answering) and bounded. Every container is torn
 * down in the fixture's teardown, and from the SIGABRT handler when an
 * assertion fails: nspawn halts it, its cgroups are removed. Where a
 * container cannot run (not root, no systemd-nspawn, no usable cgroup
 * hierarchy), each test is skipped with the reason.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/harness.h"

#define PROG		"haproxy-systemd-wrapper"
#define SBIN_WRAPPER	"/usr/sbin/" PROG
#define HAPROXY		"/usr/sbin/haproxy"
#define UNIT_DIR	"/etc/systemd/system"
#define CONTRIB		"contrib/systemd"

#define WAIT_MS		20000	/* bound of every polled wait */
#define POLL_MS		20
#define CMD_TIMEOUT_S	120	/* bound of every command run */
#define RELOADS		20

/* ---- commands, bounded ---- */

static int wait_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* argv under timeout(1); the exit code, stdout and stderr. */
static int run_argv(const char *const *argv, guint timeout_s, gchar **out,
		    gchar **err)
{
	g_autoptr(GPtrArray) v = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *o = NULL;
	g_autofree gchar *e = NULL;
	int status;

	g_ptr_array_add(v, g_strdup("timeout"));
	g_ptr_array_add(v, g_strdup("-k"));
	g_ptr_array_add(v, g_strdup("5"));
	g_ptr_array_add(v, g_strdup_printf("%u", timeout_s));
	for (; *argv; argv++)
		g_ptr_array_add(v, g_strdup(*argv));
	g_ptr_array_add(v, NULL);
	if (!g_spawn_sync(NULL, (char **)v->pdata, NULL, G_SPAWN_SEARCH_PATH,
			  NULL, NULL, &o, &e, &status, &error))
		g_error("cannot run %s: %s", argv[0], error->message);
	if (out)
		*out = g_steal_pointer(&o);
	if (err)
		*err = g_steal_pointer(&e);
	return wait_code(status);
}

/* ---- containers ---- */

struct container {
	gchar *name;
	gchar *tmp;		/* overlay upper, dpkg copy, nspawn's log */
	gchar *log;
	GPtrArray *cgroups;	/* our cgroup directories, one a hierarchy */
	GPid nspawn;
	GPid pid1;		/* the container's systemd, host pid */
	gchar *root;		/* /proc/PID1/root */
};

/* For the SIGABRT handler: what is still up. */
static struct container *live[4];
/* For nspawn's child_setup: the cgroup.procs files to enter. */
static gchar *enter_procs[4];

static void register_live(struct container *c, gboolean on)
{
	for (guint i = 0; i < G_N_ELEMENTS(live); i++) {
		if (on && !live[i]) {
			live[i] = c;
			return;
		}
		if (!on && live[i] == c)
			live[i] = NULL;
	}
}

/* Where nspawn's cgroups go: under a directory of ours in every
 * hierarchy nspawn uses (cgroup v2 alone, or v1 name=systemd + unified). */
static GPtrArray *cgroup_roots(void)
{
	GPtrArray *roots = g_ptr_array_new();

	if (g_file_test("/sys/fs/cgroup/cgroup.controllers",
			G_FILE_TEST_EXISTS)) {
		g_ptr_array_add(roots, "/sys/fs/cgroup");
		return roots;
	}
	if (g_file_test("/sys/fs/cgroup/systemd/cgroup.procs",
			G_FILE_TEST_EXISTS))
		g_ptr_array_add(roots, "/sys/fs/cgroup/systemd");
	if (g_file_test("/sys/fs/cgroup/unified/cgroup.procs",
			G_FILE_TEST_EXISTS))
		g_ptr_array_add(roots, "/sys/fs/cgroup/unified");
	return roots;
}

/* In nspawn's process before exec: into our cgroups ("0" is oneself), and
 * halted (SIGTERM) if the test dies whatever the way. */
static void nspawn_setup(gpointer data)
{
	for (guint i = 0; i < G_N_ELEMENTS(enter_procs) && enter_procs[i];
	     i++) {
		int fd = open(enter_procs[i], O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(121);
		close(fd);
	}
	prctl(PR_SET_PDEATHSIG, SIGTERM);
}

static void remove_tree(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		struct stat st;

		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(path);
		else
			unlink(path);
	}
	rmdir(dir);
}

/* Every pid in a cgroup directory and below. */
static void cgroup_pids(const char *dir, GArray *pids)
{
	g_autofree gchar *procs = g_build_filename(dir, "cgroup.procs", NULL);
	g_autofree gchar *text = NULL;
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	if (g_file_get_contents(procs, &text, NULL, NULL)) {
		g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

		for (char **l = lines; *l; l++) {
			GPid pid = atoi(*l);

			if (pid > 0)
				g_array_append_val(pids, pid);
		}
	}
	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *sub = g_build_filename(dir, name, NULL);

		if (g_file_test(sub, G_FILE_TEST_IS_DIR))
			cgroup_pids(sub, pids);
	}
}

/* Depth first; a cgroup whose last process just died may stay busy for
 * a moment. */
static gboolean rmdir_cgroup(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;
	gboolean ok = TRUE;

	if (!d)
		return !g_file_test(dir, G_FILE_TEST_EXISTS);
	while ((name = g_dir_read_name(d))) {
		g_autofree gchar *sub = g_build_filename(dir, name, NULL);

		if (g_file_test(sub, G_FILE_TEST_IS_DIR))
			ok &= rmdir_cgroup(sub);
	}
	return (rmdir(dir) == 0 || errno == ENOENT) && ok;
}

static gboolean wait_child(GPid pid, guint timeout_ms)
{
	gint64 deadline = g_get_monotonic_time() + timeout_ms * 1000LL;
	int status;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (g_get_monotonic_time() > deadline)
			return FALSE;
		g_usleep(10 * 1000);
	}
	return TRUE;
}

static gboolean nspawn_running(void)
{
	g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = NULL;
		g_autofree gchar *comm = NULL;

		if (!g_ascii_isdigit(*name))
			continue;
		path = g_strdup_printf("/proc/%s/comm", name);
		if (g_file_get_contents(path, &comm, NULL, NULL) &&
		    g_str_equal(g_strstrip(comm), "systemd-nspawn"))
			return TRUE;
	}
	return FALSE;
}

/* Halt the container (SIGTERM to nspawn), force what does not go, remove
 * its cgroups, nspawn's leftovers and the temporary directory. Safe to
 * call twice, and from the SIGABRT handler. */
static void container_teardown(struct container *c)
{
	gint64 deadline;

	if (c->nspawn > 0) {
		kill(c->nspawn, SIGTERM);
		if (!wait_child(c->nspawn, 15000)) {
			g_printerr("# %s: nspawn still up after SIGTERM; "
				   "SIGKILL\n", c->name);
			if (c->pid1 > 0)
				kill(c->pid1, SIGKILL);
			kill(c->nspawn, SIGKILL);
			wait_child(c->nspawn, 15000);
		}
		c->nspawn = 0;
	}
	/* Anything still in our cgroups is ended by pid. */
	deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
	for (guint i = 0; c->cgroups && i < c->cgroups->len; i++) {
		const char *dir = g_ptr_array_index(c->cgroups, i);

		while (!rmdir_cgroup(dir)) {
			g_autoptr(GArray) pids = g_array_new(FALSE, FALSE,
							     sizeof(GPid));

			cgroup_pids(dir, pids);
			for (guint j = 0; j < pids->len; j++)
				kill(g_array_index(pids, GPid, j), SIGKILL);
			if (g_get_monotonic_time() > deadline) {
				g_printerr("# cannot remove cgroup %s\n", dir);
				break;
			}
			g_usleep(10 * 1000);
		}
	}
	if (c->name) {
		g_autofree gchar *prop = g_build_filename(
			"/run/systemd/nspawn/propagate", c->name, NULL);

		rmdir(prop);
		/* Shared by every container: only when empty, and no other
		 * nspawn (another test run) may be about to use them. */
		if (!nspawn_running()) {
			rmdir("/run/systemd/nspawn/propagate");
			rmdir("/run/systemd/nspawn");
			rmdir("/run/systemd/nspawn-root");
		}
	}
	if (c->tmp) {
		remove_tree(c->tmp);
		g_clear_pointer(&c->tmp, g_free);
	}
	register_live(c, FALSE);
}

static void container_free(struct container *c)
{
	if (!c)
		return;
	container_teardown(c);
	if (c->cgroups)
		g_ptr_array_unref(c->cgroups);
	g_free(c->name);
	g_free(c->log);
	g_free(c->root);
	g_free(c);
}

static void on_abort(int sig)
{
	for (guint i = 0; i < G_N_ELEMENTS(live); i++)
		if (live[i])
			container_teardown(live[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_exit_teardown(void)
{
	for (guint i = 0; i < G_N_ELEMENTS(live); i++)
		if (live[i])
			container_teardown(live[i]);
}

/* Why no container can run here, or NULL. */
static gchar *cannot_run(void)
{
	g_autofree gchar *nspawn = g_find_program_in_path("systemd-nspawn");
	g_autofree gchar *nsenter = g_find_program_in_path("nsenter");
	g_autoptr(GPtrArray) roots = cgroup_roots();

	if (geteuid() != 0)
		return g_strdup("not root: cannot boot a systemd container");
	if (!nspawn)
		return g_strdup("no systemd-nspawn (Debian package "
				"systemd-container)");
	if (!nsenter)
		return g_strdup("no nsenter (util-linux)");
	if (!roots->len)
		return g_strdup("no cgroup hierarchy for systemd-nspawn "
				"under /sys/fs/cgroup");
	if (!g_file_test(HAPROXY, G_FILE_TEST_IS_EXECUTABLE))
		return g_strdup("no " HAPROXY);
	if (!g_file_test("./" PROG, G_FILE_TEST_IS_EXECUTABLE))
		return g_strdup("no ./" PROG ": run from the project's root "
				"after make");
	return NULL;
}

static gchar *log_tail(const char *path)
{
	g_autofree gchar *text = NULL;
	gsize len = 0;

	if (!g_file_get_contents(path, &text, &len, NULL))
		return g_strdup("(no log)");
	return g_strdup(len > 1500 ? text + len - 1500 : text);
}

/* The container's systemd: nspawn's child in another pid namespace. */
static GPid find_pid1(GPid nspawn, guint timeout_ms)
{
	gint64 deadline = g_get_monotonic_time() + timeout_ms * 1000LL;
	g_autofree gchar *children = g_strdup_printf(
		"/proc/%d/task/%d/children", nspawn, nspawn);
	g_autofree gchar *own_ns = g_file_read_link("/proc/self/ns/pid", NULL);

	while (g_get_monotonic_time() < deadline) {
		g_autofree gchar *text = NULL;
		int status;

		if (waitpid(nspawn, &status, WNOHANG) == nspawn)
			return -1;
		if (g_file_get_contents(children, &text, NULL, NULL)) {
			g_auto(GStrv) pids = g_strsplit(g_strstrip(text), " ",
							-1);

			for (char **p = pids; *p && **p; p++) {
				g_autofree gchar *ns = g_strdup_printf(
					"/proc/%s/ns/pid", *p);
				g_autofree gchar *comm = g_strdup_printf(
					"/proc/%s/comm", *p);
				g_autofree gchar *their = g_file_read_link(ns,
									   NULL);
				g_autofree gchar *name = NULL;

				if (!their || g_strcmp0(their, own_ns) == 0 ||
				    !g_file_get_contents(comm, &name, NULL,
							 NULL))
					continue;
				if (g_str_equal(g_strstrip(name), "systemd"))
					return atoi(*p);
			}
		}
		g_usleep(10 * 1000);
	}
	return 0;
}

static int cexecv(struct container *c, guint timeout_s, gchar **out,
		  gchar **err, const char *const *args)
{
	g_autoptr(GPtrArray) v = g_ptr_array_new_with_free_func(g_free);

	g_ptr_array_add(v, g_strdup("nsenter"));
	g_ptr_array_add(v, g_strdup("-t"));
	g_ptr_array_add(v, g_strdup_printf("%d", c->pid1));
	g_ptr_array_add(v, g_strdup("-a"));
	for (; *args; args++)
		g_ptr_array_add(v, g_strdup(*args));
	g_ptr_array_add(v, NULL);
	return run_argv((const char *const *)v->pdata, timeout_s, out, err);
}

/* A command in the container: cexec(c, &out, "systemctl", "start", u, NULL) */
static G_GNUC_NULL_TERMINATED int cexec(struct container *c, gchar **out,
					const char *first, ...)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	g_autofree gchar *err = NULL;
	const char *a;
	va_list ap;
	int code;

	va_start(ap, first);
	for (a = first; a; a = va_arg(ap, const char *))
		g_ptr_array_add(args, (char *)a);
	va_end(ap);
	g_ptr_array_add(args, NULL);
	code = cexecv(c, CMD_TIMEOUT_S, out, &err,
		      (const char *const *)args->pdata);
	if (code != 0 || (err && *err))
		g_test_message("%s: exit %d: %s", first, code, err);
	return code;
}

struct boot {
	const char *tag;
	gboolean dpkg;		/* a writable copy of the host's dpkg database */
};

static struct container *container_boot(const struct boot *b, gchar **skip)
{
	g_autoptr(GPtrArray) roots = cgroup_roots();
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) error = NULL;
	struct container *c = g_new0(struct container, 1);
	g_autofree gchar *upper = NULL;
	g_autofree gchar *state = NULL;
	gint64 deadline;
	int devnull, logfd;

	c->name = g_strdup_printf("hsw-t%d-%s", getpid(), b->tag);
	c->tmp = g_dir_make_tmp("hsw-systemd-XXXXXX", &error);
	g_assert_no_error(error);
	c->log = g_build_filename(c->tmp, "nspawn.log", NULL);
	upper = g_build_filename(c->tmp, "usr", NULL);
	g_assert_cmpint(g_mkdir(upper, 0755), ==, 0);
	register_live(c, TRUE);

	c->cgroups = g_ptr_array_new_with_free_func(g_free);
	memset(enter_procs, 0, sizeof(enter_procs));
	for (guint i = 0; i < roots->len && i < G_N_ELEMENTS(enter_procs);
	     i++) {
		gchar *dir = g_build_filename(g_ptr_array_index(roots, i),
					      c->name, NULL);

		if (g_mkdir(dir, 0755) < 0) {
			*skip = g_strdup_printf("cannot create cgroup %s: %s",
						dir, g_strerror(errno));
			g_free(dir);
			container_free(c);
			return NULL;
		}
		g_ptr_array_add(c->cgroups, dir);
		enter_procs[i] = g_build_filename(dir, "cgroup.procs", NULL);
	}

	g_ptr_array_add(argv, g_strdup("systemd-nspawn"));
	g_ptr_array_add(argv, g_strdup("--quiet"));
	g_ptr_array_add(argv, g_strdup("-D"));
	g_ptr_array_add(argv, g_strdup("/"));
	g_ptr_array_add(argv, g_strdup("--volatile=yes"));
	g_ptr_array_add(argv, g_strdup("--register=no"));
	g_ptr_array_add(argv, g_strdup("--keep-unit"));
	g_ptr_array_add(argv, g_strdup_printf("--machine=%s", c->name));
	g_ptr_array_add(argv, g_strdup("--console=pipe"));
	g_ptr_array_add(argv, g_strdup("--link-journal=no"));
	g_ptr_array_add(argv, g_strdup_printf("--overlay=/usr:%s:/usr", upper));
	if (b->dpkg) {
		g_autofree gchar *db = g_build_filename(c->tmp, "dpkg", NULL);
		const char *cp[] = { "cp", "-a", "/var/lib/dpkg", db, NULL };

		g_autofree gchar *so = g_build_filename(db, "statoverride",
							NULL);

		g_assert_cmpint(run_argv(cp, 60, NULL, NULL), ==, 0);
		/* Its users and groups (ssl-cert...) are not in the
		 * container's fresh /etc: dpkg would refuse to run. */
		g_assert_true(g_file_set_contents(so, "", 0, NULL));
		g_ptr_array_add(argv, g_strdup_printf("--bind=%s:/var/lib/dpkg",
						      db));
	}
	g_ptr_array_add(argv, g_strdup("--boot"));
	g_ptr_array_add(argv, g_strdup("systemd.condition-first-boot=false"));
	g_ptr_array_add(argv, g_strdup("systemd.firstboot=off"));
	g_ptr_array_add(argv, NULL);

	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	logfd = open(c->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	g_assert_cmpint(devnull, >=, 0);
	g_assert_cmpint(logfd, >=, 0);
	g_spawn_async_with_pipes_and_fds(NULL,
		(const char *const *)argv->pdata, NULL,
		G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_SEARCH_PATH,
		nspawn_setup, NULL, devnull, logfd, logfd, NULL, NULL, 0,
		&c->nspawn, NULL, NULL, NULL, &error);
	close(devnull);
	close(logfd);
	for (guint i = 0; i < G_N_ELEMENTS(enter_procs); i++)
		g_clear_pointer(&enter_procs[i], g_free);
	g_assert_no_error(error);

	c->pid1 = find_pid1(c->nspawn, WAIT_MS);
	if (c->pid1 <= 0) {
		g_autofree gchar *tail = log_tail(c->log);

		if (c->pid1 < 0)
			c->nspawn = 0;	/* reaped */
		*skip = g_strdup_printf("systemd-nspawn cannot boot a "
					"container here: %s", tail);
		container_free(c);
		return NULL;
	}
	c->root = g_strdup_printf("/proc/%d/root", c->pid1);

	/* Early calls fail ("Failed to connect to bus"): retry, bounded. */
	deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;
	for (;;) {
		g_autofree gchar *out = NULL;
		const char *const args[] = { "systemctl", "is-system-running",
					     "--wait", NULL };

		cexecv(c, 30, &out, NULL, args);
		g_clear_pointer(&state, g_free);
		state = g_strdup(out ? g_strstrip(out) : "");
		if (*state && !g_str_equal(state, "offline"))
			break;
		if (g_get_monotonic_time() > deadline)
			break;
		g_usleep(50 * 1000);
	}
	if (!g_str_equal(state, "running")) {
		g_autofree gchar *failed = NULL;
		g_autofree gchar *tail = log_tail(c->log);

		cexec(c, &failed, "systemctl", "--failed", "--no-legend",
		      NULL);
		*skip = g_strdup_printf("the container's systemd did not reach "
					"\"running\" (\"%s\"); failed units: "
					"%s; log: %s", state, failed, tail);
		container_free(c);
		return NULL;
	}
	return c;
}

/* ---- files in the container ---- */

/* A path of the container, seen from the host. */
static gboolean exists_in(struct container *c, const char *path)
{
	g_autofree gchar *full = g_strconcat(c->root, path, NULL);

	return g_file_test(full, G_FILE_TEST_EXISTS);
}

static void put_file(struct container *c, const char *path,
		     const char *content, gsize len, mode_t mode)
{
	g_autofree gchar *full = g_strconcat(c->root, path, NULL);
	g_autofree gchar *dir = g_path_get_dirname(full);
	g_autoptr(GError) error = NULL;

	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	g_file_set_contents(full, content, len, &error);
	g_assert_no_error(error);
	g_assert_cmpint(chmod(full, mode), ==, 0);
}

static void put_text(struct container *c, const char *path, const char *text)
{
	put_file(c, path, text, strlen(text), 0644);
}

static void copy_in(struct container *c, const char *src, const char *dst,
		    mode_t mode)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *data = NULL;
	gsize len;

	g_file_get_contents(src, &data, &len, &error);
	g_assert_no_error(error);
	put_file(c, dst, data, len, mode);
}

/* The built wrapper where the units name it. */
static void install_wrapper(struct container *c)
{
	copy_in(c, "./" PROG, SBIN_WRAPPER, 0755);
}

/* A shipped unit, byte for byte, and a drop-in lifting the start limit
 * (tests restart often). */
static void install_unit(struct container *c, const char *src,
			 const char *name)
{
	g_autofree gchar *from = g_build_filename(CONTRIB, src, NULL);
	g_autofree gchar *to = g_build_filename(UNIT_DIR, name, NULL);
	g_autofree gchar *dropin = g_strdup_printf("%s/%s.d/test.conf",
						   UNIT_DIR, name);

	copy_in(c, from, to, 0644);
	put_text(c, dropin, "[Unit]\nStartLimitIntervalSec=0\n");
}

static void put_config(struct container *c, const char *path, guint16 port,
		       const char *extra)
{
	g_autofree gchar *cfg = t_config_text(port, extra);

	put_text(c, path, cfg);
}

/* A directory of the container, its owner and mode. */
static void mkdir_in(struct container *c, const char *path, mode_t mode,
		     uid_t uid, gid_t gid)
{
	g_autofree gchar *full = g_strconcat(c->root, path, NULL);

	g_assert_cmpint(g_mkdir_with_parents(full, 0755), ==, 0);
	g_assert_cmpint(chown(full, uid, gid), ==, 0);
	g_assert_cmpint(chmod(full, mode), ==, 0);
}

static uid_t owner_in(struct container *c, const char *path)
{
	g_autofree gchar *full = g_strconcat(c->root, path, NULL);
	struct stat st;

	g_assert_cmpint(lstat(full, &st), ==, 0);
	return st.st_uid;
}

/* ---- HTTP on 127.0.0.1 ---- */


/* Poll until port answers with a pid other than not (0: any). */
static GPid wait_serving(guint16 port, GPid not)
{
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;
	GPid pid;

	while (((pid = t_http_pid(port)) == 0 || pid == not) &&
	       g_get_monotonic_time() < deadline)
		g_usleep(POLL_MS * 1000);
	return pid == not ? 0 : pid;
}

/* ---- systemd ---- */

static int sctl(struct container *c, const char *verb, const char *unit)
{
	return cexec(c, NULL, "systemctl", verb, unit, NULL);
}

static gchar *prop(struct container *c, const char *unit, const char *name)
{
	g_autofree gchar *out = NULL;

	g_assert_cmpint(cexec(c, &out, "systemctl", "show", "-p", name,
			      "--value", unit, NULL), ==, 0);
	return g_strdup(g_strstrip(out));
}

static gint prop_int(struct container *c, const char *unit, const char *name)
{
	g_autofree gchar *v = prop(c, unit, name);

	return atoi(v);
}

static void assert_prop(struct container *c, const char *unit,
			const char *name, const char *want)
{
	g_autofree gchar *v = prop(c, unit, name);

	if (!g_str_equal(v, want))
		g_error("%s: %s=%s, expected %s", unit, name, v, want);
}

/* "generation N (pid P, haproxy V) serving; ..." -> N and P. */
static gboolean status_text(struct container *c, const char *unit,
			    guint *gen, GPid *pid, gchar **text)
{
	g_autofree gchar *t = prop(c, unit, "StatusText");
	gboolean ok = sscanf(t, "generation %u (pid %d,", gen, pid) == 2;

	if (text)
		*text = g_steal_pointer(&t);
	return ok;
}

/* Inside the container: the parent of pid, and where pid's binary is. */
static GPid parent_of(struct container *c, GPid pid)
{
	g_autofree gchar *p = g_strdup_printf("%d", pid);
	g_autofree gchar *out = NULL;

	if (cexec(c, &out, "ps", "-o", "ppid=", "-p", p, NULL) != 0)
		return 0;
	return atoi(g_strstrip(out));
}

static gchar *exe_of(struct container *c, GPid pid)
{
	g_autofree gchar *link = g_strdup_printf("/proc/%d/exe", pid);
	g_autofree gchar *out = NULL;

	if (cexec(c, &out, "readlink", link, NULL) != 0)
		return g_strdup("");
	return g_strdup(g_strstrip(out));
}

/* The effective uid pid runs with (container's pid namespace), or -1. */
static gint uid_of(struct container *c, GPid pid)
{
	g_autofree gchar *p = g_strdup_printf("%d", pid);
	g_autofree gchar *out = NULL;

	if (cexec(c, &out, "ps", "-o", "euid=", "-p", p, NULL) != 0)
		return -1;
	return atoi(g_strstrip(out));
}

static GPid pidfile_pid(struct container *c, const char *path)
{
	g_autofree gchar *full = g_strconcat(c->root, path, NULL);
	g_autofree gchar *text = NULL;

	if (!g_file_get_contents(full, &text, NULL, NULL))
		return 0;
	return atoi(text);
}

/* Host processes still in the unit's cgroup (seen from the host as
 * .../<container>/payload<ControlGroup>). */
static guint processes_in(struct container *c, const char *control_group)
{
	g_autofree gchar *needle = g_strdup_printf("/%s/payload%s", c->name,
						   control_group);
	g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
	const char *name;
	guint n = 0;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = NULL;
		g_autofree gchar *text = NULL;
		const char *hit;

		if (!g_ascii_isdigit(*name))
			continue;
		path = g_strdup_printf("/proc/%s/cgroup", name);
		if (!g_file_get_contents(path, &text, NULL, NULL))
			continue;
		for (hit = strstr(text, needle); hit;
		     hit = strstr(hit + 1, needle)) {
			char end = hit[strlen(needle)];

			if (end == '\n' || end == '/' || end == '\0') {
				g_test_message("left in %s: pid %s",
					       control_group, name);
				n++;
				break;
			}
		}
	}
	return n;
}

/* Poll `systemctl show` until every NAME=VALUE pair holds; bounded. */
static gboolean wait_props(struct container *c, const char *unit,
			   const char *const *pairs)
{
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;

	for (;;) {
		gboolean all = TRUE;

		for (const char *const *p = pairs; *p && all; p += 2) {
			g_autofree gchar *v = prop(c, unit, p[0]);

			all = g_str_equal(v, p[1]);
		}
		if (all)
			return TRUE;
		if (g_get_monotonic_time() > deadline)
			return FALSE;
		g_usleep(POLL_MS * 1000);
	}
}

/* Poll until pid (container's pid namespace) has exited; bounded. */
static gboolean wait_gone(struct container *c, GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d", pid);
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;

	while (exists_in(c, path)) {
		if (g_get_monotonic_time() > deadline)
			return FALSE;
		g_usleep(POLL_MS * 1000);
	}
	return TRUE;
}

/* The unit's journal at priority prio or more urgent contains needle;
 * journald takes the lines from the stream asynchronously: polled. */
static gboolean journal_has(struct container *c, const char *unit,
			    const char *prio, const char *needle)
{
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;

	for (;;) {
		g_autofree gchar *out = NULL;

		cexec(c, &out, "journalctl", "--no-pager", "-o", "cat", "-u",
		      unit, "-p", prio, NULL);
		if (out && strstr(out, needle))
			return TRUE;
		if (g_get_monotonic_time() > deadline)
			return FALSE;
		g_usleep(50 * 1000);
	}
}

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

static void svc_clear(struct svc *s)
{
	g_clear_pointer(&s->cgroup, g_free);
	g_clear_pointer(&s->seen, g_hash_table_unref);
	if (s->stale_log)
		g_string_free(g_steal_pointer(&s->stale_log), TRUE);
}

/* start -> active, MainPID is the wrapper, haproxy its child serving. */
static void check_start(struct container *c, struct svc *s)
{
	g_autofree gchar *exe = NULL;
	g_autofree gchar *text = NULL;

	s->seen = g_hash_table_new(NULL, NULL);
	if (sctl(c, "start", s->unit) != 0) {
		g_autofree gchar *journal = NULL;

		cexec(c, &journal, "journalctl", "--no-pager", "-o", "cat",
		      "-u", s->unit, NULL);
		g_error("%s did not start: %s", s->unit, journal);
	}
	if (s->notify) {
		/* READY=1 came once haproxy serves: no polling. */
		s->haproxy = t_http_pid(s->port);
		g_assert_cmpint(s->haproxy, >, 0);
		g_assert_true(status_text(c, s->unit, &s->generation,
					  &(GPid){ 0 }, &text));
		g_test_message("%s StatusText: %s", s->unit, text);
		g_assert_cmpint(s->generation, ==, 1);
	} else {
		s->haproxy = wait_serving(s->port, 0);
		g_assert_cmpint(s->haproxy, >, 0);
	}
	assert_prop(c, s->unit, "ActiveState", "active");
	assert_prop(c, s->unit, "SubState", "running");
	s->main_pid = prop_int(c, s->unit, "MainPID");
	g_assert_cmpint(s->main_pid, >, 0);
	exe = exe_of(c, s->main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	g_assert_cmpint(parent_of(c, s->haproxy), ==, s->main_pid);
	g_assert_cmpint(pidfile_pid(c, s->pidfile), ==, s->haproxy);
	s->cgroup = prop(c, s->unit, "ControlGroup");
	g_assert_true(g_str_has_prefix(s->cgroup, "/system.slice/"));
	g_hash_table_add(s->seen, GINT_TO_POINTER(s->haproxy));
}

/* One `systemctl reload`. Type=notify: done when systemctl returns, the
 * new haproxy answering at once; historic: kill -USR2, then poll. */
static void check_reload(struct container *c, struct svc *s)
{
	gint64 t0 = g_get_monotonic_time(), dt;
	GPid old = s->haproxy, now;

	g_assert_cmpint(sctl(c, "reload", s->unit), ==, 0);
	dt = g_get_monotonic_time() - t0;
	s->reload_us_max = MAX(s->reload_us_max, dt);
	s->reload_us_sum += dt;
	s->reloads++;
	if (s->notify) {
		g_autofree gchar *text = NULL;
		GPid status_pid = 0;
		guint gen = 0;

		now = t_http_pid(s->port);
		g_assert_true(status_text(c, s->unit, &gen, &status_pid,
					  &text));
		if (now != status_pid &&
		    g_hash_table_contains(s->seen, GINT_TO_POINTER(now))) {
			/* An old generation still accepted: see
			 * test_reload_done_at_return. */
			gint64 t1 = g_get_monotonic_time();

			now = wait_serving(s->port, now);
			s->stale++;
			s->stale_us_max = MAX(s->stale_us_max,
					      g_get_monotonic_time() - t1);
			if (!s->stale_log)
				s->stale_log = g_string_new(NULL);
			g_string_append_printf(s->stale_log, "reload %u: "
					       "generation %u (pid %d) served, "
					       "the old pid answered first; ",
					       s->reloads, gen, status_pid);
		}
		if (now != status_pid)
			g_error("right after `systemctl reload` returned, "
				"pid %d answered; StatusText: %s", now, text);
		g_assert_cmpint(gen, >, s->generation);
		g_assert_nonnull(strstr(text, "last reload ok"));
		s->generation = gen;
	} else {
		now = wait_serving(s->port, old);
	}
	g_assert_cmpint(now, >, 0);
	g_assert_cmpint(now, !=, old);
	/* A new haproxy each time, never one seen before. */
	g_assert_false(g_hash_table_contains(s->seen, GINT_TO_POINTER(now)));
	g_hash_table_add(s->seen, GINT_TO_POINTER(now));
	g_assert_cmpint(prop_int(c, s->unit, "MainPID"), ==, s->main_pid);
	g_assert_cmpint(parent_of(c, now), ==, s->main_pid);
	if (s->notify)
		g_assert_cmpint(pidfile_pid(c, s->pidfile), ==, now);
	s->haproxy = now;
}

static void check_reloads(struct container *c, struct svc *s, guint n)
{
	struct t_load l;

	/* Paced, at most ~1000 requests a second: light beside the
	 * container, and within the load's bounds however long it runs. */
	t_load_start_paced(&l, s->port, 1000);
	for (guint i = 0; i < n; i++)
		check_reload(c, s);
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_assert_cmpuint(l.requests - l.failures, >=, n);
	g_test_message("%s: %u reloads, `systemctl reload` took %.1f ms on "
		       "average, %.1f ms at most", s->unit, s->reloads,
		       s->reload_us_sum / 1000.0 / MAX(s->reloads, 1),
		       s->reload_us_max / 1000.0);
	if (s->stale)
		g_test_message("%s: %u time(s) an old haproxy answered right "
			       "after `systemctl reload` returned, the new "
			       "one %.1f ms later at most: %s", s->unit,
			       s->stale, s->stale_us_max / 1000.0,
			       s->stale_log->str);
}

/* stop -> inactive, not failed; nothing left in the cgroup; port closed. */
static void check_stop(struct container *c, struct svc *s)
{
	g_assert_cmpint(sctl(c, "stop", s->unit), ==, 0);
	assert_prop(c, s->unit, "ActiveState", "inactive");
	assert_prop(c, s->unit, "SubState", "dead");
	assert_prop(c, s->unit, "Result", "success");
	assert_prop(c, s->unit, "MainPID", "0");
	/* systemd has waited for the cgroup to empty: no polling. */
	g_assert_cmpuint(processes_in(c, s->cgroup), ==, 0);
	g_assert_cmpint(t_http_pid(s->port), ==, 0);
}

/* ---- fixtures ---- */

struct fixture {
	struct container *c;
	gchar *skip;
};

static void fx_setup(struct fixture *f, gconstpointer data)
{
	f->skip = cannot_run();
	if (!f->skip)
		f->c = container_boot(data, &f->skip);
}

static void fx_teardown(struct fixture *f, gconstpointer data)
{
	g_clear_pointer(&f->c, container_free);
	g_free(f->skip);
}

static gboolean fx_ready(struct fixture *f)
{
	if (f->c)
		return TRUE;
	g_test_skip(f->skip);
	return FALSE;
}

/* The recommended unit as contrib ships it, under its upstream name (it
 * overrides Debian's haproxy.service, visible from the host's /usr). */
static void recommended(struct container *c, struct svc *s)
{
	*s = (struct svc){
		.unit = "haproxy.service",
		.pidfile = "/run/haproxy.pid",
		.port = t_free_port(),
		.notify = TRUE,
	};
	install_wrapper(c);
	install_unit(c, "haproxy.service", "haproxy.service");
	put_config(c, "/etc/haproxy/haproxy.cfg", s->port, NULL);
	g_assert_cmpint(sctl(c, "daemon-reload", NULL), ==, 0);
}

/* ---- tests ---- */

static void test_recommended(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *out = NULL;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	check_start(f->c, &s);
	/* RuntimeDirectory= is the one the wrapper derives from -p: a
	 * client without $RUNTIME_DIRECTORY finds the service. */
	g_assert_true(exists_in(f->c, "/run/" PROG "/run-haproxy/control.sock"));
	g_assert_cmpint(cexec(f->c, &out, SBIN_WRAPPER, "--status", "-p",
			      "/run/haproxy.pid", NULL), ==, 0);
	g_test_message("--status: %s", out);
	check_reloads(f->c, &s, RELOADS);
	g_assert_cmpuint(g_hash_table_size(s.seen), ==, RELOADS + 1);
	assert_prop(f->c, s.unit, "NRestarts", "0");
	/* The <N> prefixes of the wrapper's lines are journald priorities. */
	g_assert_true(journal_has(f->c, s.unit, "notice",
				  "reloading on request."));
	check_stop(f->c, &s);
	g_assert_false(exists_in(f->c, "/run/" PROG "/run-haproxy"));
	svc_clear(&s);
}

/*
 * "Reload finished when systemctl returns" taken strictly: the first
 * request after it is served by the new haproxy. The old haproxy gets its
 * soft stop together with the readiness signal and, until it has acted on
 * it, still accepts on the listening socket it shares with the new one
 * (-x); the wrapper answers --reload only once it has let go.
 */
static void test_reload_done_at_return(struct fixture *f, gconstpointer data)
{
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	check_start(f->c, &s);
	check_reloads(f->c, &s, RELOADS);
	check_stop(f->c, &s);
	if (s.stale)
		g_test_message("in %u of %u reloads an old haproxy answered the "
			       "first request after `systemctl reload` returned "
			       "(new one %.1f ms later at most): %s", s.stale,
			       s.reloads, s.stale_us_max / 1000.0,
			       s.stale_log->str);
	g_assert_cmpuint(s.stale, ==, 0);
	svc_clear(&s);
}

static void test_bad_config(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *text = NULL;
	g_autofree gchar *err = NULL;
	GPid before, pid = 0;
	guint gen = 0;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	check_start(f->c, &s);
	before = s.haproxy;
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port,
		   "    no-such-keyword\n");
	/* The reload fails, and says so; the old haproxy keeps serving. */
	g_assert_cmpint(sctl(f->c, "reload", s.unit), !=, 0);
	g_assert_cmpint(t_http_pid(s.port), ==, before);
	assert_prop(f->c, s.unit, "ActiveState", "active");
	g_assert_cmpint(prop_int(f->c, s.unit, "MainPID"), ==, s.main_pid);
	g_assert_true(status_text(f->c, s.unit, &gen, &pid, &text));
	g_test_message("StatusText after a failed reload: %s", text);
	g_assert_cmpint(pid, ==, before);
	g_assert_nonnull(strstr(text, "last reload FAILED"));
	g_assert_cmpint(pidfile_pid(f->c, s.pidfile), ==, before);
	g_assert_true(journal_has(f->c, s.unit, "err", "reload failed: "));
	/* Fixed, it reloads again. */
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	check_reload(f->c, &s);
	check_stop(f->c, &s);
	svc_clear(&s);
}

static void test_restart(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *p = NULL;
	const char *const restarted[] = {
		"NRestarts", "1", "ActiveState", "active", "SubState", "running",
		NULL,
	};
	GPid main_pid, killed;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	check_start(f->c, &s);
	main_pid = s.main_pid;
	killed = s.haproxy;
	p = g_strdup_printf("%d", killed);
	g_assert_cmpint(cexec(f->c, NULL, "kill", "-KILL", p, NULL), ==, 0);
	/* The wrapper exits 137, Restart=always brings the service back. */
	g_assert_true(wait_props(f->c, s.unit, restarted));
	s.main_pid = prop_int(f->c, s.unit, "MainPID");
	g_assert_cmpint(s.main_pid, >, 0);
	g_assert_cmpint(s.main_pid, !=, main_pid);
	s.haproxy = t_http_pid(s.port);
	g_assert_cmpint(s.haproxy, >, 0);
	g_assert_cmpint(s.haproxy, !=, killed);
	g_assert_cmpint(parent_of(f->c, s.haproxy), ==, s.main_pid);
	g_assert_true(journal_has(f->c, s.unit, "info",
				  "status=137/n/a"));
	check_reload(f->c, &s);
	check_stop(f->c, &s);
	svc_clear(&s);
}

/* WatchdogSec=: the wrapper pings while haproxy serves, through reloads;
 * a frozen wrapper is killed and the service restarted. */
static void test_watchdog(struct fixture *f, gconstpointer data)
{
	const char *const restarted[] = {
		"NRestarts", "1", "ActiveState", "active", "SubState", "running",
		NULL,
	};
	g_autofree gchar *p = NULL;
	GPid frozen;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	put_text(f->c, UNIT_DIR "/haproxy.service.d/watchdog.conf",
		 "[Service]\nWatchdogSec=2s\n");
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	check_start(f->c, &s);
	/* Three pings seen by systemd, a reload between each. */
	for (guint i = 0; i < 3; i++) {
		g_autofree gchar *t0 = prop(f->c, s.unit,
					    "WatchdogTimestampMonotonic");
		gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;

		for (;;) {
			g_autofree gchar *t = prop(f->c, s.unit,
						   "WatchdogTimestampMonotonic");

			if (!g_str_equal(t, t0))
				break;
			g_assert_cmpint(g_get_monotonic_time(), <, deadline);
			g_usleep(100 * 1000);
		}
		check_reload(f->c, &s);
	}
	assert_prop(f->c, s.unit, "NRestarts", "0");
	g_assert_cmpint(prop_int(f->c, s.unit, "MainPID"), ==, s.main_pid);
	/* Frozen: no more pings; systemd aborts it and restarts. */
	frozen = s.main_pid;
	p = g_strdup_printf("%d", frozen);
	g_assert_cmpint(cexec(f->c, NULL, "kill", "-STOP", p, NULL), ==, 0);
	g_assert_true(wait_props(f->c, s.unit, restarted));
	g_assert_true(journal_has(f->c, s.unit, "info", "Watchdog timeout"));
	s.main_pid = prop_int(f->c, s.unit, "MainPID");
	g_assert_cmpint(s.main_pid, !=, frozen);
	s.haproxy = wait_serving(s.port, 0);
	g_assert_cmpint(parent_of(f->c, s.haproxy), ==, s.main_pid);
	check_stop(f->c, &s);
	svc_clear(&s);
}

/* haproxy not found (127): RestartPreventExitStatus= keeps it down.
 * EXTRAOPTS comes from /etc/default/haproxy. */
static void test_restart_prevented(struct fixture *f, gconstpointer data)
{
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	put_text(f->c, "/etc/default/haproxy",
		 "EXTRAOPTS=\"--haproxy=/nonexistent/haproxy\"\n");
	g_assert_cmpint(sctl(f->c, "start", s.unit), !=, 0);
	assert_prop(f->c, s.unit, "ActiveState", "failed");
	assert_prop(f->c, s.unit, "Result", "exit-code");
	assert_prop(f->c, s.unit, "ExecMainStatus", "127");
	assert_prop(f->c, s.unit, "NRestarts", "0");
	g_assert_true(journal_has(f->c, s.unit, "err", "/nonexistent/haproxy"));
	/* /etc/sysconfig/haproxy, read after it, wins. */
	put_text(f->c, "/etc/sysconfig/haproxy", "EXTRAOPTS=\n");
	g_assert_cmpint(sctl(f->c, "reset-failed", s.unit), ==, 0);
	check_start(f->c, &s);
	check_stop(f->c, &s);
	svc_clear(&s);
}

/*
 * The wrapper in master-worker mode (-W from EXTRAOPTS) under the
 * recommended unit: the wrapper stays MainPID, one master below it
 * reloads in place, `systemctl reload` waits and fails like with -db, and
 * the master's own notifications never reach systemd.
 */
static void test_master_worker(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *exe = NULL;
	g_autofree gchar *text = NULL;
	GPid main_pid, master, worker, status_pid = 0;
	guint gen = 0;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	put_text(f->c, "/etc/default/haproxy", "EXTRAOPTS=\"-W\"\n");
	g_assert_cmpint(sctl(f->c, "start", s.unit), ==, 0);
	main_pid = prop_int(f->c, s.unit, "MainPID");
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	worker = t_http_pid(s.port);
	g_assert_cmpint(worker, >, 0);
	master = parent_of(f->c, worker);
	g_assert_cmpint(parent_of(f->c, master), ==, main_pid);
	g_assert_cmpint(pidfile_pid(f->c, s.pidfile), ==, master);
	for (guint i = 0; i < 5; i++) {
		GPid now;

		g_assert_cmpint(sctl(f->c, "reload", s.unit), ==, 0);
		now = t_http_pid(s.port);
		g_assert_cmpint(now, >, 0);
		g_assert_cmpint(now, !=, worker);
		g_assert_cmpint(parent_of(f->c, now), ==, master);
		worker = now;
	}
	g_assert_cmpint(prop_int(f->c, s.unit, "MainPID"), ==, main_pid);
	g_assert_true(status_text(f->c, s.unit, &gen, &status_pid, &text));
	g_test_message("StatusText: %s", text);
	g_assert_cmpint(status_pid, ==, master);
	g_assert_nonnull(strstr(text, "last reload ok"));
	/* A configuration the master refuses: the reload fails, the worker
	 * serves on. */
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port,
		   "    no-such-keyword\n");
	g_assert_cmpint(sctl(f->c, "reload", s.unit), !=, 0);
	g_assert_cmpint(t_http_pid(s.port), ==, worker);
	assert_prop(f->c, s.unit, "ActiveState", "active");
	g_assert_cmpint(prop_int(f->c, s.unit, "MainPID"), ==, main_pid);
	g_assert_true(journal_has(f->c, s.unit, "err", "reload failed: "));
	g_assert_cmpint(sctl(f->c, "stop", s.unit), ==, 0);
	assert_prop(f->c, s.unit, "ActiveState", "inactive");
	g_assert_null(t_http_get(s.port, 200));
	svc_clear(&s);
}

/*
 * The recommended unit's sandbox against a configuration shaped like
 * Debian's: a chroot, a switch to an unprivileged user, a stats socket in
 * a directory root does not own (Debian's /run/haproxy is haproxy:haproxy
 * 2775), one chowned to that user and a regex (compiled by PCRE2's JIT).
 * Reloads under load signal a haproxy that switched user (CAP_KILL: the
 * old one would keep answering), the stats sockets need CAP_DAC_OVERRIDE,
 * CAP_CHOWN and CAP_FOWNER, and MemoryDenyWriteExecute= would refuse the
 * regex. (CAP_SYS_RESOURCE cannot be tried: the test machines' own
 * bounding set lacks it.)
 */
#define NOBODY 65534
#define SANDBOX_CONFIG \
	"backend be_regex\n" \
	"    acl numbered path_reg ^/item/[0-9]+$\n" \
	"    http-request deny if numbered\n" \
	"global\n" \
	"    chroot /var/lib/haproxy\n" \
	"    uid 65534\n" \
	"    gid 65534\n" \
	"    stats socket /run/haproxy/admin.sock mode 660 level admin\n" \
	"    stats socket /run/haproxy/user.sock mode 600 uid 65534 " \
	"gid 65534 level user\n"

static void test_sandbox(struct fixture *f, gconstpointer data)
{
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	mkdir_in(f->c, "/var/lib/haproxy", 0755, 0, 0);
	mkdir_in(f->c, "/run/haproxy", 02775, NOBODY, NOBODY);
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, SANDBOX_CONFIG);
	check_start(f->c, &s);
	g_assert_cmpint(uid_of(f->c, s.haproxy), ==, NOBODY);
	g_assert_cmpint(owner_in(f->c, "/run/haproxy/admin.sock"), ==, 0);
	g_assert_cmpint(owner_in(f->c, "/run/haproxy/user.sock"), ==, NOBODY);
	check_reloads(f->c, &s, RELOADS);
	g_assert_cmpuint(s.stale, ==, 0);
	g_assert_cmpint(uid_of(f->c, s.haproxy), ==, NOBODY);
	check_stop(f->c, &s);
	svc_clear(&s);
}

/*
 * A haproxy started outside the unit (an init script's -D), with all of
 * root's capabilities, taken over by the recommended unit's wrapper, whose
 * bounding set is smaller: reading that haproxy's /proc/PID/exe and fd/
 * takes CAP_SYS_PTRACE.
 */
static void test_takeover(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *exe = NULL;
	g_autofree gchar *line = NULL;
	GPid foreign;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	g_assert_cmpint(cexec(f->c, NULL, "systemd-run", "--unit=foreign",
			      "-p", "Type=forking", "-p",
			      "PIDFile=/run/haproxy.pid", HAPROXY, "-D", "-p",
			      "/run/haproxy.pid", "-f",
			      "/etc/haproxy/haproxy.cfg", NULL), ==, 0);
	foreign = wait_serving(s.port, 0);
	g_assert_cmpint(foreign, >, 0);
	g_assert_cmpint(pidfile_pid(f->c, s.pidfile), ==, foreign);

	s.seen = g_hash_table_new(NULL, NULL);
	g_assert_cmpint(sctl(f->c, "start", s.unit), ==, 0);
	line = g_strdup_printf("taking over standalone pid %d, " HAPROXY,
			       foreign);
	g_assert_true(journal_has(f->c, s.unit, "notice", line));
	/* Soft-stopped by the new haproxy. */
	g_assert_true(wait_gone(f->c, foreign));
	s.haproxy = wait_serving(s.port, foreign);
	g_assert_cmpint(s.haproxy, >, 0);
	s.main_pid = prop_int(f->c, s.unit, "MainPID");
	exe = exe_of(f->c, s.main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	g_assert_cmpint(parent_of(f->c, s.haproxy), ==, s.main_pid);
	g_assert_cmpint(pidfile_pid(f->c, s.pidfile), ==, s.haproxy);
	s.cgroup = prop(f->c, s.unit, "ControlGroup");
	g_hash_table_add(s.seen, GINT_TO_POINTER(s.haproxy));
	g_assert_true(status_text(f->c, s.unit, &s.generation, &(GPid){ 0 },
				  NULL));
	check_reload(f->c, &s);
	check_stop(f->c, &s);
	svc_clear(&s);
}

static void test_historic(struct fixture *f, gconstpointer data)
{
	struct svc s = {
		.unit = "haproxy-historic.service",
		.pidfile = "/run/haproxy.pid",
		.port = t_free_port(),
		.notify = FALSE,
	};
	g_autofree gchar *type = NULL;

	if (!fx_ready(f))
		return;
	install_wrapper(f->c);
	install_unit(f->c, "haproxy-historic.service", s.unit);
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	type = prop(f->c, s.unit, "Type");
	g_assert_cmpstr(type, ==, "simple");
	check_start(f->c, &s);
	check_reloads(f->c, &s, RELOADS);
	g_assert_cmpuint(g_hash_table_size(s.seen), ==, RELOADS + 1);
	g_assert_cmpint(pidfile_pid(f->c, s.pidfile), ==, s.haproxy);
	assert_prop(f->c, s.unit, "NRestarts", "0");
	check_stop(f->c, &s);
	svc_clear(&s);
}

static void test_template(struct fixture *f, gconstpointer data)
{
	struct svc a = {
		.unit = "haproxy@alpha.service",
		.pidfile = "/run/haproxy-alpha.pid",
		.port = t_free_port(),
		.notify = TRUE,
	};
	struct svc b = {
		.unit = "haproxy@beta.service",
		.pidfile = "/run/haproxy-beta.pid",
		.port = t_free_port(),
		.notify = TRUE,
	};
	g_autofree gchar *out = NULL;
	GPid b_before;

	if (!fx_ready(f))
		return;
	g_assert_cmpint(a.port, !=, b.port);
	install_wrapper(f->c);
	install_unit(f->c, "haproxy@.service", "haproxy@.service");
	put_config(f->c, "/etc/haproxy/alpha.cfg", a.port, NULL);
	put_config(f->c, "/etc/haproxy/beta.cfg", b.port, NULL);
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	check_start(f->c, &a);
	check_start(f->c, &b);
	g_assert_cmpint(a.main_pid, !=, b.main_pid);
	g_assert_cmpstr(a.cgroup, !=, b.cgroup);
	/* Each its own runtime directory, reachable by its pidfile. */
	g_assert_cmpint(cexec(f->c, &out, SBIN_WRAPPER, "--status", "-p",
			      "/run/haproxy-beta.pid", NULL), ==, 0);
	g_assert_nonnull(strstr(out, " current"));
	/* Reloading one leaves the other alone. */
	b_before = b.haproxy;
	check_reloads(f->c, &a, 5);
	g_assert_cmpint(t_http_pid(b.port), ==, b_before);
	g_assert_cmpint(prop_int(f->c, b.unit, "MainPID"), ==, b.main_pid);
	check_reloads(f->c, &b, 5);
	check_stop(f->c, &a);
	g_assert_cmpint(t_http_pid(b.port), ==, b.haproxy);
	assert_prop(f->c, b.unit, "ActiveState", "active");
	check_stop(f->c, &b);
	svc_clear(&a);
	svc_clear(&b);
}

/* systemd-analyze verify on every shipped unit. systemd 252 knows neither
 * Type=notify-reload nor ReloadSignal=: those two lines, and no other, are
 * allowed for that unit (it cannot run here). */
static void test_units_verify(struct fixture *f, gconstpointer data)
{
	static const char *const units[][2] = {
		{ "haproxy.service", "haproxy.service" },
		{ "haproxy@.service", "haproxy@lint.service" },
		{ "haproxy-historic.service", "haproxy-historic.service" },
		{ "haproxy-notify-reload.service",
		  "haproxy-notify-reload.service" },
	};

	if (!fx_ready(f))
		return;
	install_wrapper(f->c);
	for (guint i = 0; i < G_N_ELEMENTS(units); i++)
		install_unit(f->c, units[i][0], units[i][0]);
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	for (guint i = 0; i < G_N_ELEMENTS(units); i++) {
		const char *const args[] = { "systemd-analyze", "verify",
					     "--man=no", units[i][1], NULL };
		gboolean nr = g_str_equal(units[i][0],
					  "haproxy-notify-reload.service");
		g_autofree gchar *out = NULL;
		g_autofree gchar *err = NULL;
		g_auto(GStrv) lines = NULL;
		guint n = 0;

		g_assert_cmpint(cexecv(f->c, 60, &out, &err, args), ==, 0);
		lines = g_strsplit(g_strstrip(err), "\n", -1);
		for (char **l = lines; *l && **l; l++, n++) {
			g_test_message("%s: %s", units[i][1], *l);
			g_assert_true(nr);
			g_assert_true(strstr(*l, "Failed to parse service "
					     "type, ignoring: notify-reload") ||
				      strstr(*l, "Unknown key 'ReloadSignal'"));
		}
		g_assert_cmpuint(n, ==, nr ? 2 : 0);
	}
	/* 252 takes it as Type=simple. */
	assert_prop(f->c, "haproxy-notify-reload.service", "Type", "simple");
}

static gchar *deb_path(void)
{
	const char *env = g_getenv("HSW_DEB");
	g_autoptr(GDir) d = NULL;
	const char *name;

	if (env)
		return g_strdup(env);
	d = g_dir_open("build/deb", 0, NULL);
	while (d && (name = g_dir_read_name(d)))
		if (g_str_has_prefix(name, PROG "_") &&
		    g_str_has_suffix(name, ".deb"))
			return g_build_filename("build/deb", name, NULL);
	return NULL;
}

/* The .deb, installed by dpkg in the container, through its own unit. */
static void test_deb(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *deb = deb_path();
	g_autofree gchar *out = NULL;
	g_autofree gchar *enabled = NULL;
	struct svc s = {
		.unit = PROG ".service",
		.pidfile = "/run/haproxy.pid",
		.port = t_free_port(),
		.notify = TRUE,
	};
	const char *const gone[] = {
		SBIN_WRAPPER, "/lib/systemd/system/" PROG ".service",
		"/usr/share/man/man8/" PROG ".8.gz", NULL,
	};

	if (!fx_ready(f))
		return;
	if (!deb || !g_file_test(deb, G_FILE_TEST_EXISTS)) {
		g_test_skip("no build/deb/" PROG "_*.deb: run make deb");
		return;
	}
	copy_in(f->c, deb, "/tmp/hsw.deb", 0644);
	g_assert_cmpint(cexec(f->c, &out, "dpkg", "-i", "/tmp/hsw.deb", NULL),
			==, 0);
	g_test_message("dpkg -i: %s", out);
	for (const char *const *p = gone; *p; p++)
		g_assert_true(exists_in(f->c, *p));
	/* Installed, neither enabled nor started: haproxy.service clashes. */
	cexec(f->c, &enabled, "systemctl", "is-enabled", s.unit, NULL);
	g_assert_cmpstr(g_strstrip(enabled), ==, "disabled");
	assert_prop(f->c, s.unit, "ActiveState", "inactive");
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	/* The test's start limit only; the unit is the package's. */
	put_text(f->c, UNIT_DIR "/" PROG ".service.d/test.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	check_start(f->c, &s);
	check_reloads(f->c, &s, 5);
	check_stop(f->c, &s);
	svc_clear(&s);
	g_assert_cmpint(cexec(f->c, NULL, "dpkg", "--purge", PROG, NULL), ==,
			0);
	for (const char *const *p = gone; *p; p++)
		g_assert_false(exists_in(f->c, *p));
}

static const struct boot plain = { .tag = "u" };
static const struct boot with_dpkg = { .tag = "deb", .dpkg = TRUE };

#define ADD(path, fn, boot) \
	g_test_add("/systemd/" path, struct fixture, &boot, fx_setup, fn, \
		   fx_teardown)

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_abort };

	g_test_init(&argc, &argv, NULL);
	/* g_assert*() abort; g_error() traps. */
	sigaction(SIGABRT, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	atexit(on_exit_teardown);

	ADD("units-verify", test_units_verify, plain);
	ADD("recommended/start-reload-stop", test_recommended, plain);
	ADD("recommended/reload-done-at-return", test_reload_done_at_return,
	    plain);
	ADD("recommended/bad-config-reload", test_bad_config, plain);
	ADD("recommended/restart-after-sigkill", test_restart, plain);
	ADD("recommended/restart-prevented", test_restart_prevented, plain);
	ADD("recommended/watchdog", test_watchdog, plain);
	ADD("recommended/master-worker", test_master_worker, plain);
	ADD("recommended/sandbox", test_sandbox, plain);
	ADD("recommended/takeover", test_takeover, plain);
	ADD("historic/start-reload-stop", test_historic, plain);
	ADD("template/two-instances", test_template, plain);
	ADD("deb/start-reload-stop", test_deb, with_dpkg);
	return g_test_run();
}
