// SPDX-License-Identifier: MIT
/*  confirms - the CONFIRMs due to connections that sent pipelined SENDs.

    A hash by connection (the record's own conn_id_t is its key) for the
    lookup per pipelined SEND, with the last record used cached: a
    pipelined sender's SENDs come in runs, so the hot path is one compare.
    A list keeps the records in the order they were opened, so the end of
    a turn confirms the connections in the order they sent.
*/
#include <czmq.h>
#include <string.h>
#include "confirms.h"

typedef struct {
    conn_id_t conn;
    bool envelope;
    uint64_t through;
    uint64_t count;
    uint64_t accepted;
    uint64_t listed;
    uint64_t omitted;
    penc_t errors;              //  listed confirm_error maps, back to back
    void *handle;               //  in the order list
} confirm_t;

struct _confirms_t {
    zhashx_t *by_conn;          //  conn_id_t * -> confirm_t (owned)
    zlistx_t *order;            //  confirm_t *, oldest first (not owned)
    confirm_t *last;            //  the record used last
};


static void
s_confirm_destroy (void **item)
{
    confirm_t *confirm = *item;
    if (confirm) {
        penc_fini (&confirm->errors);
        free (confirm);
    }
    *item = NULL;
}

confirms_t *
confirms_new (void)
{
    confirms_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->by_conn = conn_id_index_new ();
    self->order = zlistx_new ();
    if (!self->by_conn || !self->order) {
        confirms_destroy (&self);
        return NULL;
    }
    zhashx_set_destructor (self->by_conn, s_confirm_destroy);
    return self;
}

void
confirms_destroy (confirms_t **self_p)
{
    assert (self_p);
    confirms_t *self = *self_p;
    if (!self)
        return;
    zlistx_destroy (&self->order);
    zhashx_destroy (&self->by_conn);
    free (self);
    *self_p = NULL;
}

static confirm_t *
s_lookup (confirms_t *self, const conn_id_t *conn)
{
    if (self->last && conn_id_compare (&self->last->conn, conn) == 0)
        return self->last;
    confirm_t *confirm = zhashx_lookup (self->by_conn, conn);
    if (confirm)
        self->last = confirm;
    return confirm;
}

bool
confirms_add (confirms_t *self, const conn_id_t *conn, bool envelope, uint64_t id,
              uint64_t accepted)
{
    assert (self && conn);
    confirm_t *confirm = s_lookup (self, conn);
    if (!confirm) {
        confirm = calloc (1, sizeof *confirm);
        if (!confirm)
            return false;
        confirm->conn = *conn;
        penc_init (&confirm->errors);
        confirm->handle = zlistx_add_end (self->order, confirm);
        if (!confirm->handle || zhashx_insert (self->by_conn, &confirm->conn, confirm) != 0) {
            if (confirm->handle)
                zlistx_delete (self->order, confirm->handle);
            void *item = confirm;
            s_confirm_destroy (&item);
            return false;
        }
        self->last = confirm;
    }
    confirm->envelope = envelope;
    confirm->through = id;
    confirm->count++;
    confirm->accepted += accepted;
    return true;
}

penc_t *
confirms_error (confirms_t *self, const conn_id_t *conn)
{
    assert (self && conn);
    confirm_t *confirm = s_lookup (self, conn);
    if (!confirm)
        return NULL;
    if (confirm->listed >= PROTO_MAX_BATCH
    ||  penc_size (&confirm->errors) >= BROKER_CONFIRM_ERRORS_BUDGET) {
        confirm->omitted++;
        return NULL;
    }
    confirm->listed++;
    return &confirm->errors;
}

bool
confirms_due (confirms_t *self)
{
    assert (self);
    return zlistx_size (self->order) > 0;
}

static void
s_encode (confirm_t *confirm, penc_t *enc)
{
    size_t fields = 3 + (confirm->listed ? 1 : 0) + (confirm->omitted ? 1 : 0);
    penc_begin (enc, PMSG_CONFIRM, 0, fields);
    penc_kv_uint (enc, "through", confirm->through);
    penc_kv_uint (enc, "count", confirm->count);
    penc_kv_uint (enc, "accepted", confirm->accepted);
    if (confirm->listed) {
        penc_key (enc, "errors");
        msgpack_pack_array (penc_packer (enc), (uint32_t) confirm->listed);
        penc_raw (enc, penc_data (&confirm->errors), penc_size (&confirm->errors));
    }
    if (confirm->omitted)
        penc_kv_uint (enc, "errors_omitted", confirm->omitted);
}

static void
s_forget (confirms_t *self, confirm_t *confirm)
{
    if (self->last == confirm)
        self->last = NULL;
    zlistx_delete (self->order, confirm->handle);
    zhashx_delete (self->by_conn, &confirm->conn);
}

bool
confirms_take (confirms_t *self, const conn_id_t *conn, penc_t *enc, bool *envelope)
{
    assert (self && conn && enc && envelope);
    if (zlistx_size (self->order) == 0)
        return false;
    confirm_t *confirm = s_lookup (self, conn);
    if (!confirm)
        return false;
    s_encode (confirm, enc);
    *envelope = confirm->envelope;
    s_forget (self, confirm);
    return true;
}

bool
confirms_take_next (confirms_t *self, conn_id_t *conn, penc_t *enc, bool *envelope)
{
    assert (self && conn && enc && envelope);
    confirm_t *confirm = zlistx_first (self->order);
    if (!confirm)
        return false;
    *conn = confirm->conn;
    s_encode (confirm, enc);
    *envelope = confirm->envelope;
    s_forget (self, confirm);
    return true;
}
