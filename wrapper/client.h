/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The client commands (--reload, --hard-reload, --status): talk to a
 * running wrapper over its control socket, print its answer, and exit
 * with its verdict. "--reload" is what ExecReload= should run: it returns
 * when the new generation serves (0) or has failed (1).
 */
#pragma once

#define EXIT_CLIENT_FAILED      1	/* the wrapper answered "error: ..." */
#define EXIT_CLIENT_UNREACHABLE 69	/* no wrapper answers (EX_UNAVAILABLE) */

int client_run(const char *socket_path, const char *command);
