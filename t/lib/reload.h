/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the reload tests share (t/int/reload*.c): a site on the fixture
 * with its runtime directory passed (clients use it), the reload and
 * status clients, idle connections that keep a generation draining, a
 * fake NOTIFY_SOCKET, raw control connections.
 */
#pragma once

#include "t/lib/harness.h"


/* Exit codes of the client commands. */
#define CLIENT_OK		0
#define CLIENT_FAILED		1

/* Long timeouts: an idle connection keeps its generation draining past
 * every bound of these tests, unless the wrapper ends it. A later global
 * section overrides the harness's hard-stop-after. */
#define LONG_DRAIN "    timeout client 120s\n" \
		   "    timeout http-request 120s\n" \
		   "global\n" \
		   "    hard-stop-after 120s\n"

#define BROKEN "    no-such-keyword here\n"

/* The wrapper's options, NULL-terminated, for t_site_start_serving(). */
#define OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* A failed check with a message, the way g_assert fails (abort). */
void G_GNUC_NORETURN G_GNUC_PRINTF(3, 4)
reload_fail_at(int line, const char *func, const char *fmt, ...);
#define fail(...) reload_fail_at(__LINE__, G_STRFUNC, __VA_ARGS__)

/* g_test_init(), and no systemd variable of our own passed on: each test
 * decides what the wrapper sees. */
void reload_tests_init(int *argc, char ***argv);

/* The site with the real haproxy (FALSE: skipped) or t/fake/fake-haproxy,
 * the wrapper given --runtime-dir. */
gboolean reload_site_init(struct t_site *s, const char *extra);
void reload_site_init_fake(struct t_site *s, const char *extra);

/* A restart by hand ("haproxy -D ... -sf PID", t/lib/takeover.c) that
 * the wrapper adopts: the new haproxy's pid, registered. */
GPid restart_by_hand_adopted(struct t_site *s);

/* An idle connection pid has accepted: keeps it draining after a reload. */
int hold_on(guint16 port, GPid pid);

/* ---- a fake NOTIFY_SOCKET ---- */

typedef struct t_notify Notify;	/* t/lib/harness.h, skip_extend off */

/* Bound below the site's directory, named in the site's environment. */
void notify_open(Notify *n, struct t_site *s);
void notify_clear(Notify *n);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Notify, notify_clear)
/* The next datagram, or NULL if none came within timeout_ms. */
gchar *notify_recv(Notify *n, guint timeout_ms);
/* msg is exactly lines starting with these prefixes, in order. */
void G_GNUC_NULL_TERMINATED assert_fields(const char *msg, ...);
/* READY=1 with a STATUS=; the datagram. */
gchar *expect_ready(Notify *n, guint timeout_ms);
/* RELOADING=1 with a MONOTONIC_USEC= of this boot's CLOCK_MONOTONIC. */
void expect_reloading(Notify *n);

/* ---- clients ---- */

typedef struct t_command Client;
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Client, t_command_clear)

/* `wrapper COMMAND --runtime-dir=... [extra]`, started. */
void client_spawn(Client *c, const char *rundir_opt, const char *command,
		  const char *extra);
/* "ok generation N (pid P) serving": P, checking N if not 0. */
GPid serving_pid_in(const char *out, guint number);
/* `--reload` (or `--hard-reload`) exits 0 once generation number serves,
 * a new child of the same wrapper, in the pidfile: its pid, in s->pid. */
GPid reload_client(struct t_site *s, const char *command, guint number);
/* The same, and port answers with its pid (polled, bounded). */
GPid reload_serving(struct t_site *s, const char *command, guint number);
/* `--status [extra]`, which must exit 0: what it printed. */
gchar *client_status(struct t_site *s, const char *extra);
/* The `--status` line about generation number, or NULL. */
gchar *status_line(const char *text, guint number);
/* That line names pid, and the state ("current", "draining", "failed"). */
void assert_status_gen(const char *text, guint number, GPid pid,
		       const char *state);
/* `--status` answers, from the wrapper of pid wrapper. */
void assert_status_of(struct t_site *s, GPid wrapper);
void assert_running(struct t_site *s);

/* ---- raw control connections, for what the client never sends ---- */

int ctl_connect(const char *rundir);
void ctl_send(int fd, const void *data, gsize len);
/* The answer up to the wrapper's close; NULL if none within timeout_ms. */
gchar *ctl_read(int fd, guint timeout_ms);
gchar *ctl_ask(const char *rundir, const void *data, gsize len);
