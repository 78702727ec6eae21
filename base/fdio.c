/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/fdio.h"

#include <errno.h>
#include <unistd.h>

gboolean fd_write_all(int fd, const void *buf, gsize len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			errno = EIO;
		if (n <= 0)
			return FALSE;
		p += n;
		len -= (gsize)n;
	}
	return TRUE;
}
