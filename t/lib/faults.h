/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the fault tests share (t/int/fault*.c, t/int/failpaths.c): the
 * site of t/lib/harness.h with the real haproxy, the fake, or a gated fake;
 * waits on /proc (stopped, descendants, descriptors), on the fake's event
 * log and on answers; t/fake/failshim.so set up in the wrapper; a wrapper copy
 * installed as a package manager does.
 */
#pragma once

#include <sys/resource.h>
#include <sys/stat.h>

#include "t/lib/harness.h"

/* The haproxy the harness runs (t_haproxy_path()). */
#define HAPROXY t_haproxy_path()

/* ---- processes ---- */
int lowest_free_fd(GPid pid);
gboolean wait_descendants(Wrapper *w, const GPid *want, guint n);
void assert_no_orphans(struct t_site *f);
GPid fx_wait_ready(struct t_site *f, guint number);
gboolean wait_answering(guint16 port, GPid pid);
GPid fx_serving(struct t_site *f, guint number);
GPid fx_reload_works(struct t_site *f, guint number);
void fx_keeps_serving(struct t_site *f, GPid gen);
guint settled_fds(struct t_site *f, GPid gen);
void assert_fds(struct t_site *f, guint n);
const char *fx_reload_fails(struct t_site *f, GPid gen);
int fx_stop(struct t_site *f, int sig);
gchar *fake_wait_nth(struct t_site *f, const char *needle,
			    const char *needle2, guint nth);
gboolean fake_logged(struct t_site *f, GPid pid, const char *event);
GPid fake_freeze_loading(struct t_site *f, guint nth);
/* ---- t/fake/failshim.so in the wrapper ---- */

struct shim_case {
	const char *token;	/* what the shim fails */
	const char *message;	/* in the failure line */
};

struct shim {
	gchar *control;
	gchar *log;
};

void shim_setup(struct t_site *f, struct shim *s, const char *initial);
void shim_set(struct shim *s, const char *tokens);
gboolean shim_injected(struct shim *s, const char *token);
void shim_clear(struct shim *s);
void set_nofile(GPid pid, rlim_t soft);
/* The real haproxy, the wrapper given the site's --runtime-dir. */
gboolean fx_init_real(struct t_site *f);
void fx_init_gated(struct t_site *f, const char *version, const char *step);
/* fx_init_real(), haproxy behind the same gate for a run with -sf (a
 * reload's new generation): held before it runs haproxy. */
gboolean fx_init_real_gated(struct t_site *f);
void fx_stop_ok(struct t_site *f);
void fx_client(struct t_site *f, struct t_command *c, const char *cmd);
gboolean wait_file(const char *path);
void fx_close_gate(struct t_site *f);
void fx_wait_gate_entered(struct t_site *f);
void fx_open_gate(struct t_site *f);
GPid fx_gate_pid(struct t_site *f);
/* The wrapper on the fake 2.6.12 gated at step, generation 1 serving,
 * and the client's request (cmd) held at the gate; returns generation 1. */
GPid fx_hold_request(struct t_site *f, const char *step, struct t_command *c,
		     const char *cmd);
void fx_touch_haproxy(struct t_site *f);
GPid stray_child(GPid wrapper, const GArray *pids);
void assert_children_only(GPid wrapper, const GArray *pids);
guint64 cpu_ticks(GPid pid);
int connect_control(struct t_site *f);
gboolean wait_fd_count(GPid pid, guint n);
gchar *read_answer(int fd);
void install_file(const char *src, const char *dst);
gchar *wrapper_copy(struct t_site *f);
void assert_runs_inode(GPid pid, const struct stat *st);
int inheritable_fd(GPid pid);
gboolean wait_exe(GPid pid, const char *exe);
const char *fx_helper(const char *name);
