/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the takeover and adoption tests share (t/int/takeover*.c,
 * t/int/adopt*.c): a site with the real haproxy, daemons started as an
 * init script does (registered, ended by verified pid), who holds which
 * socket (/proc/net/tcp), sockets of our own, the wrapper and its status.
 */
#pragma once

#include "t/lib/foreign.h"
#include "t/lib/harness.h"

/* The haproxy the harness runs (Debian's, or $HSW_TEST_HAPROXY's build):
 * foreign instances are started from it too, so that a series runs one
 * binary throughout. */
#define HAPROXY t_haproxy_path()

/*
 * A haproxy that closes its listeners without handing them over (-x: a
 * foreign instance taken over, a restart by hand) makes the kernel reset
 * the connections still in their accept queue: a few requests at most
 * under this load, until per-group migration (SO_REUSEPORT program)
 * removes the window. Across such a close the loss is bounded; once it is
 * over, and through the wrapper's own reloads, nothing is lost.
 */
#define RESET_WINDOW_MAX 8

/* The site with the real haproxy's configuration. */
void daemon_site_init(struct t_site *s);
/* Ends the daemons registered (t_remember), then the site. */
void daemon_site_clear(struct t_site *s);
GPid start_daemon(struct t_site *s, gboolean master_worker);
GPid wait_answered_by(guint16 port, GPid pid);
GArray *tcp_inodes(guint16 lport, guint16 rport, unsigned int st);
/* The inode of socket fd, of each of n (an array of guint64). */
guint64 fd_inode(int fd);
GArray *fd_inodes(const int *fds, guint n);
/* The inodes of the sockets pid holds, as a set of guint64. */
GHashTable *held_sockets(GPid pid);
/* Does pid hold one of these socket inodes? This one? */
gboolean holds_socket(GPid pid, GArray *inodes);
gboolean holds_inode(GPid pid, guint64 inode);
/* Does pid hold every one of them? Asserted, the first it lacks named. */
gboolean holds_all(GPid pid, GArray *inodes);
void assert_holds_all(GPid pid, GArray *inodes);
gboolean listens_on(GPid pid, guint16 port);
gboolean accepted_by(GPid pid, int conn, guint16 port);
int connect_port(guint16 port);
gchar *finish_request(int fd, const char *rest, GPid *pid);
const char *wait_log_anywhere(struct wrapper *w, const char *needle);
struct wrapper *start_wrapper(struct t_site *s, const char *option,
				     const char *cfg);
/* The same with env additions ("K=V", NULL-terminated): the wrapper's
 * haproxy sees them, so that a ".if defined(K)" block of the one file it
 * shares with a foreign haproxy applies to its generations alone. */
struct wrapper *start_wrapper_env(struct t_site *s, const char *option,
				  const char *cfg, const char *const *env);
/* Configuration text only t/fake/fake-haproxy reads: the real haproxy skips
 * it (".if defined(...)" of a name never defined; the fake ignores the
 * ".if" lines). A file shared by a fake and the wrapper's real haproxy. */
#define FAKE_ONLY(text) ".if defined(HSW_TEST_FAKE_ONLY)\n" text ".endif\n"
GArray *sf_pid_list(const char *line);
void assert_first_sf(struct wrapper *w, const GPid *want, guint n);
void stop_wrapper_ok(struct wrapper *w);
gchar *run_status(struct t_site *s, const char *format);
void finish_across_reset_window(struct t_load *l);
void assert_status_foreign(struct t_site *s, GPid pid, const char *kind,
				  const char *counter);
gboolean have_haproxy(void);
/* have_haproxy(), and what the test's configuration needs of it: .if
 * blocks (2.4), lua-load (a build with Lua); else skipped, saying why. */
gboolean have_haproxy_for(gboolean conditional, gboolean lua);
int hold_request(guint16 port, GPid daemon);
GPid restart_by_hand_with(struct t_site *s, const char *cfg,
				 const char *how, gboolean master_worker);
GPid restart_by_hand(struct t_site *s, const char *how,
			    gboolean master_worker);
GPid answering_for(guint16 port, GPid gen);
GPid start_serving(struct t_site *s, const char *option,
			  struct wrapper **w);
void reload_by_client(struct t_site *s);
GPid answering_other_than(guint16 port, GPid old);
/* w says it takes standalone daemon over, with daemon alone on its first
 * -sf; then its generation 1 (not daemon) ready: that one's pid. */
void wait_taking_over(Wrapper *w, GPid daemon);
GPid wait_taken_over(Wrapper *w, GPid daemon);
/* The fake master-worker master "-W -p PIDFILE -f CFG", set up by hand
 * with extra (FAKE_ONLY(...)) in the site's one file, which the wrapper's
 * haproxy loads too (the same service), and its worker serving, both
 * registered: the master's registration, its event log in *log, the
 * worker's pid in *worker (if not NULL). */
struct t_started *fake_master_by_hand(struct t_site *s, const char *extra,
				      gchar **log, GPid *worker);
/* The wrapper's reloads lose nothing: under a fresh load answered by
 * serving, a --reload, and the next generation answering; that one. */
GPid assert_reload_loses_nothing(struct t_site *s, GPid serving);
/* A restart by hand (-sf) while w serves the site, which w adopts: the
 * new haproxy's pid. */
GPid restart_adopted(struct t_site *s, Wrapper *w);
/* "global / lua-load" configuration text whose Lua holds the haproxy
 * loading it until dir/NAME.gate exists (a minute at most), after
 * writing "held" to dir/NAME.held. */
gchar *held_config_text(const char *dir, const char *name);
/* The same, in a ".if defined(var)" block: only a haproxy whose
 * environment defines var is held; the others (the wrapper's, a restart by
 * hand) load the very same file at once. */
gchar *held_config_text_if(const char *dir, const char *name,
			   const char *var);
/* "haproxy -D -p PIDFILE -f CFG" of the site, started by hand in its
 * directory with hold_var=1 in its environment, not reaped: the
 * launcher's pid. */
GPid start_daemon_by_hand(struct t_site *s, const char *hold_var);
/* The variable that holds a launcher started by hand (see above). */
#define HOLD_VAR "HSW_TEST_HOLD"
