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

gssize fd_read_upto(int fd, void *buf, gsize size)
{
	char *p = buf;
	gsize total = 0;

	while (total < size) {
		ssize_t n = read(fd, p + total, size - total);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		total += (gsize)n;
	}
	return (gssize)total;
}
