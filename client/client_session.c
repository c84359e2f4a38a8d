// SPDX-License-Identifier: MIT
/*  client_session - libparley's session layer: a fresh DEALER, HELLO,
    WELCOME decoded, the event socket (re)connected to the endpoint WELCOME
    names, and every channel listened to before LISTENed again (a
    restarted broker has forgotten them). Retried with exponential backoff
    until the broker answers, refuses the id for good, or the stop flag is
    raised.
*/
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include "client_internal.h"
#include "pclock.h"
#include "pcurve.h"
#include "plog.h"

//  Sleeps up to ms in slices, returning early when stopped.
static void
s_nap (parley_client_t *self, int64_t ms)
{
    int64_t until = pclock_mono_ms () + ms;
    while (!parley_client_stopped (self)) {
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0)
            break;
        pclock_sleep_ms (left < CLIENT_POLL_SLICE_MS? left: CLIENT_POLL_SLICE_MS);
    }
}

//  One LISTEN on the hello encoder (used inside the handshake).
static bool
s_relisten (parley_client_t *self, const char *channel)
{
    uint64_t id = self->next_id++;
    penc_begin (&self->hello, PMSG_LISTEN, id, 1);
    penc_kv_cstr (&self->hello, "channel", channel);
    pmsg_t *reply;
    if (client_exchange (self, &self->hello, id, &reply) != PARLEY_OK)
        return false;
    bool ok = pmsg_type (reply) == PMSG_OK;
    pmsg_destroy (&reply);
    return ok;
}

//  Refusals no retry can change.
static bool
s_final_refusal (uint64_t code)
{
    return code == PERR_BAD_NAME || code == PERR_RESERVED_NAME
        || code == PERR_TOO_MANY_AGENTS || code == PERR_BAD_FIELD
        || code == PERR_UNAUTHORIZED;
}

//  Keeps the resume token WELCOME carries (plain mode), in the token file
//  too (written whole, then renamed), so a restart takes the id at once.
static void
s_keep_token (parley_client_t *self, const pmsg_t *welcome)
{
    char token [PARLEY_NAME_MAX + 1];
    if (!pmsg_strcpy (welcome, "token", token, sizeof token) || streq (token, self->token))
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

//  One HELLO on a fresh socket. PARLEY_OK; PARLEY_ERR_TIMEOUT to retry;
//  PARLEY_ERR_STOPPED; or the code of a refusal for good.
static parley_err_t
s_hello_once (parley_client_t *self)
{
    client_close_dealer (self);
    self->dealer = client_socket_new (self, ZMQ_DEALER, self->endpoint);
    if (!self->dealer)
        return PARLEY_ERR_TIMEOUT;
    uint64_t id = self->next_id++;
    penc_begin (&self->hello, PMSG_HELLO, id, 2 + (self->token [0] != 0) + self->observe);
    penc_kv_cstr (&self->hello, "agent", self->agent);
    penc_key (&self->hello, "caps");
    msgpack_pack_array (penc_packer (&self->hello), self->cap_count);
    for (size_t i = 0; i < self->cap_count; i++)
        penc_cstr (&self->hello, self->caps [i]);
    if (self->token [0])
        penc_kv_cstr (&self->hello, "token", self->token);
    if (self->observe)
        penc_kv_bool (&self->hello, "observe", true);
    pmsg_t *reply;
    parley_err_t rc = client_exchange (self, &self->hello, id, &reply);
    if (rc == PARLEY_ERR_TIMEOUT) {
        char refused [300];
        if (pcurve_watch_failed (self->watch, refused, sizeof refused)) {
            //  A plain handshake fails only against a CURVE broker, which
            //  may close before the mismatch can be told apart (EPIPE).
            if (!self->curve_key)
                client_fail (self, rc, "security mismatch: the broker uses CURVE and this "
                             "client has no keys (--curve-key/--curve-server-key)");
            else
                client_fail (self, rc, "%s", refused);
        }
        else
            client_fail (self, rc, "no reply within %" PRId64 " ms", self->request_ms);
    }
    if (rc != PARLEY_OK)
        return rc;
    if (pmsg_type (reply) == PMSG_WELCOME) {
        s_keep_token (self, reply);
        client_decode_welcome (self, reply);
        pmsg_destroy (&reply);
        self->session = true;
        self->epoch++;
        self->stats.hellos++;
        client_open_sub (self);
        for (size_t i = 0; i < self->channel_count; i++)
            if (!s_relisten (self, self->channels [i]))
                plog_warn ("could not listen to %s again", self->channels [i]);
        client_push_resume (self);
        client_fd_sync (self);
        return PARLEY_OK;
    }
    size_t len = 0;
    const char *text = pmsg_str (reply, "message", &len);
    uint64_t code = pmsg_type (reply) == PMSG_ERROR? pmsg_uint (reply, "code", 0): 0;
    //  A refusal for good comes back as its code, so the text is the
    //  broker's sentence alone; one that is retried comes back as TIMEOUT
    //  and the text names what the broker said.
    if (s_final_refusal (code))
        client_fail (self, (parley_err_t) code, "%.*s", (int) (text? len: 0), text? text: "");
    else
        client_fail (self, PARLEY_ERR_TIMEOUT, "%s: %.*s", perr_name ((int) code),
                     (int) (text? len: 0), text? text: "");
    pmsg_destroy (&reply);
    return s_final_refusal (code)? (parley_err_t) code: PARLEY_ERR_TIMEOUT;
}

parley_err_t
client_ensure_session (parley_client_t *self)
{
    int64_t backoff = 100;
    int failures = 0;
    while (!self->session) {
        if (parley_client_stopped (self))
            return PARLEY_ERR_STOPPED;
        self->error [0] = 0;
        parley_err_t rc = s_hello_once (self);
        if (rc == PARLEY_OK) {
            if (self->epoch > 1)
                plog_info ("reconnected to broker %s (session %" PRIu64 ")",
                           self->endpoint, self->epoch);
            return PARLEY_OK;
        }
        if (rc != PARLEY_ERR_TIMEOUT)
            return rc;
        client_close_dealer (self);
        self->stats.hello_failures++;
        if (self->connect_attempts && ++failures >= self->connect_attempts)
            return PARLEY_ERR_TIMEOUT;
        if (self->stats.hello_failures == 1 || self->stats.hello_failures % 10 == 0)
            plog_warn ("broker %s not answering HELLO%s%s; retrying", self->endpoint,
                       *self->error? ": ": "", self->error);
        s_nap (self, backoff);
        backoff = backoff * 2 > self->backoff_max_ms? self->backoff_max_ms: backoff * 2;
    }
    return PARLEY_OK;
}

parley_err_t
parley_client_connect (parley_client_t *self)
{
    assert (self);
    self->session = false;
    parley_err_t rc = client_ensure_session (self);
    if (rc == PARLEY_ERR_STOPPED)
        client_fail (self, rc, "stopped");
    return rc;
}
