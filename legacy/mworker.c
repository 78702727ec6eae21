/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "legacy/mworker.h"

#include <string.h>

#include "base/proc.h"

enum launch_mode mw_choose_mode(const struct haproxy_version *v,
				enum mw_policy policy,
				const struct config_hints *hints,
				const char **why)
{
	/* nbproc is gone from 2.5: a newer haproxy rejects or ignores it. */
	gboolean many = hints->nbproc > 1 &&
			haproxy_version_compare(v, 2, 5, 0) < 0;
	const char *unused;

	if (!why)
		why = &unused;
	*why = "";
	/* No master-worker mode where the version's own mode is -Ds. */
	if (haproxy_version_launch_mode(v) == LAUNCH_DS) {
		if (policy == MW_POLICY_ON)
			*why = "master-worker mode needs haproxy >= 1.8";
		return LAUNCH_DS;
	}
	switch (policy) {
	case MW_POLICY_ON:
		return LAUNCH_MW;
	case MW_POLICY_OFF:
		if (many)
			*why = "nbproc > 1 but master-worker mode is off: "
			       "-db runs a single process";
		else if (hints->master_worker)
			*why = "the master-worker keyword but master-worker "
			       "mode is off";
		return LAUNCH_DB;
	case MW_POLICY_AUTO:
		break;
	}
	if (many) {
		*why = "nbproc > 1 needs master-worker mode (-db runs a single "
		       "process)";
		return LAUNCH_MW;
	}
	if (hints->master_worker) {
		*why = "the configuration asks for master-worker mode";
		return LAUNCH_MW;
	}
	return LAUNCH_DB;
}

const char *mw_version_refusal(const struct haproxy_version *v,
			       const struct wrapper_args *a)
{
	if (a->master_cli && haproxy_version_compare(v, 1, 9, 0) < 0)
		return "-S asks for a master CLI, which needs haproxy >= 1.9";
	return NULL;
}

static void take_line(const char *line, struct mw_message *m)
{
	const char *value = strchr(line, '=') + 1;

	if (g_str_has_prefix(line, "READY="))
		m->ready = g_str_equal(value, "1");
	else if (g_str_has_prefix(line, "RELOADING="))
		m->reloading = g_str_equal(value, "1");
	else if (g_str_has_prefix(line, "STOPPING="))
		m->stopping = g_str_equal(value, "1");
	else if (g_str_has_prefix(line, "MAINPID=") &&
		 !proc_parse_pid(value, &m->mainpid))
		m->mainpid = 0;
	else if (g_str_has_prefix(line, "STATUS=")) {
		g_free(m->status);
		m->status = g_utf8_make_valid(value, -1);
	}
	/* Anything else (MONOTONIC_USEC=, ERRNO=...) changes nothing here. */
}

gboolean mw_message_parse(const char *data, gsize len, struct mw_message *out)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;

	*out = (struct mw_message){ 0 };
	if (len == 0 || memchr(data, '\0', len))
		return FALSE;
	text = g_strndup(data, len);
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i]; i++) {
		if (lines[i][0] == '\0')
			continue;
		if (!strchr(lines[i], '=')) {
			mw_message_clear(out);
			return FALSE;
		}
		take_line(lines[i], out);
	}
	return TRUE;
}

void mw_message_clear(struct mw_message *m)
{
	g_clear_pointer(&m->status, g_free);
	*m = (struct mw_message){ 0 };
}

enum mw_verdict mw_message_verdict(const struct mw_message *m)
{
	g_autofree gchar *status = NULL;

	if (!m->ready)
		return MW_VERDICT_NONE;
	if (!m->status)
		return MW_VERDICT_ASK_WORKERS;
	/* haproxy 2.7+ says "Ready." or "Reload failed!"; 3.1+ adds a
	 * reason after it. */
	status = g_ascii_strdown(m->status, -1);
	return strstr(status, "fail") ? MW_VERDICT_FAILED : MW_VERDICT_LOADED;
}
