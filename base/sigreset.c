/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/sigreset.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fdlimit.h"

/* The kernel's struct sigaction, for the raw system call. */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

void signals_reset_for_exec(gpointer unused)
{
	const struct kernel_sigaction dfl = { .handler = SIG_DFL };
	sigset_t none;

	/* The raw call: glibc's sigaction() refuses its own two real-time
	 * signals, and a parent may hand them to us ignored (make does). */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL,
				sizeof(dfl.mask));
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* haproxy sizes itself from the limits it inherits: the unit's. */
	fdlimit_restore_for_exec();
}
