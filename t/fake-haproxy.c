/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake-haproxy - test helper that behaves like haproxy 1.5 ... 3.x as seen
 * from outside: version banner, command line, -db / -D / -Ds modes, the
 * -sf/-st protocol (SIGTTOU retries, SIGTTIN, SIGUSR1/SIGTERM), pidfile,
 * signals, and a tiny HTTP responder.  Written from the black-box notes in
 * doc haproxy-behavior.md; no haproxy code.
 *
 * FAKE_HAPROXY_VERSION	version to emulate (default 2.6.12)
 * FAKE_HAPROXY_LOG	file to append event lines to
 *
 * Config keywords: bind, nbproc (= fake-nbproc), fake-config-error,
 * fake-load-delay-ms, fake-exit-after-ready, fake-crash-after-ready,
 * fake-master-late-handler-ms, fake-master-late-usr1-ms (after its start
 * and after each reload, SIGUSR1 keeps its default action this long: a
 * 2.5+ master re-executing itself), fake-lose-first-usr1 (the first SIGUSR1
 * is logged and ignored: a soft stop haproxy lost), fake-lose-first-term
 * (the same for SIGTERM, default action afterwards), fake-slow-release-ms
 * (a soft stop closes the listeners only this late),
 * fake-expose-listeners (then "stats socket PATH ... expose-fd listeners"
 * hands the listeners to a successor's -x PATH, by SCM_RIGHTS, not by
 * haproxy's protocol; without it the fake binds anew, SIGTTOU and all),
 * fake-setsid-gate PATH (a -D daemon waits, a minute at most, for PATH to
 * exist before its setsid(): forked, not yet in a session of its own);
 * anything else is ignored.
 *
 * -W/-Ws (>= 1.8): a master that forks the workers, reloads on SIGUSR2 or
 * SIGHUP (a fresh load of the configuration in a child: its exit status
 * is the verdict), relays stop signals, and with -Ws sends the sd_notify
 * sequences of its version to NOTIFY_SOCKET (the doc's section 9).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Under the sanitized suite, LeakSanitizer checks at exit from a task it
 * clones. The wrapper may SIGTERM a soft-stopping fake in the middle of
 * that check, like a real haproxy: the task is then reparented to the
 * test as a zombie that looks like an orphan of the wrapper. The fake's
 * leaks are not what the suite is about.
 */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
	return 1;
}

#define PROG		"fake-haproxy"
#define REQ_MAX		4096
#define BIND_RETRIES	200
#define READY_DELAY_MS	100

enum mode { MODE_FOREGROUND, MODE_DAEMON, MODE_SYSTEMD, MODE_CHECK, MODE_MASTER };

struct listener {
	struct sockaddr_in addr;
	int fd;			/* -1 while not bound */
};

struct client {
	int fd;
	size_t len;
	char buf[REQ_MAX];
};

static struct {
	const char *version;
	int major, minor;
	int log_fd;

	/* command line */
	const char **cfgs;
	int ncfgs;
	const char *pidfile;
	const char *chdir_to;
	bool quiet, foreground, daemon, systemd, check, master, notify;
	bool master_cli;	/* -S */
	const char *take_from;	/* -x */
	int final_sig;		/* SIGUSR1 for -sf, SIGTERM for -st, 0 */
	pid_t *old_pids;
	int nold;

	/* configuration */
	struct listener *lsn;
	int nlsn;
	int nbproc;
	long load_delay_ms;
	int exit_after_ready;	/* -1: never */
	bool crash_after_ready;
	bool config_error;
	long late_handler_ms;	/* master: SIGUSR2 handled only this late */
	long late_usr1_ms;	/* master: SIGUSR1 the same, after each load */
	bool lose_first_usr1;
	bool lose_first_term;
	long slow_release_ms;
	bool expose_listeners;
	char *setsid_gate;
	char *expose_path;
	int expose_fd;
} g = {
	.log_fd = -1,
	.expose_fd = -1,
	.nbproc = 1,
	.exit_after_ready = -1,
};

extern char **environ;

static bool version_before(int major, int minor)
{
	return g.major < major || (g.major == major && g.minor < minor);
}

/* ---------------------------------------------------------------- log */

static void log_event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One write() per line: several processes append to the same file. */
static void log_event(const char *fmt, ...)
{
	char *body = NULL, *line = NULL;
	va_list ap;
	int len;

	if (g.log_fd < 0)
		return;
	va_start(ap, fmt);
	len = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	len = asprintf(&line, "pid=%d %s\n", (int)getpid(), body);
	if (len >= 0 && write(g.log_fd, line, len) != len)
		fprintf(stderr, PROG ": short write to log\n");
	free(body);
	free(line);
}

static void __attribute__((noreturn)) finish(int code)
{
	log_event("exit %d", code);
	fflush(stdout);
	exit(code);
}

static void status_field(const char *field, char *out, size_t size)
{
	char line[256];
	size_t flen = strlen(field);
	FILE *f;

	snprintf(out, size, "?");
	f = fopen("/proc/self/status", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, field, flen) || line[flen] != ':')
			continue;
		snprintf(out, size, "%s", line + flen + 1 + strspn(line + flen + 1, " \t"));
		out[strcspn(out, "\n")] = '\0';
		break;
	}
	fclose(f);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Inherited descriptors, as a sorted comma-separated list. */
static void open_fds(FILE *out)
{
	int fds[1024], n = 0, i;
	struct dirent *de;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return;
	while ((de = readdir(d)) && n < (int)(sizeof(fds) / sizeof(fds[0]))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (atoi(de->d_name) != dirfd(d))
			fds[n++] = atoi(de->d_name);
	}
	closedir(d);
	qsort(fds, n, sizeof(int), cmp_int);
	for (i = 0; i < n; i++)
		fprintf(out, "%s%d", i ? "," : "", fds[i]);
}

static void haproxy_env(FILE *out)
{
	bool first = true;
	char **e;

	for (e = environ; *e; e++) {
		size_t nlen = strcspn(*e, "=");

		if (strncmp(*e, "HAPROXY_", 8) &&
		    !(nlen == 13 && !strncmp(*e, "NOTIFY_SOCKET", 13)))
			continue;
		fprintf(out, "%s%.*s", first ? "" : ",", (int)nlen, *e);
		first = false;
	}
}

/* What the process inherited, captured before we open anything ourselves. */
static void log_start(int argc, char **argv)
{
	char sigblk[64], sigign[64], *text = NULL;
	const char *path = getenv("FAKE_HAPROXY_LOG");
	size_t size;
	FILE *out;
	int i;

	if (!path || !*path)
		return;
	status_field("SigBlk", sigblk, sizeof(sigblk));
	status_field("SigIgn", sigign, sizeof(sigign));
	out = open_memstream(&text, &size);
	if (!out)
		return;
	fprintf(out, "start ppid=%d args=", (int)getppid());
	for (i = 1; i < argc; i++)
		fprintf(out, "%s%s", i > 1 ? " " : "", argv[i]);
	fprintf(out, " sigblk=%s sigign=%s fds=", sigblk, sigign);
	open_fds(out);
	fprintf(out, " env=");
	haproxy_env(out);
	fclose(out);

	g.log_fd = open(path, O_APPEND | O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (g.log_fd < 0)
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
	log_event("%s", text);
	free(text);
}

/* ------------------------------------------------------- command line */

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr, "Usage : " PROG " [-f <cfgfile>]* [ -vdVDc ] [ -db ] [ -Ds ] [ -q ]"
		" [ -p <pidfile> ] [ -C <dir> ] [ -sf/-st [pid ]* ]\n");
	finish(1);
}

static void parse_version(void)
{
	const char *v = getenv("FAKE_HAPROXY_VERSION");
	char *end;

	g.version = v && *v ? v : "2.6.12";
	g.major = strtol(g.version, &end, 10);
	if (end != g.version && *end == '.')
		g.minor = strtol(end + 1, &end, 10);
	if (g.major <= 0) {	/* unparsable: behave like the default */
		g.major = 2;
		g.minor = 6;
	}
}

static void __attribute__((noreturn)) print_version(void)
{
	if (!strcmp(g.version, "garbage"))
		printf("this is not haproxy\n");
	else if (version_before(1, 9))
		printf("HA-Proxy version %s 2017/01/01\n"
		       "Copyright 2000-2017 Willy Tarreau <willy@haproxy.org>\n\n",
		       g.version);
	else if (version_before(2, 4))
		printf("HA-Proxy version %s 2020/01/01 - https://haproxy.org/\n",
		       g.version);
	else
		printf("HAProxy version %s 2023/01/01 - https://haproxy.org/\n"
		       "Status: fake.\n", g.version);
	finish(0);
}

static pid_t parse_pid(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX)
		usage();
	return v;
}

/* -sf/-st take every following argument that does not look like a flag. */
static int parse_old_pids(int argc, char **argv, int i)
{
	while (i + 1 < argc && argv[i + 1][0] != '-') {
		g.old_pids = realloc(g.old_pids, (g.nold + 1) * sizeof(pid_t));
		if (!g.old_pids)
			abort();
		g.old_pids[g.nold++] = parse_pid(argv[++i]);
	}
	return i;
}

static void add_cfg(const char *path)
{
	g.cfgs = realloc(g.cfgs, (g.ncfgs + 1) * sizeof(char *));
	if (!g.cfgs)
		abort();
	g.cfgs[g.ncfgs++] = path;
}

/* Flags are recognised by their first letters, like haproxy does. */
static void parse_args(int argc, char **argv)
{
	int i;

	if (argc < 2)
		usage();
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		/* "--" came with 1.6: 1.5 takes it for an unknown flag. */
		if (!strcmp(a, "--") && !version_before(1, 6)) {
			while (++i < argc)
				add_cfg(argv[i]);
			break;
		}
		if (a[0] != '-' || !a[1])
			usage();
		switch (a[1]) {
		case 'v':
			print_version();
		case 'd':
			if (a[2] == 'b')
				g.foreground = true;
			break;
		case 'D':
			if (a[2] == 's')
				g.systemd = true;
			else
				g.daemon = true;
			break;
		case 'W':
			if (version_before(1, 8))
				usage();
			g.master = true;
			g.notify = g.notify || a[2] == 's';
			break;
		case 'c':
			g.check = true;
			break;
		case 'q':
			g.quiet = true;
			break;
		case 'V':
			break;
		case 's':
			if (a[2] == 'f')
				g.final_sig = SIGUSR1;
			else if (a[2] == 't')
				g.final_sig = SIGTERM;
			else
				usage();
			i = parse_old_pids(argc, argv, i);
			break;
		case 'f': case 'p': case 'C': case 'L': case 'N':
		case 'n': case 'm': case 'x': case 'S':
			/* the master CLI came with 1.9 */
			if (a[1] == 'S' && version_before(1, 9))
				usage();
			if (++i >= argc)
				usage();
			if (a[1] == 'S')
				g.master_cli = true;
			if (a[1] == 'f')
				add_cfg(argv[i]);
			else if (a[1] == 'p')
				g.pidfile = argv[i];
			else if (a[1] == 'C')
				g.chdir_to = argv[i];
			else if (a[1] == 'x')
				g.take_from = argv[i];
			break;
		default:
			usage();
		}
	}
	if (!g.ncfgs)
		usage();
	/* 3.x refuses a master CLI without a master; older ones warn. */
	if (g.master_cli && !g.master && !g.check && !version_before(3, 0)) {
		fprintf(stderr, "[ALERT] fake: a master CLI socket was "
			"defined, but master-worker mode (-W) is not "
			"enabled.\n");
		exit(1);
	}
}

/* -D (hence -Ds on >= 1.8) beats -db; -Ds is a mode of its own before 1.8. */
static enum mode pick_mode(void)
{
	if (g.check)
		return MODE_CHECK;
	if (g.master)
		return MODE_MASTER;
	if (g.systemd && version_before(1, 8))
		return MODE_SYSTEMD;
	if (g.daemon || g.systemd)
		return MODE_DAEMON;
	return MODE_FOREGROUND;
}

/* ------------------------------------------------------------- config */

static void __attribute__((noreturn)) alert(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void __attribute__((noreturn)) alert(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[ALERT] fake: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	finish(1);
}

static char *trim(char *s)
{
	char *end;

	s[strcspn(s, "#")] = '\0';
	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static long parse_num(const char *s, const char *where)
{
	char *end;
	long v;

	errno = 0;
	v = s ? strtol(s, &end, 10) : -1;
	if (!s || errno || end == s || *end || v < 0)
		alert("%s: bad number '%s'", where, s ? s : "");
	return v;
}

/* "ip:port", "*:port" or ":port"; several may be comma-separated. */
static void add_bind(char *spec, const char *where)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(spec, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(tok, ':');
		struct listener *l;
		long port;

		if (!colon)
			alert("%s: bad bind address '%s'", where, tok);
		*colon = '\0';
		port = parse_num(colon + 1, where);
		if (port > 65535)
			alert("%s: bad port '%s'", where, colon + 1);
		g.lsn = realloc(g.lsn, (g.nlsn + 1) * sizeof(*l));
		if (!g.lsn)
			abort();
		l = &g.lsn[g.nlsn++];
		memset(l, 0, sizeof(*l));
		l->fd = -1;
		l->addr.sin_family = AF_INET;
		l->addr.sin_port = htons(port);
		if (!*tok || !strcmp(tok, "*"))
			l->addr.sin_addr.s_addr = htonl(INADDR_ANY);
		else if (inet_pton(AF_INET, tok, &l->addr.sin_addr) != 1)
			alert("%s: bad IPv4 address '%s'", where, tok);
	}
}

static void parse_line(char *line, const char *where)
{
	char *save = NULL;
	char *kw = strtok_r(line, " \t", &save);
	char *arg = strtok_r(NULL, " \t", &save);

	if (!kw)
		return;
	if (!strcmp(kw, "bind")) {
		if (!arg)
			alert("%s: bind needs an address", where);
		add_bind(arg, where);
	} else if (!strcmp(kw, "fake-config-error")) {
		g.config_error = true;
	} else if (!strcmp(kw, "fake-nbproc") || !strcmp(kw, "nbproc")) {
		g.nbproc = parse_num(arg, where);
		if (g.nbproc < 1)
			alert("%s: fake-nbproc must be >= 1", where);
	} else if (!strcmp(kw, "fake-load-delay-ms")) {
		g.load_delay_ms = parse_num(arg, where);
	} else if (!strcmp(kw, "fake-exit-after-ready")) {
		g.exit_after_ready = parse_num(arg, where) & 255;
	} else if (!strcmp(kw, "fake-crash-after-ready")) {
		g.crash_after_ready = true;
	} else if (!strcmp(kw, "fake-master-late-handler-ms")) {
		g.late_handler_ms = parse_num(arg, where);
	} else if (!strcmp(kw, "fake-master-late-usr1-ms")) {
		g.late_usr1_ms = parse_num(arg, where);
	} else if (!strcmp(kw, "fake-lose-first-usr1")) {
		g.lose_first_usr1 = true;
	} else if (!strcmp(kw, "fake-lose-first-term")) {
		g.lose_first_term = true;
	} else if (!strcmp(kw, "fake-expose-listeners")) {
		g.expose_listeners = true;
	} else if (!strcmp(kw, "fake-setsid-gate")) {
		if (!arg)
			alert("%s: fake-setsid-gate needs a path", where);
		g.setsid_gate = strdup(arg);
	} else if (!strcmp(kw, "fake-slow-release-ms")) {
		g.slow_release_ms = parse_num(arg, where);
	} else if (!strcmp(kw, "stats") && arg && !strcmp(arg, "socket")) {
		char *path = strtok_r(NULL, " \t", &save);
		char *tok;

		while (path && (tok = strtok_r(NULL, " \t", &save)))
			if (!strcmp(tok, "expose-fd")) {
				free(g.expose_path);
				g.expose_path = strdup(path);
			}
	}
}

static void load_file(const char *path)
{
	char line[1024], where[PATH_MAX + 32];
	int lineno = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		alert("cannot open configuration file %s : %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		snprintf(where, sizeof(where), "%s:%d", path, ++lineno);
		parse_line(trim(line), where);
		if (g.config_error) {
			fprintf(stderr, "[ALERT] fake: parse error\n");
			finish(1);
		}
	}
	fclose(f);
}

static int is_cfg(const struct dirent *de)
{
	size_t len = strlen(de->d_name);

	return de->d_name[0] != '.' && len > 4 && !strcmp(de->d_name + len - 4, ".cfg");
}

/* A directory stands for its *.cfg files in lexical order. */
static void load_path(const char *path)
{
	struct dirent **list;
	struct stat st;
	int n, i;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		load_file(path);
		return;
	}
	n = scandir(path, &list, is_cfg, alphasort);
	if (n < 0)
		alert("cannot read configuration directory %s : %s", path, strerror(errno));
	for (i = 0; i < n; i++) {
		char *file;

		if (asprintf(&file, "%s/%s", path, list[i]->d_name) < 0)
			abort();
		load_file(file);
		free(file);
		free(list[i]);
	}
	free(list);
}

static void load_config(void)
{
	int i;

	if (g.chdir_to && chdir(g.chdir_to) < 0)
		alert("cannot change directory to %s : %s", g.chdir_to, strerror(errno));
	for (i = 0; i < g.ncfgs; i++)
		load_path(g.cfgs[i]);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	/* An interrupted sleep goes on with what is left. */
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void __attribute__((noreturn)) check_mode(void)
{
	if (!g.nlsn) {
		fprintf(stderr, "[ALERT] fake: configuration has no listener\n");
		finish(2);
	}
	if (!g.quiet)
		printf("Configuration file is valid\n");
	finish(0);
}

/* ------------------------------------------------------------ signals */

/* Handlers only queue the signal; the event loop acts on it in order. */
static volatile sig_atomic_t sigq[64];
static volatile sig_atomic_t sigq_head, sigq_tail;

static void queue_signal(int sig)
{
	int next = (sigq_tail + 1) % 64;

	if (next != sigq_head) {
		sigq[sigq_tail] = sig;
		sigq_tail = next;
	}
}

static int dequeue_signal(void)
{
	int sig;

	if (sigq_head == sigq_tail)
		return 0;
	sig = sigq[sigq_head];
	sigq_head = (sigq_head + 1) % 64;
	return sig;
}

static void handled_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGTTOU);
	sigaddset(set, SIGTTIN);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
	if (!version_before(1, 8))
		sigaddset(set, SIGUSR2);
}

/*
 * Handled signals stay blocked except inside ppoll().  SIGTERM is left as
 * inherited (normally default); so is SIGINT before 3.2, which is how an
 * ignored SIGINT leaks into real haproxy.  SIGUSR2 is left alone before 1.8
 * so that it kills the process like it did then.
 */
static void setup_signals(void)
{
	struct sigaction sa = { .sa_handler = queue_signal };
	sigset_t set;
	int sig;

	signal(SIGPIPE, SIG_IGN);
	if (!version_before(3, 2))
		signal(SIGINT, SIG_DFL);

	handled_signals(&set);
	/* Only to lose the first one: then back to the default action. */
	if (g.lose_first_term)
		sigaddset(&set, SIGTERM);
	sa.sa_mask = set;
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&set, sig) == 1)
			sigaction(sig, &sa, NULL);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* ----------------------------------------------------------- binding */

static const char *addr_str(const struct listener *l)
{
	static char buf[INET_ADDRSTRLEN + 8];
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &l->addr.sin_addr, ip, sizeof(ip));
	snprintf(buf, sizeof(buf), "%s:%u", ip, ntohs(l->addr.sin_port));
	return buf;
}

static int bind_one(struct listener *l)
{
	int one = 1, fd, err;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&l->addr, sizeof(l->addr)) < 0 ||
	    listen(fd, 1024) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	l->fd = fd;
	return 0;
}

/* Binds what is not bound yet; returns 0 or the first -errno. */
static int bind_all(void)
{
	int i, err, first = 0;

	for (i = 0; i < g.nlsn; i++) {
		if (g.lsn[i].fd >= 0)
			continue;
		err = bind_one(&g.lsn[i]);
		if (err && !first)
			first = err;
	}
	return first;
}

static void unbind_all(void)
{
	int i;

	/* Like haproxy: the stats sockets close with the listeners. */
	if (g.expose_fd >= 0)
		close(g.expose_fd);
	g.expose_fd = -1;
	for (i = 0; i < g.nlsn; i++) {
		if (g.lsn[i].fd >= 0)
			close(g.lsn[i].fd);
		g.lsn[i].fd = -1;
	}
}

/* Returns how many old pids kill() reached. */
static int tell_old_pids(int sig)
{
	int i, reached = 0;

	for (i = 0; i < g.nold; i++) {
		log_event("signalled-old SIG%s %d", sigabbrev_np(sig), (int)g.old_pids[i]);
		if (kill(g.old_pids[i], sig) == 0)
			reached++;
	}
	return reached;
}

static const char *first_unbound(void)
{
	int i;

	for (i = 0; i < g.nlsn; i++)
		if (g.lsn[i].fd < 0)
			return addr_str(&g.lsn[i]);
	return "?";
}

/* -x: the listeners of the predecessor, in configuration order. */
static void take_listeners(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char data, cbuf[CMSG_SPACE(sizeof(int) * 64)];
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd, n, i;

	if (strlen(g.take_from) >= sizeof(a.sun_path))
		alert("-x %s: path too long", g.take_from);
	strcpy(a.sun_path, g.take_from);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    recvmsg(fd, &msg, MSG_CMSG_CLOEXEC) <= 0)
		alert("failed to get the sockets from %s: %s", g.take_from,
		      strerror(errno));
	close(fd);
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		alert("no sockets from %s", g.take_from);
	n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	for (i = 0; i < n; i++) {
		int got;

		memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
		if (i < g.nlsn && g.lsn[i].fd < 0)
			g.lsn[i].fd = got;
		else
			close(got);
	}
	log_event("took %d listener(s) from %s", n, g.take_from);
}

/* The expose-fd socket, bound beside PATH and renamed over it. */
static void expose_open(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char tmp[sizeof(a.sun_path)];
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", g.expose_path,
		     (int)getpid()) >= (int)sizeof(tmp))
		alert("stats socket %s: path too long", g.expose_path);
	strcpy(a.sun_path, tmp);
	unlink(tmp);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 16) < 0 || rename(tmp, g.expose_path) < 0)
		alert("stats socket %s: %s", g.expose_path, strerror(errno));
	g.expose_fd = fd;
}

/* A successor asks: every listener, in configuration order. */
static void expose_answer(void)
{
	char data = 'L', cbuf[CMSG_SPACE(sizeof(int) * 64)];
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf };
	struct cmsghdr *cm;
	int fd, i, n = 0;

	fd = accept4(g.expose_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	memset(cbuf, 0, sizeof(cbuf));
	cm = (struct cmsghdr *)cbuf;
	for (i = 0; i < g.nlsn && n < 64; i++)
		if (g.lsn[i].fd >= 0)
			memcpy(CMSG_DATA(cm) + n++ * sizeof(int), &g.lsn[i].fd,
			       sizeof(int));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
	if (n && sendmsg(fd, &msg, MSG_NOSIGNAL) < 0)
		log_event("expose: %s", strerror(errno));
	close(fd);
}

/* Address in use: ask the old processes to pause, then try again. */
static void bind_listeners(void)
{
	int err = bind_all(), tries;

	for (tries = 0; err == -EADDRINUSE && g.nold && tries < BIND_RETRIES; tries++) {
		if (!tell_old_pids(SIGTTOU))
			break;
		sleep_ms(10);
		err = bind_all();
	}
	if (!err)
		return;
	fprintf(stderr, "[ALERT] fake: cannot bind socket\n");
	fprintf(stderr, "[ALERT] fake: %s: %s\n", first_unbound(), strerror(-err));
	unbind_all();
	if (g.nold)
		tell_old_pids(SIGTTIN);
	finish(1);
}

/* Not a fatal-on-the-spot error: the old processes must resume first. */
static int create_pidfile(void)
{
	int fd;

	if (!g.pidfile)
		return -1;
	unlink(g.pidfile);
	fd = open(g.pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "[ALERT] fake: cannot create pidfile %s : %s\n",
			g.pidfile, strerror(errno));
		unbind_all();
		if (g.nold)
			tell_old_pids(SIGTTIN);
		finish(1);
	}
	return fd;
}

static void write_pid(int fd, pid_t pid)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)pid);

	if (fd >= 0 && write(fd, buf, len) != len)
		fprintf(stderr, PROG ": short write to pidfile\n");
}

/* ------------------------------------------------------------ serving */

static struct client **clients;
static int nclients;
static bool paused, stopping;

static void add_client(int fd)
{
	struct client *c = calloc(1, sizeof(*c));

	clients = realloc(clients, (nclients + 1) * sizeof(*clients));
	if (!c || !clients)
		abort();
	c->fd = fd;
	clients[nclients++] = c;
}

static void drop_client(int i)
{
	close(clients[i]->fd);
	free(clients[i]);
	clients[i] = clients[--nclients];
}

static void accept_clients(int lfd)
{
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		add_client(fd);
}

static void respond(struct client *c)
{
	char resp[160];
	int len;

	len = snprintf(resp, sizeof(resp),
		       "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
		       "Connection: close\r\n\r\npid=%d\n", (int)getpid());
	if (write(c->fd, resp, len) < 0)
		return;	/* the client went away: nothing to do */
}

/* Returns true when the client is done with. */
static bool serve_client(struct client *c)
{
	ssize_t n = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);

	if (n < 0)
		return errno != EAGAIN && errno != EINTR;
	c->len += n;
	if (n == 0 || c->len == sizeof(c->buf) || memmem(c->buf, c->len, "\r\n\r\n", 4)) {
		respond(c);
		return true;
	}
	return false;
}

static void handle_signal(int sig)
{
	switch (sig) {
	case SIGUSR1:
		if (g.lose_first_usr1) {
			g.lose_first_usr1 = false;
			log_event("lost SIGUSR1");
			break;
		}
		if (stopping)
			break;
		stopping = true;
		/* Still accepting meanwhile: what a busy haproxy does. */
		if (g.slow_release_ms)
			sleep_ms(g.slow_release_ms);
		unbind_all();
		log_event("soft-stop");
		break;
	case SIGTERM: {
		sigset_t term;

		/* Only queued under fake-lose-first-term. */
		log_event("lost SIGTERM");
		signal(SIGTERM, SIG_DFL);
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		sigprocmask(SIG_UNBLOCK, &term, NULL);
		break;
	}
	case SIGTTOU:
		if (stopping || paused)
			break;
		paused = true;
		unbind_all();
		log_event("paused");
		break;
	case SIGTTIN:
		if (stopping || !paused)
			break;
		paused = false;
		if (bind_all())
			log_event("resume-failed");
		else
			log_event("resumed");
		break;
	default:
		log_event("ignored SIG%s", sigabbrev_np(sig));
	}
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void __attribute__((noreturn)) self_destruct(void)
{
	sigset_t set;

	if (g.exit_after_ready >= 0)
		finish(g.exit_after_ready);
	log_event("crash");
	signal(SIGSEGV, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGSEGV);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGSEGV);
	abort();
}

static int fill_pollfds(struct pollfd *pfd)
{
	int i, n = 0;

	for (i = 0; i < g.nlsn; i++)
		if (g.lsn[i].fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = g.lsn[i].fd, .events = POLLIN };
	for (i = 0; i < nclients; i++)
		pfd[n++] = (struct pollfd){ .fd = clients[i]->fd, .events = POLLIN };
	return n;
}

static void __attribute__((noreturn)) serve(void)
{
	long long deadline = -1;
	sigset_t none;
	int sig;

	if (g.exit_after_ready >= 0 || g.crash_after_ready)
		deadline = now_ms() + READY_DELAY_MS;
	if (g.expose_listeners && g.expose_path && !stopping)
		expose_open();
	sigemptyset(&none);

	for (;;) {
		struct pollfd pfd[g.nlsn + nclients + 1];
		struct timespec ts, *tsp = NULL;
		int n, i, nl, ready;

		while ((sig = dequeue_signal()))
			handle_signal(sig);
		if (stopping && !nclients)
			finish(0);
		if (deadline >= 0) {
			long long left = deadline - now_ms();

			if (left <= 0)
				self_destruct();
			ts = (struct timespec){ left / 1000, (left % 1000) * 1000000L };
			tsp = &ts;
		}

		n = fill_pollfds(pfd);
		nl = n - nclients;
		/* The expose socket last, after the clients. */
		if (g.expose_fd >= 0)
			pfd[n] = (struct pollfd){ .fd = g.expose_fd, .events = POLLIN };
		ready = ppoll(pfd, n + (g.expose_fd >= 0), tsp, &none);
		if (ready <= 0)
			continue;
		if (g.expose_fd >= 0 && pfd[n].revents)
			expose_answer();

		/*
		 * pfd holds the listeners, then the clients in array order.
		 * Clients go first, backwards, so that drop_client()'s swap
		 * and accept()'s append cannot shift an index still to visit.
		 */
		for (i = n - 1; i >= nl; i--)
			if (pfd[i].revents && serve_client(clients[i - nl]))
				drop_client(i - nl);
		for (i = 0; i < nl; i++)
			if (pfd[i].revents)
				accept_clients(pfd[i].fd);
	}
}

/* --------------------------------------------------------------- modes */

static void wait_setsid_gate(void)
{
	if (!g.setsid_gate)
		return;
	log_event("daemon waits to setsid");
	for (int i = 0; i < 6000 && access(g.setsid_gate, F_OK); i++)
		sleep_ms(10);
}

static void __attribute__((noreturn)) daemon_mode(int pidfd)
{
	int i, null;
	pid_t pid;

	fflush(NULL);
	for (i = 0; i < (version_before(1, 8) ? g.nbproc : 1); i++) {
		pid = fork();
		if (pid < 0)
			alert("fork: %s", strerror(errno));
		if (pid == 0) {
			if (pidfd >= 0)
				close(pidfd);
			wait_setsid_gate();
			setsid();
			null = open("/dev/null", O_RDWR);
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
				dup2(null, 2);
				if (null > 2)
					close(null);
			}
			serve();
		}
		write_pid(pidfd, pid);
	}
	if (pidfd >= 0)
		close(pidfd);
	finish(0);
}

/*
 * haproxy < 1.8 "-Ds": stay in the foreground waiting for the workers.
 * Waiting in waitpid() never runs the signal queue, so the control
 * signals are swallowed; TERM/INT/USR2 keep their (default) action.
 */
static void __attribute__((noreturn)) systemd_mode(int pidfd)
{
	sigset_t set;
	int i;
	pid_t pid;

	fflush(NULL);
	for (i = 0; i < g.nbproc; i++) {
		pid = fork();
		if (pid < 0)
			alert("fork: %s", strerror(errno));
		if (pid == 0) {
			if (pidfd >= 0)
				close(pidfd);
			log_event("worker");
			serve();
		}
		write_pid(pidfd, pid);
	}
	if (pidfd >= 0)
		close(pidfd);
	unbind_all();

	handled_signals(&set);
	for (i = 1; i < NSIG; i++)
		if (sigismember(&set, i) == 1)
			signal(i, SIG_IGN);
	sigprocmask(SIG_UNBLOCK, &set, NULL);

	while (wait(NULL) > 0 || errno == EINTR)
		;
	finish(0);
}

/* ------------------------------------------------------ master-worker */

static struct {
	pid_t *cur, *old;
	int ncur, nold;
	bool stopping;
	int stop_sig;
	int last_status;
} mw;

static void mw_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void mw_notify(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char *msg = NULL;
	va_list ap;
	int fd, len;

	if (!g.notify || !path || strlen(path) >= sizeof(a.sun_path))
		return;
	va_start(ap, fmt);
	len = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	strcpy(a.sun_path, path);
	if (a.sun_path[0] == '@')
		a.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && sendto(fd, msg, len, 0, (struct sockaddr *)&a,
			      sizeof(a)) == len)
		log_event("notify %s", msg);
	if (fd >= 0)
		close(fd);
	free(msg);
}

static bool has_status(void)
{
	return !version_before(2, 7);
}

static void mw_ready(bool ok)
{
	if (has_status())
		mw_notify("READY=1\nMAINPID=%d\nSTATUS=%s", (int)getpid(),
			  ok ? "Ready." : "Reload failed!");
	else
		mw_notify("READY=1\nMAINPID=%d", (int)getpid());
}

static void mw_reloading(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!version_before(3, 0))
		mw_notify("RELOADING=1\nSTATUS=Reloading Configuration.\n"
			  "MONOTONIC_USEC=%lld", ts.tv_sec * 1000000LL +
			  ts.tv_nsec / 1000);
	else if (has_status())
		mw_notify("RELOADING=1\nSTATUS=Reloading Configuration.");
	else
		mw_notify("RELOADING=1");
}

static void mw_add(pid_t **v, int *n, pid_t pid)
{
	*v = realloc(*v, (*n + 1) * sizeof(pid_t));
	if (!*v)
		abort();
	(*v)[(*n)++] = pid;
}

static bool mw_remove(pid_t *v, int *n, pid_t pid)
{
	for (int i = 0; i < *n; i++) {
		if (v[i] == pid) {
			v[i] = v[--*n];
			return true;
		}
	}
	return false;
}

static void mw_signal_all(int sig)
{
	for (int i = 0; i < mw.ncur; i++)
		kill(mw.cur[i], sig);
	for (int i = 0; i < mw.nold; i++)
		kill(mw.old[i], sig);
}

/* The workers share the master's listening sockets: none is ever closed
 * while a reload hands over, as with -x. */
static void mw_fork_workers(void)
{
	int n = version_before(2, 5) ? g.nbproc : 1;

	fflush(NULL);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			alert("fork: %s", strerror(errno));
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			g.nold = 0;
			log_event("worker");
			serve();
		}
		mw_add(&mw.cur, &mw.ncur, pid);
	}
}

/* A new image of the master loads the configuration: a child here. */
static bool mw_load_ok(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		g.nlsn = 0;
		g.config_error = false;
		load_config();
		if (g.load_delay_ms)
			sleep_ms(g.load_delay_ms);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* fake-master-late-usr1-ms: until usr1_at, SIGUSR1 kills the master. */
static long long usr1_at = -1;

static void mw_usr1_late_begin(void)
{
	sigset_t one;

	if (!g.late_usr1_ms)
		return;
	usr1_at = now_ms() + g.late_usr1_ms;
	signal(SIGUSR1, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	log_event("master: SIGUSR1 not handled");
}

/* Handled again once its time has come; set is what the loop waits for. */
static void mw_usr1_late_check(sigset_t *set)
{
	if (usr1_at < 0 || now_ms() < usr1_at)
		return;
	usr1_at = -1;
	sigaddset(set, SIGUSR1);
	sigprocmask(SIG_BLOCK, set, NULL);
	signal(SIGUSR1, queue_signal);
	log_event("master handles SIGUSR1");
}

static void mw_reload(void)
{
	log_event("master reload");
	mw_reloading();
	if (!mw_load_ok()) {
		fprintf(stderr, "[WARNING] fake: Loading failure!\n");
		if (!version_before(2, 5) && version_before(2, 7))
			mw_reloading();
		mw_ready(false);
		return;
	}
	for (int i = 0; i < mw.ncur; i++)
		mw_add(&mw.old, &mw.nold, mw.cur[i]);
	mw.ncur = 0;
	mw_fork_workers();
	for (int i = 0; i < mw.nold; i++)
		kill(mw.old[i], SIGUSR1);
	mw_usr1_late_begin();
	if (!version_before(2, 5) && version_before(2, 7))
		mw_reloading();
	mw_ready(true);
}

/* SIGTTOU/SIGTTIN reach the workers from 1.8.24 and 2.2 on. */
static bool mw_forwards_pause(void)
{
	if (g.major == 1)
		return atoi(strrchr(g.version, '.') + 1) >= 24;
	return !version_before(2, 2);
}

static void __attribute__((noreturn)) mw_exit(void)
{
	int code = 0;

	/* 1.8: the last worker's status; later: 0, or 130 after SIGINT. */
	if (!version_before(2, 0))
		code = mw.stop_sig == SIGINT ? 130 : 0;
	else if (WIFSIGNALED(mw.last_status))
		code = 128 + WTERMSIG(mw.last_status);
	else
		code = WEXITSTATUS(mw.last_status);
	finish(code);
}

static void mw_reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		mw.last_status = status;
		if (mw_remove(mw.old, &mw.nold, pid))
			continue;
		if (!mw_remove(mw.cur, &mw.ncur, pid) || mw.stopping)
			continue;
		/* exit-on-failure */
		log_event("worker %d died", (int)pid);
		mw.stopping = true;
		mw_signal_all(SIGTERM);
		while (wait(NULL) > 0)
			;
		finish(WIFSIGNALED(status) ? 128 + WTERMSIG(status)
					   : WEXITSTATUS(status));
	}
	if (mw.stopping && !mw.ncur && !mw.nold)
		mw_exit();
}

static void mw_stop(int sig)
{
	if (mw.stopping)
		return;
	mw.stopping = true;
	mw.stop_sig = sig;
	mw_notify("STOPPING=1");
	log_event("master stop %s", sigabbrev_np(sig));
	mw_signal_all(sig);
}

static void mw_handle(int sig)
{
	switch (sig) {
	case SIGUSR2:
	case SIGHUP:
		if (!mw.stopping)
			mw_reload();
		break;
	case SIGTERM:
	case SIGINT:
	case SIGUSR1:
		mw_stop(sig);
		break;
	case SIGTTOU:
	case SIGTTIN:
		if (mw_forwards_pause())
			mw_signal_all(sig);
		else
			log_event("swallowed SIG%s", sigabbrev_np(sig));
		break;
	case SIGCHLD:
		mw_reap();
		break;
	}
}

static void __attribute__((noreturn)) master_mode(int pidfd)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2, SIGHUP, SIGTERM, SIGINT,
				    SIGTTOU, SIGTTIN, SIGCHLD };
	long long handler_at = now_ms() + g.late_handler_ms;
	sigset_t set;

	write_pid(pidfd, getpid());
	if (pidfd >= 0)
		close(pidfd);
	mw_fork_workers();
	/* A pathological master that tells READY before it handles SIGUSR2:
	 * until then SIGUSR2 keeps its default action, and kills it. */
	if (g.late_handler_ms) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		signal(SIGUSR2, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
	}
	mw_usr1_late_begin();
	if (!version_before(2, 5) && version_before(2, 7))
		mw_reloading();
	mw_ready(true);
	log_event("master ready");
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	if (g.late_handler_ms)
		sigdelset(&set, SIGUSR2);
	if (usr1_at >= 0)
		sigdelset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (;;) {
		struct timespec ts = { 0, 10 * 1000000L };
		int sig;

		if (g.late_handler_ms && now_ms() >= handler_at) {
			g.late_handler_ms = 0;
			sigaddset(&set, SIGUSR2);
			sigprocmask(SIG_BLOCK, &set, NULL);
			signal(SIGUSR2, queue_signal);
			log_event("master handles SIGUSR2");
		}
		mw_usr1_late_check(&set);
		if (usr1_at >= 0)
			sigdelset(&set, SIGUSR1);
		sig = sigtimedwait(&set, NULL,
				   g.late_handler_ms || usr1_at >= 0 ? &ts : NULL);
		if (sig > 0)
			mw_handle(sig);
	}
}

int main(int argc, char **argv)
{
	enum mode mode;
	int pidfd = -1;

	log_start(argc, argv);
	parse_version();
	parse_args(argc, argv);
	mode = pick_mode();

	load_config();
	if (mode == MODE_CHECK)
		check_mode();
	if (!g.nlsn)
		alert("no listener found in the configuration (check for 'bind')");
	if (g.load_delay_ms)
		sleep_ms(g.load_delay_ms);

	setup_signals();
	if (g.take_from)
		take_listeners();
	bind_listeners();
	if (mode != MODE_FOREGROUND)
		pidfd = create_pidfile();
	log_event("bound");
	if (g.final_sig)
		tell_old_pids(g.final_sig);

	switch (mode) {
	case MODE_DAEMON:
		daemon_mode(pidfd);
	case MODE_SYSTEMD:
		systemd_mode(pidfd);
	case MODE_MASTER:
		master_mode(pidfd);
	default:
		serve();
	}
}
