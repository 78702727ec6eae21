/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Configuration text scanned for its hints as the wrapper scans a file
 * (config_hints_read_paths), from memory: a memfd named by its
 * /proc/self/fd path. A header, for the unit tests and the fuzz targets
 * that link no harness.
 */
#pragma once

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <glib.h>

#include "legacy/config.h"

static inline struct config_hints t_config_hints(const char *text, gsize len)
{
	struct config_hints h;
	int fd = memfd_create("haproxy.cfg", MFD_CLOEXEC);
	g_autofree gchar *path = g_strdup_printf("/proc/self/fd/%d", fd);
	const char *const paths[] = { path, NULL };

	if (fd < 0 || write(fd, text, len) != (gssize)len)
		g_error("a configuration in memory: %s", g_strerror(errno));
	config_hints_read_paths(paths, &h);
	close(fd);
	return h;
}
