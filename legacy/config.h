/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A glance at haproxy's configuration files for the few global keywords
 * that decide how the wrapper must launch it (legacy/mworker.h). Not a
 * parser of haproxy's language: haproxy itself judges the configuration.
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "legacy/mworker.h"

/*
 * Scan every configuration haproxy would load from these arguments: each
 * -f and each path after "--", a directory meaning its *.cfg files in
 * name order, relative paths taken from -C like haproxy does. Files that
 * cannot be read are skipped: haproxy will say what is wrong with them.
 * Their words are read as haproxy reads them (legacy/cfgwords.h), with
 * the variables of the environment haproxy gets (legacy/launch.h).
 */
void config_hints_read(const struct wrapper_args *a, const char *cwd,
		       struct config_hints *hints);

/* The same over files and directories named by absolute paths. */
void config_hints_read_paths(const char *const *paths,
			     struct config_hints *hints);
