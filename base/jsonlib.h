/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json-glib, loaded on first need rather than at exec: linked, it and
 * the GIO and GObject stack it pulls in cost every start about a
 * millisecond (twice a start without it), for the one "status json"
 * answer that uses it. Only the calls the wrapper makes; the headers give
 * their types, nothing here is linked against json-glib.
 */
#pragma once

#include <json-glib/json-glib.h>

struct jsonlib {
	__typeof__(json_builder_new) *builder_new;
	__typeof__(json_builder_begin_object) *begin_object;
	__typeof__(json_builder_end_object) *end_object;
	__typeof__(json_builder_begin_array) *begin_array;
	__typeof__(json_builder_end_array) *end_array;
	__typeof__(json_builder_set_member_name) *set_member_name;
	__typeof__(json_builder_add_string_value) *add_string;
	__typeof__(json_builder_add_int_value) *add_int;
	__typeof__(json_builder_add_boolean_value) *add_boolean;
	__typeof__(json_builder_add_null_value) *add_null;
	__typeof__(json_builder_get_root) *get_root;
	__typeof__(json_to_string) *to_string;
	__typeof__(json_node_unref) *node_unref;
	__typeof__(g_object_unref) *object_unref;
};

/* The functions, loaded once and kept; NULL and error set when the
 * library (libjson-glib-1.0.so.0) or one of them is missing: the next
 * call tries again. */
const struct jsonlib *jsonlib_load(GError **error);
