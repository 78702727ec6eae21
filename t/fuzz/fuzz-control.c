/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: whatever a client writes to the control socket. The
 * verdict must not depend on what follows the first newline, a command
 * must be one of the words exactly, and an error must say why.
 */
#include "wrapper/protocol.h"
#include "t/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_glib_fatal();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	const char *error, *again_error;
	const char *nl = memchr(buf, '\n', size);
	enum control_command cmd = control_parse(buf, size, &error);
	enum control_command again;

	FUZZ_CHECK((cmd == CMD_INVALID) == (error != NULL));
	if (cmd == CMD_INCOMPLETE) {
		/* No newline yet, and not too long to wait for one. */
		FUZZ_CHECK(!nl && size <= CONTROL_MAX_LINE);
		return 0;
	}
	if (nl) {
		/* Only the first line counts. */
		again = control_parse(buf, nl - buf + 1, &again_error);
		FUZZ_CHECK(again == cmd);
	}
	if (cmd != CMD_INVALID)
		FUZZ_CHECK(nl && nl - buf <= CONTROL_MAX_LINE &&
			   !memchr(buf, '\0', nl - buf));
	return 0;
}
