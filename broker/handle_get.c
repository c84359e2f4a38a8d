/*  GET and SNAPSHOT -> STATE: entries with the state_seq they are
    consistent with. Nothing can write between the read and the reply (the
    loop is the lock), so "snapshot at seq S" is exact. */
#include "broker_internal.h"

void
handle_get (broker_t *self, request_t *req)
{
    const msgpack_object *keys = pmsg_field (req->msg, "keys");
    if (!keys || keys->type != MSGPACK_OBJECT_ARRAY || keys->via.array.size == 0) {
        dispatch_error (self, req->id, PERR_BAD_FIELD, "GET needs 1 to %d keys", PROTO_MAX_BATCH);
        return;
    }
    penc_begin (&self->reply, PMSG_STATE, req->id, 2);
    penc_kv_uint (&self->reply, "seq", state_seq (self->state));
    penc_key (&self->reply, "entries");
    state_encode_keys (self->state, &self->reply, keys);
}

void
handle_snapshot (broker_t *self, request_t *req)
{
    size_t len = 0;
    const char *prefix = pmsg_str (req->msg, "prefix", &len);
    penc_begin (&self->reply, PMSG_STATE, req->id, 2);
    penc_kv_uint (&self->reply, "seq", state_seq (self->state));
    penc_key (&self->reply, "entries");
    state_encode_prefix (self->state, &self->reply, prefix, prefix ? len : 0);
}
