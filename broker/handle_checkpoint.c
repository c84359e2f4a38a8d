// SPDX-License-Identifier: MIT
/*  CHECKPOINT -> CHECKPOINT_STATE: the state at checkpoint N, or with
    `since` M what differs between M and N, keys in bytewise order. */
#include "broker_internal.h"

static int
s_compare (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

void
handle_checkpoint (broker_t *self, request_t *req)
{
    if (!self->workflow) {
        dispatch_error (self, req->id, PERR_NO_WORKFLOW, "this broker runs no workflow");
        return;
    }
    checkpoints_t *checkpoints = workflow_checkpoints (self->workflow);
    uint64_t number = pmsg_uint (req->msg, "number", 0);
    bool diff = pmsg_field (req->msg, "since") != NULL;
    uint64_t since = pmsg_uint (req->msg, "since", 0);
    const checkpoint_info_t *info = checkpoints_find (checkpoints, number);
    if (!info || (diff && !checkpoints_find (checkpoints, since))) {
        dispatch_error (self, req->id, PERR_NO_SUCH_CHECKPOINT, "checkpoint %llu is not kept "
                        "(see CHECKPOINTS)", (unsigned long long) (info ? since : number));
        return;
    }
    zhashx_t *map = diff ? checkpoints_diff (checkpoints, since, number)
                         : checkpoints_state_at (checkpoints, number);
    size_t count = map ? zhashx_size (map) : 0;
    const char **keys = map ? calloc (count ? count : 1, sizeof (char *)) : NULL;
    if (!keys) {
        zhashx_destroy (&map);
        dispatch_error (self, req->id, PERR_INTERNAL, "out of memory");
        return;
    }
    size_t bytes = 0, n = 0;
    for (checkpoint_value_t *value = zhashx_first (map); value; value = zhashx_next (map)) {
        keys [n++] = zhashx_cursor (map);
        bytes += strlen (zhashx_cursor (map)) + value->size + 32;
    }
    if (bytes > PROTO_MAX_FRAME - 4096 || count > PROTO_MAX_STATE_ENTRIES) {
        dispatch_error (self, req->id, PERR_TOO_LARGE, "checkpoint %llu holds %zu keys and "
                        "about %zu bytes: more than one reply frame", (unsigned long long) number,
                        count, bytes);
        free (keys);
        zhashx_destroy (&map);
        return;
    }
    qsort (keys, count, sizeof (char *), s_compare);
    penc_t *enc = &self->reply;
    penc_begin (enc, PMSG_CHECKPOINT_STATE, req->id, diff ? 4 : 3);
    penc_kv_uint (enc, "number", number);
    if (diff)
        penc_kv_uint (enc, "since", since);
    penc_key (enc, "info");
    checkpoint_encode_info (info, enc);
    penc_key (enc, "entries");
    msgpack_pack_array (penc_packer (enc), (uint32_t) count);
    for (size_t i = 0; i < count; i++) {
        checkpoint_value_t *value = zhashx_lookup (map, keys [i]);
        msgpack_pack_map (penc_packer (enc), value->removed ? 2 : 3);
        penc_kv_cstr (enc, "key", keys [i]);
        if (value->removed)
            penc_kv_bool (enc, "removed", true);
        else {
            penc_kv_cstr (enc, "reducer", state_reducer_name (value->reducer));
            penc_kv_raw (enc, "value", value->value, value->size);
        }
    }
    free (keys);
    zhashx_destroy (&map);
}
