/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the wrapper says about its reloads: `--status` as text, as JSON
 * (checked by a small RFC 8259 validator) and as OpenMetrics (through
 * Debian's python3-prometheus-client parser), from the client and from
 * the control socket. The real haproxy (Debian's 2.6), 127.0.0.1 only.
 */
#include "t/lib/reload.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

/* ---- a tiny JSON validator (RFC 8259 syntax, no semantics) ---- */

static const char *json_value(const char *p, guint depth);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;	/* control characters, and the end */
		if (*p != '\\')
			continue;
		p++;
		if (*p == 'u') {
			for (int i = 0; i < 4; i++)
				if (!g_ascii_isxdigit(*++p))
					return NULL;
		} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
			return NULL;
		}
	}
	return p + 1;
}

static const char *json_digits(const char *p)
{
	if (!g_ascii_isdigit(*p))
		return NULL;
	while (g_ascii_isdigit(*p))
		p++;
	return p;
}

static const char *json_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (!(p = json_digits(p)))
		return NULL;
	if (*p == '.' && !(p = json_digits(p + 1)))
		return NULL;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		p = json_digits(p);
	}
	return p;
}

/* '{' members '}' or '[' elements ']'. */
static const char *json_container(const char *p, guint depth)
{
	gboolean object = *p == '{';
	char close = object ? '}' : ']';

	p = json_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (object) {
			if (!(p = json_string(p)))
				return NULL;
			p = json_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		if (!(p = json_value(p, depth + 1)))
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
		p = json_ws(p);
	}
}

/* A value with the white space around it; the end, or NULL. */
static const char *json_value(const char *p, guint depth)
{
	static const char *const literals[] = { "true", "false", "null" };

	if (depth > 64)
		return NULL;
	p = json_ws(p);
	if (*p == '{' || *p == '[')
		p = json_container(p, depth);
	else if (*p == '"')
		p = json_string(p);
	else if (*p == '-' || g_ascii_isdigit(*p))
		p = json_number(p);
	else {
		const char *lit = p;

		p = NULL;
		for (guint i = 0; i < G_N_ELEMENTS(literals); i++)
			if (g_str_has_prefix(lit, literals[i]))
				p = lit + strlen(literals[i]);
	}
	return p ? json_ws(p) : NULL;
}

static gboolean json_valid(const char *text)
{
	const char *end = json_value(text, 0);

	return end && !*end;
}

/*
 * What a real JSON parser (python3's) makes of the client's whole
 * stdout: the top-level keys named, one value a line, or NULL where it
 * rejects the text (a verdict line after the JSON, say).
 */
static gchar *json_parsed(const char *out, const char *const *keys)
{
	g_autofree gchar *keylist = g_strjoinv(",", (gchar **)keys);
	g_autofree gchar *python = g_find_program_in_path("python3");
	const char *argv[] = {
		python, "-c",
		"import json, sys\n"
		"d = json.loads(sys.argv[1])\n"
		"for k in sys.argv[2].split(','): print(k, d[k])\n",
		out, keylist, NULL,
	};
	gchar *parsed = NULL;

	if (!python)
		fail("no python3 to parse --status --json");
	if (t_run_command(argv, T_WAIT, &parsed, NULL) != 0)
		g_clear_pointer(&parsed, g_free);
	return parsed;
}

/* stdout is one JSON value and nothing else (jq, json.tool take it). */
static void assert_json_status(struct t_site *s, GPid draining)
{
	static const char *const keys[] = { "reloads", NULL };
	g_autofree gchar *out = client_status(s, "--json");
	g_autofree gchar *pid = g_strdup_printf("\"pid\":%d,", draining);
	g_autofree gchar *parsed = json_parsed(out, keys);

	if (!json_valid(out) || !parsed)
		fail("--status --json is not JSON alone: %s", out);
	g_assert_true(g_str_has_prefix(out, "{"));
	g_assert_nonnull(strstr(out, "\"generations\":["));
	g_assert_nonnull(strstr(out, pid));
	g_assert_nonnull(strstr(out, "\"state\":\"draining\""));
}

/* The reload counts by result, in JSON through the parser. */
static void assert_json_counts(struct t_site *s, const char *want)
{
	static const char *const keys[] = {
		"reloads", "reloads_ok", "reloads_failed", NULL,
	};
	g_autofree gchar *out = client_status(s, "--json");
	g_autofree gchar *parsed = json_parsed(out, keys);

	if (!parsed)
		fail("--status --json is not JSON alone: %s", out);
	g_assert_cmpstr(parsed, ==, want);
}

static void test_status(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *text = NULL;
	g_autofree gchar *failed = NULL;
	g_autofree gchar *json = NULL;
	g_autofree gchar *wrapper = NULL;
	g_autofree gchar *err = NULL;
	GPid gen1, gen2, gen3;
	int conn;

	if (!reload_site_init(&s, LONG_DRAIN))
		return;
	gen1 = t_site_start_serving(&s, NULL);
	conn = hold_on(s.port, gen1);
	gen2 = reload_serving(&s, "--reload", 2);
	g_assert_true(t_pid_alive(gen1));

	text = client_status(&s, NULL);
	wrapper = g_strdup_printf("wrapper pid %d ", s.w->pid);
	g_assert_true(g_str_has_prefix(text, wrapper));
	g_assert_nonnull(strstr(text, "\nreloads 1 ok 1 failed 0\n"));
	g_assert_nonnull(strstr(text, "\nlast reload: ok in "));
	assert_status_gen(text, 2, gen2, "current");
	assert_status_gen(text, 1, gen1, "draining");
	g_assert_true(g_str_has_suffix(g_strchomp(text), "\nok"));
	assert_json_status(&s, gen1);

	/* A failed reload leaves a "failed" entry behind; failed reloads
	 * are counted apart (two of them, one ok: no count is another). */
	t_site_config(&s, LONG_DRAIN BROKEN);
	g_assert_cmpint(t_client("--reload", s.rundir_opt, NULL, NULL, NULL),
			==, CLIENT_FAILED);
	g_assert_cmpint(t_client("--reload", s.rundir_opt, NULL, NULL, &err),
			==, CLIENT_FAILED);
	gen3 = t_pid_in(err, "error: generation 4 (pid ");
	g_assert_cmpint(gen3, >, 0);
	failed = client_status(&s, NULL);
	g_assert_nonnull(strstr(failed, "\nreloads 3 ok 1 failed 2\n"));
	g_assert_nonnull(strstr(failed, "\nlast reload: failed in "));
	assert_status_gen(failed, 2, gen2, "current");
	assert_status_gen(failed, 1, gen1, "draining");
	assert_status_gen(failed, 4, gen3, "failed");
	{
		g_autofree gchar *line = status_line(failed, 4);

		g_assert_nonnull(strstr(line, " failed: exited with status 1"));
	}
	json = client_status(&s, "--json");
	g_assert_nonnull(strstr(json, "\"state\":\"failed\""));
	g_assert_nonnull(strstr(json, "\"result\":\"failed\""));
	assert_json_counts(&s, "reloads 3\nreloads_ok 1\nreloads_failed 2\n");
	close(conn);
	t_site_stop(&s);
}

/* Metrics, OpenMetrics through a real parser. */
static void test_metrics(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *text = NULL;
	g_autofree gchar *parsed = NULL;
	g_autofree gchar *raw = NULL;
	GPid gen1;
	int conn, fd;

	if (!reload_site_init(&s, LONG_DRAIN))
		return;
	gen1 = t_site_start_serving(&s, NULL);
	conn = hold_on(s.port, gen1);
	reload_serving(&s, "--reload", 2);
	t_site_config(&s, LONG_DRAIN BROKEN);
	g_assert_cmpint(t_client("--reload", s.rundir_opt, NULL, NULL, NULL),
			==, CLIENT_FAILED);

	text = client_status(&s, "--format=openmetrics");
	g_assert_true(g_str_has_suffix(text, "# EOF\n"));
	parsed = t_openmetrics_parsed(text);
	if (!parsed) {
		g_test_skip("no python3-prometheus-client to parse OpenMetrics");
		close(conn);
		t_site_stop(&s);
		return;
	}
	t_assert_sample(parsed, "haproxy_wrapper_reloads_total{result=\"ok\"} 1");
	t_assert_sample(parsed,
		      "haproxy_wrapper_reloads_total{result=\"failed\"} 1");
	t_assert_sample(parsed, "haproxy_wrapper_last_reload_success{} 0");
	t_assert_sample(parsed,
		      "haproxy_wrapper_generations{state=\"current\"} 1");
	t_assert_sample(parsed,
		      "haproxy_wrapper_generations{state=\"draining\"} 1");
	t_assert_sample(parsed,
		      "haproxy_wrapper_generations{state=\"failed\"} 1");
	t_assert_sample(parsed, "haproxy_wrapper_draining_processes{} 1");
	t_assert_sample(parsed, "haproxy_wrapper_takeovers_total{} 0");
	g_assert_cmpfloat(t_sample_value(parsed, "haproxy_wrapper_last_reload_"
				       "duration_seconds"), >, 0);
	g_assert_cmpfloat(t_sample_value(parsed, "haproxy_wrapper_last_reload_"
				       "timestamp_seconds"), >, 1.7e9);

	/* The same from the control socket, its verdict after "# EOF". */
	fd = ctl_connect(s.rundir);
	ctl_send(fd, "status openmetrics\n", 19);
	raw = ctl_read(fd, T_WAIT);
	close(fd);
	g_assert_nonnull(raw);
	g_assert_true(g_str_has_prefix(raw, "# TYPE haproxy_wrapper_reloads "
					    "counter\n"));
	g_assert_nonnull(strstr(raw, "\n# EOF\nok"));
	close(conn);
	t_site_stop(&s);
}

/*
 * json-glib is loaded on the first "status json" only: where it cannot be
 * (here a file that is no library in its place), --status --json fails
 * with the reason, and the wrapper, its other answers and haproxy go on.
 */
static void test_json_without_library(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *libdir = NULL, *out = NULL, *err = NULL;
	g_autofree gchar *text = NULL;

	if (!reload_site_init(&s, NULL))
		return;
	libdir = g_build_filename(s.dir, "lib", NULL);
	g_assert_cmpint(g_mkdir(libdir, 0755), ==, 0);
	g_free(t_write_file(libdir, "libjson-glib-1.0.so.0", "no library\n"));
	t_site_setenv(&s, "LD_LIBRARY_PATH", libdir);
	t_site_start_serving(&s, NULL);
	g_assert_cmpint(t_client("--status", s.rundir_opt, "--json", &out,
				 &err), ==, CLIENT_FAILED);
	g_assert_cmpstr(out, ==, "");
	g_assert_nonnull(strstr(err, "error: no JSON: "));
	text = client_status(&s, NULL);
	g_assert_true(g_str_has_suffix(g_strchomp(text), "\nok"));
	g_assert_cmpint(t_http_pid(s.port), ==, s.pid);
	t_site_stop(&s);
}

int main(int argc, char **argv)
{
	reload_tests_init(&argc, &argv);
	g_test_add_func("/reload/status", test_status);
	g_test_add_func("/reload/metrics", test_metrics);
	g_test_add_func("/reload/status-json-without-library",
			test_json_without_library);
	return g_test_run();
}
