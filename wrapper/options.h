/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wrapper's own options (its command line, wrapper/main.c) and its
 * own exit statuses. Every part of the supervisor reads them; they are
 * apart from wrapper/supervisor.h so that a part that needs only them
 * does not see the whole context.
 */
#pragma once

#include <glib.h>

#include "legacy/mworker.h"
#include "wrapper/fdstore/fdstore.h"

/* Exit statuses of the wrapper itself (haproxy's own are passed through). */
#define EXIT_USAGE	64	/* bad wrapper command line (EX_USAGE) */
#define EXIT_NO_VERSION	65	/* "haproxy -v" said nothing we understand */
#define EXIT_OS_ERROR	71	/* fork, signalfd... failed (EX_OSERR) */

enum self_upgrade {
	SELF_UPGRADE_AUTO,	/* when the binary on disk is another file */
	SELF_UPGRADE_ALWAYS,
	SELF_UPGRADE_NEVER,
};

struct wrapper_options {
	gchar *haproxy;		/* --haproxy= */
	enum self_upgrade self_upgrade;
	guint stop_timeout_s;	/* SIGTERM/SIGINT, then SIGKILL after this */
	guint ready_timeout_s;	/* 0: wait as long as haproxy loads */
	gchar *runtime_dir;	/* --runtime-dir=, see rundir.h */
	gboolean seamless;	/* hand listeners over with -x (>= 1.8) */
	gint max_old_workers;	/* -1: no bound on draining generations */
	guint drain_timeout_s;	/* 0: drain as long as they like */
	gboolean takeover;	/* take over foreign instances at start */
	gboolean reuseport_migration;	/* migrate closing listeners' queues */
	enum mw_policy master_worker;	/* run haproxy -Ws behind us */
	enum fdstore_policy fd_store;	/* listeners kept across restarts */
};
