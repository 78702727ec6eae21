/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/control.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "base/unixsock.h"

#define MAX_CLIENTS	64
#define IDLE_MS		10000
/* Out of descriptors: the listener rests this long between attempts. */
#define SHORTAGE_PAUSE_MS 250

struct control {
	int fd;
	gchar *path;
	guint source;
	control_fn fn;
	gpointer data;
	GList *clients;
	guint resume_timer;	/* listener disarmed: out of descriptors */
	gboolean short_of_fds;	/* an episode is on (logged once) */
};

/*
 * A client's one life: read until a command (in_source), then either
 * answered at once or handed to the supervisor, which answers it later;
 * once answered (out_source) it reads nothing more, and it is freed when
 * the answer is sent. Never handed over after it was answered.
 */
struct control_client {
	struct control *ctl;
	int fd;
	guint in_source;
	guint out_source;
	guint idle_timer;
	GString *in;
	GString *out;
	gboolean answered;	/* control_reply() was called */
	gboolean taken;		/* its command went to the supervisor */
};

static void client_free(struct control_client *c)
{
	g_clear_handle_id(&c->in_source, g_source_remove);
	g_clear_handle_id(&c->out_source, g_source_remove);
	g_clear_handle_id(&c->idle_timer, g_source_remove);
	close(c->fd);
	g_string_free(c->in, TRUE);
	g_string_free(c->out, TRUE);
	c->ctl->clients = g_list_remove(c->ctl->clients, c);
	g_free(c);
}

static gboolean on_writable(int fd, GIOCondition cond, gpointer data)
{
	struct control_client *c = data;

	while (c->out->len) {
		ssize_t n = send(fd, c->out->str, c->out->len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return G_SOURCE_CONTINUE;
		if (n <= 0)
			break;
		g_string_erase(c->out, 0, n);
	}
	c->out_source = 0;
	client_free(c);
	return G_SOURCE_REMOVE;
}

void control_reply(struct control_client *c, const char *text)
{
	c->answered = TRUE;
	/* Answered: whatever it sends now is not read. */
	g_clear_handle_id(&c->in_source, g_source_remove);
	g_clear_handle_id(&c->idle_timer, g_source_remove);
	g_string_append(c->out, text);
	if (!g_str_has_suffix(text, "\n"))
		g_string_append_c(c->out, '\n');
	if (!c->out_source)
		c->out_source = g_unix_fd_add(c->fd, G_IO_OUT, on_writable, c);
}

void control_send_now(struct control_client *c, const char *text)
{
	struct timeval tv = { .tv_sec = 1 };
	g_autofree gchar *line = g_str_has_suffix(text, "\n")
					 ? g_strdup(text)
					 : g_strdup_printf("%s\n", text);
	const char *p = line;
	gsize left = strlen(line);

	g_unix_set_fd_nonblocking(c->fd, FALSE, NULL);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (left) {
		ssize_t n = send(c->fd, p, left, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
		left -= n;
	}
	g_unix_set_fd_nonblocking(c->fd, TRUE, NULL);
}

/* A client that sent nothing useful in time is dropped; one waiting for a
 * reload is not: its answer comes when the reload ends. */
static gboolean on_idle(gpointer data)
{
	struct control_client *c = data;

	c->idle_timer = 0;
	/* Answered: a command that comes now is not taken (control_reply
	 * stops the reading). */
	control_reply(c, "error: no command received in time");
	return G_SOURCE_REMOVE;
}

/* TRUE when more input is needed. A connection carries one command: once
 * it is taken, nothing more is read. */
static gboolean take_command(struct control_client *c)
{
	const char *error;
	enum control_command cmd = control_parse(c->in->str, c->in->len,
						 &error);
	g_autofree gchar *answer = NULL;

	/* Answered already: nothing it sends now is taken. */
	if (c->answered)
		return FALSE;
	if (cmd == CMD_INCOMPLETE)
		return TRUE;
	c->in_source = 0;
	g_clear_handle_id(&c->idle_timer, g_source_remove);
	if (cmd == CMD_INVALID) {
		answer = g_strdup_printf("error: %s", error);
		control_reply(c, answer);
		return FALSE;
	}
	c->taken = TRUE;
	c->ctl->fn(c, cmd, c->ctl->data);
	return FALSE;
}

static gboolean on_readable(int fd, GIOCondition cond, gpointer data)
{
	struct control_client *c = data;
	char buf[CONTROL_MAX_LINE + 1];
	ssize_t n = recv(fd, buf, sizeof(buf), 0);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return G_SOURCE_CONTINUE;
	if (n <= 0) {
		c->in_source = 0;
		client_free(c);
		return G_SOURCE_REMOVE;
	}
	g_string_append_len(c->in, buf, n);
	if (take_command(c))
		return G_SOURCE_CONTINUE;
	c->in_source = 0;
	return G_SOURCE_REMOVE;
}

int control_client_fd(struct control_client *c)
{
	return c->fd;
}

void control_client_inheritable(struct control_client *c, gboolean yes)
{
	/* FD_CLOEXEC is the one descriptor flag. */
	fcntl(c->fd, F_SETFD, yes ? 0 : FD_CLOEXEC);
}

static struct control_client *client_new(struct control *ctl, int fd)
{
	struct control_client *c = g_new0(struct control_client, 1);

	*c = (struct control_client){
		.ctl = ctl,
		.fd = fd,
		.in = g_string_new(NULL),
		.out = g_string_new(NULL),
	};
	ctl->clients = g_list_prepend(ctl->clients, c);
	return c;
}

struct control_client *control_adopt(struct control *ctl, int fd)
{
	struct control_client *c;
	int flags = fcntl(fd, F_GETFD);

	/* Not a descriptor any more (the old image had a stale list). */
	if (flags < 0)
		return NULL;
	fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
	g_unix_set_fd_nonblocking(fd, TRUE, NULL);
	c = client_new(ctl, fd);
	/* It waited for a reload in the old image: it belongs to the
	 * supervisor already, so the idle timeout does not drop it. */
	c->taken = TRUE;
	return c;
}

static gboolean on_accept(int fd, GIOCondition cond, gpointer data);

static gboolean on_resume(gpointer data)
{
	struct control *ctl = data;

	ctl->resume_timer = 0;
	ctl->source = g_unix_fd_add(ctl->fd, G_IO_IN, on_accept, ctl);
	return G_SOURCE_REMOVE;
}

/* Clients that have not sent their command yet: closed, with a word. */
static guint drop_idle_clients(struct control *ctl)
{
	static const char bye[] = "error: the wrapper is out of descriptors\n";
	guint dropped = 0;

	for (GList *l = ctl->clients; l;) {
		struct control_client *c = l->data;

		l = l->next;
		if (c->taken || c->answered)
			continue;
		if (send(c->fd, bye, sizeof(bye) - 1,
			 MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			errno = 0;	/* best effort: it is dropped anyway */
		client_free(c);
		dropped++;
	}
	return dropped;
}

static gboolean fd_shortage(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM ||
	       err == ENOBUFS;
}

/*
 * No descriptor for a new client. The connection stays queued and the
 * listener readable: retried at once, accept4 would fail in a loop. Idle
 * clients go first; if there were none, the listener rests a moment.
 */
static gboolean accept_short(struct control *ctl, int err)
{
	guint dropped = drop_idle_clients(ctl);

	if (!ctl->short_of_fds)
		log_warn("control socket: %s; dropped %u idle client(s), "
			 "accepting at most every %d ms until it passes",
			 g_strerror(err), dropped, SHORTAGE_PAUSE_MS);
	ctl->short_of_fds = TRUE;
	if (dropped)
		return G_SOURCE_CONTINUE;
	ctl->source = 0;
	ctl->resume_timer = g_timeout_add(SHORTAGE_PAUSE_MS, on_resume, ctl);
	return G_SOURCE_REMOVE;
}

static gboolean on_accept(int fd, GIOCondition cond, gpointer data)
{
	struct control *ctl = data;
	struct control_client *c;
	int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (cfd < 0 && fd_shortage(errno))
		return accept_short(ctl, errno);
	if (cfd < 0)
		return G_SOURCE_CONTINUE;
	if (ctl->short_of_fds)
		log_info("control socket: accepting clients again");
	ctl->short_of_fds = FALSE;
	c = client_new(ctl, cfd);
	if (g_list_length(ctl->clients) > MAX_CLIENTS) {
		control_reply(c, "error: too many clients");
		return G_SOURCE_CONTINUE;
	}
	/* Only the wrapper's own user (and root) may talk to it. */
	if (!unixsock_peer_trusted(cfd, NULL)) {
		control_reply(c, "error: permission denied");
		return G_SOURCE_CONTINUE;
	}
	c->in_source = g_unix_fd_add(cfd, G_IO_IN | G_IO_HUP, on_readable, c);
	c->idle_timer = g_timeout_add(IDLE_MS, on_idle, c);
	return G_SOURCE_CONTINUE;
}

/* A socket file nobody answers on is a leftover: remove it. One that
 * answers belongs to a running wrapper: leave it alone. Anything else
 * (a symlink, say) is removed, never followed. */
static gboolean clear_stale(const struct sockaddr_un *a, GError **error)
{
	struct stat st;
	int fd;

	if (lstat(a->sun_path, &st) < 0)
		return TRUE;
	if (!S_ISSOCK(st.st_mode)) {
		g_unlink(a->sun_path);
		return TRUE;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0) {
		close(fd);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
			    "%s is in use by another wrapper", a->sun_path);
		return FALSE;
	}
	if (fd >= 0)
		close(fd);
	g_unlink(a->sun_path);
	return TRUE;
}

struct control *control_listen(const char *path, control_fn fn,
			       gpointer data, GError **error)
{
	struct sockaddr_un a;
	struct control *ctl;
	int fd;

	if (!unixsock_address(&a, path, error) || !clear_stale(&a, error))
		return NULL;
	fd = unixsock_listen_private(path, error);
	if (fd < 0) {
		g_prefix_error(error, "control socket ");
		return NULL;
	}
	ctl = g_new0(struct control, 1);
	*ctl = (struct control){
		.fd = fd,
		.path = g_strdup(path),
		.fn = fn,
		.data = data,
	};
	ctl->source = g_unix_fd_add(fd, G_IO_IN, on_accept, ctl);
	return ctl;
}

/* An answer still queued when the wrapper exits: one try, never a wait
 * (the client's buffer takes a short answer). */
static void client_flush(struct control_client *c)
{
	if (c->out->len && send(c->fd, c->out->str, c->out->len,
				MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		errno = 0;
}

void control_unlink(struct control *ctl)
{
	g_unlink(ctl->path);
}

gboolean control_relisten(struct control *ctl, GError **error)
{
	int fd = unixsock_listen_private(ctl->path, error);

	if (fd < 0)
		return FALSE;
	if (ctl->source) {
		g_source_remove(ctl->source);
		ctl->source = g_unix_fd_add(fd, G_IO_IN, on_accept, ctl);
	}
	close(ctl->fd);
	ctl->fd = fd;
	return TRUE;
}

void control_free(struct control *ctl)
{
	if (!ctl)
		return;
	while (ctl->clients) {
		client_flush(ctl->clients->data);
		client_free(ctl->clients->data);
	}
	g_clear_handle_id(&ctl->source, g_source_remove);
	g_clear_handle_id(&ctl->resume_timer, g_source_remove);
	close(ctl->fd);
	g_unlink(ctl->path);
	g_free(ctl->path);
	g_free(ctl);
}
