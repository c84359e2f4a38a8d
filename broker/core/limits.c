// SPDX-License-Identifier: MIT
/*  limits - the core's limits as one msgpack map. See limits.h.

    Keys are short names; a map read back must carry every one of them
    (a record written by a broker that knew fewer limits is refused rather
    than guessed at: nothing older writes OP_LIMITS), and the counts the
    core sizes its tables by must be within the flags' ranges.
*/
#include <string.h>

#include "limits.h"

#define S_FIELDS 14

//  What the broker's flags allow (broker/main.c) for the counts the core
//  sizes tables by: a record asking for more is not one the broker wrote.
#define S_MAX_COUNT 1000000

static void
s_kv (msgpack_packer *pk, const char *key, uint64_t value)
{
    msgpack_pack_str_with_body (pk, key, strlen (key));
    msgpack_pack_uint64 (pk, value);
}

void
limits_encode (const core_limits_t *l, msgpack_packer *pk)
{
    msgpack_pack_map (pk, S_FIELDS);
    s_kv (pk, "agents", l->max_agents);
    s_kv (pk, "inbox", l->mail.max_inbox);
    s_kv (pk, "inbox_bytes", l->mail.max_inbox_bytes);
    s_kv (pk, "channel", l->mail.max_channel);
    s_kv (pk, "channel_bytes", l->mail.max_channel_bytes);
    s_kv (pk, "channels", l->mail.max_channels);
    s_kv (pk, "body", l->mail.max_body);
    s_kv (pk, "queued_bytes", l->mail.max_queued_bytes);
    s_kv (pk, "overflow", (uint64_t) l->mail.overflow);
    s_kv (pk, "state_keys", l->state.max_keys);
    s_kv (pk, "state_bytes", l->state.max_bytes);
    s_kv (pk, "turns", l->max_turns);
    s_kv (pk, "revisions", l->max_revisions);
    s_kv (pk, "checkpoints", l->checkpoints);
}

bool
limits_decode (const msgpack_object *obj, core_limits_t *l, char *why, size_t why_size)
{
    if (obj->type != MSGPACK_OBJECT_MAP || obj->via.map.size != S_FIELDS) {
        snprintf (why, why_size, "LIMITS is not a map of %d numbers", S_FIELDS);
        return false;
    }
    memset (l, 0, sizeof *l);
    uint32_t seen = 0;
    for (uint32_t i = 0; i < obj->via.map.size; i++) {
        const msgpack_object *k = &obj->via.map.ptr [i].key;
        const msgpack_object *v = &obj->via.map.ptr [i].val;
        if (k->type != MSGPACK_OBJECT_STR || v->type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
            snprintf (why, why_size, "LIMITS has a field that is not a name and a number");
            return false;
        }
        char key [32];
        snprintf (key, sizeof key, "%.*s", (int) (k->via.str.size < 31 ? k->via.str.size : 31),
                  k->via.str.ptr);
        uint64_t n = v->via.u64;
        const char *names [S_FIELDS] = { "agents", "inbox", "inbox_bytes", "channel",
            "channel_bytes", "channels", "body", "queued_bytes", "overflow", "state_keys",
            "state_bytes", "turns", "revisions", "checkpoints" };
        int which = -1;
        for (int j = 0; j < S_FIELDS; j++)
            if (strcmp (key, names [j]) == 0)
                which = j;
        if (which < 0 || (seen & (1u << which))) {
            snprintf (why, why_size, "LIMITS has an unknown or repeated field %s", key);
            return false;
        }
        seen |= 1u << which;
        switch (which) {
            case 0: l->max_agents = n; break;
            case 1: l->mail.max_inbox = n; break;
            case 2: l->mail.max_inbox_bytes = n; break;
            case 3: l->mail.max_channel = n; break;
            case 4: l->mail.max_channel_bytes = n; break;
            case 5: l->mail.max_channels = n; break;
            case 6: l->mail.max_body = n; break;
            case 7: l->mail.max_queued_bytes = n; break;
            case 8: l->mail.overflow = n ? OVERFLOW_DROP_OLDEST : OVERFLOW_REJECT; break;
            case 9: l->state.max_keys = n; break;
            case 10: l->state.max_bytes = n; break;
            case 11: l->max_turns = (uint32_t) (n > UINT32_MAX ? UINT32_MAX : n); break;
            case 12: l->max_revisions = (uint32_t) (n > UINT32_MAX ? UINT32_MAX : n); break;
            case 13: l->checkpoints = n; break;
        }
    }
    if (l->max_agents == 0) {
        snprintf (why, why_size, "LIMITS allows no agent");
        return false;
    }
    if (l->max_agents > S_MAX_COUNT || l->mail.max_channels > S_MAX_COUNT
    ||  l->checkpoints > S_MAX_COUNT) {
        snprintf (why, why_size, "LIMITS has agents, channels or checkpoints above %d",
                  S_MAX_COUNT);
        return false;
    }
    return true;
}

bool
limits_equal (const core_limits_t *a, const core_limits_t *b)
{
    return a->max_agents == b->max_agents
        && a->mail.max_inbox == b->mail.max_inbox
        && a->mail.max_inbox_bytes == b->mail.max_inbox_bytes
        && a->mail.max_channel == b->mail.max_channel
        && a->mail.max_channel_bytes == b->mail.max_channel_bytes
        && a->mail.max_channels == b->mail.max_channels
        && a->mail.max_body == b->mail.max_body
        && a->mail.max_queued_bytes == b->mail.max_queued_bytes
        && a->mail.overflow == b->mail.overflow
        && a->state.max_keys == b->state.max_keys
        && a->state.max_bytes == b->state.max_bytes
        && a->max_turns == b->max_turns
        && a->max_revisions == b->max_revisions
        && a->checkpoints == b->checkpoints;
}
