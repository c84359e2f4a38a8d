// SPDX-License-Identifier: MIT
/*  GET and SNAPSHOT -> STATE: entries with the state_seq they are
    consistent with. Nothing can write between the read and the reply (the
    loop is the lock), so "snapshot at seq S" is exact.

    Size: a big store does not fit one 1 MiB frame (and libzmq would close
    the client's connection on a larger one). A SNAPSHOT that asks for
    paging (`limit` or `after_key`) gets a page that fits, with `more: true`
    when entries were left out; one that does not ask gets everything or
    TOO_LARGE with a sentence saying how to narrow it, never a silently
    partial store. GET over the budget is TOO_LARGE too (ask for fewer keys).
*/
#include <string.h>

#include "broker_internal.h"

//  STATE replies stop below the frame limit by the envelope's size; one
//  entry of the largest value (STATE_DEFAULT_MAX_VALUE) plus a 256 B key
//  still fits.
#define STATE_REPLY_BUDGET (PROTO_MAX_FRAME - 128)

void
handle_get (broker_t *self, request_t *req)
{
    const msgpack_object *keys = pmsg_field (req->msg, "keys");
    if (!keys || keys->type != MSGPACK_OBJECT_ARRAY || keys->via.array.size == 0) {
        dispatch_error (self, req->id, PERR_BAD_FIELD, "GET needs 1 to %d keys", PROTO_MAX_BATCH);
        return;
    }
    size_t need = state_keys_cost (self->state, keys);
    if (need > STATE_REPLY_BUDGET) {
        dispatch_error (self, req->id, PERR_TOO_LARGE, "the values of these %u keys take "
                        "about %zu bytes, over the %d-byte reply limit; GET fewer keys at a "
                        "time", keys->via.array.size, need, STATE_REPLY_BUDGET);
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
    size_t len = 0, after_len = 0;
    const char *prefix = pmsg_str (req->msg, "prefix", &len);
    const char *after = pmsg_str (req->msg, "after_key", &after_len);
    const msgpack_object *limit = pmsg_field (req->msg, "limit");
    char after_key [PROTO_MAX_KEY + 1];
    if (after) {
        //  The decoder bounded it to PROTO_MAX_KEY; a NUL would cut it.
        if (memchr (after, 0, after_len)) {
            dispatch_error (self, req->id, PERR_BAD_FIELD, "after_key holds a NUL byte");
            return;
        }
        memcpy (after_key, after, after_len);
        after_key [after_len] = 0;
    }
    bool paging = after || limit;
    size_t max = pmsg_uint (req->msg, "limit", 0);
    if (max == 0 || max > PROTO_MAX_STATE_ENTRIES)
        max = PROTO_MAX_STATE_ENTRIES;
    state_page_t page = {
        .prefix = prefix, .prefix_len = prefix ? len : 0,
        .after_key = after ? after_key : NULL,
        .limit = max, .max_bytes = STATE_REPLY_BUDGET, .strict = !paging
    };
    penc_begin (&self->reply, PMSG_STATE, req->id, paging ? 3 : 2);
    penc_kv_uint (&self->reply, "seq", state_seq (self->state));
    penc_key (&self->reply, "entries");
    bool more = false;
    size_t need = 0;
    if (state_encode_page (self->state, &self->reply, &page, &more, &need) == SIZE_MAX) {
        dispatch_error (self, req->id, PERR_TOO_LARGE, "the snapshot of prefix \"%.*s\" "
                        "is about %zu bytes, over the %d-byte reply limit (or over %d "
                        "entries); narrow the prefix, or page with limit and after_key",
                        (int) (prefix ? len : 0), prefix ? prefix : "", need,
                        STATE_REPLY_BUDGET, PROTO_MAX_STATE_ENTRIES);
        return;
    }
    if (paging)
        penc_kv_bool (&self->reply, "more", more);
}
