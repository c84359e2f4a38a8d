// SPDX-License-Identifier: MIT
/*  session - HELLO, WELCOME and the resume token. See session.h. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mem.h"
#include "pclock.h"
#include "plog.h"
#include "session.h"
#include "welcome_int.h"

struct _client_session_t {
    char agent [PARLEY_NAME_MAX + 1];
    char *caps [CLIENT_MAX_CAPS];
    size_t cap_count;
    bool observe;
    char *token_file;
    char token [PARLEY_NAME_MAX + 1];
    parley_welcome_t *welcome;
    bool up;
    uint64_t epoch;
    uint64_t hello_first, hello_last;   //  HELLO ids on this connection
    uint64_t hellos, hello_failures, late_welcomes;
};

client_session_t *
client_session_new (const char *agent)
{
    assert (agent);
    client_session_t *self = (client_session_t *) client_mem_zalloc (sizeof (client_session_t));
    if (!self)
        return NULL;
    snprintf (self->agent, sizeof self->agent, "%s", agent);
    if (!(self->welcome = client_welcome_new ())) {
        client_mem_free (self);
        return NULL;
    }
    return self;
}

void
client_session_destroy (client_session_t **self_p)
{
    assert (self_p);
    client_session_t *self = *self_p;
    if (self) {
        for (size_t i = 0; i < self->cap_count; i++)
            client_mem_free (self->caps [i]);
        client_mem_free (self->token_file);
        client_welcome_destroy (&self->welcome);
        client_mem_free (self);
        *self_p = NULL;
    }
}

const char *
client_session_agent (const client_session_t *self)
{
    assert (self);
    return self->agent;
}

parley_err_t
client_session_add_cap (client_session_t *self, const char *cap)
{
    assert (self && cap);
    if (self->cap_count == CLIENT_MAX_CAPS)
        return PARLEY_ERR_INVALID;
    if (!(self->caps [self->cap_count] = client_mem_strdup (cap)))
        return PARLEY_ERR_NOMEM;
    self->cap_count++;
    return PARLEY_OK;
}

void
client_session_set_observe (client_session_t *self, bool observe)
{
    assert (self);
    self->observe = observe;
}

parley_err_t
client_session_set_token_file (client_session_t *self, const char *path)
{
    assert (self);
    char *copy = path && *path ? client_mem_strdup (path) : NULL;
    if (path && *path && !copy)
        return PARLEY_ERR_NOMEM;
    client_mem_free (self->token_file);
    self->token_file = copy;
    self->token [0] = 0;
    //  A token kept by an earlier run lets this one take its id over at once.
    FILE *file = copy ? fopen (copy, "r") : NULL;
    if (file) {
        if (fgets (self->token, sizeof self->token, file))
            self->token [strcspn (self->token, "\r\n")] = 0;
        else
            self->token [0] = 0;
        fclose (file);
    }
    return PARLEY_OK;
}

//  Keeps the resume token WELCOME carries (plain mode), in the token file
//  too (written whole, then renamed), so a restart takes the id at once.
static void
s_keep_token (client_session_t *self, const pmsg_t *welcome)
{
    char token [PARLEY_NAME_MAX + 1];
    if (!pmsg_strcpy (welcome, "token", token, sizeof token) || strcmp (token, self->token) == 0)
        return;
    snprintf (self->token, sizeof self->token, "%s", token);
    if (!self->token_file)
        return;
    char tmp [PATH_MAX];
    snprintf (tmp, sizeof tmp, "%s.tmp", self->token_file);
    mode_t old = umask (077);
    FILE *file = fopen (tmp, "w");
    umask (old);
    bool ok = file && fprintf (file, "%s\n", token) > 0;
    ok = file && fclose (file) == 0 && ok;
    if (!ok || rename (tmp, self->token_file) != 0) {
        plog_warn ("cannot keep the resume token in %s: %s", self->token_file, strerror (errno));
        unlink (tmp);
    }
}

//  Refusals no retry can change.
static bool
s_final_refusal (uint64_t code)
{
    return code == PERR_BAD_NAME || code == PERR_RESERVED_NAME
        || code == PERR_TOO_MANY_AGENTS || code == PERR_BAD_FIELD
        || code == PERR_UNAUTHORIZED;
}

bool
client_session_claim (void *owner, pmsg_t **msg_p)
{
    client_session_t *self = (client_session_t *) owner;
    uint64_t id = pmsg_id (*msg_p);
    pmsg_type_t type = pmsg_type (*msg_p);
    if (!self->hello_first || id < self->hello_first || id >= self->hello_last
    ||  (type != PMSG_WELCOME && type != PMSG_ERROR))
        return false;
    if (type == PMSG_WELCOME) {
        s_keep_token (self, *msg_p);
        self->late_welcomes++;
        plog_info ("a late WELCOME came for an earlier HELLO; keeping its resume token");
    }
    pmsg_destroy (msg_p);
    return true;
}

uint64_t
client_session_late_welcomes (const client_session_t *self)
{
    assert (self);
    return self->late_welcomes;
}

parley_err_t
client_session_hello (client_session_t *self, const char *endpoint, client_transport_t *transport,
                      client_router_t *router, penc_t *enc, uint64_t id, int64_t timeout_ms,
                      volatile sig_atomic_t *stop, char *why, size_t why_size)
{
    assert (self && endpoint && transport && router && enc);
    self->up = false;
    if (!self->hello_first || !client_transport_is_open (transport)) {
        parley_err_t rc = client_transport_open (transport, endpoint, why, why_size);
        if (rc == PARLEY_ERR_NOMEM)
            return rc;
        if (rc != PARLEY_OK)
            return PARLEY_ERR_TIMEOUT;
        self->hello_first = id;
    }
    self->hello_last = id;
    parley_err_t rc;
    penc_begin (enc, PMSG_HELLO, id, 2 + (self->token [0] != 0) + self->observe);
    penc_kv_cstr (enc, "agent", self->agent);
    penc_key (enc, "caps");
    msgpack_pack_array (penc_packer (enc), self->cap_count);
    for (size_t i = 0; i < self->cap_count; i++)
        penc_cstr (enc, self->caps [i]);
    if (self->token [0])
        penc_kv_cstr (enc, "token", self->token);
    if (self->observe)
        penc_kv_bool (enc, "observe", true);
    if (!penc_ok (enc)) {
        snprintf (why, why_size, "out of memory");
        return PARLEY_ERR_NOMEM;
    }
    if (client_transport_send (transport, penc_data (enc), penc_size (enc), true) != 0) {
        snprintf (why, why_size, "the socket would not take HELLO: %s", zmq_strerror (zmq_errno ()));
        return PARLEY_ERR_TIMEOUT;
    }
    pmsg_t *reply = NULL;
    rc = client_router_await (router, id, pclock_mono_ms () + timeout_ms, stop, &reply);
    if (rc == PARLEY_ERR_TIMEOUT) {
        char refused [300];
        if (client_transport_handshake_failed (transport, refused, sizeof refused)) {
            //  A plain handshake fails only against a CURVE broker, which
            //  may close before the mismatch can be told apart (EPIPE).
            if (!client_transport_curve (transport))
                snprintf (why, why_size, "security mismatch: the broker uses CURVE and this "
                          "client has no keys (--curve-key/--curve-server-key)");
            else
                snprintf (why, why_size, "%s", refused);
        }
        else
            snprintf (why, why_size, "no reply within %" PRId64 " ms", timeout_ms);
    }
    else
    if (rc == PARLEY_ERR_NOMEM)
        snprintf (why, why_size, "out of memory");
    if (rc != PARLEY_OK)
        return rc;
    if (pmsg_type (reply) == PMSG_WELCOME) {
        s_keep_token (self, reply);
        client_welcome_decode (self->welcome, reply);
        pmsg_destroy (&reply);
        self->hello_first = self->hello_last = 0;
        self->up = true;
        self->epoch++;
        self->hellos++;
        return PARLEY_OK;
    }
    size_t len = 0;
    const char *text = pmsg_str (reply, "message", &len);
    uint64_t code = pmsg_type (reply) == PMSG_ERROR ? pmsg_uint (reply, "code", 0) : 0;
    //  A refusal for good comes back as its code, so the text is the
    //  broker's sentence alone; one that is retried comes back as TIMEOUT
    //  and the text names what the broker said.
    if (s_final_refusal (code))
        snprintf (why, why_size, "%.*s", (int) (text ? len : 0), text ? text : "");
    else
        snprintf (why, why_size, "%s: %.*s", perr_name ((int) code), (int) (text ? len : 0),
                  text ? text : "");
    pmsg_destroy (&reply);
    return s_final_refusal (code) ? (parley_err_t) code : PARLEY_ERR_TIMEOUT;
}

bool
client_session_up (const client_session_t *self)
{
    assert (self);
    return self->up;
}

bool
client_session_asking (const client_session_t *self)
{
    assert (self);
    return self->hello_first != 0;
}

void
client_session_down (client_session_t *self)
{
    assert (self);
    self->up = false;
    self->hello_first = self->hello_last = 0;
}

uint64_t
client_session_epoch (const client_session_t *self)
{
    assert (self);
    return self->epoch;
}

const parley_welcome_t *
client_session_welcome (const client_session_t *self)
{
    assert (self);
    return self->welcome;
}

void
client_session_count_failure (client_session_t *self)
{
    assert (self);
    self->hello_failures++;
}

uint64_t
client_session_counter (const client_session_t *self, parley_counter_t counter)
{
    assert (self);
    switch (counter) {
        case PARLEY_COUNTER_HELLOS:         return self->hellos;
        case PARLEY_COUNTER_HELLO_FAILURES: return self->hello_failures;
        default:                            return 0;
    }
}
