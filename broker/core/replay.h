// SPDX-License-Identifier: MIT
/*  replay - the remembered answer to an agent's last keyed request.

    Idempotent requests (ACT with `step`, SEND with `batch`, PROTOCOL.md)
    work the same way: the broker keeps the encoded fields of the reply to
    the last request that carried a key, and a request repeating that key is
    answered from them, with its own request id, instead of acting again.
    One slot per request kind per agent: a retry is only ever of the latest
    request, so nothing older is worth keeping.

    A replay_t is a plain struct embedded in the agent record; zero means
    "nothing remembered". replay_forget releases what it holds.
*/
#ifndef PARLEY_REPLAY_H
#define PARLEY_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmsg.h"

typedef struct {
    uint64_t key;               //  the step or batch id answered
    size_t fields;              //  key/value pairs in data
    uint8_t *data;              //  encoded fields, without the envelope; NULL: none
    size_t size;
} replay_t;

//  Remembers the reply being built in `reply`: the bytes after offset
//  `head` (where the envelope ends), holding `fields` pairs. False when
//  memory runs out; then nothing is remembered.
bool replay_keep (replay_t *self, uint64_t key, const penc_t *reply, size_t head,
                  size_t fields);
//  Remembers `size` bytes of encoded fields (`fields` pairs) under `key`
//  (OP_REMEMBER). False when memory runs out; the slot is then unchanged.
bool replay_set (replay_t *self, uint64_t key, size_t fields, const void *bytes, size_t size);
//  The encoded fields after `head` of the reply being built in `reply`
//  (what an OP_REMEMBER carries).
static inline const void *replay_bytes_of (const penc_t *reply, size_t head, size_t *size)
{
    *size = penc_size (reply) - head;
    return (const uint8_t *) penc_data (reply) + head;
}
//  If `key` is the one remembered, writes the remembered answer as a
//  `type` reply with request id `id` into `reply` and returns true.
bool replay_answer (const replay_t *self, uint64_t key, pmsg_type_t type, uint64_t id,
                    penc_t *reply);
//  As replay_answer, for a reply with `extra` fields after the remembered
//  ones, which the caller writes next (STEP's mail, read afresh).
bool replay_answer_more (const replay_t *self, uint64_t key, pmsg_type_t type, uint64_t id,
                         size_t extra, penc_t *reply);
void replay_forget (replay_t *self);

#endif
