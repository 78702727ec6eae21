/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Upgrading the wrapper in place: when a package replaced the wrapper's
 * binary, a reload re-executes the new one in the same pid (systemd's
 * MainPID does not change), after making sure that the new binary runs.
 * The wrapper finds itself through /proc/self/exe, never through argv[0].
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "wrapper/probe.h"

struct self_image {
	gchar *path;		/* where the running binary was loaded from */
	dev_t dev;		/* the running file's identity */
	ino_t ino;
	dev_t tried_dev;	/* the file its last dry run ran */
	ino_t tried_ino;
};

/* FALSE when /proc/self/exe cannot be read (no self-upgrade then). */
gboolean self_image_init(struct self_image *self);
void self_image_clear(struct self_image *self);

/* Is the file at self->path now another file than the one running? */
gboolean self_image_replaced(const struct self_image *self);

/* The option of the dry run: "<new image> --upgrade-dry-run <the
 * running wrapper's arguments>", the state in the environment. The new
 * image parses all of it as its exec would, acts on nothing, and prints
 * what --upgrade-check prints; an image without it exits 64. */
#define UPGRADE_DRY_RUN "upgrade-dry-run"

/* Runs the dry run; the answer goes to upgrade_check_passed. */
struct probe *upgrade_dry_run_start(struct self_image *self,
				    char **orig_argv, const char *state,
				    probe_fn done, gpointer data);

/* In the new image, its command line parsed: the state too. */
gboolean upgrade_dry_run(void);
/* needs_master_worker: the state to hand over holds a master (format 1
 * with masters is read only by images that say so). */
gboolean upgrade_check_passed(const char *output, int wait_status,
			      gboolean needs_master_worker);

/* What --upgrade-check prints: name, version, what upgrade state it
 * takes ("handover master-worker": the historic token, kept for older
 * images), upgrade state format. */
void upgrade_check_print(void);

/* Is the file at self->path still the one the dry run ran? */
gboolean upgrade_dry_run_same_image(const struct self_image *self);

/* execv() the new image with state in the environment. Returns only on
 * failure, after logging it; the caller carries on in the old image. */
void upgrade_exec(const struct self_image *self, char **argv,
		  const char *state);
