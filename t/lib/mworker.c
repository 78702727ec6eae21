/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the master-worker tests share: see t/lib/mworker.h. */
#include "t/lib/mworker.h"

#include <stdlib.h>
#include <string.h>

void site_init(Site *s, gboolean fake, const char *extra)
{
	*s = (Site){ 0 };
	if (fake) {
		t_site_init_fake(&s->t, extra);
	} else {
		t_site_init(&s->t);
		/* $HSW_TEST_HAPROXY's, where it names one. */
		if (t_haproxy_switched())
			s->t.haproxy = g_strdup(t_haproxy_path());
		t_site_config(&s->t, extra);
	}
	s->t.with_runtime_dir = TRUE;
}

void site_clear(Site *s)
{
	t_site_clear(&s->t);
}

void site_write_config(Site *s, const char *extra)
{
	t_site_config(&s->t, extra);
}

GPid site_start(Site *s, const char *version, const char *const *opts)
{
	if (s->t.fake_log)
		t_site_setenv(&s->t, "FAKE_HAPROXY_VERSION",
			      version ? version : "");
	t_site_start_wrapper(&s->t, NULL, opts);
	s->master = wrapper_wait_ready(s->t.w, 1, T_WAIT);
	g_assert_cmpint(s->master, >, 0);
	return s->master;
}

int site_client(Site *s, const char *command, gchar **out)
{
	g_autofree gchar *o = NULL;
	g_autofree gchar *e = NULL;
	int code = t_site_client(&s->t, command, &o, &e);

	if (out)
		*out = g_strconcat(o, e, NULL);
	return code;
}

/* "... serving with workers 12 13" -> the first worker. */
GPid worker_in(const char *text)
{
	return t_pid_in(text, "workers ");
}

/* --reload, which must succeed; the new worker, which must answer. */
GPid site_reload(Site *s, GPid old_worker)
{
	g_autofree gchar *out = NULL;
	GPid worker;

	g_assert_cmpint(site_client(s, "--reload", &out), ==, 0);
	g_assert_true(g_str_has_prefix(out, "ok "));
	worker = worker_in(out);
	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(worker, !=, old_worker);
	g_assert_cmpint(t_wait_serving(s->t.port, T_WAIT), >, 0);
	return worker;
}

gchar *site_status(Site *s)
{
	gchar *out = NULL;

	g_assert_cmpint(site_client(s, "--status", &out), ==, 0);
	return out;
}

GPid read_pidfile(const char *path)
{
	g_autofree gchar *text = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return 0;
	return (GPid)strtol(text, NULL, 10);
}

gboolean skip_without_haproxy(void)
{
	if (t_have_haproxy())
		return FALSE;
	g_test_skip("no haproxy at " HAPROXY);
	return TRUE;
}

/* The real haproxy as a master behind the wrapper (-W); its worker, or 0
 * when there is no haproxy here (the test is then skipped). */
GPid real_master_start(Site *s)
{
	const char *opts[] = { "-W", NULL };
	GPid worker;

	if (skip_without_haproxy())
		return 0;
	site_init(s, FALSE, NULL);
	site_start(s, NULL, opts);
	worker = t_wait_serving(s->t.port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	return worker;
}
