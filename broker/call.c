// SPDX-License-Identifier: MIT
/*  call - execute, then propagate. See call.h.

    The record is made of parts appended end to end into the journal's
    buffer (jfile_append_parts): the head [5, ts, agent, bin header],
    packed at call_end into a small buffer on the stack, the request's
    frame where it lies, and the operations, packed as they are applied
    (an operation that fails is cut back out) behind their array header.
    So the frame is copied once, into the journal's buffer (a SEND of
    1 MiB costs one 1 MiB memcpy), and a request of one message costs a
    few hundred bytes of copying and no allocation.

    The time of a call is the loop turn's (broker.turn_wall_us, one clock
    read per turn) when it runs inside one, else the clock's.
*/
#include <errno.h>
#include <string.h>

#include "broker_internal.h"
#include "pclock.h"
#include "plog.h"

struct _call_t {
    bool active;
    bool reserved;              //  the journal has room for the record
    size_t reserve;             //  how much: the frame and what the caller said
    char agent [PROTO_MAX_NAME + 1];
    const pmsg_t *msg;
    const void *frame;
    size_t size;
    int64_t ts;
    msgpack_sbuffer ops;
    msgpack_packer pk;
    size_t count;
};

//  The record's head and the ops' array header: a few dozen bytes.
typedef struct {
    char data [PROTO_MAX_NAME + 64];
    size_t size;
} s_head_t;

static int
s_head_write (void *data, const char *buf, size_t len)
{
    s_head_t *head = data;
    assert (head->size + len <= sizeof head->data);
    memcpy (head->data + head->size, buf, len);
    head->size += len;
    return 0;
}

static plog_limit_t s_storage_limit;

call_t *
call_new (void)
{
    call_t *self = calloc (1, sizeof (call_t));
    if (!self)
        return NULL;
    msgpack_sbuffer_init (&self->ops);
    msgpack_packer_init (&self->pk, &self->ops, msgpack_sbuffer_write);
    return self;
}

void
call_destroy (call_t **self_p)
{
    call_t *self = *self_p;
    if (self) {
        msgpack_sbuffer_destroy (&self->ops);
        free (self);
        *self_p = NULL;
    }
}

void
call_begin (broker_t *self, const char *agent, const pmsg_t *msg, const void *frame,
            size_t size, size_t reserve)
{
    call_t *call = self->call;
    assert (!call->active);
    call->active = true;
    call->reserved = self->replaying || !self->durable;
    call->reserve = size + reserve + 1024;
    size_t len = agent ? strlen (agent) : 0;
    if (len >= sizeof call->agent)
        len = sizeof call->agent - 1;
    memcpy (call->agent, agent ? agent : "", len);
    call->agent [len] = 0;
    call->msg = msg;
    call->frame = frame;
    call->size = size;
    call->ts = self->turn_wall_us ? self->turn_wall_us : pclock_wall_us ();
    call->count = 0;
    msgpack_sbuffer_clear (&call->ops);
}

//  Room in the journal for the call's record; NULL, or why not.
static const char *
s_reserve (broker_t *self)
{
    call_t *call = self->call;
    if (call->reserved)
        return NULL;
    const char *refusal = durable_refusal (self);
    if (!refusal && durable_reserve (self, call->reserve) != 0)
        refusal = strerror (errno);
    if (refusal) {
        durable_count_refusal (self);
        plog_limited (&s_storage_limit, 5, PLOG_ERROR, "refused a change from %s: the "
                      "journal cannot take it (%s)", call->agent [0] ? call->agent
                      : "the broker", refusal);
        return refusal;
    }
    call->reserved = true;
    return NULL;
}

#define S_STORAGE_TEXT "the broker cannot write its journal (%s); nothing was changed, " \
                       "reads still work; try again later"

bool
call_reserve (broker_t *self, uint64_t id)
{
    const char *refusal = s_reserve (self);
    if (!refusal)
        return true;
    dispatch_error (self, id, PERR_STORAGE, S_STORAGE_TEXT, refusal);
    return false;
}

//  The events an operation's outcome carries, into the outbox.
static void
s_publish (broker_t *self, const op_t *op, const core_outcome_t *out)
{
    publish_state_changes (self, out->state_seq_before);
    if (op->kind == OP_MOVE && out->obs.completed)
        publish_world_event (self, "explored");
    else
    if (op->kind == OP_WORLD_RESET)
        publish_world_event (self, "reset");
}

perr_t
call_apply (broker_t *self, op_t *op, core_outcome_t *outcome)
{
    call_t *call = self->call;
    assert (call->active);
    core_outcome_t scratch = { 0 };
    core_outcome_t *out = outcome ? outcome : &scratch;
    const char *refusal = s_reserve (self);
    if (refusal) {
        memset (out, 0, sizeof *out);
        out->err = PERR_STORAGE;
        snprintf (out->why, sizeof out->why, S_STORAGE_TEXT, refusal);
        return PERR_STORAGE;
    }
    op->ts = call->ts;
    op->agent = call->agent;
    op->frame = call->msg;
    size_t before = call->ops.size;
    bool record = !self->replaying && self->durable;
    if (record)
        op_encode (op, &call->pk);
    perr_t err = core_apply (self->core, op, out);
    //  Nothing changed (a refusal; a SEND none of whose messages was
    //  accepted, as a flood at a full inbox makes, under the reject policy
    //  where a refused message drops nothing): nothing to replay.
    if (err || (op->kind == OP_SEND && out->accepted == 0
                && core_limits (self->core)->mail.overflow == OVERFLOW_REJECT)) {
        call->ops.size = before;
        return err;
    }
    call->count++;
    if (!self->replaying)
        s_publish (self, op, out);
    return PERR_NONE;
}

bool
call_active (broker_t *self)
{
    return self->call->active;
}

void
call_end (broker_t *self)
{
    call_t *call = self->call;
    assert (call->active);
    call->active = false;
    if (self->replaying || !self->durable || call->count == 0)
        return;
    //  [5, ts, agent, frame or nil, [op...]]: the head, the frame as it
    //  came, the ops' array header, the ops.
    s_head_t head = { .size = 0 }, count = { .size = 0 };
    msgpack_packer pk;
    msgpack_packer_init (&pk, &head, s_head_write);
    msgpack_pack_array (&pk, 5);
    msgpack_pack_int (&pk, OP_RECORD_TXN);
    msgpack_pack_int64 (&pk, call->ts);
    msgpack_pack_str_with_body (&pk, call->agent, strlen (call->agent));
    if (call->frame)
        msgpack_pack_bin (&pk, call->size);
    else
        msgpack_pack_nil (&pk);
    msgpack_packer_init (&pk, &count, s_head_write);
    msgpack_pack_array (&pk, (uint32_t) call->count);
    jfile_part_t parts [4] = {
        { head.data, head.size },
        { call->frame, call->frame ? call->size : 0 },
        { count.data, count.size },
        { call->ops.data, call->ops.size }
    };
    //  The room was reserved: a failure here is not a full disk but a
    //  record over the limit or memory, and what was applied cannot be
    //  written. Nothing more may be acknowledged (durable_lost).
    if (durable_append_parts (self, parts, 4) != 0)
        durable_lost (self, "a change could not be added to the journal");
}

perr_t
call_one (broker_t *self, const char *agent, op_t *op, core_outcome_t *outcome)
{
    call_begin (self, agent, NULL, NULL, 0, 0);
    perr_t err = call_apply (self, op, outcome);
    call_end (self);
    return err;
}
