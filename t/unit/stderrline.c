/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * legacy/stderrline.c: the priority, the pid and the words of a line
 * haproxy writes on its stderr, in the forms every series has (printed
 * by haproxy 1.5.18, 1.8.30, 2.6, 2.8.0 and 3.4.0 for a bad keyword).
 */
#include <glib.h>
#include <syslog.h>

#include "legacy/stderrline.h"

static void check(const char *line, int priority, gboolean alert, GPid pid,
		  const char *words)
{
	struct ha_line l;

	ha_line_parse(line, &l);
	g_assert_cmpint(l.priority, ==, priority);
	g_assert_cmpint(l.alert, ==, alert);
	g_assert_cmpint(l.pid, ==, pid);
	g_assert_cmpstr(l.words, ==, words);
}

static void test_tags(void)
{
	/* 2.x and 3.x */
	check("[ALERT]    (12791) : config : parsing [bad.cfg:2] : unknown "
	      "keyword 'no-such-keyword' in 'global' section", LOG_ERR, TRUE,
	      12791, "config : parsing [bad.cfg:2] : unknown keyword "
	      "'no-such-keyword' in 'global' section");
	check("[WARNING]  (28020) : Loading failure!", LOG_WARNING, FALSE,
	      28020, "Loading failure!");
	check("[NOTICE]   (28020) : Reloading HAProxy", LOG_NOTICE, FALSE,
	      28020, "Reloading HAProxy");
	/* 1.x: a day/time before the pid */
	check("[ALERT] 332/055613 (12776) : Fatal errors found in "
	      "configuration.", LOG_ERR, TRUE, 12776,
	      "Fatal errors found in configuration.");
	check("[WARNING] 332/055613 (77) : Proxy fe stopped.", LOG_WARNING,
	      FALSE, 77, "Proxy fe stopped.");
}

static void test_others(void)
{
	/* "log stderr" in syslog format: its own severity. */
	check("<134>Nov 29 06:44:29 haproxy[1]: GET /", LOG_INFO, FALSE, 0,
	      "Nov 29 06:44:29 haproxy[1]: GET /");
	check("<131>x", LOG_ERR, TRUE, 0, "x");
	/* Untagged, raw format: info, as it came. */
	check("127.0.0.1:41556 [29/Nov/2026:06:44:29.330] fe fe/<NOSRV>",
	      LOG_INFO, FALSE, 0,
	      "127.0.0.1:41556 [29/Nov/2026:06:44:29.330] fe fe/<NOSRV>");
	/* A tag without a pid: its priority, no pid. */
	check("[ALERT] something", LOG_ERR, TRUE, 0, "something");
	check("[NOTICE] (x) : y", LOG_NOTICE, FALSE, 0, "(x) : y");
	/* Not a syslog priority. */
	check("<999>a", LOG_INFO, FALSE, 0, "<999>a");
	check("<>a", LOG_INFO, FALSE, 0, "<>a");
	check("", LOG_INFO, FALSE, 0, "");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/stderrline/tags", test_tags);
	g_test_add_func("/stderrline/others", test_others);
	return g_test_run();
}
