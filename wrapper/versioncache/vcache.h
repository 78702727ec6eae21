/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * haproxy's version kept in systemd's CacheDirectory= ($CACHE_DIRECTORY)
 * when set, else in the runtime directory, so that a restart of
 * the wrapper does not run "haproxy -v" again for the same binary (tens of
 * ms of CPU: haproxy links and initialises most of itself to print it).
 * The key is the binary's identity: its path, device, inode, size, mtime
 * and ctime, so any change of the file (a package upgrade renames a new
 * one in: new inode; an edit in place: new mtime and ctime) means a new
 * probe. The file is believed only when it is a regular file of the
 * effective user, not writable by group or others, in a directory that
 * is ours and trusted (rundir_open()); anything else is ignored.
 */
#pragma once

#include <sys/stat.h>

#include "legacy/version.h"

#define VCACHE_FILE "haproxy-version"

/* In memory: "haproxy -v" is asked again only when the binary changed. */
struct version_cache {
	gchar *path;
	struct stat st;
	struct haproxy_version version;
};

/* Fill vc from the file in rundir (NULL: no trusted directory of ours)
 * for path (st), or store what vc holds there. */
gboolean version_cache_load(struct version_cache *vc, const char *rundir,
			    const char *path, const struct stat *st);
void version_cache_store(const struct version_cache *vc, const char *rundir);
