/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the master-worker tests share (t/int/mworker*.c): a site on the
 * real haproxy or the fake, the wrapper on it with -Ws, its clients.
 */
#pragma once

#include "t/lib/harness.h"

#define HAPROXY "/usr/sbin/haproxy"

typedef struct {
	struct t_site t;
	GPid master;		/* generation 1's pid, once ready */
} Site;

/* A site with the real haproxy (fake: the fake) and its configuration
 * (extra appended). */
void site_init(Site *s, gboolean fake, const char *extra);
void site_clear(Site *s);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Site, site_clear)
/* (Re)writes the site's configuration, extra appended. */
void site_write_config(Site *s, const char *extra);
/*
 * Start the wrapper with opts (NULL-terminated) and the fake haproxy of
 * version (NULL: the fake's default) if the site is fake; the generation
 * 1 line's pid (the master's, in master-worker mode) once it is ready.
 */
GPid site_start(Site *s, const char *version, const char *const *opts);
/* A client command; its exit code and what it printed (answers on
 * stdout, errors on stderr). */
int site_client(Site *s, const char *command, gchar **out);
GPid worker_in(const char *text);
GPid site_reload(Site *s, GPid old_worker);
gchar *site_status(Site *s);
GPid read_pidfile(const char *path);
gboolean skip_without_haproxy(void);
GPid real_master_start(Site *s);
