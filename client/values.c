// SPDX-License-Identifier: MIT
/*  values - what needs no client: outcome names, the library's version,
    and scalar msgpack values packed into and read from the caller's
    buffers (parley/base.h, parley/state.h).
*/
#include <assert.h>
#include <string.h>
#include "parley/client.h"
#include "pmsg.h"

void
parley_version (int *major, int *minor, int *patch)
{
    if (major)
        *major = PARLEY_VERSION_MAJOR;
    if (minor)
        *minor = PARLEY_VERSION_MINOR;
    if (patch)
        *patch = PARLEY_VERSION_PATCH;
}

//  The protocol codes keep their wire numbers (perr.h): checked here, so
//  a renumbering on either side fails the build.
_Static_assert ((int) PARLEY_ERR_MALFORMED == (int) PERR_MALFORMED, "PARLEY_ERR_MALFORMED");
_Static_assert ((int) PARLEY_ERR_TOO_LARGE == (int) PERR_TOO_LARGE, "PARLEY_ERR_TOO_LARGE");
_Static_assert ((int) PARLEY_ERR_UNKNOWN_TYPE == (int) PERR_UNKNOWN_TYPE, "PARLEY_ERR_UNKNOWN_TYPE");
_Static_assert ((int) PARLEY_ERR_BAD_FIELD == (int) PERR_BAD_FIELD, "PARLEY_ERR_BAD_FIELD");
_Static_assert ((int) PARLEY_ERR_VERSION == (int) PERR_VERSION, "PARLEY_ERR_VERSION");
_Static_assert ((int) PARLEY_ERR_NOT_REQUEST == (int) PERR_NOT_REQUEST, "PARLEY_ERR_NOT_REQUEST");
_Static_assert ((int) PARLEY_ERR_NOT_HELLO == (int) PERR_NOT_HELLO, "PARLEY_ERR_NOT_HELLO");
_Static_assert ((int) PARLEY_ERR_ID_IN_USE == (int) PERR_ID_IN_USE, "PARLEY_ERR_ID_IN_USE");
_Static_assert ((int) PARLEY_ERR_BAD_NAME == (int) PERR_BAD_NAME, "PARLEY_ERR_BAD_NAME");
_Static_assert ((int) PARLEY_ERR_RESERVED_NAME == (int) PERR_RESERVED_NAME, "PARLEY_ERR_RESERVED_NAME");
_Static_assert ((int) PARLEY_ERR_TOO_MANY_AGENTS == (int) PERR_TOO_MANY_AGENTS, "PARLEY_ERR_TOO_MANY_AGENTS");
_Static_assert ((int) PARLEY_ERR_UNKNOWN_RECIPIENT == (int) PERR_UNKNOWN_RECIPIENT, "PARLEY_ERR_UNKNOWN_RECIPIENT");
_Static_assert ((int) PARLEY_ERR_INBOX_FULL == (int) PERR_INBOX_FULL, "PARLEY_ERR_INBOX_FULL");
_Static_assert ((int) PARLEY_ERR_CHANNEL_FULL == (int) PERR_CHANNEL_FULL, "PARLEY_ERR_CHANNEL_FULL");
_Static_assert ((int) PARLEY_ERR_TOO_MANY_CHANNELS == (int) PERR_TOO_MANY_CHANNELS, "PARLEY_ERR_TOO_MANY_CHANNELS");
_Static_assert ((int) PARLEY_ERR_NOT_LISTENING == (int) PERR_NOT_LISTENING, "PARLEY_ERR_NOT_LISTENING");
_Static_assert ((int) PARLEY_ERR_NO_SUCH_TARGET == (int) PERR_NO_SUCH_TARGET, "PARLEY_ERR_NO_SUCH_TARGET");
_Static_assert ((int) PARLEY_ERR_BAD_REDUCER == (int) PERR_BAD_REDUCER, "PARLEY_ERR_BAD_REDUCER");
_Static_assert ((int) PARLEY_ERR_REDUCER_MISMATCH == (int) PERR_REDUCER_MISMATCH, "PARLEY_ERR_REDUCER_MISMATCH");
_Static_assert ((int) PARLEY_ERR_REDUCER_CONFLICT == (int) PERR_REDUCER_CONFLICT, "PARLEY_ERR_REDUCER_CONFLICT");
_Static_assert ((int) PARLEY_ERR_STATE_FULL == (int) PERR_STATE_FULL, "PARLEY_ERR_STATE_FULL");
_Static_assert ((int) PARLEY_ERR_NO_SUCH_KEY == (int) PERR_NO_SUCH_KEY, "PARLEY_ERR_NO_SUCH_KEY");
_Static_assert ((int) PARLEY_ERR_BAD_ACTION == (int) PERR_BAD_ACTION, "PARLEY_ERR_BAD_ACTION");
_Static_assert ((int) PARLEY_ERR_NOT_IN_WORLD == (int) PERR_NOT_IN_WORLD, "PARLEY_ERR_NOT_IN_WORLD");
_Static_assert ((int) PARLEY_ERR_INTERNAL == (int) PERR_INTERNAL, "PARLEY_ERR_INTERNAL");
_Static_assert ((int) PARLEY_ERR_SHUTTING_DOWN == (int) PERR_SHUTTING_DOWN, "PARLEY_ERR_SHUTTING_DOWN");
_Static_assert ((int) PARLEY_ERR_UNAUTHORIZED == (int) PERR_UNAUTHORIZED, "PARLEY_ERR_UNAUTHORIZED");
_Static_assert ((int) PARLEY_ERR_NOT_TURN_HOLDER == (int) PERR_NOT_TURN_HOLDER, "PARLEY_ERR_NOT_TURN_HOLDER");
_Static_assert ((int) PARLEY_ERR_NO_WORKFLOW == (int) PERR_NO_WORKFLOW, "PARLEY_ERR_NO_WORKFLOW");
_Static_assert ((int) PARLEY_ERR_WORKFLOW_ENDED == (int) PERR_WORKFLOW_ENDED, "PARLEY_ERR_WORKFLOW_ENDED");
_Static_assert ((int) PARLEY_ERR_NO_SUCH_CHECKPOINT == (int) PERR_NO_SUCH_CHECKPOINT, "PARLEY_ERR_NO_SUCH_CHECKPOINT");
_Static_assert ((int) PARLEY_ERR_QUEUES_FULL == (int) PERR_QUEUES_FULL, "PARLEY_ERR_QUEUES_FULL");
_Static_assert ((int) PARLEY_ERR_STORAGE == (int) PERR_STORAGE, "PARLEY_ERR_STORAGE");

const char *
parley_strerror (int code)
{
    switch (code) {
        case PARLEY_OK:      return "OK";
        case PARLEY_ERR_TIMEOUT: return "TIMEOUT";
        case PARLEY_ERR_STOPPED: return "STOPPED";
        case PARLEY_ERR_LOST:    return "LOST";
        case PARLEY_ERR_BAD_REPLY: return "BAD_REPLY";
        case PARLEY_ERR_INVALID: return "INVALID";
        case PARLEY_ERR_SOCKET:  return "SOCKET";
        case PARLEY_ERR_NOMEM:   return "NOMEM";
        default:             return perr_name (code);
    }
}

//  ---------------------------------------------------------------------
//  Scalar values, packed with msgpack into the caller's buffer.

typedef struct {
    char *buf;
    size_t size, used;
    bool overflow;
} s_fixed_t;

static int
s_fixed_write (void *data, const char *bytes, size_t len)
{
    s_fixed_t *out = (s_fixed_t *) data;
    if (out->used + len > out->size) {
        out->overflow = true;
        return -1;
    }
    memcpy (out->buf + out->used, bytes, len);
    out->used += len;
    return 0;
}

#define PACK_INTO(buf, size, call) do { \
    s_fixed_t out_ = { (char *) (buf), (size), 0, false }; \
    msgpack_packer pk_; \
    msgpack_packer_init (&pk_, &out_, s_fixed_write); \
    call; \
    return out_.overflow? 0: out_.used; \
} while (0)

size_t
parley_pack_str (void *buf, size_t size, const char *text)
{
    assert (buf && text);
    size_t len = strlen (text);
    PACK_INTO (buf, size, (msgpack_pack_str (&pk_, len), msgpack_pack_str_body (&pk_, text, len)));
}

size_t
parley_pack_int (void *buf, size_t size, int64_t value)
{
    assert (buf);
    PACK_INTO (buf, size, msgpack_pack_int64 (&pk_, value));
}

size_t
parley_pack_bool (void *buf, size_t size, bool value)
{
    assert (buf);
    PACK_INTO (buf, size, value? msgpack_pack_true (&pk_): msgpack_pack_false (&pk_));
}

bool
parley_value_str (const void *value, size_t size, char *out, size_t out_size)
{
    assert (out && out_size > 0);
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    bool ok = value && msgpack_unpack_next (&unpacked, value, size, NULL) == MSGPACK_UNPACK_SUCCESS
           && unpacked.data.type == MSGPACK_OBJECT_STR;
    if (ok)
        snprintf (out, out_size, "%.*s", (int) unpacked.data.via.str.size, unpacked.data.via.str.ptr);
    msgpack_unpacked_destroy (&unpacked);
    return ok;
}

bool
parley_value_int (const void *value, size_t size, int64_t *out)
{
    assert (out);
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    bool ok = false;
    if (value && msgpack_unpack_next (&unpacked, value, size, NULL) == MSGPACK_UNPACK_SUCCESS) {
        if (unpacked.data.type == MSGPACK_OBJECT_POSITIVE_INTEGER
        &&  unpacked.data.via.u64 <= INT64_MAX) {
            *out = (int64_t) unpacked.data.via.u64;
            ok = true;
        }
        else
        if (unpacked.data.type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
            *out = unpacked.data.via.i64;
            ok = true;
        }
    }
    msgpack_unpacked_destroy (&unpacked);
    return ok;
}
