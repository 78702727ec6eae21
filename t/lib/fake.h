/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the fake-haproxy tests share (t/int/fake*.c): the wrapper on the
 * site's t/fake/fake-haproxy at a given version, the fake's event log
 * (FAKE_HAPROXY_LOG), command lines, workers, stops.
 */
#pragma once

#include "t/lib/harness.h"

#define NO_SIGNALS "0000000000000000"

/* The site's environment, with FAKE_HAPROXY_VERSION=version (NULL: the
 * fake's default, 2.6.12). */
GPtrArray *fx_env(struct t_site *f, const char *version);
/* The wrapper on the site's fake at version, extra options first. */
Wrapper *fx_start(struct t_site *f, const char *version,
		  const char *const *extra);
gchar *fake_wait(struct t_site *f, const char *needle, guint timeout_ms);
guint fake_count(struct t_site *f, const char *needle);
gchar *field(const char *line, const char *key);
gboolean has_arg(const char *line, const char *arg);
gboolean has_daemon_flag(const char *line);
GArray *sf_pids(const char *line);
gboolean pids_contain(GArray *pids, GPid pid);
GArray *wait_workers(struct t_site *f, GPid parent, guint n);
void assert_all_gone(GArray *pids);
int stop_wrapper(Wrapper *w, int sig);
GPid wait_ready_version(Wrapper *w, guint n, const char *version);
/* The wrapper on the site's fake (2.6.12), generation 1 ready and
 * answering on the site's port; returns generation 1's pid. */
GPid fx_start_serving(struct t_site *f, Wrapper **w);
gchar *dup_wait_log(Wrapper *w, const char *needle);
