/* SPDX-License-Identifier: GPL-2.0-or-later */
/* haproxy's version, as printed by "haproxy -v", and what it implies. */
#pragma once

#include <glib.h>

#include "legacy/args.h"

struct haproxy_version {
	guint major;
	guint minor;
	guint patch;		/* 0 when the version has only two components */
	gchar full[64];		/* the token after "version", truncated if longer */
};

/*
 * Parse the output of "haproxy -v": the first line matching
 * "HA-Proxy version <ver>" or "HAProxy version <ver>", <ver> ending at
 * white space or the end of the line. <ver> must start
 * with "<major>.<minor>" (".<patch>" optional), anything may follow
 * ("-dev7", "-1+deb12u4"). Returns FALSE when no such line exists.
 */
gboolean haproxy_version_parse(const char *output, struct haproxy_version *out);

/* haproxy < 1.8 runs as -Ds, anything newer as -db (or -Ws, see
 * legacy/mworker.h). */
enum launch_mode haproxy_version_launch_mode(const struct haproxy_version *v);

/* <0, 0, >0 like strcmp, on major.minor.patch. */
int haproxy_version_compare(const struct haproxy_version *v, guint major,
			    guint minor, guint patch);
