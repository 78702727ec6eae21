/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reload state machine without processes, for t/unit/reloader*.c:
 * fake effects that record what the machine did ("probe", "answer 1: ok
 * ..."), the answers of its queries set in F, events posted by name, and
 * the first start and a reload taken to their usual states.
 */
#pragma once

#include <glib.h>

#include "wrapper/reloader.h"

/* Clients are opaque to the machine: small numbers stand for them. */
#define CLIENT(n) ((struct control_client *)GINT_TO_POINTER(n))

struct fake {
	struct reloader *r;
	GPtrArray *effects;	/* "probe", "answer 1: ok ...", ... */
	gboolean searching;
	gboolean adopted_serving;
	enum upgrade_choice upgrade;
	enum launch_kind launch;
	gboolean must_wait;
	gboolean retry_first;	/* what retry_first answers */
	gboolean stopping;	/* the life cycle's: set by a STOP */
};

/* The machine of the running test case and what its queries answer. */
extern struct fake F;

void setup(void);
void teardown(void);

/* The effects since the last call, in order, exactly these; NULL ends
 * the list. */
void expect(const char *first, ...);

void post(enum reload_event ev, const struct reload_input *in);
/* A reload asked by client n (0: none), or by a signal. */
void request(int client, int sig, gboolean hard);
void probed(const char *version);
void ready(const char *msg);
void failed(int code, const char *msg);
void assert_state(enum reload_state want);

/* The first start, up to a serving generation: no one waits, nothing
 * is recorded as a reload. */
void first_start(void);
/* A reload asked by client n, up to its loading generation. */
void reload_to_loading(int client);

/* Is any timer armed in the default main context (the machine's
 * deadline, the launcher's load timers)? */
gboolean t_timer_armed(void);
