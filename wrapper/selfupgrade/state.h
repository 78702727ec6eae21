/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The upgrade state: what a wrapper hands to its own new image when it
 * upgrades itself in place (not the hand-off into -Ws, migrate/handoff.c):
 * its haproxy generations (still its children after the exec), the
 * haproxy it adopted after a restart by hand (not its children: proven
 * again after the exec) and the reload it was asked for. Carried in one environment variable; read
 * back with suspicion, since a leaked variable may name anyone's pids.
 */
#pragma once

#include <glib.h>

#include "migrate/adopt.h"
#include "wrapper/generation.h"

#define STATE_ENV "HAPROXY_WRAPPER_STATE"
#define STATE_FORMAT 1

/* A control client waiting for the verdict of reload attempt "target". */
struct upgrade_waiter {
	int fd;
	guint target;
};

struct upgrade_state {
	guint next_number;
	guint reloads;
	guint reloads_failed;	/* these three: "name=value" tokens */
	guint takeovers;
	guint restarts_adopted;	/* restarts by hand adopted (migrate/adopt.h) */
	guint adoptions;
	int reload_signal;	/* the reload that triggered the upgrade */
	gboolean reload_pending;	/* one more was asked for meanwhile */
	guint attempt;		/* the number of that reload attempt */
	gboolean hard;		/* it uses -st */
	gboolean pending_hard;
	GPtrArray *gens;	/* struct generation *, pids not yet verified */
	GArray *adopted;	/* struct adopt_row, not yet verified */
	GArray *waiters;	/* struct upgrade_waiter */
	int notify_fd;		/* a master's notify socket; -1: none */
	/* The pid the old image wrote in the pidfile (gentable.h), a
	 * "pidfile_pid=" token; 0: none, or an older image's state. */
	guint pidfile_pid;
	/* The pipe of haproxy's stderr (wrapper/hastderr.h), both ends,
	 * "stderr_rfd=", "stderr_wfd=" tokens; 0: none. */
	guint stderr_rfd;
	guint stderr_wfd;
};

gchar *state_serialize(const struct upgrade_state *h);

/* FALSE on anything malformed; h is then left empty. */
gboolean state_parse(const char *text, struct upgrade_state *h);

/* What can be read of a state state_parse() refused: the header (else
 * defaults), and every token that parses; how many did not. h is what
 * that state_parse() left (its arrays are freed here), or zeroed. */
guint state_salvage(const char *text, struct upgrade_state *h);

void upgrade_state_clear(struct upgrade_state *h);
