/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fake haproxy's configuration and its keywords: see
 * t/fake/fake-haproxy.c. */
#include "fake-haproxy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- config */

void __attribute__((noreturn)) alert(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[ALERT] fake: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	finish(1);
}

static char *trim(char *s)
{
	char *end;

	s[strcspn(s, "#")] = '\0';
	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static long parse_num(const char *s, const char *where)
{
	char *end;
	long v;

	errno = 0;
	v = s ? strtol(s, &end, 10) : -1;
	if (!s || errno || end == s || *end || v < 0)
		alert("%s: bad number '%s'", where, s ? s : "");
	return v;
}

/* "ip:port", "*:port" or ":port"; several may be comma-separated. */
static void add_bind(char *spec, const char *where)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(spec, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(tok, ':');
		struct listener *l;
		long port;

		if (!colon)
			alert("%s: bad bind address '%s'", where, tok);
		*colon = '\0';
		port = parse_num(colon + 1, where);
		if (port > 65535)
			alert("%s: bad port '%s'", where, colon + 1);
		g.lsn = realloc(g.lsn, (g.nlsn + 1) * sizeof(*l));
		if (!g.lsn)
			abort();
		l = &g.lsn[g.nlsn++];
		memset(l, 0, sizeof(*l));
		l->fd = -1;
		l->addr.sin_family = AF_INET;
		l->addr.sin_port = htons(port);
		if (!*tok || !strcmp(tok, "*"))
			l->addr.sin_addr.s_addr = htonl(INADDR_ANY);
		else if (inet_pton(AF_INET, tok, &l->addr.sin_addr) != 1)
			alert("%s: bad IPv4 address '%s'", where, tok);
	}
}

static void parse_line(char *line, const char *where)
{
	char *save = NULL;
	char *kw = strtok_r(line, " \t", &save);
	char *arg = strtok_r(NULL, " \t", &save);

	if (!kw)
		return;
	if (!strcmp(kw, "bind")) {
		if (!arg)
			alert("%s: bind needs an address", where);
		add_bind(arg, where);
	} else if (!strcmp(kw, "noreuseport")) {
		g.noreuseport = true;
	} else if (!strcmp(kw, "fake-config-error")) {
		g.config_error = true;
	} else if (!strcmp(kw, "fake-nbproc") || !strcmp(kw, "nbproc")) {
		g.nbproc = parse_num(arg, where);
		if (g.nbproc < 1)
			alert("%s: fake-nbproc must be >= 1", where);
	} else if (!strcmp(kw, "fake-load-delay-ms")) {
		g.load_delay_ms = parse_num(arg, where);
	} else if (!strcmp(kw, "fake-exit-after-ready")) {
		g.exit_after_ready = parse_num(arg, where) & 255;
	} else if (!strcmp(kw, "fake-crash-after-ready")) {
		g.crash_after_ready = true;
	} else if (!strcmp(kw, "fake-master-late-handler-ms")) {
		g.late_handler_ms = parse_num(arg, where);
	} else if (!strcmp(kw, "fake-master-late-usr1-ms")) {
		g.late_usr1_ms = parse_num(arg, where);
	} else if (!strcmp(kw, "fake-lose-first-usr1")) {
		g.lose_first_usr1 = true;
	} else if (!strcmp(kw, "fake-lose-first-term")) {
		g.lose_first_term = true;
	} else if (!strcmp(kw, "fake-expose-listeners")) {
		g.expose_listeners = true;
	} else if (!strcmp(kw, "fake-setsid-gate")) {
		if (!arg)
			alert("%s: fake-setsid-gate needs a path", where);
		g.setsid_gate = strdup(arg);
	} else if (!strcmp(kw, "fake-fork-gate")) {
		if (!arg)
			alert("%s: fake-fork-gate needs a path", where);
		g.fork_gate = strdup(arg);
	} else if (!strcmp(kw, "fake-slow-release-ms")) {
		g.slow_release_ms = parse_num(arg, where);
	} else if (!strcmp(kw, "stats") && arg && !strcmp(arg, "socket")) {
		char *path = strtok_r(NULL, " \t", &save);
		char *tok;

		while (path && (tok = strtok_r(NULL, " \t", &save)))
			if (!strcmp(tok, "expose-fd")) {
				free(g.expose_path);
				g.expose_path = strdup(path);
			}
	}
}

static void load_file(const char *path)
{
	char line[1024], where[PATH_MAX + 32];
	int lineno = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		alert("cannot open configuration file %s : %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		snprintf(where, sizeof(where), "%s:%d", path, ++lineno);
		parse_line(trim(line), where);
		if (g.config_error) {
			fprintf(stderr, "[ALERT] fake: parse error\n");
			finish(1);
		}
	}
	fclose(f);
}

static int is_cfg(const struct dirent *de)
{
	size_t len = strlen(de->d_name);

	return de->d_name[0] != '.' && len > 4 && !strcmp(de->d_name + len - 4, ".cfg");
}

/* A directory stands for its *.cfg files in lexical order. */
static void load_path(const char *path)
{
	struct dirent **list;
	struct stat st;
	int n, i;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		load_file(path);
		return;
	}
	n = scandir(path, &list, is_cfg, alphasort);
	if (n < 0)
		alert("cannot read configuration directory %s : %s", path, strerror(errno));
	for (i = 0; i < n; i++) {
		char *file;

		if (asprintf(&file, "%s/%s", path, list[i]->d_name) < 0)
			abort();
		load_file(file);
		free(file);
		free(list[i]);
	}
	free(list);
}

void load_config(void)
{
	int i;

	if (g.chdir_to && chdir(g.chdir_to) < 0)
		alert("cannot change directory to %s : %s", g.chdir_to, strerror(errno));
	for (i = 0; i < g.ncfgs; i++)
		load_path(g.cfgs[i]);
}
