/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Timers that outlive their owner, on the real haproxy (Debian's 2.6):
 * once the wrapper stops, the timers of a reload still loading (the
 * --ready-timeout, systemd's EXTEND_TIMEOUT_USEC) are the stop's no
 * more: only --stop-timeout bounds what is left. Order, not time, is
 * what the test relies on: both load timers were armed before the stop,
 * and are shorter than the stop's.
 */
#include <glib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "base/proc.h"
#include "t/lib/faults.h"

#define LOG_NOT_READY_AFTER	"not ready after "
#define LOG_STILL_RUNNING	"after the stop; SIGKILL"

/* The index of the first line of w's with needle, or -1. */
static gint first_line(Wrapper *w, const char *needle)
{
	/* Everything it said, read to its end. */
	wrapper_find_log(w, needle);
	for (guint i = 0; i < w->lines->len; i++)
		if (strstr(g_ptr_array_index(w->lines, i), needle))
			return (gint)i;
	return -1;
}

/* Each datagram the wrapper sent, in order, until none comes. */
static GPtrArray *notify_all(struct t_notify *n)
{
	GPtrArray *all = g_ptr_array_new_with_free_func(g_free);
	gchar *msg;

	while ((msg = t_notify_recv(n, 0)))
		g_ptr_array_add(all, msg);
	return all;
}

/*
 * A reload's generation stuck while it loads (held at the gate, then
 * SIGSTOPped: it takes no SIGTERM), and the wrapper stopped meanwhile,
 * with --ready-timeout=2 and --stop-timeout=11 under a NOTIFY_SOCKET.
 * The ready timer (2 s) and the extend timer (every 10 s) were armed at
 * its launch, before the stop; the stop's timer (11 s after it) fires
 * after both would have. After the stop: no "not ready, killing" line,
 * no EXTEND_TIMEOUT_USEC=, which under systemd would prolong its stop
 * timeout past TimeoutStopSec=; the stop's own SIGKILL ends it.
 */
static void test_stop_during_loading_reload(void)
{
	const char *opts[] = { "--ready-timeout=2", "--stop-timeout=11",
			       NULL };
	g_autoptr(GPtrArray) datagrams = NULL;
	g_auto(TNotify) n = { .fd = -1, .skip_extend = FALSE };
	g_auto(TSite) f = { 0 };
	gint stop_at, line;
	gboolean stopping = FALSE;
	GPid gen1, gen2;
	int status;

	if (!fx_init_real_gated(&f))
		return;
	t_notify_open(&n, f.dir);
	t_site_setenv(&f, "NOTIFY_SOCKET", n.path);
	t_site_start_wrapper(&f, NULL, opts);
	gen1 = fx_serving(&f, 1);

	fx_close_gate(&f);
	wrapper_signal(f.w, SIGUSR2);
	fx_wait_gate_entered(&f);
	gen2 = fx_gate_pid(&f);
	/* Our own: the wrapper's child, its generation 2. */
	g_assert_cmpint(proc_parent(gen2), ==, f.w->pid);
	g_assert_cmpint(kill(gen2, SIGSTOP), ==, 0);
	g_assert_true(t_wait_stopped(gen2));

	wrapper_signal(f.w, SIGTERM);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	status = wrapper_wait_exit(f.w, 2 * T_WAIT);
	g_assert_cmpint(status, !=, -1);
	g_assert_true(t_wait_gone(gen2, T_WAIT));
	fx_open_gate(&f);

	stop_at = first_line(f.w, "SIGTERM from pid ");
	g_assert_cmpint(stop_at, >=, 0);
	line = first_line(f.w, LOG_NOT_READY_AFTER);
	if (line >= 0)
		g_test_message("%s", (char *)g_ptr_array_index(f.w->lines,
							       line));
	g_assert_cmpint(line, <, stop_at);
	/* It was the stop that ended generation 2, once its time was up. */
	line = first_line(f.w, LOG_STILL_RUNNING);
	g_assert_cmpint(line, >, stop_at);

	datagrams = notify_all(&n);
	for (guint i = 0; i < datagrams->len; i++) {
		const char *msg = g_ptr_array_index(datagrams, i);

		stopping |= g_str_has_prefix(msg, "STOPPING=1");
		if (stopping && strstr(msg, "EXTEND_TIMEOUT_USEC="))
			g_test_message("after STOPPING=1: %s", msg);
		g_assert_false(stopping &&
			       strstr(msg, "EXTEND_TIMEOUT_USEC="));
	}
	g_assert_true(stopping);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/timers/stop-during-loading-reload",
			test_stop_during_loading_reload);
	return g_test_run();
}
