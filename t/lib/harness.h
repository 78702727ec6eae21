/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration test harness: runs the built wrapper with its stderr on a
 * pipe and synchronizes on real events only: a log line appearing, a
 * process exiting (pidfd), a socket answering. Every wait is bounded.
 * Everything a test starts is ended by pid in wrapper_free() and
 * t_site_clear(), or, when an assertion fails, by the one cleanup
 * t_cleanup_on_abort() registers.
 *
 * One header, one source a concern: harness-wrapper.c (the wrapper under
 * test and its log), harness-proc.c (processes: waits by pidfd, verified
 * signals, commands), harness-http.c (HTTP, load, listeners, metrics),
 * harness-files.c (directories, configurations, pidfiles), harness-site.c
 * (the fixture: struct t_site and the cleanup), harness-notify.c (a
 * NOTIFY_SOCKET: what the wrapper tells systemd).
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "t/lib/logs.h"

/* Default bound of every wait, in ms. */
#define T_WAIT 15000

typedef struct wrapper Wrapper;

struct wrapper {
	GPid pid;
	int err_fd;
	GString *partial;
	GPtrArray *lines;	/* every stderr line so far */
	guint scan;		/* wrapper_wait_log looks from here */
	gboolean reaped;
	int status;
};

/* The wrapper under test: $HSW_WRAPPER, else ./haproxy-systemd-wrapper. */
const char *t_wrapper_path(void);
/* t/: the fake haproxy and the other helpers are in t/fake/, the next
 * wrappers in t/ itself. */
const char *t_dir(void);

/* Starts wrapper_path (NULL: t_wrapper_path()) with args (NULL-terminated,
 * argv[0] excluded) and env additions "K=V" (may be NULL). */
struct wrapper *wrapper_start_at(const char *wrapper_path,
				 const char *const *args,
				 const char *const *env);
struct wrapper *wrapper_start(const char *const *args, const char *const *env);
/* wrapper_start() with setup(data) run in the child before the exec. */
struct wrapper *wrapper_start_setup(const char *const *args,
				    const char *const *env,
				    GSpawnChildSetupFunc setup, gpointer data);
/* SIGKILL every wrapper started and not freed, and all below them (from
 * an abort handler: nothing reaped), after writing its log to stderr. */
void t_kill_live_wrappers(void);

/* Wait for a line containing needle after the last matched line; returns
 * that line (owned by w) or NULL on timeout or exit. */
const char *wrapper_wait_log(struct wrapper *w, const char *needle,
			     guint timeout_ms);
/* Same, but from the start of the output. */
const char *wrapper_find_log(struct wrapper *w, const char *needle);
/* The nth (from 1) "executing" line, as read so far; NULL if none. */
const char *wrapper_executing_line(struct wrapper *w, guint n);
/* Number of lines containing needle so far. */
guint wrapper_count_log(struct wrapper *w, const char *needle);
/* Read what is available now. */
void wrapper_pump(struct wrapper *w, guint timeout_ms);

void wrapper_signal(struct wrapper *w, int sig);
/* The wait status, or -1 if still running after timeout_ms. */
int wrapper_wait_exit(struct wrapper *w, guint timeout_ms);
/* SIGKILL root (a child of ours, frozen first) and every process below
 * it, by pid; the pids below it. Usable in an abort handler. */
GArray *t_kill_tree(GPid root);
/* Kills (by pid) the wrapper and every process below it, then frees. */
void wrapper_free(struct wrapper *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Wrapper, wrapper_free)

/* "generation 3 ready: pid 1234, ..." -> 1234 for "ready", "pid " keys. */
GPid t_pid_in(const char *line, const char *key);
/* Generation N's pid, waiting for its "ready" line. 0 on timeout. */
GPid wrapper_wait_ready(struct wrapper *w, guint number, guint timeout_ms);

/* /proc/pid/file's NUL-separated strings (cmdline, environ); NULL if it
 * cannot be read. */
GStrv t_proc_strings(GPid pid, const char *file);
/* Does pid's environment set name (to anything)? */
gboolean t_environ_has(GPid pid, const char *name);
/* Every pid below root (children, grandchildren...). */
GArray *t_descendants(GPid root);
gboolean t_pid_alive(GPid pid);
/* How many descriptors pid holds now (its /proc/PID/fd entries). */
guint t_count_fds(GPid pid);
/* Wait for any process (not only a child) to end; FALSE on timeout. */
gboolean t_wait_gone(GPid pid, guint timeout_ms);

guint16 t_free_port(void);
/* Does a test program (this one included) hold a claim on port? For a
 * test that binds its own ports: one claimed is another's, or soon is. */
gboolean t_port_claimed(guint16 port);
/* GET / on 127.0.0.1:port; the body, or NULL on any failure. */
gchar *t_http_get(guint16 port, guint timeout_ms);
/* "pid=N" body -> N, or 0. */
GPid t_http_pid(guint16 port);
/* The pid a whole answer names (a 200 with "pid=N", or before 2.2 the
 * redirect to "/pid=N"), or 0. */
GPid t_http_answer_pid(const char *resp);
/* Poll until port answers (bounded); the answering pid or 0. */
GPid t_wait_serving(guint16 port, guint timeout_ms);
/* Poll (bounded) until port answers with pid; the last pid that answered
 * (an old generation may take a request or two after its successor is
 * ready). */
GPid t_wait_answered_by(guint16 port, GPid pid);
/* A connection held open (no request sent): keeps a process draining. */
int t_hold_connection(guint16 port);

/* A fresh directory under $TMPDIR (else /tmp): the temp root may be long,
 * as real paths are (make check runs a pass with an 80+ character one). */
gchar *t_tmpdir(void);
/* Removes dir, and the short directory t_short_dir() gave for it, once
 * every haproxy that names them has been ended (t_end_haproxy_naming). */
void t_rmtree(const char *dir);
/* Where a test may bind unix sockets that haproxy binds too: dir itself if
 * short enough for a runtime directory below it, else a short directory
 * below /run (or /tmp), removed with dir by t_rmtree(). Owned by the
 * harness. */
const char *t_short_dir(const char *dir);
/* A --runtime-dir for a test in dir (created, 0700): t_short_dir()/run. */
gchar *t_runtime_dir(const char *dir);
/* A real-haproxy config serving "pid=<pid>" on 127.0.0.1:port, extra
 * appended; as text, or written to dir/name. */
gchar *t_config_text(guint16 port, const char *extra);
gchar *t_write_config(const char *dir, const char *name, guint16 port,
		      const char *extra);
gchar *t_write_file(const char *dir, const char *name, const char *content);

/*
 * The real haproxy under test (t/lib/harness-haproxy.c): $HSW_TEST_HAPROXY,
 * else Debian's /usr/sbin/haproxy. Switched (another one than Debian's),
 * the site of a real-haproxy test passes it as --haproxy=.
 */
const char *t_haproxy_path(void);
gboolean t_haproxy_switched(void);
/* Is the real haproxy there? Tests skip cleanly when not. */
gboolean t_have_haproxy(void);
/* Its version ("1.5.18", "2.6.12-1+deb12u4"). */
const char *t_haproxy_version(void);
/* TRUE also when there is none: the test skips as it starts. */
gboolean t_haproxy_at_least(guint major, guint minor);
/* TRUE if it is major.minor or later; else the test is skipped with
 * why ("haproxy 1.5.18: <what> needs 1.8 or later") and FALSE. */
gboolean t_haproxy_needs(guint major, guint minor, const char *what);

/* Like wrapper_start_at(), with the wrapper run through a command prefix
 * (NULL-terminated, e.g. { "valgrind", "--tool=memcheck", NULL }) that
 * execs it in the same process: w->pid is then the wrapper's pid. */
struct wrapper *wrapper_start_prefixed(const char *const *prefix,
				       const char *const *args,
				       const char *const *env);
/* The same, with a child setup run after fork (async-signal-safe only). */
struct wrapper *wrapper_start_prefixed_setup(const char *const *prefix,
					     const char *const *args,
					     const char *const *env,
					     GSpawnChildSetupFunc setup,
					     gpointer data);

/*
 * Processes a test started that are not its children (daemons, detached
 * helpers): registered with their start time and what their executable
 * must be, and signalled only through a pidfd opened and then verified,
 * so that a reused pid never receives anything.
 */
struct t_started {
	GPid pid;
	guint64 start_time;
	/* What its executable must be: an existing absolute path (the same
	 * file, by device and inode, whatever links lead to it), else the
	 * end of its name ("/haproxy"). */
	const char *exe_suffix;
	gboolean exe_known;	/* it was, when registered: */
	dev_t exe_dev;		/* that file */
	ino_t exe_ino;
};

/* Register pid before anything is asserted about it. */
struct t_started *t_remember(GPid pid, const char *exe_suffix);
gboolean t_signal_verified(const struct t_started *p, int sig);
/* SIGTERM, then SIGKILL if it lingers; asserts it is gone. */
void t_end_started(struct t_started *p);
void t_end_all_started(void);
/* SIGKILL every registered process, verified (an abort handler's). */
void t_kill_started(void);
/* The old name of t_cleanup_on_abort(). */
void t_end_started_on_abort(void);
/* Does pid run the file at path (device and inode: links followed)? */
gboolean t_runs_file(GPid pid, const char *path);
/* SIGKILL pid through a pidfd if its executable is the file at exe_path;
 * FALSE if it was not (or is gone). */
gboolean t_kill_if_exe(GPid pid, const char *exe_path);
/* Ends (SIGKILL through a verified pidfd, bounded wait) every haproxy
 * whose command line names a path in dir and whose executable is a
 * haproxy the tests run (the one under test, Debian's, the fake) or a
 * file in dir: one a test started there and that escaped its tree (a
 * daemon, an orphan of a broken wrapper). How many. t_rmtree() runs it. */
guint t_end_haproxy_naming(const char *dir);
/* SIGKILL our own children (unreaped: no one else's), reaped or not:
 * what a wrapper orphaned, in a child-subreaper test. */
void t_kill_own_children(gboolean reap);

/* One load request on a fresh connection, closed with an RST (no
 * TIME_WAIT pile-up); NULL if answered 200 with a pid, else what went
 * wrong. */
gchar *t_request_once(guint16 port);
/* The same; *pid is the answering pid (0 on failure). */
gchar *t_request_pid(guint16 port, GPid *pid);

/* A load: one request after the other on fresh connections, in a thread,
 * counting failures and which pid answered. requests and failures stay
 * readable after t_load_finish(). */
struct t_load {
	guint16 port;
	guint pause_us;		/* between requests: 0, or t_load_start_paced() */
	GThread *thread;
	GMutex lock;
	GCond cond;
	gboolean stop;
	gboolean done;
	guint requests;
	guint failures;
	guint refused;		/* of the failures: connect() refused */
	GHashTable *answers;	/* pid -> count */
	GString *errors;	/* the first failures, for the report */
};

void t_load_start(struct t_load *l, guint16 port);
/* The same, pausing between requests: a load that runs for long beside
 * something that needs the CPU (a booted container) stays light. */
void t_load_start_paced(struct t_load *l, guint16 port, guint pause_us);
/* How many requests of the load pid has answered so far. */
guint t_load_answers(struct t_load *l, GPid pid);
/* Wait (bounded) until pid has answered n requests of the load. */
gboolean t_load_wait_answers(struct t_load *l, GPid pid, guint n);
/* Stops the load and reports it; the number of failed requests. */
guint t_load_finish(struct t_load *l);

/* A command (a client of the wrapper, say) run as a child, its output
 * collected: started, then finished within a bound. */
struct t_command {
	GPid pid;
	int out_fd;
	int err_fd;
	GString *out;
	GString *err;
	gchar *name;
};

void t_command_spawn(struct t_command *c, const char *const *argv);
/* Its output to EOF and its exit, within timeout_ms (else it is killed
 * and the test fails); its exit code. */
int t_command_finish(struct t_command *c, guint timeout_ms);
void t_command_clear(struct t_command *c);
/* Both pipes read to EOF into out and err, within deadline (monotonic,
 * us); FALSE if it passed first. */
gboolean t_read_pipes(int out_fd, int err_fd, GString *out, GString *err,
		      gint64 deadline);

/* Runs argv to its end (killed after timeout_ms, which fails the test);
 * its exit code, and what it printed (out, err may be NULL). */
int t_run_command(const char *const *argv, guint timeout_ms, gchar **out,
		  gchar **err);

/* Now plus ms, on the monotonic clock (us). */
gint64 t_deadline(guint ms);
/* What is left until deadline, in ms rounded up (a poll timeout); 0. */
int t_ms_left(gint64 deadline);
/* status (of a wait) is an exit with code. */
void t_assert_exit_code(int status, int code);
/* The state letter of /proc/pid/stat (R, S, T, Z...); 0 if gone. */
char t_proc_state(GPid pid);
/* Until pid is stopped (state T), bounded; FALSE if it never was. */
gboolean t_wait_stopped(GPid pid);

/* The wrapper as a client, `wrapper COMMAND [a [b]]` (a, b may be NULL),
 * run to its end (bounded); its exit code, what it printed. */
int t_client(const char *command, const char *a, const char *b, gchar **out,
	     gchar **err);

/* Waits (bounded) for a child to exit; its wait status, or -1. */
int t_wait_child(GPid pid, guint timeout_ms);

/* Runs a command that daemonizes (its launcher exits), in dir, output in
 * dir/launch.log; asserts that the launcher exited 0. */
void t_launch_daemon(const char *dir, const char *const *argv);

/* Bounded: until a haproxy 2.5+ master has settled in wait mode and
 * handles sig (a signal sent while it re-executes itself is lost). */
gboolean t_master_settled(GPid pid, int sig);

/* The first pid in pidfile, once it is there (bounded wait); 0 if never. */
GPid t_wait_pidfile(const char *pidfile);
/* pidfile holds pid, and only it (the wrapper writes it before it logs
 * "ready": no wait). */
void t_assert_pidfile_holds(const char *pidfile, GPid pid);

/*
 * The "signal=" lines a t/fake/sigrecorder wrote to file, once a marker sent
 * now (SIGRTMAX, to p) has been recorded: real-time signals come after
 * every standard one, and SIGRTMAX after every other real-time one, so
 * nothing sent before is still on its way.
 */
gchar *t_signals_before_marker(const char *file, const struct t_started *p);

/* t/fake/sigrecorder, writing to file: its pid once it has said it is ready
 * (bounded wait), 0 if it never did. */
GPid t_wait_recorder_ready(const char *file);
/* A sigrecorder as our child, registered (t_remember) and ready. */
struct t_started *t_start_recorder(const char *file);
/* SIGKILL it (verified) and reap it. */
void t_stop_recorder(struct t_started *p);

/* The host migrates every closing listener's queue itself
 * (net.ipv4.tcp_migrate_req=1), which would hide what the wrapper does:
 * the test is skipped, saying so. */
gboolean t_host_migrates(void);
/* A plain 127.0.0.1 listener without SO_REUSEPORT: haproxy cannot share
 * its port. */
int t_plain_listener(guint16 port);

/* The nth (from 1) line of file holding needle (and needle2, if not
 * NULL), waiting up to timeout_ms for it; NULL if it never came. */
gchar *t_wait_file_line(const char *file, const char *needle,
			const char *needle2, guint nth, guint timeout_ms);

/* Every sample of an OpenMetrics text as "name{k="v",...} value", one a
 * line, from Debian's python3-prometheus-client parser (the test fails if
 * it rejects the text); NULL where that parser is not installed. */
gchar *t_openmetrics_parsed(const char *text);
/* parsed has this sample line; the value of an unlabelled sample. */
void t_assert_sample(const char *parsed, const char *sample);
double t_sample_value(const char *parsed, const char *name);

/* ---- the fixture (harness-site.c) ---- */

/*
 * One site under test: a fresh directory, a free port, a configuration,
 * a pidfile, a runtime directory, and the wrapper. Between t_site_init()
 * and t_site_clear() a failed assertion ends everything it started.
 */
struct t_site {
	gchar *dir;
	gchar *cfg;		/* dir/haproxy.cfg */
	gchar *pidfile;		/* dir/haproxy.pid */
	gchar *rundir;		/* t_runtime_dir(dir) */
	gchar *rundir_opt;	/* "--runtime-dir=rundir" */
	gboolean with_runtime_dir; /* t_site_args passes rundir_opt; else
				    * the wrapper's own, named after the
				    * pidfile */
	gchar *haproxy;		/* --haproxy=, or NULL: the real one */
	gchar *fake_log;	/* the fake's FAKE_HAPROXY_LOG, or NULL */
	guint16 port;
	GPtrArray *env;		/* "K=V" for the wrapper, NULL-terminated */
	gboolean no_pidfile;	/* t_site_args passes no -p */
	gboolean cfg_after_dashdash; /* "-- cfg" last, instead of "-f cfg" */
	Wrapper *w;
	GPid pid;		/* the serving haproxy, for tests that follow
				 * it */
	guint generation;	/* its generation number */
};

/* Every directory t_tmpdir() gave and t_rmtree() has not removed yet:
 * with what it started, removed (an abort handler's). */
void t_rmtree_all(void);

/*
 * The one cleanup, registered once (t_site_init and every wrapper start
 * do): on SIGABRT, SIGTRAP or SIGTERM (a bound that ran out), every
 * wrapper and all below it, every registered process (verified), our own
 * children, the fakes a site's log or pidfile names (verified) are
 * killed, and every directory of t_tmpdir() removed with the haproxy
 * that still names it (t_rmtree()); then the handler that was there
 * before runs.
 */
void t_cleanup_on_abort(void);

/* Directory, port, pidfile, runtime directory; no configuration yet. */
void t_site_init(struct t_site *s);
/* With the real haproxy's configuration (extra appended); FALSE (the
 * test skipped) where there is no haproxy. */
gboolean t_site_init_real(struct t_site *s, const char *extra);
/* With t/fake/fake-haproxy, its log in dir/fake.log, its configuration
 * "bind 127.0.0.1:port" and extra. */
void t_site_init_fake(struct t_site *s, const char *extra);
/* (Re)writes the site's configuration, atomically, extra appended. */
void t_site_config(struct t_site *s, const char *extra);
void t_site_setenv(struct t_site *s, const char *key, const char *value);
/* The same, replacing key's earlier value (t_site_setenv adds one more,
 * and the first one counts): a setting changed between two starts. */
void t_site_putenv(struct t_site *s, const char *key, const char *value);
/* The wrapper's arguments: --haproxy, --runtime-dir, opts, -f, -p (or
 * opts, -p, --, the configuration). */
GPtrArray *t_site_args(struct t_site *s, const char *const *opts);
/* The wrapper at path (NULL: t_wrapper_path(); a bare name: looked up in
 * the PATH of the site's environment) on the site, as s->w. */
Wrapper *t_site_start_wrapper(struct t_site *s, const char *path,
			      const char *const *opts);
/* t_site_start_wrapper(), then generation 1 ready and answering on the
 * port: its pid, kept in s->pid. */
GPid t_site_start_serving(struct t_site *s, const char *const *opts);
/* SIGTERM: the wrapper exits 0, and nothing that ran below it is left. */
void t_site_stop(struct t_site *s);
/* Ends what the site started (by pid), removes its directory, frees it.
 * A zeroed site (a test skipped before t_site_init) is left alone. */
void t_site_clear(struct t_site *s);
typedef struct t_site TSite;
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(TSite, t_site_clear)
/* s->w's next line with needle; the test fails without it. */
const char *t_site_wait_log(struct t_site *s, const char *needle);
/* A client command (--status, --reload...) on the site's runtime
 * directory, bounded; its exit code, what it printed. */
int t_site_client(struct t_site *s, const char *command, gchar **out,
		  gchar **err);
/* t/fake/fake-haproxy. */
const char *t_fake_path(void);
/* The pids a file names ("pid=N" words, bare numbers); none if absent. */
GArray *t_pids_in_file(const char *path);

/* ---- a NOTIFY_SOCKET of our own (harness-notify.c) ---- */

struct t_notify {
	int fd;
	gchar *path;	/* NOTIFY_SOCKET's value */
	/* EXTEND_TIMEOUT_USEC= (every 10 s while haproxy loads, a matter
	 * of load) passed over by t_notify_recv(). */
	gboolean skip_extend;
};

/* Bound below t_short_dir(dir) (removed with it). */
void t_notify_open(struct t_notify *n, const char *dir);
void t_notify_clear(struct t_notify *n);
typedef struct t_notify TNotify;
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(TNotify, t_notify_clear)
/* The next datagram, or NULL if none came within timeout_ms. */
gchar *t_notify_recv(struct t_notify *n, guint timeout_ms);
/* The next datagram (bounded), which must be exactly one line a prefix
 * given, in this order (NULL-terminated): "READY=1", "STATUS=". */
gchar *t_notify_expect(struct t_notify *n, ...) G_GNUC_NULL_TERMINATED;
/* The value of key ("STATUS") in a datagram, or NULL. */
gchar *t_notify_field(const char *msg, const char *key);
