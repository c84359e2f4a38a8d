// SPDX-License-Identifier: MIT
/*  call - execute, then propagate. See call.h.

    The record is built from two buffers: the operations, packed as they
    are applied (an operation that fails is cut back out), and, at
    call_end, the record's head [5, ts, agent, frame, array(n)] in front of
    them. What is slow: the frame is copied into the record once (a SEND
    of 1 MiB costs a 1 MiB memcpy), as it was when requests were logged.
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
    msgpack_sbuffer record;
    msgpack_packer record_pk;
};

static plog_limit_t s_storage_limit;

call_t *
call_new (void)
{
    call_t *self = calloc (1, sizeof (call_t));
    if (!self)
        return NULL;
    msgpack_sbuffer_init (&self->ops);
    msgpack_packer_init (&self->pk, &self->ops, msgpack_sbuffer_write);
    msgpack_sbuffer_init (&self->record);
    msgpack_packer_init (&self->record_pk, &self->record, msgpack_sbuffer_write);
    return self;
}

void
call_destroy (call_t **self_p)
{
    call_t *self = *self_p;
    if (self) {
        msgpack_sbuffer_destroy (&self->ops);
        msgpack_sbuffer_destroy (&self->record);
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
    snprintf (call->agent, sizeof call->agent, "%s", agent ? agent : "");
    call->msg = msg;
    call->frame = frame;
    call->size = size;
    call->ts = pclock_wall_us ();
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
    msgpack_sbuffer_clear (&call->record);
    msgpack_packer *pk = &call->record_pk;
    msgpack_pack_array (pk, 5);
    msgpack_pack_int (pk, OP_RECORD_TXN);
    msgpack_pack_int64 (pk, call->ts);
    msgpack_pack_str_with_body (pk, call->agent, strlen (call->agent));
    if (call->frame) {
        msgpack_pack_bin (pk, call->size);
        msgpack_pack_bin_body (pk, call->frame, call->size);
    }
    else
        msgpack_pack_nil (pk);
    msgpack_pack_array (pk, (uint32_t) call->count);
    msgpack_sbuffer_write (&call->record, call->ops.data, call->ops.size);
    //  The room was reserved: a failure here is not a full disk but a
    //  record over the limit or memory, and what was applied cannot be
    //  written. Nothing more may be acknowledged (durable_lost).
    if (durable_append (self, call->record.data, call->record.size) != 0)
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
