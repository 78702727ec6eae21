/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a unit under the container's systemd shows, and the checks every
 * unit passes: see t/container/container.h. */
#include "t/container/container.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t/lib/harness.h"

/* ---- HTTP on 127.0.0.1 ---- */

/* Poll until port answers with a pid other than not (0: any). */
GPid wait_serving(guint16 port, GPid not)
{
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;
	guint pause = 0;
	GPid pid;

	while (((pid = t_http_pid(port)) == 0 || pid == not) &&
	       g_get_monotonic_time() < deadline)
		poll_pause(&pause);
	return pid == not ? 0 : pid;
}

/* ---- systemd ---- */

int sctl(struct container *c, const char *verb, const char *unit)
{
	return cexec(c, NULL, "systemctl", verb, unit, NULL);
}

gchar *prop(struct container *c, const char *unit, const char *name)
{
	g_autofree gchar *out = NULL;

	g_assert_cmpint(cexec(c, &out, "systemctl", "show", "-p", name,
			      "--value", unit, NULL), ==, 0);
	return g_strdup(g_strstrip(out));
}

gint prop_int(struct container *c, const char *unit, const char *name)
{
	g_autofree gchar *v = prop(c, unit, name);

	return atoi(v);
}

void assert_prop(struct container *c, const char *unit,
		 const char *name, const char *want)
{
	g_autofree gchar *v = prop(c, unit, name);

	if (!g_str_equal(v, want))
		g_error("%s: %s=%s, expected %s", unit, name, v, want);
}

/* "generation N (pid P, haproxy V) serving; ..." -> N and P. */
gboolean unit_status_text(struct container *c, const char *unit,
			  guint *gen, GPid *pid, gchar **text)
{
	g_autofree gchar *t = prop(c, unit, "StatusText");
	gboolean ok = sscanf(t, "generation %u (pid %d,", gen, pid) == 2;

	if (text)
		*text = g_steal_pointer(&t);
	return ok;
}

/* Inside the container: the parent of pid, and where pid's binary is. */
GPid parent_of(struct container *c, GPid pid)
{
	g_autofree gchar *p = g_strdup_printf("%d", pid);
	g_autofree gchar *out = NULL;

	if (cexec(c, &out, "ps", "-o", "ppid=", "-p", p, NULL) != 0)
		return 0;
	return atoi(g_strstrip(out));
}

gchar *exe_of(struct container *c, GPid pid)
{
	g_autofree gchar *link = g_strdup_printf("/proc/%d/exe", pid);
	g_autofree gchar *out = NULL;

	if (cexec(c, &out, "readlink", link, NULL) != 0)
		return g_strdup("");
	return g_strdup(g_strstrip(out));
}

gint uid_of(struct container *c, GPid pid)
{
	g_autofree gchar *p = g_strdup_printf("%d", pid);
	g_autofree gchar *out = NULL;

	if (cexec(c, &out, "ps", "-o", "euid=", "-p", p, NULL) != 0)
		return -1;
	return atoi(g_strstrip(out));
}

gboolean wait_gone_in(struct container *c, GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d", pid);
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;
	guint pause = 0;

	while (exists_in(c, path)) {
		if (g_get_monotonic_time() > deadline)
			return FALSE;
		poll_pause(&pause);
	}
	return TRUE;
}

GPid pidfile_pid(struct container *c, const char *path)
{
	g_autofree gchar *full = g_strconcat(c->root, path, NULL);
	g_autofree gchar *text = NULL;

	if (!g_file_get_contents(full, &text, NULL, NULL))
		return 0;
	return atoi(text);
}

/* Host processes still in the unit's cgroup (seen from the host as
 * .../<container>/payload<ControlGroup>). */
guint processes_in(struct container *c, const char *control_group)
{
	g_autofree gchar *needle = g_strdup_printf("/%s/payload%s", c->name,
						   control_group);
	g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
	const char *name;
	guint n = 0;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = NULL;
		g_autofree gchar *text = NULL;
		const char *hit;

		if (!g_ascii_isdigit(*name))
			continue;
		path = g_strdup_printf("/proc/%s/cgroup", name);
		if (!g_file_get_contents(path, &text, NULL, NULL))
			continue;
		for (hit = strstr(text, needle); hit;
		     hit = strstr(hit + 1, needle)) {
			char end = hit[strlen(needle)];

			if (end == '\n' || end == '/' || end == '\0') {
				g_test_message("left in %s: pid %s",
					       control_group, name);
				n++;
				break;
			}
		}
	}
	return n;
}

/* NAME's value in `systemctl show` output; "" when it is not shown
 * (systemctl may leave out what is empty). */
static const char *shown_value(const char *const *lines, const char *name)
{
	gsize len = strlen(name);

	for (; *lines; lines++)
		if (g_str_has_prefix(*lines, name) && (*lines)[len] == '=')
			return *lines + len + 1;
	return "";
}

/* Every pair holds in one `systemctl show -p NAME...` (NAME=VALUE a
 * line, in systemd's order, not the pairs'). */
static gboolean props_hold(struct container *c, const char *unit,
			   const char *const *pairs)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	g_auto(GStrv) lines = NULL;

	g_ptr_array_add(args, g_strdup("systemctl"));
	g_ptr_array_add(args, g_strdup("show"));
	for (const char *const *p = pairs; *p; p += 2)
		g_ptr_array_add(args, g_strdup_printf("--property=%s", p[0]));
	g_ptr_array_add(args, g_strdup(unit));
	g_ptr_array_add(args, NULL);
	g_assert_cmpint(cexecv(c, CMD_TIMEOUT_S, &out, &err,
			       (const char *const *)args->pdata), ==, 0);
	lines = g_strsplit(out, "\n", -1);
	for (const char *const *p = pairs; *p; p += 2)
		if (!g_str_equal(shown_value((const char *const *)lines, p[0]),
				 p[1]))
			return FALSE;
	return TRUE;
}

/* Poll `systemctl show` until every NAME=VALUE pair holds; bounded. */
gboolean wait_props(struct container *c, const char *unit,
		    const char *const *pairs)
{
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;
	guint pause = 0;

	for (;;) {
		if (props_hold(c, unit, pairs))
			return TRUE;
		if (g_get_monotonic_time() > deadline)
			return FALSE;
		poll_pause(&pause);
	}
}

/* The unit's journal at priority prio or more urgent contains needle;
 * journald takes the lines from the stream asynchronously: polled. */
gboolean journal_has(struct container *c, const char *unit,
		     const char *prio, const char *needle)
{
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;

	for (;;) {
		g_autofree gchar *out = NULL;

		cexec(c, &out, "journalctl", "--no-pager", "-o", "cat", "-u",
		      unit, "-p", prio, NULL);
		if (out && strstr(out, needle))
			return TRUE;
		if (g_get_monotonic_time() > deadline)
			return FALSE;
		g_usleep(50 * 1000);
	}
}

/* The journal of unit, whose wrapper has exited, lacks needle at prio or
 * more urgent. First its last lines are waited for: the native message
 * it sends as it exits (datagrams are read in the order they were sent)
 * and the line of its stream that says it stops (a stream is read in
 * order), so that nothing it wrote before them is still on its way. */
gboolean journal_lacks(struct container *c, const char *unit,
		       const char *prio, const char *needle)
{
	g_autofree gchar *out = NULL;

	g_assert_true(journal_has(c, unit, "notice", "exit, haproxy RC="));
	g_assert_true(journal_has(c, unit, "notice", ": stopping"));
	g_assert_cmpint(cexec(c, &out, "journalctl", "--no-pager", "-o",
			      "cat", "-u", unit, "-p", prio, NULL), ==, 0);
	return !strstr(out, needle);
}

/* ---- the checks every unit passes ---- */


void svc_clear(struct svc *s)
{
	g_clear_pointer(&s->cgroup, g_free);
	g_clear_pointer(&s->seen, g_hash_table_unref);
	if (s->stale_log)
		g_string_free(g_steal_pointer(&s->stale_log), TRUE);
}

/* start -> active, MainPID is the wrapper, haproxy its child serving. */
void check_start(struct container *c, struct svc *s)
{
	g_autofree gchar *exe = NULL;
	g_autofree gchar *text = NULL;

	s->seen = g_hash_table_new(NULL, NULL);
	if (sctl(c, "start", s->unit) != 0) {
		g_autofree gchar *journal = NULL;

		cexec(c, &journal, "journalctl", "--no-pager", "-o", "cat",
		      "-u", s->unit, NULL);
		g_error("%s did not start: %s", s->unit, journal);
	}
	if (s->notify) {
		/* READY=1 came once haproxy serves: no polling. */
		s->haproxy = t_http_pid(s->port);
		g_assert_cmpint(s->haproxy, >, 0);
		g_assert_true(unit_status_text(c, s->unit, &s->generation,
					  &(GPid){ 0 }, &text));
		g_test_message("%s StatusText: %s", s->unit, text);
		g_assert_cmpint(s->generation, ==, 1);
	} else {
		s->haproxy = wait_serving(s->port, 0);
		g_assert_cmpint(s->haproxy, >, 0);
	}
	assert_prop(c, s->unit, "ActiveState", "active");
	assert_prop(c, s->unit, "SubState", "running");
	s->main_pid = prop_int(c, s->unit, "MainPID");
	g_assert_cmpint(s->main_pid, >, 0);
	exe = exe_of(c, s->main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	g_assert_cmpint(parent_of(c, s->haproxy), ==, s->main_pid);
	g_assert_cmpint(pidfile_pid(c, s->pidfile), ==, s->haproxy);
	s->cgroup = prop(c, s->unit, "ControlGroup");
	g_assert_true(g_str_has_prefix(s->cgroup, "/system.slice/"));
	g_hash_table_add(s->seen, GINT_TO_POINTER(s->haproxy));
}

/* One `systemctl reload`. Type=notify: done when systemctl returns, the
 * new haproxy answering at once; historic: kill -USR2, then poll. */
void check_reload(struct container *c, struct svc *s)
{
	gint64 t0 = g_get_monotonic_time(), dt;
	GPid old = s->haproxy, now;

	g_assert_cmpint(sctl(c, "reload", s->unit), ==, 0);
	dt = g_get_monotonic_time() - t0;
	s->reload_us_max = MAX(s->reload_us_max, dt);
	s->reload_us_sum += dt;
	s->reloads++;
	if (s->notify) {
		g_autofree gchar *text = NULL;
		GPid status_pid = 0;
		guint gen = 0;

		now = t_http_pid(s->port);
		g_assert_true(unit_status_text(c, s->unit, &gen, &status_pid,
					  &text));
		if (now != status_pid &&
		    g_hash_table_contains(s->seen, GINT_TO_POINTER(now))) {
			/* An old generation still accepted: see
			 * test_reload_done_at_return. */
			gint64 t1 = g_get_monotonic_time();

			now = wait_serving(s->port, now);
			s->stale++;
			s->stale_us_max = MAX(s->stale_us_max,
					      g_get_monotonic_time() - t1);
			if (!s->stale_log)
				s->stale_log = g_string_new(NULL);
			g_string_append_printf(s->stale_log, "reload %u: "
					       "generation %u (pid %d) served, "
					       "the old pid answered first; ",
					       s->reloads, gen, status_pid);
		}
		if (now != status_pid)
			g_error("right after `systemctl reload` returned, "
				"pid %d answered; StatusText: %s", now, text);
		g_assert_cmpint(gen, >, s->generation);
		g_assert_nonnull(strstr(text, "last reload ok"));
		s->generation = gen;
	} else {
		now = wait_serving(s->port, old);
	}
	g_assert_cmpint(now, >, 0);
	g_assert_cmpint(now, !=, old);
	/* A new haproxy each time, never one seen before. */
	g_assert_false(g_hash_table_contains(s->seen, GINT_TO_POINTER(now)));
	g_hash_table_add(s->seen, GINT_TO_POINTER(now));
	g_assert_cmpint(prop_int(c, s->unit, "MainPID"), ==, s->main_pid);
	g_assert_cmpint(parent_of(c, now), ==, s->main_pid);
	if (s->notify)
		g_assert_cmpint(pidfile_pid(c, s->pidfile), ==, now);
	s->haproxy = now;
}

void check_reloads(struct container *c, struct svc *s, guint n)
{
	struct t_load l;

	/* Paced, at most ~1000 requests a second: light beside the
	 * container, and within the load's bounds however long it runs. */
	t_load_start_paced(&l, s->port, 1000);
	for (guint i = 0; i < n; i++)
		check_reload(c, s);
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_assert_cmpuint(l.requests - l.failures, >=, n);
	g_test_message("%s: %u reloads, `systemctl reload` took %.1f ms on "
		       "average, %.1f ms at most", s->unit, s->reloads,
		       s->reload_us_sum / 1000.0 / MAX(s->reloads, 1),
		       s->reload_us_max / 1000.0);
	if (s->stale)
		g_test_message("%s: %u time(s) an old haproxy answered right "
			       "after `systemctl reload` returned, the new "
			       "one %.1f ms later at most: %s", s->unit,
			       s->stale, s->stale_us_max / 1000.0,
			       s->stale_log->str);
}

/* stop -> inactive, not failed; nothing left in the cgroup; port closed. */
void check_stop(struct container *c, struct svc *s)
{
	g_assert_cmpint(sctl(c, "stop", s->unit), ==, 0);
	assert_prop(c, s->unit, "ActiveState", "inactive");
	assert_prop(c, s->unit, "SubState", "dead");
	assert_prop(c, s->unit, "Result", "success");
	assert_prop(c, s->unit, "MainPID", "0");
	/* systemd has waited for the cgroup to empty: no polling. */
	g_assert_cmpuint(processes_in(c, s->cgroup), ==, 0);
	g_assert_cmpint(t_http_pid(s->port), ==, 0);
}

/* ---- fixtures ---- */


void fx_setup(struct fixture *f, gconstpointer data)
{
	f->skip = cannot_run();
	if (!f->skip)
		f->c = container_boot(data, &f->skip);
}

void fx_teardown(struct fixture *f, gconstpointer data)
{
	g_clear_pointer(&f->c, container_free);
	g_free(f->skip);
}

gboolean fx_ready(struct fixture *f)
{
	if (f->c)
		return TRUE;
	g_test_skip(f->skip);
	return FALSE;
}

/* The recommended unit as contrib ships it, under its upstream name (it
 * overrides Debian's haproxy.service, visible from the host's /usr). */
void recommended(struct container *c, struct svc *s)
{
	*s = (struct svc){
		.unit = "haproxy.service",
		.pidfile = "/run/haproxy.pid",
		.port = t_free_port(),
		.notify = TRUE,
	};
	install_wrapper(c);
	install_unit(c, "haproxy.service", "haproxy.service");
	put_config(c, "/etc/haproxy/haproxy.cfg", s->port, NULL);
	g_assert_cmpint(sctl(c, "daemon-reload", NULL), ==, 0);
}

gchar *deb_path(void)
{
	const char *env = g_getenv("HSW_DEB");
	g_autoptr(GDir) d = NULL;
	const char *name;

	if (env)
		return g_strdup(env);
	d = g_dir_open("build/deb", 0, NULL);
	while (d && (name = g_dir_read_name(d)))
		if (g_str_has_prefix(name, PROG "_") &&
		    g_str_has_suffix(name, ".deb"))
			return g_build_filename("build/deb", name, NULL);
	return NULL;
}

gboolean fx_deb_copied(struct fixture *f)
{
	g_autofree gchar *deb = deb_path();

	if (!fx_ready(f))
		return FALSE;
	if (!deb || !g_file_test(deb, G_FILE_TEST_EXISTS)) {
		g_test_skip("no build/deb/" PROG "_*.deb: run make deb");
		return FALSE;
	}
	copy_in(f->c, deb, "/tmp/hsw.deb", 0644);
	return TRUE;
}
