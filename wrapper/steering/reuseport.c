/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/steering/reuseport.h"

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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "migrate/find.h"
#include "base/proc.h"
#include "base/procnet.h"
#include "base/fdlimit.h"
#include "base/log.h"


#define LOST "connections queued on a listener that a haproxy closes (a " \
	     "reload without -x, a takeover) are reset"

/* A group's own program, which selects the one socket its map holds. */
struct steer_group {
	int map_fd;
	int prog_fd;
};

struct reuseport {
	gboolean enabled;
	gboolean load_tried;
	int prog_fd;
	gchar *state;		/* for status, see reuseport_state() */
	gboolean told_getfd;	/* one notice per cause */
	GHashTable *told_noreuseport;	/* group keys already told */
	gboolean told_steering;	/* steering unavailable: told once */
	const char *unusable;	/* why the program could not be loaded */
	gboolean told_unusable;	/* that, told once where it costs */
	GHashTable *steer;	/* group key -> struct steer_group * */
};

struct round;
typedef void (*listener_fn)(struct reuseport *r, struct round *rd, GPid pid,
			    int fd);

/* One round: the groups seen (attached or not), and how it went. */
struct round {
	listener_fn on_listener;
	GHashTable *groups;	/* keys (gchar *) */
	GHashTable *inodes;	/* steering: key -> its socket's inode */
	guint attached;
	guint steerable;	/* attached with their own steering program */
	guint steered;		/* map entries set (steering rounds) */
	guint fd_free;		/* descriptors steering may still take */
	gchar *failure;		/* the first, for status */
};

static void steer_group_free(gpointer data)
{
	struct steer_group *sg = data;

	close(sg->prog_fd);
	close(sg->map_fd);
	g_free(sg);
}

struct reuseport *reuseport_new(gboolean enabled)
{
	struct reuseport *r = g_new0(struct reuseport, 1);

	r->enabled = enabled;
	r->prog_fd = -1;
	r->state = g_strdup(enabled ? "pending" : "off");
	r->told_noreuseport = g_hash_table_new_full(g_str_hash, g_str_equal,
						    g_free, NULL);
	r->steer = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					 steer_group_free);
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
	g_hash_table_unref(r->steer);
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
/* An SK_REUSEPORT program that may migrate a closing listener's queue. */
static int load_reuseport_program(const struct bpf_insn *insns, guint n,
				  const char *name)
{
	static const char license[] = "GPL";
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SK_REUSEPORT;
	attr.expected_attach_type = BPF_SK_REUSEPORT_SELECT_OR_MIGRATE;
	attr.insns = GPOINTER_TO_SIZE(insns);
	attr.insn_cnt = n;
	attr.license = GPOINTER_TO_SIZE(license);
	g_strlcpy(attr.prog_name, name, sizeof(attr.prog_name));
	return (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

static int load_program(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = SK_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return load_reuseport_program(insns, G_N_ELEMENTS(insns),
				      "hsw_migrate");
}

/* One socket, key 0: the socket a group's new handshakes go to. */
static int create_steer_map(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_REUSEPORT_SOCKARRAY;
	attr.key_size = sizeof(__u32);
	attr.value_size = sizeof(__u64);
	attr.max_entries = 1;
	g_strlcpy(attr.map_name, "hsw_steer", sizeof(attr.map_name));
	return (int)syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
}

/*
 * key = 0; bpf_sk_select_reuseport(ctx, map, &key, 0); return SK_PASS.
 * While the map is empty, or holds a socket that has closed since (the
 * kernel then clears the entry), the select fails and the kernel picks by
 * its hash as it would without a program (reuseport_select_sock); on a
 * listener's close, it moves the queue (reuseport_migrate_sock) to the
 * map's socket, or by hash. Nine instructions, written out for the same
 * reason as load_program's two.
 */
static int load_steer_program(int map_fd)
{
	struct bpf_insn insns[] = {
		/* *(u32 *)(r10 - 4) = 0: the key, on the stack */
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10,
		  .off = -4, .imm = 0 },
		/* r2 = the map (two instructions: a 64-bit immediate) */
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_2,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		/* r3 = r10 - 4: &key */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_3,
		  .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_3,
		  .imm = -4 },
		/* r4 = 0: flags; r1 is still the context */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4,
		  .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_sk_select_reuseport },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = SK_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return load_reuseport_program(insns, G_N_ELEMENTS(insns), "hsw_steer");
}

static gboolean map_set(int map_fd, int sock_fd)
{
	__u32 key = 0;
	__u64 value = (__u64)sock_fd;
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = GPOINTER_TO_SIZE(&key);
	attr.value = GPOINTER_TO_SIZE(&value);
	attr.flags = BPF_ANY;
	return syscall(SYS_bpf, BPF_MAP_UPDATE_ELEM, &attr, sizeof(attr)) == 0;
}

/* Back to the kernel's hash (ENOENT: already empty). */
static void map_clear(int map_fd)
{
	__u32 key = 0;
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = GPOINTER_TO_SIZE(&key);
	syscall(SYS_bpf, BPF_MAP_DELETE_ELEM, &attr, sizeof(attr));
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
	/* Told where it costs something (tell_unusable), not here: with
	 * -x no listener closes. */
	r->unusable = why;
	return FALSE;
}

/* The kernel moves a closing listener's queue itself. */
static gboolean kernel_migrates(void)
{
	g_autofree gchar *value = NULL;

	return g_file_get_contents("/proc/sys/net/ipv4/tcp_migrate_req",
				   &value, NULL, NULL) &&
	       g_str_has_prefix(value, "1");
}

/* Once, where a listener is about to close with its queue (a reload
 * without -x, a takeover, an adopted haproxy retired), unless the kernel
 * migrates it anyway. */
static void tell_unusable(struct reuseport *r)
{
	if (!r->unusable || r->told_unusable)
		return;
	r->told_unusable = TRUE;
	if (kernel_migrates())
		return;
	log_notice("SO_REUSEPORT migration unavailable: %s; a closing "
		   "listener resets its queue", r->unusable);
}

static void tell_steering_unavailable(struct reuseport *r, int err)
{
	if (r->told_steering)
		return;
	r->told_steering = TRUE;
	log_notice("SO_REUSEPORT steering unavailable: %s; queues still "
		   "migrate, but a handshake that completes as its listener "
		   "closes may be reset", g_strerror(err));
}

/*
 * A steering program keeps two descriptors open for its group. With
 * thousands of binds they could take the descriptors the wrapper needs
 * for everything else, the fd store among them: a group gets one only
 * while what is free (the limit less what is open, less the reserve of
 * base/fdlimit.h) has room for its two. What is free is counted once a
 * round (rd->fd_free), then kept up to date as groups take theirs.
 */
#define STEER_GROUP_FDS 2

/* The group's steering program, loaded at its first need; NULL where it
 * cannot be (the plain program then migrates its queues). */
static struct steer_group *steer_group_get(struct reuseport *r,
					   struct round *rd, const char *key)
{
	struct steer_group *sg = g_hash_table_lookup(r->steer, key);
	int map_fd, prog_fd, err;

	if (sg)
		return sg;
	if (rd->fd_free < STEER_GROUP_FDS) {
		fdlimit_tell_short("SO_REUSEPORT steering of every bound "
				   "address (two descriptors each)", 0);
		return NULL;
	}
	map_fd = create_steer_map();
	err = errno;
	prog_fd = map_fd >= 0 ? load_steer_program(map_fd) : -1;
	if (prog_fd < 0) {
		if (map_fd >= 0) {
			err = errno;
			close(map_fd);
		}
		tell_steering_unavailable(r, err);
		return NULL;
	}
	rd->fd_free -= STEER_GROUP_FDS;
	sg = g_new0(struct steer_group, 1);
	*sg = (struct steer_group){ .map_fd = map_fd, .prog_fd = prog_fd };
	g_hash_table_insert(r->steer, g_strdup(key), sg);
	return sg;
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

/* The user that created the socket, whose uid the kernel compares. */
static uid_t socket_owner(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_uid : (uid_t)-1;
}

/* One listener of pid, taken as fd: attach unless its group had it in
 * this round. The group's steering program where it can be had, else
 * the plain one. */
static void attach_listener(struct reuseport *r, struct round *rd, GPid pid,
			    int fd)
{
	g_autofree gchar *key = group_key(fd);
	int reuse = 0;
	socklen_t len = sizeof(reuse);
	struct steer_group *sg;
	int prog_fd;

	if (!key || g_hash_table_contains(rd->groups, key))
		return;
	g_hash_table_add(rd->groups, g_strdup(key));
	if (getsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &reuse, &len) < 0 ||
	    !reuse) {
		tell_noreuseport(r, rd, pid, key);
		return;
	}
	sg = steer_group_get(r, rd, key);
	prog_fd = sg ? sg->prog_fd : r->prog_fd;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &prog_fd,
		       sizeof(prog_fd)) < 0) {
		int err = errno;

		round_fail(rd, g_strdup_printf("%s: %s", key,
					       g_strerror(err)));
		log_notice("SO_REUSEPORT migration: cannot attach to %s of "
			   "haproxy pid %d: %s", key, pid, g_strerror(err));
		return;
	}
	rd->attached++;
	/* Only a socket of our user's lets our haproxy join its group
	 * without -sf's pause (the kernel's SO_REUSEPORT rule). */
	rd->steerable += sg != NULL && socket_owner(fd) == geteuid();
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
		rd->on_listener(r, rd, pid, fd);
		/* A copy kept would keep the listener open. */
		close(fd);
	}
}

/* One line for all the listeners of pid this round attached: a
 * configuration with thousands of binds writes one line a reload, not one
 * a listener. */
static void attach_process_told(struct reuseport *r, struct round *rd,
				int pidfd, GPid pid)
{
	guint before = rd->attached, steered = rd->steered;

	attach_process(r, rd, pidfd, pid);
	if (rd->attached > before)
		log_debug("SO_REUSEPORT migration on for %u listeners of "
			  "haproxy pid %d", rd->attached - before, pid);
	if (rd->steered > steered)
		log_debug("SO_REUSEPORT steering to %u listeners of haproxy "
			  "pid %d", rd->steered - steered, pid);
}

static void round_begin(struct round *rd)
{
	*rd = (struct round){
		.on_listener = attach_listener,
		.groups = g_hash_table_new_full(g_str_hash, g_str_equal,
						g_free, NULL),
		.inodes = g_hash_table_new_full(g_str_hash, g_str_equal,
						g_free, g_free),
		.fd_free = fdlimit_free(),
	};
}

/* Every group the round saw got its steering program. */
static gboolean round_all_steerable(const struct round *rd)
{
	return !rd->failure && rd->attached > 0 &&
	       rd->steerable == g_hash_table_size(rd->groups);
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
	g_hash_table_unref(rd->inodes);
	g_free(rd->failure);
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

static gboolean not_in_round(gpointer key, gpointer value, gpointer data)
{
	const struct round *rd = data;

	return !g_hash_table_contains(rd->groups, key);
}

/* A group the serving generation no longer listens on closes with the
 * old one: its descriptors go (the kernel keeps what is attached). */
static void prune_steer_groups(struct reuseport *r, struct round *rd)
{
	if (rd->attached > 0)
		g_hash_table_foreach_remove(r->steer, not_in_round, rd);
}

/* Every process of g that may hold its listeners. */
static void round_add_generation(struct reuseport *r, struct round *rd,
				 const struct generation *g)
{
	g_autoptr(GArray) children = NULL;
	const GArray *workers = g->workers;

	/* Our own child, not reaped yet, so the pid still names it. A -Ds
	 * parent is ready before it forks its workers and closes its
	 * listeners afterwards: it is looked at first, then its workers,
	 * one of which holds them. */
	round_add_pidfd(r, rd, pidfd_open(g->pid, 0), g->pid);
	if (g->mode == LAUNCH_DS)
		workers = children = proc_children(g->pid);
	for (guint i = 0; workers && i < workers->len; i++) {
		GPid w = g_array_index(workers, GPid, i);

		round_add_pidfd(r, rd, proc_open_if_child_of(w, g->pid), w);
	}
}

gboolean reuseport_attach_generation(struct reuseport *r,
				     const struct generation *g)
{
	struct round rd;
	gboolean steerable;

	/* A reaped pid may already be someone else's. */
	if (g->exited)
		return FALSE;
	if (!reuseport_usable(r)) {
		/* It replaced one whose listeners close (no -x). */
		if (g->number > 1 && !g->took_listeners)
			tell_unusable(r);
		return FALSE;
	}
	round_begin(&rd);
	round_add_generation(r, &rd, g);
	steerable = round_all_steerable(&rd);
	prune_steer_groups(r, &rd);
	round_end(r, &rd);
	return steerable;
}

/*
 * One listener of the new generation: its group's new handshakes go to
 * it. A group where it has two sockets (per-thread or per-process binds)
 * is left to the kernel's hash: steering all of them to one would starve
 * the others.
 */
static void steer_listener(struct reuseport *r, struct round *rd, GPid pid,
			   int fd)
{
	g_autofree gchar *key = group_key(fd);
	struct steer_group *sg = key ? g_hash_table_lookup(r->steer, key)
				     : NULL;
	guint64 inode = fd_socket_inode(fd);
	const guint64 *seen;

	/* A group only it listens on has no old listener to spare. */
	if (!sg)
		return;
	seen = g_hash_table_lookup(rd->inodes, key);
	if (seen && *seen == inode)
		return;
	if (seen) {
		if (*seen != 0)
			rd->steered--;
		map_clear(sg->map_fd);
		g_hash_table_insert(rd->inodes, g_steal_pointer(&key),
				    g_memdup2(&(guint64){ 0 }, sizeof(inode)));
		return;
	}
	if (!map_set(sg->map_fd, fd)) {
		log_debug("SO_REUSEPORT steering: cannot select %s: %s", key,
			  g_strerror(errno));
		inode = 0;
	} else {
		rd->steered++;
	}
	g_hash_table_insert(rd->inodes, g_steal_pointer(&key),
			    g_memdup2(&inode, sizeof(inode)));
}

/*
 * A handshake's last ACK checked against a listener that is still
 * listening, then queued on it once another CPU has closed it, is reset
 * (inet_child_forget): migration comes too late for it. Once the groups
 * steer new handshakes to the new generation, those still in flight on
 * the old listeners end within a round trip: tens of microseconds on
 * loopback, well under a millisecond on a LAN. The grace covers them
 * with a wide margin; a handshake slower than that (a distant client)
 * completes after the close and is migrated.
 */
#define STEER_GRACE_MS 10

guint reuseport_steer_generation(struct reuseport *r,
				 const struct generation *g)
{
	struct round rd;
	guint steered;

	if (g->exited || !reuseport_usable(r) ||
	    g_hash_table_size(r->steer) == 0)
		return 0;
	round_begin(&rd);
	rd.on_listener = steer_listener;
	round_add_generation(r, &rd, g);
	steered = rd.steered;
	/* Steering rounds leave the status to the attaching ones. */
	g_hash_table_unref(rd.groups);
	g_hash_table_unref(rd.inodes);
	g_free(rd.failure);
	/* g_usleep() sleeps again after a signal, for what was left. */
	if (steered > 0)
		g_usleep(STEER_GRACE_MS * 1000);
	return steered;
}


gboolean reuseport_attach_foreign(struct reuseport *r,
				  const GPtrArray *instances)
{
	struct round rd;
	gboolean steerable;

	if (!instances || instances->len == 0)
		return FALSE;
	if (!reuseport_usable(r)) {
		/* Their listeners close once ours serve. */
		tell_unusable(r);
		return FALSE;
	}
	round_begin(&rd);
	for (guint i = 0; i < instances->len; i++) {
		const struct foreign *f = g_ptr_array_index(
			(GPtrArray *)instances, i);

		round_add_pidfd(r, &rd,
				proc_open_if_same_at(PROC_ROOT, f->pid,
						     f->start_time),
				f->pid);
		for (guint j = 0; j < f->workers->len; j++) {
			GPid w = g_array_index(f->workers, GPid, j);
			guint64 started = g_array_index(f->worker_start_times,
							guint64, j);

			round_add_pidfd(r, &rd,
					proc_open_if_same_at(PROC_ROOT, w,
							     started),
					w);
		}
	}
	steerable = round_all_steerable(&rd);
	round_end(r, &rd);
	return steerable;
}
