/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket: a unix stream socket, mode 0600, in the instance's
 * runtime directory. A client sends one command line ("reload",
 * "hard-reload", "status", "status json") and reads the answer: zero or
 * more lines, then "ok ..." or "error: ...", then end of file. A reload
 * is answered when it has finished, however long haproxy takes.
 * Garbage, long lines, slow or many clients never block the wrapper: every
 * socket is non-blocking and every client is bounded in size and time.
 */
#pragma once

#include <glib.h>

#include "wrapper/protocol.h"

struct control;
struct control_client;

/* A well-formed command (protocol.h). The handler answers now or later
 * with control_reply(); the client stays open until then. */
typedef void (*control_fn)(struct control_client *c,
			   enum control_command command, gpointer data);

struct control *control_listen(const char *path, control_fn fn,
			       gpointer data, GError **error);

/* Send text (its last line "ok ..." or "error: ..."), then close. */
void control_reply(struct control_client *c, const char *text);
/* The socket's file goes, the listener stays (the hand-off, just before
 * its exec closes it); control_relisten() binds the path anew (its exec
 * failed), the clients kept. */
void control_unlink(struct control *ctl);
gboolean control_relisten(struct control *ctl, GError **error);

/* Send text before returning, and keep the client: before an exec, whose
 * success closes the connection (close-on-exec) and whose failure is
 * answered after it with control_reply(), the last line being the
 * verdict. Blocks at most a moment: answers are short. */
void control_send_now(struct control_client *c, const char *text);

/* A client waiting for its answer, as a descriptor to hand over across a
 * self re-exec (inheritable only for the exec), taken back by the new
 * image. */
int control_client_fd(struct control_client *c);
void control_client_inheritable(struct control_client *c, gboolean yes);
struct control_client *control_adopt(struct control *ctl, int fd);

/* Stop listening, remove the socket, drop every client. */
void control_free(struct control *ctl);
