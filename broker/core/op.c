// SPDX-License-Identifier: MIT
/*  op - operations in and out of their journal form. See op.h.

    Decoding is strict: a known kind with the wrong number or types of
    arguments is refused, so a damaged record is reported, never applied
    half understood.
*/
#include <string.h>

#include "op.h"

static const char *s_names [OP__COUNT] = {
    [OP_LIMITS] = "LIMITS", [OP_ORIGIN] = "ORIGIN", [OP_HELLO] = "HELLO", [OP_BYE] = "BYE",
    [OP_FORGET] = "FORGET", [OP_SEND] = "SEND", [OP_ACK] = "ACK", [OP_DELIVER] = "DELIVER",
    [OP_LISTEN] = "LISTEN", [OP_UNLISTEN] = "UNLISTEN", [OP_WRITE] = "WRITE",
    [OP_MOVE] = "MOVE", [OP_WORLD_RESET] = "WORLD_RESET", [OP_HANDOVER] = "HANDOVER",
    [OP_WF_BEGIN] = "WF_BEGIN", [OP_WF_FAIL] = "WF_FAIL", [OP_RESUME] = "RESUME",
    [OP_REMEMBER] = "REMEMBER",
};

const char *
op_kind_name (op_kind_t kind)
{
    return kind > 0 && kind < OP__COUNT ? s_names [kind] : "?";
}

static void
s_text (msgpack_packer *pk, const char *text, size_t len)
{
    msgpack_pack_str (pk, len);
    msgpack_pack_str_body (pk, text, len);
}

void
op_encode (const op_t *op, msgpack_packer *pk)
{
    switch (op->kind) {
        case OP_LIMITS:
            msgpack_pack_array (pk, 2);
            msgpack_pack_int (pk, op->kind);
            limits_encode (op->limits, pk);
            break;
        case OP_ORIGIN: case OP_SEND: case OP_ACK: case OP_DELIVER: case OP_WRITE:
        case OP_HANDOVER: case OP_RESUME:
            msgpack_pack_array (pk, 2);
            msgpack_pack_int (pk, op->kind);
            msgpack_pack_uint64 (pk, op->u);
            break;
        case OP_HELLO:
            msgpack_pack_array (pk, 3);
            msgpack_pack_int (pk, op->kind);
            s_text (pk, op->text ? op->text : "", op->text ? op->text_len : 0);
            if (op->list && op->list->type == MSGPACK_OBJECT_ARRAY)
                msgpack_pack_object (pk, *op->list);
            else
                msgpack_pack_array (pk, 0);
            break;
        case OP_BYE: case OP_FORGET: case OP_WF_BEGIN:
            msgpack_pack_array (pk, 1);
            msgpack_pack_int (pk, op->kind);
            break;
        case OP_LISTEN: case OP_UNLISTEN: case OP_WF_FAIL:
            msgpack_pack_array (pk, 2);
            msgpack_pack_int (pk, op->kind);
            s_text (pk, op->text, op->text_len);
            break;
        case OP_MOVE:
            msgpack_pack_array (pk, 3);
            msgpack_pack_int (pk, op->kind);
            if (op->text)
                s_text (pk, op->text, op->text_len);
            else
                msgpack_pack_nil (pk);
            if (op->has_u2)
                msgpack_pack_uint64 (pk, op->u2);
            else
                msgpack_pack_nil (pk);
            break;
        case OP_WORLD_RESET:
            msgpack_pack_array (pk, 2);
            msgpack_pack_int (pk, op->kind);
            if (op->has_u2)
                msgpack_pack_uint64 (pk, op->u2);
            else
                msgpack_pack_nil (pk);
            break;
        case OP_REMEMBER:
            msgpack_pack_array (pk, 5);
            msgpack_pack_int (pk, op->kind);
            msgpack_pack_uint32 (pk, (uint32_t) op->slot);
            msgpack_pack_uint64 (pk, op->u);
            msgpack_pack_uint64 (pk, op->u2);
            if (op->bytes) {
                msgpack_pack_bin (pk, op->size);
                msgpack_pack_bin_body (pk, op->bytes, op->size);
            }
            else
                msgpack_pack_nil (pk);
            break;
        default:
            //  Only the kinds above exist: a caller bug.
            abort ();
    }
}

static bool
s_uint (const msgpack_object *o, uint64_t *value)
{
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return false;
    *value = o->via.u64;
    return true;
}

static bool
s_str (const msgpack_object *o, const char **text, size_t *len, size_t max)
{
    if (o->type != MSGPACK_OBJECT_STR || o->via.str.size > max)
        return false;
    *text = o->via.str.size ? o->via.str.ptr : "";
    *len = o->via.str.size;
    return true;
}

bool
op_decode (const msgpack_object *obj, op_t *op, core_limits_t *limits, char *why, size_t why_size)
{
    if (obj->type != MSGPACK_OBJECT_ARRAY || obj->via.array.size < 1
    ||  obj->via.array.ptr [0].type != MSGPACK_OBJECT_POSITIVE_INTEGER
    ||  obj->via.array.ptr [0].via.u64 == 0 || obj->via.array.ptr [0].via.u64 >= OP__COUNT) {
        snprintf (why, why_size, "an operation that is not [known kind, ...]");
        return false;
    }
    const msgpack_object *a = obj->via.array.ptr;
    uint32_t n = obj->via.array.size;
    op->kind = (op_kind_t) a [0].via.u64;
    op->text = NULL;
    op->text_len = 0;
    op->list = NULL;
    op->bytes = NULL;
    op->size = 0;
    op->has_u2 = false;
    op->u = op->u2 = 0;
    op->limits = NULL;
    bool ok = false;
    switch (op->kind) {
        case OP_LIMITS:
            ok = n == 2 && limits_decode (&a [1], limits, why, why_size);
            op->limits = limits;
            if (!ok)
                return false;
            break;
        case OP_ORIGIN: case OP_SEND: case OP_ACK: case OP_DELIVER: case OP_WRITE:
        case OP_HANDOVER: case OP_RESUME:
            ok = n == 2 && s_uint (&a [1], &op->u);
            break;
        case OP_HELLO:
            ok = n == 3 && s_str (&a [1], &op->text, &op->text_len, 64)
              && a [2].type == MSGPACK_OBJECT_ARRAY;
            op->list = &a [2];
            break;
        case OP_BYE: case OP_FORGET: case OP_WF_BEGIN:
            ok = n == 1;
            break;
        case OP_LISTEN: case OP_UNLISTEN:
            ok = n == 2 && s_str (&a [1], &op->text, &op->text_len, PROTO_MAX_NAME);
            break;
        case OP_WF_FAIL:
            ok = n == 2 && s_str (&a [1], &op->text, &op->text_len, 1024);
            break;
        case OP_MOVE:
            ok = n == 3 && (a [1].type == MSGPACK_OBJECT_NIL
                            || s_str (&a [1], &op->text, &op->text_len, PROTO_MAX_NAME))
              && (a [2].type == MSGPACK_OBJECT_NIL || (op->has_u2 = s_uint (&a [2], &op->u2)));
            break;
        case OP_WORLD_RESET:
            ok = n == 2 && (a [1].type == MSGPACK_OBJECT_NIL
                            || (op->has_u2 = s_uint (&a [1], &op->u2)));
            break;
        case OP_REMEMBER: {
            uint64_t slot = 0;
            ok = n == 5 && s_uint (&a [1], &slot) && slot < SLOT__COUNT
              && s_uint (&a [2], &op->u) && s_uint (&a [3], &op->u2)
              && (a [4].type == MSGPACK_OBJECT_NIL || a [4].type == MSGPACK_OBJECT_BIN);
            op->slot = (slot_t) slot;
            if (ok && a [4].type == MSGPACK_OBJECT_BIN) {
                op->bytes = a [4].via.bin.size ? a [4].via.bin.ptr : "";
                op->size = a [4].via.bin.size;
            }
            break;
        }
        default:
            break;
    }
    if (!ok)
        snprintf (why, why_size, "operation %s has the wrong arguments", op_kind_name (op->kind));
    return ok;
}
