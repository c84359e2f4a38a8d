// SPDX-License-Identifier: MIT
/*  welcome - parley_welcome_t: what WELCOME said (parley/client.h). Fields
    the broker left out read as the protocol's defaults.
*/
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "mem.h"
#include "welcome_int.h"

#define S_FEATURES 16
#define S_FEATURE_MAX 32

struct _parley_welcome_t {
    char pub [256];
    char tap [256];
    uint64_t heartbeat_ms, liveness_ms, max_body, max_batch;
    uint64_t acked, mail_seq, state_seq, origin;
    char world_kind [16];
    uint64_t world_width, world_height, objects_total, explored;
    double coverage;
    bool done;
    //  WELCOME's features: the ones this library knows, and up to
    //  S_FEATURES names as sent (a newer broker's too).
    bool send_ack;
    char features [S_FEATURES][S_FEATURE_MAX];
    size_t feature_count;
};

parley_welcome_t *
client_welcome_new (void)
{
    return (parley_welcome_t *) client_mem_zalloc (sizeof (parley_welcome_t));
}

void
client_welcome_destroy (parley_welcome_t **self_p)
{
    assert (self_p);
    client_mem_free (*self_p);
    *self_p = NULL;
}

void
client_welcome_decode (parley_welcome_t *self, const pmsg_t *msg)
{
    assert (self && msg);
    memset (self, 0, sizeof (*self));
    pmsg_strcpy (msg, "pub", self->pub, sizeof self->pub);
    pmsg_strcpy (msg, "tap", self->tap, sizeof self->tap);
    self->heartbeat_ms = pmsg_uint (msg, "heartbeat_ms", 1000);
    self->liveness_ms = pmsg_uint (msg, "liveness_ms", 5000);
    self->max_body = pmsg_uint (msg, "max_body", PROTO_MAX_BODY);
    self->max_batch = pmsg_uint (msg, "max_batch", PROTO_MAX_BATCH);
    self->acked = pmsg_uint (msg, "acked", 0);
    self->mail_seq = pmsg_uint (msg, "mail_seq", 0);
    self->state_seq = pmsg_uint (msg, "state_seq", 0);
    self->origin = pmsg_uint (msg, "origin", 0);
    snprintf (self->world_kind, sizeof self->world_kind, "line");
    const msgpack_object *world = pmsg_field (msg, "world");
    if (world && world->type == MSGPACK_OBJECT_MAP) {
        if (!pobj_strcpy (world, "kind", self->world_kind, sizeof self->world_kind))
            snprintf (self->world_kind, sizeof self->world_kind, "line");
        self->world_width = pobj_uint (world, "width", 0);
        self->world_height = pobj_uint (world, "height", 1);
        self->objects_total = pobj_uint (world, "objects_total", 0);
        self->explored = pobj_uint (world, "explored", 0);
        self->coverage = pobj_num (world, "coverage", 0);
        self->done = pobj_bool (world, "done", false);
    }
    const msgpack_object *features = pmsg_field (msg, "features");
    for (uint32_t i = 0; features && features->type == MSGPACK_OBJECT_ARRAY
                         && i < features->via.array.size; i++) {
        const msgpack_object *name = &features->via.array.ptr [i];
        if (name->type != MSGPACK_OBJECT_STR || name->via.str.size >= S_FEATURE_MAX)
            continue;
        if (name->via.str.size == 8 && memcmp (name->via.str.ptr, "send_ack", 8) == 0)
            self->send_ack = true;
        if (self->feature_count < S_FEATURES)
            snprintf (self->features [self->feature_count++], S_FEATURE_MAX, "%.*s",
                      (int) name->via.str.size, name->via.str.ptr);
    }
}

bool
parley_welcome_feature (const parley_welcome_t *self, const char *name)
{
    assert (self && name);
    for (size_t i = 0; i < self->feature_count; i++)
        if (strcmp (self->features [i], name) == 0)
            return true;
    return false;
}

bool
client_welcome_send_ack (const parley_welcome_t *self)
{
    assert (self);
    return self->send_ack;
}

const char *
parley_welcome_pub (const parley_welcome_t *self)
{
    assert (self);
    return self->pub;
}

const char *
parley_welcome_tap (const parley_welcome_t *self)
{
    assert (self);
    return self->tap;
}

#define S_NUMBER(type, field) \
    type parley_welcome_##field (const parley_welcome_t *self) \
    { \
        assert (self); \
        return self->field; \
    }

S_NUMBER (uint64_t, heartbeat_ms)
S_NUMBER (uint64_t, liveness_ms)
S_NUMBER (uint64_t, max_body)
S_NUMBER (uint64_t, max_batch)
S_NUMBER (uint64_t, acked)
S_NUMBER (uint64_t, mail_seq)
S_NUMBER (uint64_t, state_seq)
S_NUMBER (uint64_t, origin)
S_NUMBER (uint64_t, world_width)
S_NUMBER (uint64_t, world_height)
S_NUMBER (uint64_t, objects_total)
S_NUMBER (uint64_t, explored)
S_NUMBER (double, coverage)
S_NUMBER (bool, done)

const char *
parley_welcome_world_kind (const parley_welcome_t *self)
{
    assert (self);
    return self->world_kind;
}
