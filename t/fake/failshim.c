/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * failshim.so - an LD_PRELOAD shim that makes system calls fail on demand,
 * for t/int/faults. Inert unless the process runs the executable named by
 * FAILSHIM_EXE (a basename, default haproxy-systemd-wrapper), so that the
 * haproxy children that inherit LD_PRELOAD are never touched.
 *
 * FAILSHIM_CONTROL	a file the test rewrites at any time; every call
 *			reads it, and fails when its token is listed:
 *   fork		fork(): EAGAIN (what RLIMIT_NPROC gives)
 *   spawn-fork		only a fork() that GLib makes (g_spawn*)
 *   pipe2		pipe(), pipe2(): EMFILE
 *   spawn-pipe2	only a pipe2() that GLib makes (g_spawn*)
 *   signalfd		signalfd(): EMFILE
 *   execve		execve(), execv(): EACCES
 *   self-execv		execv() only: the wrapper's self re-exec, not
 *			GLib's spawns: EACCES
 *   tmp-write		write() to a ".NAME.tmp" file (how the runtime
 *			directory's files are written): ENOSPC
 *   tmp-open-eacces	openat() of a ".NAME.tmp" file: EACCES
 *   tmp-open-erofs	the same: EROFS
 *   control-bind	bind() of a socket named control.sock: EROFS
 *   short-10s-timer	not a failure: g_timeout_add() of 10 s (the version
 *			probe's time limit) made 1.5 s, so that a test sees
 *			a probe that never answers time out sooner
 *   dlopen-libsystemd	dlopen() of libsystemd.so.0 run with no descriptor
 *			to spare (RLIMIT_NOFILE 0 for the call): it fails
 *			as it would with EMFILE, its own dlerror()
 * FAILSHIM_LOG		a file to which "<pid> <token>" is appended for each
 *			failure injected, so that a test knows it happened.
 *
 * execve() is also called in a child between fork and exec: what it runs
 * (listed(), note()) is async-signal-safe, raw system calls and string
 * functions; the backtrace behind "spawn-*" is only taken for fork() and
 * pipe2().
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEFAULT_EXE "haproxy-systemd-wrapper"

static bool active;
static const char *control;
static const char *logpath;

/* Resolved before main(): dlsym() is not safe between fork and exec. */
static pid_t (*real_fork)(void);
static int (*real_pipe)(int[2]);
static int (*real_pipe2)(int[2], int);
static int (*real_signalfd)(int, const sigset_t *, int);
static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execv)(const char *, char *const[]);
static int (*real_openat)(int, const char *, int, ...);
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static void *(*real_dlopen)(const char *, int);
/* GLib's; NULL in a process without it. */
static unsigned int (*real_g_timeout_add)(unsigned int, int (*)(void *),
					  void *);

static void resolve(void)
{
	real_fork = dlsym(RTLD_NEXT, "fork");
	real_pipe = dlsym(RTLD_NEXT, "pipe");
	real_pipe2 = dlsym(RTLD_NEXT, "pipe2");
	real_signalfd = dlsym(RTLD_NEXT, "signalfd");
	real_execve = dlsym(RTLD_NEXT, "execve");
	real_execv = dlsym(RTLD_NEXT, "execv");
	real_openat = dlsym(RTLD_NEXT, "openat");
	real_write = dlsym(RTLD_NEXT, "write");
	real_bind = dlsym(RTLD_NEXT, "bind");
	real_dlopen = dlsym(RTLD_NEXT, "dlopen");
	real_g_timeout_add = dlsym(RTLD_NEXT, "g_timeout_add");
}

static void __attribute__((constructor)) failshim_init(void)
{
	const char *want = getenv("FAILSHIM_EXE");
	void *frames[1];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *base;

	resolve();
	/* Loads the unwinder now, not at the first injected call. */
	backtrace(frames, 1);
	control = getenv("FAILSHIM_CONTROL");
	logpath = getenv("FAILSHIM_LOG");
	if (n <= 0 || !control)
		return;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	active = strcmp(base, want && *want ? want : DEFAULT_EXE) == 0;
}

/* Is token listed, as a whole word, in the control file? */
static bool listed(const char *token)
{
	char buf[512];
	size_t len = strlen(token);
	ssize_t n;
	int fd;

	if (!active)
		return false;
	fd = syscall(SYS_openat, AT_FDCWD, control, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *p = buf; (p = strstr(p, token)); p += len) {
		bool starts = p == buf || strchr(" \t\n", p[-1]);
		bool ends = !p[len] || strchr(" \t\n", p[len]);

		if (starts && ends)
			return true;
	}
	return false;
}

/* "<pid> <token>\n", without stdio. */
static int format_note(char *line, const char *token)
{
	char digits[16];
	int pid = getpid(), nd = 0, len = 0;

	do {
		digits[nd++] = '0' + pid % 10;
		pid /= 10;
	} while (pid);
	while (nd)
		line[len++] = digits[--nd];
	line[len++] = ' ';
	for (const char *t = token; *t && len < 40; t++)
		line[len++] = *t;
	line[len++] = '\n';
	return len;
}

static void note(const char *token)
{
	char line[64];
	int len, fd;

	if (!logpath)
		return;
	len = format_note(line, token);
	fd = syscall(SYS_openat, AT_FDCWD, logpath,
		     O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (syscall(SYS_write, fd, line, len) != len)
		errno = 0;	/* nothing to do: the note is best effort */
	syscall(SYS_close, fd);
}

/* Fail with err when token is listed: -1 and errno, as the call would. */
static bool inject(const char *token, int err)
{
	int saved = errno;

	if (!listed(token)) {
		errno = saved;
		return false;
	}
	note(token);
	errno = err;
	return true;
}

/*
 * Was the call made by GLib (g_spawn*), not by the wrapper's own code? The
 * first frame that is neither this shim nor a sanitizer's interceptor of
 * the same call decides. Never called between fork and exec.
 */
static bool from_glib(const char *call)
{
	void *frames[8];
	int n = backtrace(frames, 8);

	for (int i = 1; i < n; i++) {
		Dl_info info;

		if (!dladdr(frames[i], &info) || !info.dli_fname)
			return false;
		if (strstr(info.dli_fname, "failshim"))
			continue;
		if (info.dli_sname &&
		    (strstr(info.dli_sname, "interceptor_") ||
		     strcmp(info.dli_sname, call) == 0))
			continue;
		return strstr(info.dli_fname, "libglib-2.0") != NULL;
	}
	return false;
}

pid_t fork(void)
{
	if (inject("fork", EAGAIN))
		return -1;
	if (listed("spawn-fork") && from_glib("fork") &&
	    inject("spawn-fork", EAGAIN))
		return -1;
	return real_fork();
}

int pipe(int fds[2])
{
	if (inject("pipe2", EMFILE))
		return -1;
	return real_pipe(fds);
}

int pipe2(int fds[2], int flags)
{
	if (inject("pipe2", EMFILE))
		return -1;
	if (listed("spawn-pipe2") && from_glib("pipe2") &&
	    inject("spawn-pipe2", EMFILE))
		return -1;
	return real_pipe2(fds, flags);
}

int signalfd(int fd, const sigset_t *mask, int flags)
{
	if (inject("signalfd", EMFILE))
		return -1;
	return real_signalfd(fd, mask, flags);
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	if (inject("execve", EACCES))
		return -1;
	return real_execve(path, argv, envp);
}

int execv(const char *path, char *const argv[])
{
	if (inject("execve", EACCES) || inject("self-execv", EACCES))
		return -1;
	return real_execv(path, argv);
}

static bool is_control_sock(const char *path)
{
	const char *base = strrchr(path, '/');

	return strcmp(base ? base + 1 : path, "control.sock") == 0;
}

/* ".NAME.tmp", the last component of path: a file being written. */
static bool is_tmp_name(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	return base[0] == '.' && len > 5 && strcmp(base + len - 4, ".tmp") == 0;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (active && is_tmp_name(path) &&
	    (inject("tmp-open-eacces", EACCES) ||
	     inject("tmp-open-erofs", EROFS)))
		return -1;
	return real_openat(dirfd, path, flags, mode);
}

/* "/proc/self/fd/<fd>", without stdio: write() runs between fork and
 * exec too. */
static void fd_link(char link[32], int fd)
{
	char digits[12];
	int nd = 0, len = strlen("/proc/self/fd/");

	memcpy(link, "/proc/self/fd/", len);
	do {
		digits[nd++] = '0' + fd % 10;
		fd /= 10;
	} while (fd);
	while (nd)
		link[len++] = digits[--nd];
	link[len] = '\0';
}

ssize_t write(int fd, const void *buf, size_t len)
{
	char link[32], path[PATH_MAX];
	ssize_t n;

	if (active && fd > 2 && listed("tmp-write")) {
		fd_link(link, fd);
		n = readlink(link, path, sizeof(path) - 1);
		if (n > 0) {
			path[n] = '\0';
			if (is_tmp_name(path) && inject("tmp-write", ENOSPC))
				return -1;
		}
	}
	return real_write(fd, buf, len);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)addr;

	if (active && addr->sa_family == AF_UNIX &&
	    is_control_sock(un->sun_path) && inject("control-bind", EROFS))
		return -1;
	return real_bind(fd, addr, len);
}

/* The real load, with no descriptor to open the library with. */
static void *dlopen_without_fds(const char *file, int flags)
{
	struct rlimit saved, none = { 0, 0 };
	void *h;

	if (getrlimit(RLIMIT_NOFILE, &saved) < 0)
		return real_dlopen(file, flags);
	none.rlim_max = saved.rlim_max;
	setrlimit(RLIMIT_NOFILE, &none);
	h = real_dlopen(file, flags);
	setrlimit(RLIMIT_NOFILE, &saved);
	return h;
}

void *dlopen(const char *file, int flags)
{
	/* Called before our constructor ran: resolved now. */
	if (!real_dlopen)
		real_dlopen = dlsym(RTLD_NEXT, "dlopen");
	if (file && strcmp(file, "libsystemd.so.0") == 0 &&
	    listed("dlopen-libsystemd")) {
		note("dlopen-libsystemd");
		return dlopen_without_fds(file, flags);
	}
	return real_dlopen(file, flags);
}

#define TEN_S_MS 10000
#define SHORT_MS 1500

unsigned int g_timeout_add(unsigned int interval, int (*fn)(void *),
			   void *data);
unsigned int g_timeout_add(unsigned int interval, int (*fn)(void *),
			   void *data)
{
	if (interval == TEN_S_MS && listed("short-10s-timer")) {
		note("short-10s-timer");
		interval = SHORT_MS;
	}
	return real_g_timeout_add(interval, fn, data);
}
