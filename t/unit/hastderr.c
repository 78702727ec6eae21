/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wrapper/hastderr.c: what haproxy writes into the pipe comes out on our
 * stderr (a file here) at its tag's priority, the [ALERT] lines of a pid
 * since a mark are found, and a line cut for its length does not start a
 * tag of its own in its second piece.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "wrapper/hastderr.h"

struct fixture {
	struct ha_stderr *h;
	gchar *path;		/* our stderr, meanwhile */
	int saved_stderr;
};

static void fx_setup(struct fixture *f, gconstpointer data)
{
	int fd;

	g_unsetenv("JOURNAL_STREAM");
	f->path = g_build_filename(g_get_tmp_dir(), "hastderr-XXXXXX", NULL);
	fd = g_mkstemp(f->path);
	g_assert_cmpint(fd, >=, 0);
	f->saved_stderr = dup(STDERR_FILENO);
	g_assert_cmpint(dup2(fd, STDERR_FILENO), ==, STDERR_FILENO);
	close(fd);
	f->h = ha_stderr_new();
}

static void fx_teardown(struct fixture *f, gconstpointer data)
{
	ha_stderr_free(f->h);
	dup2(f->saved_stderr, STDERR_FILENO);
	close(f->saved_stderr);
	g_unlink(f->path);
	g_free(f->path);
}

/* As haproxy would: into the pipe's write end. */
static void haproxy_writes(struct fixture *f, const char *text)
{
	int fd = ha_stderr_writer(f->h);

	g_assert_cmpint(fd, >, STDERR_FILENO);
	g_assert_cmpint(write(fd, text, strlen(text)), ==, strlen(text));
}

static gchar *our_stderr(struct fixture *f)
{
	gchar *text = NULL;

	ha_stderr_flush(f->h);
	g_assert_true(g_file_get_contents(f->path, &text, NULL, NULL));
	return text;
}

static void test_priorities(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *out = NULL;

	haproxy_writes(f, "[NOTICE]   (10) : haproxy version is 2.6\n"
			  "[WARNING]  (10) : Loading failure!\n"
			  "[ALERT]    (10) : config : parsing [a.cfg:2] : bad\n"
			  "127.0.0.1:1 [29/Nov/2026] fe fe/<NOSRV>\n");
	out = our_stderr(f);
	g_assert_cmpstr(out, ==,
			"<5>[NOTICE]   (10) : haproxy version is 2.6\n"
			"<4>[WARNING]  (10) : Loading failure!\n"
			"<3>[ALERT]    (10) : config : parsing [a.cfg:2] : bad\n"
			"<6>127.0.0.1:1 [29/Nov/2026] fe fe/<NOSRV>\n");
}

static void test_alerts(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *first = NULL, *none = NULL, *other = NULL;
	g_autofree gchar *but = NULL, *after = NULL;
	g_autoptr(GArray) old = g_array_new(FALSE, FALSE, sizeof(GPid));
	GPid ten = 10;
	guint64 start = ha_stderr_mark(f->h), later;

	haproxy_writes(f, "[ALERT]    (10) : config : parsing [a.cfg:2] : "
			  "unknown keyword 'x'\n"
			  "[ALERT]    (10) : config : Fatal errors found.\n"
			  "[ALERT] 332/055613 (11) : other\n");
	first = ha_stderr_alert(f->h, 10, start);
	g_assert_cmpstr(first, ==, "[ALERT] config : parsing [a.cfg:2] : "
				   "unknown keyword 'x'");
	other = ha_stderr_alert(f->h, 11, start);
	g_assert_cmpstr(other, ==, "[ALERT] other");
	none = ha_stderr_alert(f->h, 12, start);
	g_assert_null(none);
	/* Any pid but the old ones. */
	g_array_append_val(old, ten);
	but = ha_stderr_alert_but(f->h, old, start);
	g_assert_cmpstr(but, ==, "[ALERT] other");
	/* Nothing since a later mark. */
	later = ha_stderr_mark(f->h);
	after = ha_stderr_alert(f->h, 10, later);
	g_assert_null(after);
}

/* A long line goes in pieces; the second is no tag, whatever it says. */
static void test_cut_line(struct fixture *f, gconstpointer data)
{
	/* The cut falls just before "<0>". */
	g_autofree gchar *lead = g_strnfill(4096 - strlen("[NOTICE]   (10) : "),
					    'a');
	g_autofree gchar *text = g_strconcat("[NOTICE]   (10) : ", lead,
					     "<0>forged\n[ALERT]    (10) : x\n",
					     NULL);
	g_autofree gchar *out = NULL;
	g_auto(GStrv) lines = NULL;

	haproxy_writes(f, text);
	out = our_stderr(f);
	lines = g_strsplit(out, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 4);
	g_assert_true(g_str_has_prefix(lines[0], "<5>[NOTICE]"));
	g_assert_cmpstr(lines[1], ==, "<5><0>forged");
	g_assert_cmpstr(lines[2], ==, "<3>[ALERT]    (10) : x");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add(path, struct fixture, NULL, fx_setup, \
				 fn, fx_teardown)
	ADD("/hastderr/priorities", test_priorities);
	ADD("/hastderr/alerts", test_alerts);
	ADD("/hastderr/cut-line", test_cut_line);
	return g_test_run();
}
