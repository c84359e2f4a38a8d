// SPDX-License-Identifier: MIT
/*  conn_state - shared-state keys the agent reads. See conn_state.h.

    With the link's replica on (conn_state_use_replica: the agent's
    client keeps one by SNAPSHOT + STATE_UPDATE over the event socket) a
    capture reads the keys from it, without a request, and re-reads a
    value only when its seq changed since the last capture. Without it
    the keys are read whole with one GET.
*/
#include <assert.h>
#include "conn_state.h"
#include "plog.h"
#include "textbuf.h"

typedef struct {
    char *key;
    char *value;                //  current value, msgpack; NULL if absent
    size_t size;
    char *text;                 //  its rendering, made when first asked for
    bool rendered;              //  text is the rendering of value
    char *prev;                 //  rendering at the last observe
    uint64_t seq;               //  replica: the seq last read (0: absent)
    bool once;                  //  read by conn_state_follow only
} slot_t;

typedef struct {
    char name[PROTO_MAX_NAME + 1];
    uint64_t position;
} agent_pos_t;

typedef struct {
    parley_client_t *link;
    bool replica;               //  read the link's replica, not GET
    slot_t slots[STATE_MAX_KEYS];
    size_t count;
    zlistx_t *explored;         //  current names, in the value's order
    zhashx_t *explored_prev;    //  names at the last observe
    bool explored_rebuilt;      //  the list was not only appended to since then
    agent_pos_t agents[STATE_MAX_AGENTS];
    size_t agent_count;
    uint64_t *visited;          //  team.visited, typed
    size_t visited_count, visited_cap;
    agent_pos_t claims[STATE_MAX_AGENTS];   //  team.claims; position UINT64_MAX = nil
    size_t claim_count;
} state_t;

//  Bounded text writer.
typedef struct {
    char buf[STATE_MAX_TEXT];
    size_t used;
} out_t;

static void
s_put (out_t *out, const char *text, size_t len)
{
    size_t room = sizeof (out->buf) - 1 - out->used;
    if (len > room)
        len = room;
    memcpy (out->buf + out->used, text, len);
    out->used += len;
    out->buf[out->used] = 0;
}

static void
s_render_value (out_t *out, const msgpack_object *o)
{
    if (out->used + 1 >= sizeof (out->buf))
        return;                 //  full: the rest would be cut anyway
    char num[64];
    switch (o->type) {
        case MSGPACK_OBJECT_STR:
            s_put (out, o->via.str.ptr, o->via.str.size);
            break;
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            s_put (out, num, snprintf (num, sizeof (num), "%" PRIu64, o->via.u64));
            break;
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            s_put (out, num, snprintf (num, sizeof (num), "%" PRId64, o->via.i64));
            break;
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64:
            s_put (out, num, snprintf (num, sizeof (num), "%g", o->via.f64));
            break;
        case MSGPACK_OBJECT_BOOLEAN:
            s_put (out, o->via.boolean? "true": "false", o->via.boolean? 4: 5);
            break;
        case MSGPACK_OBJECT_ARRAY:
            s_put (out, "[", 1);
            for (uint32_t i = 0; i < o->via.array.size; i++) {
                if (i)
                    s_put (out, ", ", 2);
                s_render_value (out, &o->via.array.ptr[i]);
            }
            s_put (out, "]", 1);
            break;
        case MSGPACK_OBJECT_MAP:
            s_put (out, "{", 1);
            for (uint32_t i = 0; i < o->via.map.size; i++) {
                if (i)
                    s_put (out, ", ", 2);
                s_render_value (out, &o->via.map.ptr[i].key);
                s_put (out, ": ", 2);
                s_render_value (out, &o->via.map.ptr[i].val);
            }
            s_put (out, "}", 1);
            break;
        case MSGPACK_OBJECT_NIL:
            s_put (out, "nil", 3);
            break;
        default:
            s_put (out, "(binary)", 8);
            break;
    }
}

//  True if the names of the list are, in order, the first elements of
//  `value`: a union only grows at its end, so the next value usually
//  starts with the last one and only its tail is new.
static bool
s_explored_prefix (state_t *self, const msgpack_object *value, uint32_t *tail)
{
    size_t have = zlistx_size (self->explored);
    if (!value || value->type != MSGPACK_OBJECT_ARRAY || have > value->via.array.size)
        return false;
    uint32_t i = 0;
    for (const char *name = zlistx_first (self->explored); name;
         name = zlistx_next (self->explored), i++) {
        const msgpack_object *o = &value->via.array.ptr[i];
        size_t len = strlen (name);
        if (o->type != MSGPACK_OBJECT_STR || o->via.str.size != len
        ||  memcmp (o->via.str.ptr, name, len) != 0)
            return false;
    }
    *tail = i;
    return true;
}

static void
s_take_explored (state_t *self, const msgpack_object *value)
{
    //  Thousands of names: appending the tail spares as many allocations.
    uint32_t first = 0;
    if (!s_explored_prefix (self, value, &first)) {
        zlistx_purge (self->explored);
        self->explored_rebuilt = true;
        first = 0;
    }
    if (!value || value->type != MSGPACK_OBJECT_ARRAY)
        return;
    for (uint32_t i = first; i < value->via.array.size; i++) {
        const msgpack_object *o = &value->via.array.ptr[i];
        if (o->type == MSGPACK_OBJECT_STR) {
            //  memcpy, not sprintf: this list is thousands of names each step.
            char small[256];
            size_t len = o->via.str.size;
            char *name = len < sizeof (small)? small: (char *) malloc (len + 1);
            assert (name);
            memcpy (name, o->via.str.ptr, len);
            name[len] = 0;
            zlistx_add_end (self->explored, name);
            if (name != small)
                free (name);
        }
    }
}

static void
s_take_positions (state_t *self, const msgpack_object *value)
{
    self->agent_count = 0;
    if (!value || value->type != MSGPACK_OBJECT_MAP)
        return;
    for (uint32_t i = 0; i < value->via.map.size && self->agent_count < STATE_MAX_AGENTS; i++) {
        const msgpack_object *k = &value->via.map.ptr[i].key;
        const msgpack_object *v = &value->via.map.ptr[i].val;
        if (k->type != MSGPACK_OBJECT_STR || v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            continue;
        agent_pos_t *a = &self->agents[self->agent_count++];
        snprintf (a->name, sizeof (a->name), "%.*s", (int) k->via.str.size, k->via.str.ptr);
        a->position = v->via.u64;
    }
}

//  team.visited: [uint] (other elements are skipped), at most
//  STATE_MAX_VISITED kept.
static void
s_take_visited (state_t *self, const msgpack_object *value)
{
    self->visited_count = 0;
    if (!value || value->type != MSGPACK_OBJECT_ARRAY)
        return;
    size_t want = value->via.array.size < STATE_MAX_VISITED? value->via.array.size: STATE_MAX_VISITED;
    if (want > self->visited_cap) {
        self->visited = (uint64_t *) realloc (self->visited, want * sizeof (uint64_t));
        assert (self->visited);
        self->visited_cap = want;
    }
    for (uint32_t i = 0; i < value->via.array.size && self->visited_count < want; i++)
        if (value->via.array.ptr[i].type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            self->visited[self->visited_count++] = value->via.array.ptr[i].via.u64;
}

//  team.claims: map agent -> uint or nil.
static void
s_take_claims (state_t *self, const msgpack_object *value)
{
    self->claim_count = 0;
    if (!value || value->type != MSGPACK_OBJECT_MAP)
        return;
    for (uint32_t i = 0; i < value->via.map.size && self->claim_count < STATE_MAX_AGENTS; i++) {
        const msgpack_object *k = &value->via.map.ptr[i].key;
        const msgpack_object *v = &value->via.map.ptr[i].val;
        if (k->type != MSGPACK_OBJECT_STR || k->via.str.size > PROTO_MAX_NAME
        ||  (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER && v->type != MSGPACK_OBJECT_NIL))
            continue;
        agent_pos_t *a = &self->claims[self->claim_count++];
        snprintf (a->name, sizeof (a->name), "%.*s", (int) k->via.str.size, k->via.str.ptr);
        a->position = v->type == MSGPACK_OBJECT_NIL? UINT64_MAX: v->via.u64;
    }
}

//  The key's typed view, for the keys the agent's facts read.
static void
s_take (state_t *self, const char *key, const msgpack_object *value)
{
    if (streq (key, STATE_KEY_EXPLORED))
        s_take_explored (self, value);
    else
    if (streq (key, STATE_KEY_POSITIONS))
        s_take_positions (self, value);
    else
    if (streq (key, STATE_KEY_TEAM_VISITED))
        s_take_visited (self, value);
    else
    if (streq (key, STATE_KEY_TEAM_CLAIMS))
        s_take_claims (self, value);
}

static bool
s_typed (const char *key)
{
    return streq (key, STATE_KEY_EXPLORED) || streq (key, STATE_KEY_POSITIONS)
        || streq (key, STATE_KEY_TEAM_VISITED) || streq (key, STATE_KEY_TEAM_CLAIMS);
}

//  A value's msgpack bytes (NULL: absent) as the key's current value. The
//  bytes are kept and rendered as text only when observe or render asks:
//  a value that changes every step (a team's positions) is rendered only
//  for a policy that reads the context. Only the typed keys are decoded.
static void
s_feed_bytes (state_t *self, const char *key, const void *value, size_t size)
{
    for (size_t i = 0; i < self->count; i++) {
        slot_t *slot = &self->slots[i];
        if (!streq (slot->key, key))
            continue;
        free (slot->value);
        slot->value = NULL;
        slot->size = 0;
        if (value) {
            slot->value = (char *) malloc (size? size: 1);
            assert (slot->value);
            memcpy (slot->value, value, size);
            slot->size = size;
        }
        zstr_free (&slot->text);
        slot->rendered = false;
    }
    if (!s_typed (key))
        return;
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    if (value && msgpack_unpack_next (&unpacked, (const char *) value, size, NULL)
                 == MSGPACK_UNPACK_SUCCESS)
        s_take (self, key, &unpacked.data);
    else
        s_take (self, key, NULL);
    msgpack_unpacked_destroy (&unpacked);
}

//  A decoded value as the key's current value.
static void
s_feed (state_t *self, const char *key, const msgpack_object *value)
{
    if (!value) {
        s_feed_bytes (self, key, NULL, 0);
        return;
    }
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init (&buffer);
    msgpack_packer packer;
    msgpack_packer_init (&packer, &buffer, msgpack_sbuffer_write);
    msgpack_pack_object (&packer, *value);
    s_feed_bytes (self, key, buffer.data? buffer.data: "", buffer.size);
    msgpack_sbuffer_destroy (&buffer);
}

//  The slot's value as text (NULL when absent), rendered on first use.
//  A value that does not decode renders as absent, as it always did.
static const char *
s_text (slot_t *slot)
{
    if (slot->rendered)
        return slot->text;
    slot->rendered = true;
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    if (slot->value && msgpack_unpack_next (&unpacked, slot->value, slot->size, NULL)
                       == MSGPACK_UNPACK_SUCCESS) {
        out_t out = { .used = 0 };
        out.buf[0] = 0;
        s_render_value (&out, &unpacked.data);
        slot->text = strdup (out.buf);
    }
    msgpack_unpacked_destroy (&unpacked);
    return slot->text;
}

static void
s_capture_replica (state_t *self)
{
    for (size_t i = 0; i < self->count; i++) {
        slot_t *slot = &self->slots[i];
        const void *value = NULL;
        size_t size = 0;
        uint64_t seq = 0;
        if (slot->once)
            continue;
        if (!parley_client_replica_get (self->link, slot->key, &value, &size, &seq))
            seq = 0;
        if (seq == slot->seq && (seq != 0 || !slot->value))
            continue;           //  unchanged since the last capture
        slot->seq = seq;
        s_feed_bytes (self, slot->key, seq? value: NULL, size);
    }
}

static int
s_capture (void *impl, char *err, size_t err_size)
{
    state_t *self = (state_t *) impl;
    if (!self->link || self->count == 0)
        return 0;
    if (self->replica) {
        s_capture_replica (self);
        return 0;
    }
    const char *keys [STATE_MAX_KEYS];
    size_t count = 0;
    for (size_t i = 0; i < self->count; i++)
        if (!self->slots [i].once)
            keys [count++] = self->slots [i].key;
    if (count == 0)
        return 0;
    parley_state_t *reply = NULL;
    parley_err_t rc = parley_client_get (self->link, keys, count, &reply);
    if (rc != PARLEY_OK) {
        snprintf (err, err_size, "%s: %s", parley_strerror (rc),
                  parley_client_error_text (self->link));
        parley_state_destroy (&reply);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        const parley_entry_t *entry = parley_state_find (reply, keys [i]);
        s_feed_bytes (self, keys [i], entry? parley_entry_value (entry): NULL,
                      entry? parley_entry_value_size (entry): 0);
    }
    parley_state_destroy (&reply);
    return 0;
}

static char *
s_positions_text (state_t *self)
{
    textbuf_t *buf = textbuf_new ();
    for (size_t i = 0; i < self->agent_count; i++)
        textbuf_addf (buf, "%s%s at %" PRIu64, i? ", ": "",
                      self->agents[i].name, self->agents[i].position);
    return textbuf_detach (&buf);
}

static char *
s_explored_diff (state_t *self)
{
    textbuf_t *buf = textbuf_new ();
    textbuf_addf (buf, "The team has now explored %zu objects; new: ", zlistx_size (self->explored));
    size_t mark = textbuf_len (buf);
    for (const char *name = zlistx_first (self->explored); name;
         name = zlistx_next (self->explored)) {
        if (zhashx_lookup (self->explored_prev, name))
            continue;
        if (textbuf_len (buf) > mark)
            textbuf_add (buf, ", ");
        textbuf_add (buf, name);
    }
    textbuf_add (buf, ".");
    //  Only grown since the last observe: the new names join the set;
    //  otherwise (names left, a reset) the set starts again.
    if (self->explored_rebuilt)
        zhashx_purge (self->explored_prev);
    for (const char *name = zlistx_first (self->explored); name;
         name = zlistx_next (self->explored))
        if (self->explored_rebuilt || !zhashx_lookup (self->explored_prev, name))
            zhashx_insert (self->explored_prev, name, (void *) "");
    self->explored_rebuilt = false;
    return textbuf_detach (&buf);
}

static void
s_observe (void *impl, const char *id, zlistx_t *out)
{
    state_t *self = (state_t *) impl;
    for (size_t i = 0; i < self->count; i++) {
        slot_t *slot = &self->slots[i];
        const char *now = s_text (slot);
        if ((!now && !slot->prev) || (now && slot->prev && streq (now, slot->prev)))
            continue;
        char type[PROTO_MAX_KEY + 8];
        snprintf (type, sizeof (type), "state.%s", slot->key);
        char *text;
        if (streq (slot->key, STATE_KEY_EXPLORED))
            text = s_explored_diff (self);
        else
        if (streq (slot->key, STATE_KEY_POSITIONS)) {
            char *where = s_positions_text (self);
            text = zsys_sprintf ("Agent positions: %s.", where);
            free (where);
        }
        else
            text = zsys_sprintf ("%s is now %s.", slot->key, now? now: "deleted");
        zlistx_add_end (out, observation_new_text (id, type, text));
        free (text);
        zstr_free (&slot->prev);
        slot->prev = now? strdup (now): NULL;
    }
}

static char *
s_render (void *impl)
{
    state_t *self = (state_t *) impl;
    textbuf_t *buf = textbuf_new ();
    for (size_t i = 0; i < self->count; i++) {
        slot_t *slot = &self->slots[i];
        const char *now = s_text (slot);
        if (!now)
            continue;
        if (textbuf_len (buf))
            textbuf_add (buf, "\n");
        if (streq (slot->key, STATE_KEY_EXPLORED)) {
            textbuf_addf (buf, "Explored by all (%zu): ", zlistx_size (self->explored));
            bool first = true;
            for (const char *n = zlistx_first (self->explored); n; n = zlistx_next (self->explored)) {
                if (!first)
                    textbuf_add (buf, ", ");
                textbuf_add (buf, n);
                first = false;
            }
        }
        else
        if (streq (slot->key, STATE_KEY_POSITIONS)) {
            char *where = s_positions_text (self);
            textbuf_addf (buf, "Agent positions: %s", where);
            free (where);
        }
        else
            textbuf_addf (buf, "%s: %s", slot->key, now);
    }
    return textbuf_detach (&buf);
}

static void
s_destroy (void *impl)
{
    state_t *self = (state_t *) impl;
    for (size_t i = 0; i < self->count; i++) {
        free (self->slots[i].key);
        free (self->slots[i].value);
        free (self->slots[i].text);
        free (self->slots[i].prev);
    }
    zlistx_destroy (&self->explored);
    zhashx_destroy (&self->explored_prev);
    free (self->visited);
    free (self);
}

static const connector_ops_t s_ops = {
    .capture = s_capture, .observe = s_observe, .render = s_render, .destroy = s_destroy
};

connector_t *
conn_state_new (parley_client_t *link, const char *const *keys, size_t count)
{
    static const char *const world_keys[] = { STATE_KEY_EXPLORED, STATE_KEY_POSITIONS };
    if (!keys) {
        keys = world_keys;
        count = 2;
    }
    state_t *self = (state_t *) zmalloc (sizeof (state_t));
    self->link = link;
    for (size_t i = 0; i < count && self->count < STATE_MAX_KEYS; i++)
        self->slots[self->count++].key = strdup (keys[i]);
    self->explored = zlistx_new ();
    zlistx_set_duplicator (self->explored, (zlistx_duplicator_fn *) strdup);
    zlistx_set_destructor (self->explored, (zlistx_destructor_fn *) zstr_free);
    self->explored_prev = zhashx_new ();
    return connector_new ("state", &s_ops, self);
}

void
conn_state_feed (connector_t *self, const char *key, const msgpack_object *value)
{
    assert (key);
    s_feed ((state_t *) connector_impl (self), key, value);
}

bool
conn_state_explored_has (connector_t *self, const char *name)
{
    zlistx_t *list = ((state_t *) connector_impl (self))->explored;
    for (const char *n = zlistx_first (list); n; n = zlistx_next (list))
        if (streq (n, name))
            return true;
    return false;
}

bool
conn_state_agent_at (connector_t *self, size_t index, const char **agent, uint64_t *position)
{
    state_t *state = (state_t *) connector_impl (self);
    if (index >= state->agent_count)
        return false;
    *agent = state->agents[index].name;
    *position = state->agents[index].position;
    return true;
}

size_t
conn_state_team_visited (connector_t *self, const uint64_t **positions)
{
    state_t *state = (state_t *) connector_impl (self);
    *positions = state->visited;
    return state->visited_count;
}

bool
conn_state_team_claim_at (connector_t *self, size_t index, const char **agent,
                          uint64_t *position, bool *present)
{
    state_t *state = (state_t *) connector_impl (self);
    if (index >= state->claim_count)
        return false;
    *agent = state->claims[index].name;
    *position = state->claims[index].position;
    *present = *position != UINT64_MAX;
    return true;
}

bool
conn_state_has_key (connector_t *self, const char *key)
{
    state_t *state = (state_t *) connector_impl (self);
    for (size_t i = 0; i < state->count; i++)
        if (streq (state->slots[i].key, key))
            return true;
    return false;
}

void
conn_state_read_once (connector_t *self, const char *key)
{
    state_t *state = (state_t *) connector_impl (self);
    for (size_t i = 0; i < state->count; i++)
        if (streq (state->slots[i].key, key))
            state->slots[i].once = true;
}

//  A key read once: its entry of a SNAPSHOT of that prefix (other keys
//  that start with it are not it).
static int
s_read_once (state_t *self, slot_t *slot)
{
    parley_state_t *page = NULL;
    if (parley_client_snapshot (self->link, slot->key, NULL, 0, &page) != PARLEY_OK) {
        parley_state_destroy (&page);
        return -1;
    }
    const parley_entry_t *entry = parley_state_find (page, slot->key);
    s_feed_bytes (self, slot->key, entry? parley_entry_value (entry): NULL,
                  entry? parley_entry_value_size (entry): 0);
    parley_state_destroy (&page);
    return 0;
}

int
conn_state_follow (connector_t *self)
{
    state_t *state = (state_t *) connector_impl (self);
    bool first = true;
    for (size_t i = 0; i < state->count; i++) {
        slot_t *slot = &state->slots[i];
        if (slot->once) {
            if (s_read_once (state, slot) != 0)
                return -1;
            continue;
        }
        if ((first? parley_client_replica (state->link, slot->key)
                  : parley_client_replica_add (state->link, slot->key)) != PARLEY_OK)
            return -1;
        first = false;
    }
    return 0;
}

void
conn_state_use_replica (connector_t *self, bool on)
{
    ((state_t *) connector_impl (self))->replica = on;
}
