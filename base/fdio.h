/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing a whole buffer to a descriptor, for files and stderr alike, and
 * reading one up to a bound. */
#pragma once

#include <glib.h>

/* Write the len bytes of buf to fd, going on after a short write or an
 * interrupted one. FALSE with errno set when a write fails; a write that
 * makes no progress fails with EIO. */
gboolean fd_write_all(int fd, const void *buf, gsize len);

/* Read from fd until size bytes or the end, going on after an interrupted
 * read: the number read, or -1 with errno set when a read fails. */
gssize fd_read_upto(int fd, void *buf, gsize size);
