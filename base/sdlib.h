/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libsystemd calls the wrapper makes, with libsystemd loaded on
 * first need rather than at exec: mapping it and the six libraries it
 * pulls in cost every start half a millisecond before the first haproxy,
 * and most starts outside systemd never need it. Same return values as
 * libsystemd's own functions; -ELIBACC when it cannot be loaded
 * (sdlib_load_error() says why), and the next call tries again.
 */
#pragma once

#include <stdint.h>
#include <sys/uio.h>

/* sd_notify(0, state): 0 without $NOTIFY_SOCKET, libsystemd untouched. */
int sdlib_notify(const char *state);
/* sd_pid_notify_with_fds(0, 0, state, fds, n), likewise. */
int sdlib_notify_with_fds(const char *state, const int *fds, unsigned n);
/* sd_notify_barrier(0, timeout): returns once systemd has handled every
 * message sent before it; -EOPNOTSUPP before libsystemd 246. */
int sdlib_notify_barrier(uint64_t timeout_usec);
/* sd_watchdog_enabled(0, usec): 0 without $WATCHDOG_USEC, likewise. */
int sdlib_watchdog_enabled(uint64_t *usec);
/* sd_journal_sendv(iov, n). */
int sdlib_journal_sendv(const struct iovec *iov, int n);
/* Why libsystemd could not be loaded the last time it was tried (NULL:
 * it was loaded, or never tried). */
const char *sdlib_load_error(void);
