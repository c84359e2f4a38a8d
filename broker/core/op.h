// SPDX-License-Identifier: MIT
/*  op - the operations that change the core, and their journal form.

    An operation names its agent (the one that said HELLO on the
    connection it came from; "" for the broker's own), the time it
    happened (µs since the epoch: the core has no clock) and what it does,
    with every choice already made: the seq its first message takes, the
    resume token a HELLO issued, the position an ACK releases to. Requests
    carry the bulky part (messages, state ops) in their frame; an
    operation points into it rather than copying it, and the journal keeps
    the frame once for every operation of a request.

    Journal record (one per request, or per broker event such as an agent
    forgotten by the timer): a msgpack array
        [5, ts, agent, frame or nil, [op, op, ...]]
    and each op an array [kind, args...] as listed below. Numbers never
    change meaning: files outlive binaries.

        kind                args                      what it does
        1  LIMITS           {limits}                  the limits applied from here on
        2  ORIGIN           origin                    the counters' origin (WELCOME.origin)
        3  HELLO            token, [caps]             registers the agent (or takes it over)
        4  BYE              -                         gives up its resume token
        5  FORGET           -                         releases its mail, channels, world place, id
        6  SEND             first_seq                 posts the frame's `messages`
        7  ACK              seq                       releases its mail up to seq
        8  DELIVER          seq                       its mail up to seq was handed out
        9  LISTEN           channel
        10 UNLISTEN         channel
        11 WRITE            state_seq                 the frame's `ops`, one batch
        12 MOVE             action or nil, step|nil   ACT (nil: PERCEIVE) in the world
        13 WORLD_RESET      seed or nil
        14 HANDOVER         state_seq                 the frame's ops, next, status, reason
        15 WF_BEGIN         -                         the entry role's first agent came
        16 WF_FAIL          reason                    the workflow fails (holder gone, timeout)
        17 RESUME           number                    back to checkpoint `number`
        18 REMEMBER         slot, key, fields, bytes  the answer to a keyed request
                                                      (bytes nil: forget the slot)

    `first_seq` and `state_seq` are what the live broker saw before the
    operation: a replay that finds another value has diverged and says so.
*/
#ifndef PARLEY_CORE_OP_H
#define PARLEY_CORE_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>
#include "pmsg.h"
#include "limits.h"

#define OP_RECORD_TXN 5

typedef enum {
    OP_LIMITS = 1,
    OP_ORIGIN,
    OP_HELLO,
    OP_BYE,
    OP_FORGET,
    OP_SEND,
    OP_ACK,
    OP_DELIVER,
    OP_LISTEN,
    OP_UNLISTEN,
    OP_WRITE,
    OP_MOVE,
    OP_WORLD_RESET,
    OP_HANDOVER,
    OP_WF_BEGIN,
    OP_WF_FAIL,
    OP_RESUME,
    OP_REMEMBER,
    OP__COUNT
} op_kind_t;

//  The idempotency slots an agent has (replay.h): the answer to its last
//  keyed request of each kind.
typedef enum {
    SLOT_SEND = 0,              //  SEND `batch`
    SLOT_ACT,                   //  ACT `step`
    SLOT_STEP,                  //  STEP `step` (its parts, not the mail)
    SLOT_HANDOVER,              //  HANDOVER `turn`
    SLOT__COUNT
} slot_t;

typedef struct {
    op_kind_t kind;
    int64_t ts;                     //  µs since the epoch
    const char *agent;              //  NUL-terminated; "" for the broker
    const pmsg_t *frame;            //  the request's, or NULL
    //  Arguments, by kind:
    uint64_t u;                     //  ORIGIN origin, SEND first_seq, ACK/DELIVER seq,
                                    //  WRITE/HANDOVER state_seq, RESUME number,
                                    //  REMEMBER key
    bool has_u2;
    uint64_t u2;                    //  MOVE step (has_u2), WORLD_RESET seed (has_u2),
                                    //  REMEMBER fields
    const char *text;               //  HELLO token, LISTEN channel, MOVE action (NULL:
                                    //  perceive), WF_FAIL reason
    size_t text_len;
    const msgpack_object *list;     //  HELLO caps (array of str)
    slot_t slot;                    //  REMEMBER
    const void *bytes;              //  REMEMBER (NULL: forget)
    size_t size;
    const core_limits_t *limits;    //  LIMITS
} op_t;

const char *op_kind_name (op_kind_t kind);

//  Appends the op's array to `pk` (the record's op list).
void op_encode (const op_t *op, msgpack_packer *pk);

//  Reads one op array of a record (its ts, agent and frame are the
//  record's: the caller sets them). `limits` receives LIMITS' values, so
//  it must outlive the op. False when the array is not an op of a known
//  kind with the right shape (`why` says which).
bool op_decode (const msgpack_object *obj, op_t *op, core_limits_t *limits,
                char *why, size_t why_size);

#endif
