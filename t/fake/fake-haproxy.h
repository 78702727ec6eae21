/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the fake haproxy share (t/fake/fake-haproxy*.c): its state,
 * set from the command line and the configuration, and what one file
 * calls in another. See t/fake/fake-haproxy.c for what it fakes.
 */
#pragma once

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PROG		"fake-haproxy"

struct listener {
	struct sockaddr_in addr;
	int fd;			/* -1 while not bound */
};

/* The process's state: the command line, then the configuration. */
struct fake {
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
	char *fork_gate;
	char *expose_path;
	int expose_fd;
	bool noreuseport;	/* the "noreuseport" keyword */
};

extern struct fake g;
extern char **environ;

/* t/fake/fake-haproxy.c: the command line and the modes */
bool version_before(int major, int minor);

/* t/fake/fake-haproxy-events.c: the event log, time, signals queued */
void log_event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void __attribute__((noreturn)) finish(int code);
void log_start(int argc, char **argv);
void sleep_ms(long ms);
long long now_ms(void);
void queue_signal(int sig);
int dequeue_signal(void);
void handled_signals(sigset_t *set);
void setup_signals(void);

/* t/fake/fake-haproxy-config.c: the configuration and its keywords */
void __attribute__((noreturn)) alert(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void load_config(void);

/* t/fake/fake-haproxy-serve.c: listeners, the -sf/-st protocol, serving */
int tell_old_pids(int sig);
void take_listeners(void);
void bind_listeners(void);
void unbind_all(void);
int create_pidfile(void);
void write_pid(int fd, pid_t pid);
void __attribute__((noreturn)) serve(void);

/* t/fake/fake-haproxy-master.c: master-worker (-W, -Ws) */
void __attribute__((noreturn)) master_mode(int pidfd);
