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
 * exist before its setsid(): forked, not yet in a session of its own),
 * fake-fork-gate PATH (a -Ds parent before 1.8, its -sf pids signalled,
 * waits, a minute at most, for PATH to exist before it forks the workers);
 * anything else is ignored.
 *
 * FAKE_HAPROXY_SETSID_GATE=PATH in the environment does what
 * fake-setsid-gate does, and FAKE_HAPROXY_LAUNCH_GATE=PATH holds a -D
 * launcher before it forks (still loading): for one process of several
 * that load the same configuration.
 *
 * -W/-Ws (>= 1.8): a master that forks the workers, reloads on SIGUSR2 or
 * SIGHUP (a fresh load of the configuration in a child: its exit status
 * is the verdict), relays stop signals, and with -Ws sends the sd_notify
 * sequences of its version to NOTIFY_SOCKET (the doc's section 9).
 *
 * One program in several files (t/fake/), what they share in
 * fake-haproxy.h: the command line and the modes here, the event log and
 * signals in fake-haproxy-events.c, the configuration in
 * fake-haproxy-config.c, listeners and serving in fake-haproxy-serve.c,
 * master-worker in fake-haproxy-master.c.
 */
#include "fake-haproxy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

enum mode { MODE_FOREGROUND, MODE_DAEMON, MODE_SYSTEMD, MODE_CHECK, MODE_MASTER };

struct fake g = {
	.log_fd = -1,
	.expose_fd = -1,
	.nbproc = 1,
	.exit_after_ready = -1,
};

bool version_before(int major, int minor)
{
	return g.major < major || (g.major == major && g.minor < minor);
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
			/* 1.5 takes -sf/-st only as its last arguments. */
			if (version_before(1, 6) && i + 1 < argc)
				usage();
			break;
		case 'f': case 'p': case 'C': case 'L': case 'N':
		case 'n': case 'm': case 'x': case 'S':
			/* the master CLI came with 1.9, -x with 1.8 */
			if (a[1] == 'S' && version_before(1, 9))
				usage();
			if (a[1] == 'x' && version_before(1, 8))
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
	/* 3.x refuses a master CLI without a master, even to check a
	 * configuration; older ones warn. */
	if (g.master_cli && !g.master && !version_before(3, 0)) {
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

/* --------------------------------------------------------------- modes */

/* Until path exists, a minute at most. */
static void wait_gate(const char *path)
{
	for (int i = 0; i < 6000 && access(path, F_OK); i++)
		sleep_ms(10);
}

static void wait_setsid_gate(void)
{
	const char *env = getenv("FAKE_HAPROXY_SETSID_GATE");
	const char *gate = env && *env ? env : g.setsid_gate;

	if (!gate)
		return;
	log_event("daemon waits to setsid");
	wait_gate(gate);
}

static void wait_launch_gate(void)
{
	const char *gate = getenv("FAKE_HAPROXY_LAUNCH_GATE");

	if (!gate || !*gate)
		return;
	log_event("launcher waits to fork");
	wait_gate(gate);
}

static void __attribute__((noreturn)) daemon_mode(int pidfd)
{
	int i, null;
	pid_t pid;

	wait_launch_gate();
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

	if (g.fork_gate) {
		log_event("parent waits to fork");
		wait_gate(g.fork_gate);
	}
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
