// SPDX-License-Identifier: MIT
/*  client - parley_client_t's life cycle, options, error texts and the
    scalar value helpers. See include/parley/client.h; the layers are in
    client_transport.c, client_session.c and client_request.c.
*/
#include <assert.h>
#include <stdarg.h>
#include "client_internal.h"
#include "pcurve.h"
#include "pclock.h"

parley_client_t *
parley_client_new (const char *endpoint, const char *agent_id)
{
    assert (endpoint && agent_id);
    parley_client_t *self = (parley_client_t *) zmalloc (sizeof (parley_client_t));
    snprintf (self->endpoint, sizeof (self->endpoint), "%s", endpoint);
    snprintf (self->agent, sizeof (self->agent), "%s", agent_id);
    penc_init (&self->enc);
    penc_init (&self->hello);
    penc_init (&self->keepalive);
    self->request_ms = 3000;
    self->send_wait_ms = -1;
    self->window_messages = 16384;
    self->window_bytes = 16 * 1024 * 1024;
    self->backoff_max_ms = 2000;
    self->attempts = 5;
    self->next_id = 1;
    self->dedup = true;
    self->epoll_fd = self->epoll_sub = self->epoll_dealer = -1;
    //  SEND batch ids start from the wall clock in microseconds: the
    //  broker keeps the agent's last batch id across reconnects, so a
    //  restarted agent must not start where its previous run ended (a
    //  counter from 1 could repeat the old last id, and that SEND would be
    //  taken for a resend and not posted). An earlier run that started at
    //  T0 and sent n batches ended at T0 + n, below now as long as it sent
    //  less than one SEND per microsecond, which a request/reply round trip
    //  guarantees. Only a wall clock stepped back by more than the previous
    //  run's length could collide; it would cost one SEND.
    self->next_batch = (uint64_t) pclock_wall_us ();
    return self;
}

void
parley_client_destroy (parley_client_t **self_p)
{
    assert (self_p);
    parley_client_t *self = *self_p;
    if (self) {
        client_close_dealer (self);
        client_fd_forget (self, self->sub);
        zsock_destroy (&self->sub);
        client_push_destroy (self);
        for (size_t i = 0; i < self->cap_count; i++)
            free (self->caps [i]);
        free (self->curve_key);
        free (self->curve_server_key);
        free (self->token_file);
        penc_fini (&self->enc);
        penc_fini (&self->hello);
        penc_fini (&self->keepalive);
        pmsg_destroy (&self->reply);
        free (self->arena.data);
        free (self->items);
        free (self->items2);
        free (self->step_seqs);
        free (self->step_errors);
        client_replica_destroy (self);
        client_pending_destroy (self);
        client_confirm_destroy (self);
        client_workflow_destroy (self);
        client_events_destroy (self);
        free (self);
        *self_p = NULL;
    }
}

parley_err_t
parley_client_set_security (parley_client_t *self, const char *curve_key,
                            const char *curve_server_key, const char *token_file)
{
    assert (self);
    free (self->curve_key);
    free (self->curve_server_key);
    free (self->token_file);
    self->curve_key = curve_key && *curve_key? strdup (curve_key): NULL;
    self->curve_server_key = curve_server_key && *curve_server_key? strdup (curve_server_key): NULL;
    self->token_file = token_file && *token_file? strdup (token_file): NULL;
    self->token [0] = 0;
    //  A token kept by an earlier run lets this one take its id over at once.
    FILE *file = self->token_file? fopen (self->token_file, "r"): NULL;
    if (file) {
        if (fgets (self->token, sizeof self->token, file))
            self->token [strcspn (self->token, "\r\n")] = 0;
        else
            self->token [0] = 0;
        fclose (file);
    }
    //  Check the key files now, so a typo is a usage error and not an
    //  endless "not answering".
    if (self->curve_key || self->curve_server_key) {
        zsock_t *probe = zsock_new (ZMQ_DEALER);
        char why [512];
        int rc = probe? pcurve_client (probe, self->curve_key, self->curve_server_key,
                                       why, sizeof why): -1;
        zsock_destroy (&probe);
        if (rc != 0)
            return client_fail (self, PARLEY_ERR_INVALID, "%s", probe? why: "cannot make a socket");
    }
    return PARLEY_OK;
}

void
parley_client_set_observe (parley_client_t *self, bool observe)
{
    assert (self);
    self->observe = observe;
}

void
parley_client_add_cap (parley_client_t *self, const char *cap)
{
    assert (self && cap);
    if (self->cap_count < CLIENT_MAX_CAPS)
        self->caps [self->cap_count++] = strdup (cap);
}

void
parley_client_set_timeout (parley_client_t *self, int64_t request_ms, int64_t backoff_max_ms)
{
    assert (self);
    self->request_ms = request_ms > 0? request_ms: 3000;
    self->backoff_max_ms = backoff_max_ms > 0? backoff_max_ms: 2000;
}

void
parley_client_set_attempts (parley_client_t *self, int attempts)
{
    assert (self);
    self->attempts = attempts > 0? attempts: 1;
}

void
parley_client_set_connect_attempts (parley_client_t *self, int attempts)
{
    assert (self);
    self->connect_attempts = attempts > 0? attempts: 0;
}

void
parley_client_set_stop (parley_client_t *self, volatile sig_atomic_t *stop)
{
    assert (self);
    self->stop = stop;
}

bool
parley_client_stopped (parley_client_t *self)
{
    assert (self);
    return self->stop && *self->stop;
}

const parley_welcome_t *
parley_client_welcome (parley_client_t *self)
{
    assert (self);
    return &self->welcome;
}

uint64_t
parley_client_epoch (parley_client_t *self)
{
    assert (self);
    return self->epoch;
}

const char *
parley_client_error_text (parley_client_t *self)
{
    assert (self);
    return self->error;
}

void
parley_client_counters (parley_client_t *self, parley_client_stats_t *stats)
{
    assert (self && stats);
    *stats = self->stats;
}

void
parley_client_dedup (parley_client_t *self, bool on)
{
    assert (self);
    self->dedup = on;
}

void *
client_alloc (void *ptr, size_t size)
{
    void *block = realloc (ptr, size? size: 1);
    if (!block) {
        fprintf (stderr, "libparley: out of memory (%zu bytes)\n", size);
        abort ();
    }
    return block;
}

//  Records why a call failed, for parley_client_error_text, and returns
//  the code so callers can `return client_fail (...)`.
parley_err_t
client_fail (parley_client_t *self, parley_err_t code, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    vsnprintf (self->error, sizeof (self->error), format, args);
    va_end (args);
    return code;
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
