/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "migrate/trust.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/proc.h"
#include "legacy/config.h"

gboolean trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

static gboolean user_id(const char *name, guint32 *uid)
{
	struct passwd pw, *found = NULL;
	char buf[4096];

	if (getpwnam_r(name, &pw, buf, sizeof(buf), &found) != 0 || !found)
		return FALSE;
	*uid = found->pw_uid;
	return TRUE;
}

static gboolean group_id(const char *name, guint32 *gid)
{
	struct group gr, *found = NULL;
	char buf[4096];

	if (getgrnam_r(name, &gr, buf, sizeof(buf), &found) != 0 || !found)
		return FALSE;
	*gid = found->gr_gid;
	return TRUE;
}

/* name, escaped and quoted, as the configuration gave it. */
static gchar *unresolved_phrase(const char *what, const char *name)
{
	g_autofree gchar *shown = escape_untrusted(name, ESCAPE_QUOTE_MAX);

	return g_strdup_printf("the configuration's %s \"%s\" is unknown "
			       "here", what, shown);
}

void launch_ids_init(struct launch_ids *ids, const char *const *config_files)
{
	struct config_hints h;

	*ids = (struct launch_ids){ .uid = geteuid(), .gid = getegid() };
	if (ids->uid != 0)
		return;
	config_hints_read_paths(config_files, &h);
	if (h.uid_set) {
		ids->drops = TRUE;
		ids->drop_uid = h.uid;
	} else if (h.user[0]) {
		ids->drops = user_id(h.user, &ids->drop_uid);
		if (!ids->drops)
			ids->unresolved = unresolved_phrase("user", h.user);
	}
	if (h.gid_set) {
		ids->drop_gid_set = TRUE;
		ids->drop_gid = h.gid;
	} else if (h.group[0]) {
		ids->drop_gid_set = group_id(h.group, &ids->drop_gid);
		if (!ids->drop_gid_set && !ids->unresolved)
			ids->unresolved = unresolved_phrase("group", h.group);
	}
}

void launch_ids_clear(struct launch_ids *l)
{
	g_clear_pointer(&l->unresolved, g_free);
}

/* Real, effective and saved all equal want (the fs id follows the
 * effective one). */
static gboolean all_are(const guint32 ids[4], guint32 want)
{
	return ids[0] == want && ids[1] == want && ids[2] == want;
}

static gboolean dropped_as_told(const struct proc_ids *p,
				const struct launch_ids *l)
{
	guint32 gid = l->drop_gid_set ? l->drop_gid : l->gid;

	return l->drops && all_are(p->uid, l->drop_uid) &&
	       all_are(p->gid, gid);
}

gchar *launch_ids_refusal(const struct launch_ids *l,
			  const struct proc_ids *p)
{
	if (all_are(p->uid, l->uid) || dropped_as_told(p, l))
		return NULL;
	return g_strdup_printf("it runs as uid %u (real %u, saved %u), gid %u: "
			       "not as this wrapper (uid %u) could have "
			       "started it%s%s%s; left alone",
			       p->uid[1], p->uid[0], p->uid[2], p->gid[1],
			       l->uid, l->unresolved ? " (" : "",
			       l->unresolved ? l->unresolved : "",
			       l->unresolved ? ")" : "");
}

gboolean launch_ids_may_be(const struct launch_ids *l, guint32 uid)
{
	return uid == l->uid || (l->drops && uid == l->drop_uid);
}

gboolean launch_ids_may_own(const struct launch_ids *l,
			    const struct proc_ids *p)
{
	return launch_ids_may_be(l, p->uid[0]) &&
	       launch_ids_may_be(l, p->uid[1]) &&
	       launch_ids_may_be(l, p->uid[2]);
}
