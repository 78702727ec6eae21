/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A real systemd in a container, for the tests: see t/container/container.h. */
#include "t/container/container.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/harness.h"

/* ---- commands, bounded ---- */

static int wait_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* In the command's child before exec: a process group of its own, which
 * a timeout ends whole (nsenter forks what it runs). */
static void own_group(gpointer data)
{
	setpgid(0, 0);
}

/* argv, bounded as timeout(1) -k 5 bounds it (past timeout_s its process
 * group gets SIGTERM, SIGKILL 5 s later, and the code is 124), without
 * timeout's own process: the wait loops run a command every few tens of
 * milliseconds, and a third process each was a fifth of their cost.
 * The exit code, stdout and stderr. */
int run_argv(const char *const *argv, guint timeout_s, gchar **out,
	     gchar **err)
{
	gint64 deadline = g_get_monotonic_time() + timeout_s * G_USEC_PER_SEC;
	g_autoptr(GString) o = g_string_new(NULL);
	g_autoptr(GString) e = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	gboolean in_time;
	int out_fd, err_fd, status;
	GPid pid;

	if (!g_spawn_async_with_pipes(NULL, (char **)argv, NULL,
				      G_SPAWN_DO_NOT_REAP_CHILD |
				      G_SPAWN_SEARCH_PATH, own_group, NULL,
				      &pid, NULL, &out_fd, &err_fd, &error))
		g_error("cannot run %s: %s", argv[0], error->message);
	in_time = t_read_pipes(out_fd, err_fd, o, e, deadline);
	close(out_fd);
	close(err_fd);
	status = in_time ? t_wait_child(pid, MAX((deadline -
		g_get_monotonic_time()) / 1000, 1)) : -1;
	if (status == -1) {
		kill(-pid, SIGTERM);
		status = t_wait_child(pid, 5000);
		if (status == -1) {
			kill(-pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		status = 124 << 8;
	}
	if (out)
		*out = g_strdup(o->str);
	if (err)
		*err = g_strdup(e->str);
	return wait_code(status);
}

void poll_pause(guint *ms)
{
	if (*ms < POLL_FIRST_MS)
		*ms = POLL_FIRST_MS;
	g_usleep(*ms * 1000);
	*ms = MIN(*ms * 2, POLL_MAX_MS);
}

/* ---- containers ---- */

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

	/* Back to the test's own network first: the next container (and
	 * t/container/trixie-tree's download) starts from there. */
	if (c->host_netns >= 0) {
		if (setns(c->host_netns, CLONE_NEWNET) < 0)
			g_printerr("# setns back: %s\n", g_strerror(errno));
		close(c->host_netns);
		c->host_netns = -1;
	}
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

void container_free(struct container *c)
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

void container_handlers_install(void)
{
	struct sigaction sa = { .sa_handler = on_abort };

	/* g_assert*() abort; g_error() traps. */
	sigaction(SIGABRT, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	atexit(on_exit_teardown);
}

/* Why no container can run here, or NULL. */
gchar *cannot_run(void)
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

int cexecv(struct container *c, guint timeout_s, gchar **out,
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
int cexec(struct container *c, gchar **out,
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

/* This thread (and what it starts from now on: the load's thread, the
 * probes) into the container's network namespace, 127.0.0.1 there. */
static void enter_netns(struct container *c)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/ns/net", c->pid1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	g_assert_cmpint(fd, >=, 0);
	c->host_netns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	g_assert_cmpint(c->host_netns, >=, 0);
	g_assert_cmpint(setns(fd, CLONE_NEWNET), ==, 0);
	close(fd);
}

/* What both systemds (252 on the host's root, 257 in the Debian 13 tree)
 * start at boot and no test uses: logins, D-Bus (systemctl as root speaks
 * to PID 1's private socket), consoles, the journal's flush to /var (the
 * journal in /run is read the same), the caches a fresh overlay rebuilds
 * (ldconfig: the tree's cache is the one debootstrap wrote) and the
 * daily timers. Masked on the command line systemd reads, they cost
 * neither their start nor their stop: a boot takes a third less CPU. */
static const char *const not_needed[] = {
	"systemd-logind.service",
	"dbus.socket",
	"dbus.service",
	"systemd-user-sessions.service",
	"systemd-update-utmp.service",
	"systemd-update-utmp-runlevel.service",
	"getty.target",
	"systemd-ask-password-console.path",
	"systemd-ask-password-wall.path",
	"systemd-initctl.socket",
	"systemd-hostnamed.socket",
	"systemd-creds.socket",
	"systemd-sysext.socket",
	"dev-hugepages.mount",
	"sys-fs-fuse-connections.mount",
	"systemd-journal-flush.service",
	"systemd-journal-catalog-update.service",
	"systemd-update-done.service",
	"ldconfig.service",
	"systemd-pstore.service",
	"e2scrub_reap.service",
	"systemd-tmpfiles-clean.timer",
	"apt-daily.timer",
	"apt-daily-upgrade.timer",
	"dpkg-db-backup.timer",
	"fstrim.timer",
};

struct container *container_boot(const struct boot *b, gchar **skip)
{
	g_autoptr(GPtrArray) roots = cgroup_roots();
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) error = NULL;
	struct container *c = g_new0(struct container, 1);
	g_autofree gchar *upper = NULL;
	g_autofree gchar *state = NULL;
	const char *tree = NULL;
	gint64 deadline;
	int devnull, logfd;

	if (b->tree && !(tree = b->tree(skip))) {
		g_free(c);
		return NULL;
	}
	c->host_netns = -1;
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
	if (tree) {
		/* Its own /usr and /etc; every write goes to a tmpfs. */
		g_ptr_array_add(argv, g_strdup(tree));
		g_ptr_array_add(argv, g_strdup("--volatile=overlay"));
	} else {
		g_ptr_array_add(argv, g_strdup("/"));
		g_ptr_array_add(argv, g_strdup("--volatile=yes"));
		g_ptr_array_add(argv, g_strdup_printf("--overlay=/usr:%s:/usr",
						      upper));
	}
	g_ptr_array_add(argv, g_strdup("--register=no"));
	g_ptr_array_add(argv, g_strdup("--keep-unit"));
	g_ptr_array_add(argv, g_strdup_printf("--machine=%s", c->name));
	g_ptr_array_add(argv, g_strdup("--console=pipe"));
	g_ptr_array_add(argv, g_strdup("--link-journal=no"));
	if (b->private_net)
		g_ptr_array_add(argv, g_strdup("--private-network"));
	if (b->dpkg) {
		/* The host's database under an overlay, as /usr: what dpkg
		 * writes goes to a directory of ours, the host's stays as it
		 * is. A copy of the whole (some 40 MB in thousands of files)
		 * and its removal cost seconds of disk a boot. */
		g_autofree gchar *db = g_build_filename(c->tmp, "dpkg", NULL);
		g_autofree gchar *so = g_build_filename(db, "statoverride",
							NULL);

		g_assert_cmpint(g_mkdir(db, 0755), ==, 0);
		/* Its users and groups (ssl-cert...) are not in the
		 * container's fresh /etc: dpkg would refuse to run. */
		g_assert_true(g_file_set_contents(so, "", 0, NULL));
		/* Its mount point's parents: nspawn makes only the last. */
		g_ptr_array_add(argv, g_strdup("--tmpfs=/var/lib"));
		g_ptr_array_add(argv, g_strdup_printf(
			"--overlay=/var/lib/dpkg:%s:/var/lib/dpkg", db));
	}
	g_ptr_array_add(argv, g_strdup("--boot"));
	g_ptr_array_add(argv, g_strdup("systemd.condition-first-boot=false"));
	g_ptr_array_add(argv, g_strdup("systemd.firstboot=off"));
	for (guint i = 0; i < G_N_ELEMENTS(not_needed); i++)
		g_ptr_array_add(argv, g_strdup_printf("systemd.mask=%s",
						      not_needed[i]));
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
	if (b->private_net)
		enter_netns(c);
	return c;
}

/* ---- the Debian 13 tree ---- */

const char *trixie_tree(gchar **skip)
{
	static gchar *tree, *why;

	if (!tree && !why) {
		const char *const argv[] = { "t/container/trixie-tree", NULL };
		g_autofree gchar *out = NULL;
		g_autofree gchar *err = NULL;
		int code = run_argv(argv, 900, &out, &err);

		if (code == 0 && out && *g_strstrip(out))
			tree = g_strdup(out);
		else
			why = g_strdup_printf("no Debian 13 tree: %s",
					      err && *err ? g_strstrip(err) :
					      "t/container/trixie-tree failed");
	}
	if (!tree)
		*skip = g_strdup(why);
	return tree;
}
