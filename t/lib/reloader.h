/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reload state machine without processes, for t/unit/reloader*.c:
 * the one fake of its effects, which records what the machine did
 * ("probe", "answer 1: ok ...") or tells it to an observer (the rules of
 * t/unit/reloader-props.c), the answers of its queries set in F, events
 * posted by name, and the first start and a reload taken to their usual
 * states.
 */
#pragma once

#include <glib.h>

#include "wrapper/reloader.h"

/* Clients are opaque to the machine: small numbers stand for them. */
#define CLIENT(n) ((struct control_client *)GINT_TO_POINTER(n))

/* An effect of the machine, as the fake tells an observer. */
enum fake_op {
	FO_NOTIFY_RELOADING,
	FO_BEGIN_UPGRADE,
	FO_PROBE,
	FO_LAUNCH,		/* v; before it answers F.launch */
	FO_KILL_LOADING,
	FO_SEARCH,		/* quick */
	FO_LOG_FAILURE,		/* how, text */
	FO_STOP_SERVICE,	/* code; before F.stopping and RE_STOP */
	FO_NOTIFY_READY,
	FO_ANSWER,		/* client, text */
	FO_END_ATTEMPT,
	FO_SCHEDULE_PENDING,
	FO_ABANDON_HANDOFF,
	FO_RETRY_FIRST,		/* code, text */
};

struct fake_call {
	enum fake_op op;
	const struct haproxy_version *v;
	gboolean quick;
	enum reload_failure how;
	int code;
	guint client;
	const char *text;
};

struct fake {
	struct reloader *r;
	/* Set: told each effect, which is not recorded in effects. */
	void (*observe)(const struct fake_call *call);
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
