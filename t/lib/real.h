/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the real-haproxy tests share (t/int/real-*.c): the site of
 * t/lib/harness.h served by the real haproxy, reloaded and stopped by
 * signals, with what each step must leave behind (who serves, who is a
 * child of whom, the pidfile, nothing left after a stop).
 */
#pragma once

#include "t/lib/harness.h"
/* Its probes of sockets and answers: wait_answered_by, accepted_by. */
#include "t/lib/takeover.h"

/* Is pid alive and the real haproxy? */
gboolean real_is_haproxy(GPid pid);
/* How many real haproxy processes are below root. */
guint real_count_haproxy_below(GPid root);
/* LOG_RELOADING_ON_FMT for sig. */
gchar *real_reloading_line(int sig);

/* The process of s->pid's generation that serves and that the pidfile
 * names: s->pid itself, or before 1.8 the worker that s->pid (-Ds)
 * forked. */
GPid real_worker(struct t_site *s);
/* How many haproxy processes one serving generation is: 1, or 2 before
 * 1.8 (the -Ds parent and its worker). */
guint real_generation_size(void);
/* s->w has just started: generation 1 gets ready, answers, is a direct
 * child of the wrapper (not a daemon) and the pidfile names it; it is
 * s->pid from then on. */
void real_serve(struct t_site *s);
/* The same, ready within ready_ms: a start whose work grows with the
 * configuration (thousands of binds, under the sanitizers) is bounded by
 * what it has to do. */
void real_serve_within(struct t_site *s, guint ready_ms);
/* t_site_start_wrapper(), then real_serve(). */
void real_start(struct t_site *s, const char *path, const char *const *opts);
/* The pidfile names the serving generation, or there is none (-p not
 * given). */
void real_assert_pidfile(struct t_site *s);
void real_assert_running(struct t_site *s);
/* A reload by sig: the next generation is ready with a new pid, a child
 * of the same wrapper, and answers; the old one ends unless it has
 * connections to drain (wait_old FALSE). */
void real_reload(struct t_site *s, int sig, gboolean wait_old);
/* After a failed reload: the one serving before still serves, alone. */
void real_assert_reload_failed(struct t_site *s);
/* Stop with sig; the wait status. Nothing that was below the wrapper
 * outlives it. */
int real_stop(struct t_site *s, int sig);
/* sig to the serving haproxy, verified to be the wrapper's child. */
void real_signal_serving(struct t_site *s, int sig);
