// SPDX-License-Identifier: MIT
/*  tap_filter - frame selection for parley-tap; see tap_filter.h.

    The sets are short lists given on a command line, so a linear scan of a
    zlistx is as fast as anything and simpler than a hash.
*/
#include <czmq.h>
#include <ctype.h>
#include <string.h>
#include "tap_filter.h"

struct _tap_filter_t {
    zlistx_t *agents;           //  NULL = no agent filter
    zlistx_t *channels;         //  NULL = no channel filter
    bool types [PMSG__COUNT];
    bool have_types;
};

tap_filter_t *
tap_filter_new (void)
{
    return (tap_filter_t *) zmalloc (sizeof (tap_filter_t));
}

void
tap_filter_destroy (tap_filter_t **self_p)
{
    assert (self_p);
    tap_filter_t *self = *self_p;
    if (!self)
        return;
    zlistx_destroy (&self->agents);
    zlistx_destroy (&self->channels);
    free (self);
    *self_p = NULL;
}

//  Splits `list` on commas, trims blanks, and calls add() on each item.
typedef bool (s_item_fn) (tap_filter_t *self, const char *item, char *why, size_t why_size);

static bool
s_split (tap_filter_t *self, const char *what, const char *list, s_item_fn *add,
         char *why, size_t why_size)
{
    assert (list);
    char *copy = strdup (list);
    bool ok = true;
    char *save = NULL;
    char *item = strtok_r (copy, ",", &save);
    if (!item) {
        snprintf (why, why_size, "empty %s list", what);
        ok = false;
    }
    for (; ok && item; item = strtok_r (NULL, ",", &save)) {
        while (isspace ((unsigned char) *item))
            item++;
        size_t len = strlen (item);
        while (len && isspace ((unsigned char) item [len - 1]))
            item [--len] = 0;
        if (len == 0) {
            snprintf (why, why_size, "empty name in %s list \"%s\"", what, list);
            ok = false;
        }
        else
            ok = add (self, item, why, why_size);
    }
    free (copy);
    return ok;
}

static zlistx_t *
s_string_list (void)
{
    zlistx_t *list = zlistx_new ();
    zlistx_set_destructor (list, (zlistx_destructor_fn *) zstr_free);
    zlistx_set_duplicator (list, (zlistx_duplicator_fn *) strdup);
    return list;
}

static bool
s_add_agent (tap_filter_t *self, const char *item, char *why, size_t why_size)
{
    if (!self->agents)
        self->agents = s_string_list ();
    zlistx_add_end (self->agents, (void *) item);
    return true;
}

static bool
s_add_channel (tap_filter_t *self, const char *item, char *why, size_t why_size)
{
    if (!pmsg_name_valid (item, strlen (item))) {
        snprintf (why, why_size, "\"%s\" is not a valid channel name", item);
        return false;
    }
    if (!self->channels)
        self->channels = s_string_list ();
    zlistx_add_end (self->channels, (void *) item);
    return true;
}

static bool
s_add_type (tap_filter_t *self, const char *item, char *why, size_t why_size)
{
    char upper [64];
    size_t len = strlen (item);
    if (len >= sizeof upper)
        len = sizeof upper - 1;
    for (size_t i = 0; i < len; i++)
        upper [i] = (char) toupper ((unsigned char) item [i]);
    upper [len] = 0;
    pmsg_type_t type;
    if (!pmsg_type_from_name (upper, strlen (upper), &type)) {
        snprintf (why, why_size, "\"%s\" is not a message type (see PROTOCOL.md)", item);
        return false;
    }
    self->types [type] = true;
    self->have_types = true;
    return true;
}

bool
tap_filter_add_agents (tap_filter_t *self, const char *list, char *why, size_t why_size)
{
    assert (self);
    return s_split (self, "agent", list, s_add_agent, why, why_size);
}

bool
tap_filter_add_types (tap_filter_t *self, const char *list, char *why, size_t why_size)
{
    assert (self);
    return s_split (self, "type", list, s_add_type, why, why_size);
}

bool
tap_filter_add_channels (tap_filter_t *self, const char *list, char *why, size_t why_size)
{
    assert (self);
    return s_split (self, "channel", list, s_add_channel, why, why_size);
}

static bool
s_in_list (zlistx_t *list, const char *text, size_t len)
{
    for (const char *name = (const char *) zlistx_first (list); name;
         name = (const char *) zlistx_next (list))
        if (strlen (name) == len && memcmp (name, text, len) == 0)
            return true;
    return false;
}

static bool
s_match_agent (tap_filter_t *self, const tap_frame_t *frame)
{
    const char *peer = tap_frame_peer (frame);
    if (tap_frame_dir (frame) != TAP_DIR_PUB)
        return s_in_list (self->agents, peer, strlen (peer));
    const pmsg_t *body = tap_frame_body (frame);
    size_t len = 0;
    const char *agent = body? pmsg_str (body, "agent", &len): NULL;
    return agent && s_in_list (self->agents, agent, len);
}

//  The `channel` of each map in the array field `messages`.
static bool
s_items_name_channel (tap_filter_t *self, const msgpack_object *items)
{
    if (!items || items->type != MSGPACK_OBJECT_ARRAY)
        return false;
    for (uint32_t i = 0; i < items->via.array.size; i++) {
        size_t len = 0;
        const char *channel = pobj_str (&items->via.array.ptr [i], "channel", &len);
        if (channel && s_in_list (self->channels, channel, len))
            return true;
    }
    return false;
}

static bool
s_match_channel (tap_filter_t *self, const tap_frame_t *frame)
{
    const pmsg_t *body = tap_frame_body (frame);
    if (!body)
        return false;
    size_t len = 0;
    const char *channel = pmsg_str (body, "channel", &len);
    if (channel && s_in_list (self->channels, channel, len))
        return true;
    return s_items_name_channel (self, pmsg_field (body, "messages"));
}

bool
tap_filter_match (tap_filter_t *self, const tap_frame_t *frame)
{
    assert (self);
    assert (frame);
    if (self->have_types) {
        const pmsg_t *body = tap_frame_body (frame);
        if (!body || !self->types [pmsg_type (body)])
            return false;
    }
    if (self->agents && !s_match_agent (self, frame))
        return false;
    if (self->channels && !s_match_channel (self, frame))
        return false;
    return true;
}
