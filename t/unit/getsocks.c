/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the -x server offers for each kind of listening socket, and the
 * bytes of its records, as haproxy 1.8 to 2.2 read them (those versions
 * match a socket to a bind line by the record's options; the real
 * exchanges are in t/int/real-getsocks), and that a NULL fd store stores
 * nothing.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "wrapper/fdstore/fdstore.h"
#include "wrapper/fdstore/getsocks.h"

static int bound(int family, int type, const char *addr, int v6only)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	g_assert_cmpint(fd, >=, 0);
	if (family == AF_INET6) {
		struct sockaddr_in6 a = { .sin6_family = AF_INET6 };

		g_assert_cmpint(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
					   &v6only, sizeof(v6only)), ==, 0);
		g_assert_cmpint(inet_pton(AF_INET6, addr, &a.sin6_addr), ==, 1);
		/* "::" is where an unbound socket is: no need to bind every
		 * address of the host to show it. */
		if (IN6_IS_ADDR_UNSPECIFIED(&a.sin6_addr))
			return fd;
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
			close(fd);
			return -1;
		}
	} else {
		struct sockaddr_in a = { .sin_family = AF_INET };

		g_assert_cmpint(inet_pton(AF_INET, addr, &a.sin_addr), ==, 1);
		g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==,
				0);
	}
	return fd;
}

/* The options of the offers, in order, as "0,1024,2048". */
static gchar *options_of(int fd, gboolean copies)
{
	g_autoptr(GArray) offers = getsocks_offers(&fd, 1, copies);
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < offers->len; i++) {
		const struct getsocks_offer *o =
			&g_array_index(offers, struct getsocks_offer, i);

		g_assert_cmpint(o->fd, ==, fd);
		g_string_append_printf(s, "%s%u", i ? "," : "", o->options);
	}
	return g_string_free(s, FALSE);
}

static void assert_options(int fd, const char *expected)
{
	g_autofree gchar *got = options_of(fd, TRUE);
	/* haproxy 2.3 and later read them from the socket: one offer. */
	g_autofree gchar *one = options_of(fd, FALSE);

	g_assert_cmpstr(got, ==, expected);
	g_assert_cmpstr(one, ==, *expected ? "0" : "");
	close(fd);
}

static void test_offers(void)
{
	int fd;

	assert_options(bound(AF_INET, SOCK_STREAM, "127.0.0.1", 0), "0");
	/* Not a stream socket: nothing. */
	assert_options(bound(AF_INET, SOCK_DGRAM, "127.0.0.1", 0), "");
	fd = bound(AF_INET6, SOCK_STREAM, "::1", 0);
	if (fd < 0) {
		g_test_skip("no ::1 here");
		return;
	}
	/* v6only by Linux's rule: any line's options may be asked. */
	assert_options(fd, "0,1024,2048");
	/* On "::" v6only means what it says. */
	assert_options(bound(AF_INET6, SOCK_STREAM, "::", 1), "0,1024");
	assert_options(bound(AF_INET6, SOCK_STREAM, "::", 0), "0,2048");
}

static void test_records(void)
{
	struct getsocks_offer offers[] = {
		{ .fd = 3, .options = 0 },
		{ .fd = 4, .iface = (gchar *)"lo",
		  .options = GETSOCKS_OPT_V6ONLY },
	};
	g_autoptr(GByteArray) b = getsocks_records(offers, 2);
	guint8 expected[6 + 8];
	guint32 v6only = GETSOCKS_OPT_V6ONLY;

	memset(expected, 0, sizeof(expected));
	/* no namespace, interface "lo", then the options as a native int */
	expected[7] = 2;
	memcpy(expected + 8, "lo", 2);
	memcpy(expected + 10, &v6only, 4);
	g_assert_cmpmem(b->data, b->len, expected, sizeof(expected));
}

/* fdstore.h: a NULL store (a launcher built without one) stores nothing,
 * whichever generation serves, starts or stops. */
static void test_null_store(void)
{
	struct generation g = { .pid = getpid() };

	fdstore_launched(NULL, &g);
	fdstore_serving(NULL, &g);
	fdstore_stopping(NULL);
	fdstore_empty(NULL, "test");
	fdstore_leave(NULL);
	fdstore_free(NULL);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/getsocks/offers", test_offers);
	g_test_add_func("/getsocks/records", test_records);
	g_test_add_func("/fdstore/null-store", test_null_store);
	return g_test_run();
}
