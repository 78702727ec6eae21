/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/jsonlib.h"

#include <dlfcn.h>

#define LIBJSON_GLIB "libjson-glib-1.0.so.0"

static struct jsonlib lib;
static gboolean loaded;

static gboolean resolve(void *h)
{
	struct {
		void **slot;
		const char *name;
	} syms[] = {
		{ (void **)&lib.builder_new, "json_builder_new" },
		{ (void **)&lib.begin_object, "json_builder_begin_object" },
		{ (void **)&lib.end_object, "json_builder_end_object" },
		{ (void **)&lib.begin_array, "json_builder_begin_array" },
		{ (void **)&lib.end_array, "json_builder_end_array" },
		{ (void **)&lib.set_member_name,
		  "json_builder_set_member_name" },
		{ (void **)&lib.add_string, "json_builder_add_string_value" },
		{ (void **)&lib.add_int, "json_builder_add_int_value" },
		{ (void **)&lib.add_boolean, "json_builder_add_boolean_value" },
		{ (void **)&lib.add_null, "json_builder_add_null_value" },
		{ (void **)&lib.get_root, "json_builder_get_root" },
		{ (void **)&lib.to_string, "json_to_string" },
		{ (void **)&lib.node_unref, "json_node_unref" },
		/* From libgobject, which json-glib depends on. */
		{ (void **)&lib.object_unref, "g_object_unref" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(syms); i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (!*syms[i].slot)
			return FALSE;
	}
	return TRUE;
}

const struct jsonlib *jsonlib_load(GError **error)
{
	void *h;

	if (loaded)
		return &lib;
	/* Never unloaded: the pointers stay valid for the process's life. */
	h = dlopen(LIBJSON_GLIB, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (h && resolve(h)) {
		loaded = TRUE;
		return &lib;
	}
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s",
		    h ? LIBJSON_GLIB ": missing symbol" :
			dlerror() ? : LIBJSON_GLIB ": cannot be loaded");
	return NULL;
}
