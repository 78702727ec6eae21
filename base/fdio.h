/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing a whole buffer to a descriptor, for files and stderr alike. */
#pragma once

#include <glib.h>

/* Write the len bytes of buf to fd, going on after a short write or an
 * interrupted one. FALSE with errno set when a write fails; a write that
 * makes no progress fails with EIO. */
gboolean fd_write_all(int fd, const void *buf, gsize len);
