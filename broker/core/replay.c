// SPDX-License-Identifier: MIT
/*  replay - the remembered answer to an agent's last keyed request.
    See replay.h.
*/
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

bool
replay_keep (replay_t *self, uint64_t key, const penc_t *reply, size_t head, size_t fields)
{
    assert (self && reply && head <= penc_size (reply));
    //  Forgotten first: when the copy cannot be made, no answer is left.
    replay_forget (self);
    return replay_set (self, key, fields, (const uint8_t *) penc_data (reply) + head,
                       penc_size (reply) - head);
}

bool
replay_set (replay_t *self, uint64_t key, size_t fields, const void *bytes, size_t size)
{
    assert (self && bytes);
    uint8_t *data = malloc (size ? size : 1);
    if (!data)
        return false;
    memcpy (data, bytes, size);
    replay_forget (self);
    self->key = key;
    self->fields = fields;
    self->data = data;
    self->size = size;
    return true;
}

bool
replay_answer (const replay_t *self, uint64_t key, pmsg_type_t type, uint64_t id,
               penc_t *reply)
{
    return replay_answer_more (self, key, type, id, 0, reply);
}

bool
replay_answer_more (const replay_t *self, uint64_t key, pmsg_type_t type, uint64_t id,
                    size_t extra, penc_t *reply)
{
    assert (self && reply);
    if (!self->data || self->key != key)
        return false;
    penc_begin (reply, type, id, self->fields + extra);
    penc_raw (reply, self->data, self->size);
    return true;
}

void
replay_forget (replay_t *self)
{
    assert (self);
    free (self->data);
    *self = (replay_t) { 0 };
}
