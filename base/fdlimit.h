/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wrapper's descriptor limit, and the budget its features share.
 *
 * systemd starts a service with LimitNOFILE=1024:524288 unless the unit
 * says otherwise: a soft limit of 1024 that the process may raise itself.
 * The wrapper raises its own soft limit to the hard one at start, since
 * what it holds grows with the configuration (SO_REUSEPORT steering takes
 * two descriptors a bound address, a restart hands back one for each
 * listening socket systemd kept). haproxy must not see that: it sizes
 * itself (maxconn, its own limit) from the limits it inherits, which stay
 * the unit's. Every child gets the original soft limit back between fork
 * and exec (fdlimit_restore_for_exec()), and so does an exec of the
 * wrapper's own process (the hand-off, a self-upgrade).
 *
 * What is free is counted, not guessed: the soft limit less the
 * descriptors open now, less a reserve for the wrapper's own work.
 */
#pragma once

#include <glib.h>

/*
 * Kept free for the wrapper's own work whatever steering takes: one batch
 * of listening sockets being stored (252, the -x exchange's batch),
 * control clients, probes' pipes, pidfds, the notify socket.
 */
#define FDLIMIT_RESERVE 512

/* The soft limit raised to the hard one; the original is kept for the
 * children. Once, before anything is spawned. */
void fdlimit_raise(void);
/* In a child between fork and exec, or before an exec of this process:
 * the soft limit as the wrapper was started with. Async-signal-safe. */
void fdlimit_restore_for_exec(void);
/* After an exec of this process failed: raised again. */
void fdlimit_raise_again(void);
/* How many more it may open, the reserve kept: the soft limit less what
 * is in use less FDLIMIT_RESERVE, or 0. */
guint fdlimit_free(void);
/* The soft limit the wrapper was started with: the unit's, which the
 * next start gets too. */
guint fdlimit_unit_soft(void);
/* The unit's LimitNOFILE= is too low for what (at least at_least, or 0
 * when unknown): one notice for the wrapper's life, whatever asks,
 * naming the setting to raise. */
void fdlimit_tell_short(const char *what, guint at_least);
