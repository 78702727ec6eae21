/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/reuseport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "migrate/find.h"
#include "base/proc.h"
#include "base/procnet.h"
#include "base/log.h"

#define PROC_ROOT "/proc"

#define LOST "connections queued on a listener that a haproxy closes (a " \
	     "reload without -x, a takeover) are reset"

struct reuseport {
	gboolean enabled;
	gboolean load_tried;
	int prog_fd;
	gchar *state;		/* for status, see reuseport_state() */
	gboolean told_getfd;	/* one notice per cause */
	GHashTable *told_noreuseport;	/* group keys already told */
};

/* One round: the groups seen (attached or not), and how it went. */
struct round {
	GHashTable *groups;	/* keys (gchar *) */
	guint attached;
	gchar *failure;		/* the first, for status */
};

struct reuseport *reuseport_new(gboolean enabled)
{
	struct reuseport *r = g_new0(struct reuseport, 1);

	r->enabled = enabled;
	r->prog_fd = -1;
	r->state = g_strdup(enabled ? "pending" : "off");
	r->told_noreuseport = g_hash_table_new_full(g_str_hash, g_str_equal,
						    g_free, NULL);
	return r;
}

void reuseport_free(struct reuseport *r)
{
	if (!r)
		return;
	if (r->prog_fd >= 0)
		close(r->prog_fd);
	g_free(r->state);
	g_hash_table_unref(r->told_noreuseport);
	g_free(r);
}

const char *reuseport_state(const struct reuseport *r)
{
	return r->state;
}

static void set_state(struct reuseport *r, const char *prefix,
		      const char *why)
{
	g_free(r->state);
	r->state = why ? g_strconcat(prefix, ": ", why, NULL) :
			 g_strdup(prefix);
}

/*
 * r0 = SK_PASS; exit. Two instructions through bpf(2): libbpf would add a
 * library for what is one system call here. The descriptor is close-on-exec
 * (every bpf(2) descriptor is): haproxy never inherits it.
 */
static int load_program(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = SK_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static const char license[] = "GPL";
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SK_REUSEPORT;
	attr.expected_attach_type = BPF_SK_REUSEPORT_SELECT_OR_MIGRATE;
	attr.insns = GPOINTER_TO_SIZE(insns);
	attr.insn_cnt = G_N_ELEMENTS(insns);
	attr.license = GPOINTER_TO_SIZE(license);
	g_strlcpy(attr.prog_name, "hsw_migrate", sizeof(attr.prog_name));
	return (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

static const char *load_failure(int err)
{
	switch (err) {
	case EINVAL:
		return "this kernel has no BPF_SK_REUSEPORT_SELECT_OR_MIGRATE "
		       "(Linux >= 5.14)";
	case EPERM:
	case EACCES:
		return "loading its BPF program needs CAP_BPF (or "
		       "CAP_SYS_ADMIN)";
	case ENOSYS:
		return "this kernel has no bpf(2)";
	default:
		return g_strerror(err);
	}
}

gboolean reuseport_usable(struct reuseport *r)
{
	const char *why;

	if (!r->enabled || r->load_tried)
		return r->prog_fd >= 0;
	r->load_tried = TRUE;
	r->prog_fd = load_program();
	if (r->prog_fd >= 0)
		return TRUE;
	why = load_failure(errno);
	set_state(r, "unavailable", why);
	log_notice("SO_REUSEPORT migration unavailable: %s; %s: give the "
		   "wrapper CAP_BPF, or set net.ipv4.tcp_migrate_req=1 "
		   "(Linux >= 5.14)", why, LOST);
	return FALSE;
}

/* "127.0.0.1:80", "[::1]:443", then "%eth0" when bound to a device: a
 * group is the sockets sharing all of it. NULL if not an inet socket. */
static gchar *group_key(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char addr[INET6_ADDRSTRLEN] = "";
	char dev[IFNAMSIZ + 1] = "";
	socklen_t dev_len = IFNAMSIZ;
	gchar *key;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return NULL;
	if (getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, &dev_len) < 0)
		dev[0] = '\0';
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, addr, sizeof(addr));
		key = g_strdup_printf("%s:%u", addr, ntohs(in->sin_port));
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof(addr));
		key = g_strdup_printf("[%s]:%u", addr, ntohs(in6->sin6_port));
	} else {
		return NULL;
	}
	if (dev[0]) {
		gchar *with_dev = g_strconcat(key, "%", dev, NULL);

		g_free(key);
		key = with_dev;
	}
	return key;
}

static void round_fail(struct round *rd, gchar *why)
{
	if (!rd->failure)
		rd->failure = why;
	else
		g_free(why);
}

static void tell_getfd_refused(struct reuseport *r, struct round *rd,
			       GPid pid, int err)
{
	round_fail(rd, g_strdup_printf("cannot take the listeners of pid "
				       "%d: %s", pid, g_strerror(err)));
	if (r->told_getfd)
		return;
	r->told_getfd = TRUE;
	log_notice("SO_REUSEPORT migration: cannot take the listeners of "
		   "haproxy pid %d: %s (another user's, or one that switched "
		   "user); %s: give the wrapper CAP_SYS_PTRACE, or set "
		   "net.ipv4.tcp_migrate_req=1", pid, g_strerror(err), LOST);
}

static void tell_noreuseport(struct reuseport *r, struct round *rd,
			     GPid pid, const char *key)
{
	round_fail(rd, g_strdup_printf("%s has no SO_REUSEPORT", key));
	if (!g_hash_table_add(r->told_noreuseport, g_strdup(key)))
		return;
	log_notice("SO_REUSEPORT migration: haproxy pid %d listens on %s "
		   "without SO_REUSEPORT (noreuseport, or -dR): connections "
		   "queued on it are reset when a reload without -x closes "
		   "it; without noreuseport the kernel would move them to "
		   "the new haproxy", pid, key);
}

/* One listener of pid, taken as fd: attach unless its group had it in
 * this round. */
static void attach_listener(struct reuseport *r, struct round *rd, GPid pid,
			    int fd)
{
	g_autofree gchar *key = group_key(fd);
	int reuse = 0;
	socklen_t len = sizeof(reuse);

	if (!key || g_hash_table_contains(rd->groups, key))
		return;
	g_hash_table_add(rd->groups, g_strdup(key));
	if (getsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &reuse, &len) < 0 ||
	    !reuse) {
		tell_noreuseport(r, rd, pid, key);
		return;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &r->prog_fd,
		       sizeof(r->prog_fd)) < 0) {
		int err = errno;

		round_fail(rd, g_strdup_printf("%s: %s", key,
					       g_strerror(err)));
		log_notice("SO_REUSEPORT migration: cannot attach to %s of "
			   "haproxy pid %d: %s", key, pid, g_strerror(err));
		return;
	}
	rd->attached++;
}

static void attach_process(struct reuseport *r, struct round *rd, int pidfd,
			   GPid pid)
{
	/* Which of its sockets listen: its namespace's listeners first,
	 * one cheap question, then only those are duplicated. */
	g_autoptr(GHashTable) listening = proc_tcp_listeners(pid);
	g_autofree gchar *dir_path = g_strdup_printf(PROC_ROOT "/%d/fd", pid);
	g_autoptr(GDir) dir = NULL;
	g_autoptr(GError) error = NULL;
	const char *name;

	if (g_hash_table_size(listening) == 0)
		return;
	dir = g_dir_open(dir_path, 0, &error);
	/* Another user's, or one that switched user: not dumpable. */
	if (!dir && g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_ACCES))
		tell_getfd_refused(r, rd, pid, EACCES);
	if (!dir)
		return;
	while ((name = g_dir_read_name(dir))) {
		guint64 inode = proc_socket_inode(pid, name);
		int fd, err;

		if (!inode || !g_hash_table_contains(listening, &inode))
			continue;
		fd = pidfd_getfd(pidfd, atoi(name), 0);
		err = errno;
		if (fd < 0 && err == EBADF)	/* closed meanwhile */
			continue;
		if (fd < 0) {
			if (err == EPERM || err == EACCES)
				tell_getfd_refused(r, rd, pid, err);
			return;
		}
		attach_listener(r, rd, pid, fd);
		close(fd);
	}
}

/* One line for all the listeners of pid this round attached: a
 * configuration with thousands of binds writes one line a reload, not one
 * a listener. */
static void attach_process_told(struct reuseport *r, struct round *rd,
				int pidfd, GPid pid)
{
	guint before = rd->attached;

	attach_process(r, rd, pidfd, pid);
	if (rd->attached > before)
		log_debug("SO_REUSEPORT migration on for %u listeners of "
			  "haproxy pid %d", rd->attached - before, pid);
}

static void round_begin(struct round *rd)
{
	*rd = (struct round){
		.groups = g_hash_table_new_full(g_str_hash, g_str_equal,
						g_free, NULL),
	};
}

/* The state after a round that found groups; one that found none (gone
 * meanwhile) changes nothing. */
static void round_end(struct reuseport *r, struct round *rd)
{
	if (rd->failure)
		set_state(r, rd->attached ? "partial" : "unavailable",
			  rd->failure);
	else if (rd->attached)
		set_state(r, "active", NULL);
	g_hash_table_unref(rd->groups);
	g_free(rd->failure);
}

guint reuseport_attach_pidfd(struct reuseport *r, int pidfd, GPid pid)
{
	struct round rd;
	guint attached;

	if (!reuseport_usable(r))
		return 0;
	round_begin(&rd);
	attach_process_told(r, &rd, pidfd, pid);
	attached = rd.attached;
	round_end(r, &rd);
	return attached;
}

/* A process of a round, through a pidfd that names it; skipped if gone. */
static void round_add_pidfd(struct reuseport *r, struct round *rd, int pidfd,
			    GPid pid)
{
	if (pidfd < 0)
		return;
	attach_process_told(r, rd, pidfd, pid);
	close(pidfd);
}

void reuseport_attach_generation(struct reuseport *r,
				 const struct generation *g)
{
	g_autoptr(GArray) children = NULL;
	const GArray *workers = g->workers;
	struct round rd;

	/* A reaped pid may already be someone else's. */
	if (g->exited || !reuseport_usable(r))
		return;
	round_begin(&rd);
	/* Our own child, not reaped: the pid is still it. A -Ds parent is
	 * ready before it forks, and closes its listeners after: looked at
	 * first, then its workers, one of them holds them. */
	round_add_pidfd(r, &rd, pidfd_open(g->pid, 0), g->pid);
	if (g->mode == LAUNCH_DS)
		workers = children = proc_children(g->pid);
	for (guint i = 0; workers && i < workers->len; i++) {
		GPid w = g_array_index(workers, GPid, i);

		round_add_pidfd(r, &rd, proc_open_if_child_of(w, g->pid), w);
	}
	round_end(r, &rd);
}

/* pid's pidfd if it still is the process that started at start_time. */
static int open_same_process(GPid pid, guint64 start_time)
{
	int fd = pidfd_open(pid, 0);

	if (fd >= 0 && !proc_same_process_at(PROC_ROOT, pid, start_time)) {
		close(fd);
		return -1;
	}
	return fd;
}

void reuseport_attach_foreign(struct reuseport *r, const GPtrArray *instances)
{
	struct round rd;

	if (!instances || instances->len == 0 || !reuseport_usable(r))
		return;
	round_begin(&rd);
	for (guint i = 0; i < instances->len; i++) {
		const struct foreign *f = g_ptr_array_index(
			(GPtrArray *)instances, i);

		round_add_pidfd(r, &rd, open_same_process(f->pid,
							  f->start_time),
				f->pid);
		for (guint j = 0; j < f->workers->len; j++)
			round_add_pidfd(
				r, &rd,
				open_same_process(
					g_array_index(f->workers, GPid, j),
					g_array_index(f->worker_start_times,
						      guint64, j)),
				g_array_index(f->workers, GPid, j));
	}
	round_end(r, &rd);
}
