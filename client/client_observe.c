// SPDX-License-Identifier: MIT
/*  client_observe - what an operator tool needs beyond the typed requests:
    STATS as a list of every field the broker sent (so a newer broker's
    counters show without a new library), and any event by topic prefix,
    queued for the caller.

    The STATS list walks the reply map itself rather than the schema: a
    field this library has never heard of still comes out, with its unit
    from the protocol's naming rule and an empty help sentence.
*/
#include <assert.h>
#include "client_internal.h"
#include "pclock.h"
#include "plog.h"

//  ---------------------------------------------------------------------
//  STATS as fields

const char *
parley_stat_unit (const char *name, parley_stat_kind_t kind)
{
    assert (name);
    if (kind == PARLEY_STAT_TEXT || kind == PARLEY_STAT_BOOL || kind == PARLEY_STAT_OTHER)
        return "";
    size_t len = strlen (name);
    if (len > 3 && streq (name + len - 3, "_ms"))
        return "ms";
    if (len > 3 && streq (name + len - 3, "_us"))
        return "us";
    if (strstr (name, "bytes"))
        return "bytes";
    if (strncmp (name, "rate_", 5) == 0)
        return "messages/s";
    if (len > 4 && streq (name + len - 4, "_seq"))
        return "seq";
    return "count";
}

//  The protocol table's sentence for a STATS_REPLY field, "" if unknown.
static const char *
s_stat_help (const char *name)
{
    const pschema_t *schema = pmsg_schema (PMSG_STATS_REPLY);
    for (size_t i = 0; schema && i < schema->count; i++)
        if (streq (schema->fields [i].name, name))
            return schema->fields [i].doc ? schema->fields [i].doc : "";
    return "";
}

static bool
s_envelope_key (const char *name)
{
    return streq (name, "v") || streq (name, "t") || streq (name, "id");
}

//  Offsets into the arena while the list is built (it may move).
typedef struct {
    size_t name, text, value;
} s_stat_offsets_t;

parley_err_t
parley_client_stats_fields (parley_client_t *self, parley_stat_list_t *result)
{
    assert (self && result);
    memset (result, 0, sizeof (*result));
    client_begin (self, PMSG_STATS, 0);
    parley_err_t rc = client_call (self, PMSG_STATS_REPLY);
    if (rc != PARLEY_OK)
        return rc;
    const msgpack_object *root = pmsg_root (self->reply);
    size_t n = root->type == MSGPACK_OBJECT_MAP ? root->via.map.size : 0;
    parley_stat_field_t *list = (parley_stat_field_t *)
        client_items (&self->items, &self->items_size, n, sizeof (parley_stat_field_t));
    s_stat_offsets_t *offs = (s_stat_offsets_t *)
        client_items (&self->items2, &self->items2_size, n, sizeof (s_stat_offsets_t));
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const msgpack_object_kv *kv = &root->via.map.ptr [i];
        if (kv->key.type != MSGPACK_OBJECT_STR)
            continue;
        char name [PROTO_MAX_KEY + 1];
        size_t len = kv->key.via.str.size < PROTO_MAX_KEY ? kv->key.via.str.size : PROTO_MAX_KEY;
        memcpy (name, kv->key.via.str.ptr, len);
        name [len] = 0;
        if (s_envelope_key (name))
            continue;
        parley_stat_field_t *f = &list [count];
        s_stat_offsets_t *o = &offs [count];
        const msgpack_object *v = &kv->val;
        o->name = client_arena_copy (&self->arena, name, len);
        o->text = client_arena_copy (&self->arena, "", 0);
        switch (v->type) {
            case MSGPACK_OBJECT_POSITIVE_INTEGER:
                f->kind = PARLEY_STAT_UINT;
                f->uint_value = v->via.u64;
                f->num_value = (double) v->via.u64;
                break;
            case MSGPACK_OBJECT_NEGATIVE_INTEGER:
                f->kind = PARLEY_STAT_INT;
                f->int_value = v->via.i64;
                f->num_value = (double) v->via.i64;
                break;
            case MSGPACK_OBJECT_FLOAT32:
            case MSGPACK_OBJECT_FLOAT64:
                f->kind = PARLEY_STAT_NUM;
                f->num_value = v->via.f64;
                break;
            case MSGPACK_OBJECT_BOOLEAN:
                f->kind = PARLEY_STAT_BOOL;
                f->uint_value = v->via.boolean ? 1 : 0;
                f->num_value = (double) f->uint_value;
                break;
            case MSGPACK_OBJECT_STR:
                f->kind = PARLEY_STAT_TEXT;
                o->text = client_arena_copy (&self->arena, v->via.str.ptr, v->via.str.size);
                break;
            default:
                f->kind = PARLEY_STAT_OTHER;
                break;
        }
        o->value = client_arena_pack (&self->arena, v, &f->value_size);
        f->unit = parley_stat_unit (name, f->kind);
        f->help = s_stat_help (name);
        count++;
    }
    //  The arena is complete: offsets become pointers.
    for (size_t i = 0; i < count; i++) {
        list [i].name = self->arena.data + offs [i].name;
        list [i].text = self->arena.data + offs [i].text;
        list [i].value = self->arena.data + offs [i].value;
    }
    result->fields = list;
    result->count = count;
    return PARLEY_OK;
}

//  ---------------------------------------------------------------------
//  Generic events

//  Longest topic prefix: "state." and a whole state key, with room.
#define S_TOPIC_MAX (PROTO_MAX_KEY + 16)

parley_err_t
parley_client_subscribe (parley_client_t *self, const char *prefix)
{
    assert (self && prefix);
    if (strlen (prefix) > S_TOPIC_MAX)
        return client_fail (self, PARLEY_ERR_INVALID, "topic prefix longer than %d bytes",
                            S_TOPIC_MAX);
    for (size_t i = 0; i < self->event_topic_count; i++)
        if (streq (self->event_topics [i], prefix))
            return PARLEY_OK;
    if (self->event_topic_count >= PARLEY_MAX_EVENT_TOPICS)
        return client_fail (self, PARLEY_ERR_INVALID, "at most %d topic prefixes",
                            PARLEY_MAX_EVENT_TOPICS);
    if (!self->event_queue)
        self->event_queue = zlistx_new ();
    self->event_topics [self->event_topic_count++] = strdup (prefix);
    //  libzmq counts subscriptions: ours stack on the client's own
    //  (mail., world., ...) and leaving ours leaves theirs in place.
    if (self->sub)
        zsock_set_subscribe (self->sub, prefix);
    return PARLEY_OK;
}

void
parley_client_unsubscribe (parley_client_t *self, const char *prefix)
{
    assert (self && prefix);
    for (size_t i = 0; i < self->event_topic_count; i++) {
        if (!streq (self->event_topics [i], prefix))
            continue;
        if (self->sub)
            zsock_set_unsubscribe (self->sub, prefix);
        free (self->event_topics [i]);
        self->event_topics [i] = self->event_topics [--self->event_topic_count];
        return;
    }
}

void
client_events_subscribe_all (parley_client_t *self)
{
    for (size_t i = 0; self->sub && i < self->event_topic_count; i++)
        zsock_set_subscribe (self->sub, self->event_topics [i]);
}

static void
s_event_destroy (void **item)
{
    zmsg_destroy ((zmsg_t **) item);
}

void
client_events_queue (parley_client_t *self, const char *topic, zmsg_t *msg)
{
    if (!self->event_topic_count || !topic)
        return;
    bool wanted = false;
    for (size_t i = 0; i < self->event_topic_count && !wanted; i++)
        wanted = strncmp (topic, self->event_topics [i], strlen (self->event_topics [i])) == 0;
    zframe_t *body = zmsg_first (msg);
    if (!wanted || !body)
        return;
    //  Bounded: a caller that never takes them must not grow us for ever.
    if (zlistx_size (self->event_queue) >= PARLEY_EVENT_QUEUE) {
        zmsg_t *oldest = (zmsg_t *) zlistx_detach (self->event_queue, NULL);
        zmsg_destroy (&oldest);
        self->stats.events_dropped++;
    }
    zmsg_t *copy = zmsg_new ();
    zmsg_addmem (copy, topic, strlen (topic) + 1);         //  with its NUL
    zmsg_addmem (copy, zframe_data (body), zframe_size (body));
    uint64_t stamp = (uint64_t) pclock_wall_us ();
    zmsg_addmem (copy, &stamp, sizeof stamp);
    zlistx_add_end (self->event_queue, copy);
    self->stats.events++;
}

bool
client_events_pending (parley_client_t *self)
{
    return self->event_queue && zlistx_size (self->event_queue) > 0;
}

bool
parley_client_event (parley_client_t *self, parley_event_t *event)
{
    assert (self && event);
    client_drain_events (self);
    while (client_events_pending (self)) {
        zmsg_destroy (&self->event_last);
        self->event_last = (zmsg_t *) zlistx_detach (self->event_queue, NULL);
        zframe_t *topic = zmsg_first (self->event_last);
        zframe_t *body = zmsg_next (self->event_last);
        zframe_t *stamp = zmsg_next (self->event_last);
        //  The type, from the envelope: a frame that does not decode is
        //  counted and skipped, like the other event paths do.
        perr_t code;
        uint64_t id;
        char why [256];
        pmsg_t *decoded = pmsg_decode (zframe_data (body), zframe_size (body),
                                       pwire_default_limits (), &code, &id, why, sizeof why);
        if (!decoded) {
            self->stats.bad_frames++;
            continue;
        }
        snprintf (self->event_type, sizeof self->event_type, "%s",
                  pmsg_type_name (pmsg_type (decoded)));
        pmsg_destroy (&decoded);
        memset (event, 0, sizeof (*event));
        event->topic = (const char *) zframe_data (topic);
        event->type = self->event_type;
        event->body = zframe_data (body);
        event->body_size = zframe_size (body);
        memcpy (&event->received_us, zframe_data (stamp), sizeof event->received_us);
        return true;
    }
    return false;
}

void
client_events_destroy (parley_client_t *self)
{
    for (size_t i = 0; i < self->event_topic_count; i++)
        free (self->event_topics [i]);
    self->event_topic_count = 0;
    if (self->event_queue)
        zlistx_set_destructor (self->event_queue, s_event_destroy);
    zlistx_destroy (&self->event_queue);
    zmsg_destroy (&self->event_last);
}
