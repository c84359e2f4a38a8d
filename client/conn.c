// SPDX-License-Identifier: MIT
/*  conn - the connection kept up, and one request with its resends. See
    conn.h.

    A request whose reply does not come within the request timeout closes
    the connection; the next HELLO goes on a fresh socket, with backoff
    (100 ms doubling to the cap) until the broker answers, the stop flag is
    raised, or the connect attempts are used up. NOT_HELLO (the broker
    expired us, e.g. during a long model call) does the same.
*/
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "conn.h"
#include "mem.h"
#include "pclock.h"
#include "plog.h"

#define S_ENDPOINT_MAX 256

struct _client_conn_t {
    char endpoint [S_ENDPOINT_MAX];
    client_transport_t *transport;
    client_router_t *router;
    client_session_t *session;
    client_tickets_t *tickets;      //  borrowed
    client_flight_t *flight;        //  borrowed
    penc_t enc, hello, aside;
    uint64_t next_id, enc_id, keepalive_id;
    bool busy;                      //  inside a request
    bool lost;                      //  the keepalive's reply said NOT_HELLO
    int64_t request_ms, backoff_max_ms, last_send_ms;
    int attempts, connect_attempts;
    volatile sig_atomic_t *stop;
    client_conn_restore_fn *restore;
    client_conn_before_fn *before;
    void *hooks_arg;
    uint64_t requests, timeouts, keepalives, nomem;
    char error [512];
};

static bool s_claim_keepalive (void *owner, pmsg_t **msg_p);

client_conn_t *
client_conn_new (const char *endpoint, const char *agent, client_tickets_t *tickets,
                 client_flight_t *flight)
{
    assert (endpoint && agent && tickets && flight);
    if (strlen (endpoint) >= S_ENDPOINT_MAX)
        return NULL;
    client_conn_t *self = (client_conn_t *) client_mem_zalloc (sizeof (client_conn_t));
    if (!self)
        return NULL;
    snprintf (self->endpoint, sizeof self->endpoint, "%s", endpoint);
    penc_init_alloc (&self->enc, client_mem_realloc, client_mem_free);
    penc_init_alloc (&self->hello, client_mem_realloc, client_mem_free);
    penc_init_alloc (&self->aside, client_mem_realloc, client_mem_free);
    self->tickets = tickets;
    self->flight = flight;
    self->transport = client_transport_new ();
    self->router = self->transport ? client_router_new (self->transport) : NULL;
    self->session = client_session_new (agent);
    if (!self->router || !self->session) {
        client_conn_destroy (&self);
        return NULL;
    }
    client_router_set_owner (self->router, CLIENT_ROUTE_KEEPALIVE, s_claim_keepalive, self);
    client_router_set_owner (self->router, CLIENT_ROUTE_SESSION, client_session_claim,
                             self->session);
    self->request_ms = 3000;
    self->backoff_max_ms = 2000;
    self->attempts = 5;
    self->next_id = 1;
    return self;
}

void
client_conn_destroy (client_conn_t **self_p)
{
    assert (self_p);
    client_conn_t *self = *self_p;
    if (self) {
        client_router_destroy (&self->router);
        client_transport_destroy (&self->transport);
        client_session_destroy (&self->session);
        penc_fini (&self->enc);
        penc_fini (&self->hello);
        penc_fini (&self->aside);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
client_conn_set_hooks (client_conn_t *self, client_conn_restore_fn *restore,
                       client_conn_before_fn *before, void *arg)
{
    assert (self);
    self->restore = restore;
    self->before = before;
    self->hooks_arg = arg;
}

client_transport_t *
client_conn_transport (client_conn_t *self)
{
    assert (self);
    return self->transport;
}

client_router_t *
client_conn_router (client_conn_t *self)
{
    assert (self);
    return self->router;
}

client_session_t *
client_conn_session (client_conn_t *self)
{
    assert (self);
    return self->session;
}

//  ---------------------------------------------------------------------
//  Options

void
client_conn_set_timeout (client_conn_t *self, int64_t request_ms, int64_t backoff_max_ms)
{
    assert (self);
    self->request_ms = request_ms > 0 ? request_ms : 3000;
    self->backoff_max_ms = backoff_max_ms > 0 ? backoff_max_ms : 2000;
}

void
client_conn_set_attempts (client_conn_t *self, int attempts)
{
    assert (self);
    self->attempts = attempts > 0 ? attempts : 1;
}

void
client_conn_set_connect_attempts (client_conn_t *self, int attempts)
{
    assert (self);
    self->connect_attempts = attempts > 0 ? attempts : 0;
}

void
client_conn_set_stop (client_conn_t *self, volatile sig_atomic_t *stop)
{
    assert (self);
    self->stop = stop;
}

bool
client_conn_stopped (const client_conn_t *self)
{
    assert (self);
    return self->stop && *self->stop;
}

int64_t
client_conn_request_ms (const client_conn_t *self)
{
    assert (self);
    return self->request_ms;
}

int
client_conn_attempts (const client_conn_t *self)
{
    assert (self);
    return self->attempts;
}

//  ---------------------------------------------------------------------
//  Errors

parley_err_t
client_conn_vfail (client_conn_t *self, parley_err_t code, const char *format, va_list args)
{
    assert (self);
    vsnprintf (self->error, sizeof self->error, format, args);
    return code;
}

parley_err_t
client_conn_fail (client_conn_t *self, parley_err_t code, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    client_conn_vfail (self, code, format, args);
    va_end (args);
    return code;
}

parley_err_t
client_conn_nomem (client_conn_t *self)
{
    assert (self);
    self->nomem++;
    return client_conn_fail (self, PARLEY_ERR_NOMEM, "out of memory");
}

void
client_conn_clear_error (client_conn_t *self)
{
    assert (self);
    self->error [0] = 0;
}

const char *
client_conn_error (const client_conn_t *self)
{
    assert (self);
    return self->error;
}

parley_err_t
client_conn_error_reply (client_conn_t *self, const pmsg_t *reply)
{
    size_t len = 0;
    const char *text = pmsg_str (reply, "message", &len);
    uint64_t code = pmsg_uint (reply, "code", 0);
    //  The text is the broker's sentence alone: callers print it after the
    //  code they got (parley_strerror), and a text that repeated the code
    //  would read "BAD_FIELD: BAD_FIELD: ..." in every tool. Only a reply
    //  without a code says so.
    if (code == 0)
        client_conn_fail (self, PARLEY_ERR_BAD_REPLY, "an ERROR without a code: %.*s",
                          (int) (text ? len : 0), text ? text : "");
    else
        client_conn_fail (self, (parley_err_t) code, "%.*s", (int) (text ? len : 0),
                          text ? text : "");
    //  A code this client does not know (a newer broker) stays a number.
    return code == 0 ? PARLEY_ERR_BAD_REPLY : (parley_err_t) code;
}

//  ---------------------------------------------------------------------
//  Encoders and ids

penc_t *
client_conn_begin (client_conn_t *self, pmsg_type_t type, size_t fields)
{
    assert (self);
    self->enc_id = self->next_id++;
    penc_begin (&self->enc, type, self->enc_id, fields);
    return &self->enc;
}

penc_t *
client_conn_encoder (client_conn_t *self)
{
    assert (self);
    return &self->enc;
}

penc_t *
client_conn_hello_encoder (client_conn_t *self)
{
    assert (self);
    return &self->hello;
}

penc_t *
client_conn_aside_encoder (client_conn_t *self)
{
    assert (self);
    return &self->aside;
}

uint64_t
client_conn_request_id (const client_conn_t *self)
{
    assert (self);
    return self->enc_id;
}

uint64_t
client_conn_begin_id (client_conn_t *self)
{
    assert (self);
    self->enc_id = self->next_id++;
    return self->enc_id;
}

uint64_t
client_conn_next_id (client_conn_t *self)
{
    assert (self);
    return self->next_id++;
}

//  ---------------------------------------------------------------------
//  Frames and replies

void
client_conn_close (client_conn_t *self, parley_err_t code)
{
    assert (self);
    client_tickets_fail (self->tickets, code);
    client_transport_close (self->transport);
    client_session_down (self->session);
    self->keepalive_id = 0;
    self->lost = false;
}

//  An owner learned during the routing that the broker forgot us.
static void
s_after_routing (client_conn_t *self)
{
    bool flight_lost = client_flight_take_lost (self->flight);
    if (self->lost || flight_lost)
        client_conn_close (self, PARLEY_ERR_NOT_HELLO);
}

void
client_conn_drain (client_conn_t *self)
{
    assert (self);
    if (client_router_drain (self->router) == PARLEY_ERR_NOMEM)
        self->nomem++;
    s_after_routing (self);
}

bool
client_conn_pump (client_conn_t *self, int64_t ms)
{
    assert (self);
    if (client_transport_poll (self->transport, true, false, false, ms) > 0)
        client_conn_drain (self);
    return client_transport_is_open (self->transport);
}

int
client_conn_send (client_conn_t *self, const void *data, size_t size, bool wait)
{
    assert (self);
    int64_t until = pclock_mono_ms () + self->request_ms;
    while (client_transport_send (self->transport, data, size, true) != 0) {
        int64_t left = until - pclock_mono_ms ();
        if (!wait || zmq_errno () != EAGAIN || left <= 0 || client_conn_stopped (self))
            return -1;
        //  A window larger than the socket's queue is drained by the broker
        //  as it reads: wait for room, routing replies meanwhile.
        int64_t slice = left < CLIENT_ROUTER_SLICE_MS ? left : CLIENT_ROUTER_SLICE_MS;
        if (client_transport_poll (self->transport, true, true, false, slice) > 0
        &&  client_transport_readable (self->transport))
            client_conn_drain (self);
        if (!client_transport_is_open (self->transport))
            return -1;          //  a reply closed the connection (NOT_HELLO)
    }
    self->requests++;
    self->last_send_ms = pclock_mono_ms ();
    return 0;
}

parley_err_t
client_conn_await (client_conn_t *self, uint64_t id, int64_t until, pmsg_t **reply_p)
{
    assert (self && reply_p);
    bool busy = self->busy;
    self->busy = true;
    parley_err_t rc = client_router_await (self->router, id, until, self->stop, reply_p);
    self->busy = busy;
    if (rc == PARLEY_ERR_NOMEM)
        self->nomem++;
    s_after_routing (self);
    return rc;
}

void
client_conn_set_keepalive (client_conn_t *self, uint64_t id)
{
    assert (self);
    self->keepalive_id = id;
    self->keepalives++;
}

static bool
s_claim_keepalive (void *owner, pmsg_t **msg_p)
{
    client_conn_t *self = (client_conn_t *) owner;
    if (!self->keepalive_id || pmsg_id (*msg_p) != self->keepalive_id)
        return false;
    self->keepalive_id = 0;
    if (pmsg_type (*msg_p) == PMSG_ERROR && pmsg_uint (*msg_p, "code", 0) == PERR_NOT_HELLO) {
        plog_info ("broker forgot us (NOT_HELLO) during a wait; will say HELLO again");
        self->lost = true;
    }
    pmsg_destroy (msg_p);
    return true;
}

parley_err_t
client_conn_exchange (client_conn_t *self, penc_t *enc, uint64_t id, pmsg_t **reply_p)
{
    assert (self && enc && reply_p);
    *reply_p = NULL;
    if (!penc_ok (enc))
        return PARLEY_ERR_NOMEM;
    if (client_conn_send (self, penc_data (enc), penc_size (enc), false) != 0)
        return PARLEY_ERR_TIMEOUT;
    return client_conn_await (self, id, self->last_send_ms + self->request_ms, reply_p);
}

//  ---------------------------------------------------------------------
//  The session

//  One HELLO and, on WELCOME, the client's restore. A HELLO after one
//  that got no answer in time goes on the same connection, so a WELCOME
//  the broker sends late (with a new resume token) still reaches us;
//  any other connection is replaced by a fresh one.
static parley_err_t
s_hello_once (client_conn_t *self)
{
    if (!client_session_asking (self->session) || !client_transport_is_open (self->transport))
        client_conn_close (self, PARLEY_ERR_TIMEOUT);
    char why [300] = "";
    uint64_t id = self->next_id++;
    self->requests++;
    bool busy = self->busy;
    self->busy = true;
    parley_err_t rc = client_session_hello (self->session, self->endpoint, self->transport,
                                            self->router, &self->hello, id, self->request_ms,
                                            self->stop, why, sizeof why);
    self->busy = busy;
    if (rc != PARLEY_OK)
        return client_conn_fail (self, rc, "%s", why);
    self->last_send_ms = pclock_mono_ms ();
    if (self->restore)
        self->restore (self->hooks_arg);
    return PARLEY_OK;
}

parley_err_t
client_conn_connect (client_conn_t *self)
{
    assert (self);
    int64_t backoff = 100;
    int failures = 0;
    while (!client_session_up (self->session)) {
        if (client_conn_stopped (self))
            return client_conn_fail (self, PARLEY_ERR_STOPPED, "stopped");
        self->error [0] = 0;
        parley_err_t rc = s_hello_once (self);
        if (rc == PARLEY_OK) {
            if (client_session_epoch (self->session) > 1)
                plog_info ("reconnected to broker %s (session %" PRIu64 ")", self->endpoint,
                           client_session_epoch (self->session));
            return PARLEY_OK;
        }
        if (rc == PARLEY_ERR_NOMEM)
            self->nomem++;
        if (rc != PARLEY_ERR_TIMEOUT)
            return rc;
        client_session_count_failure (self->session);
        uint64_t total = client_session_counter (self->session, PARLEY_COUNTER_HELLO_FAILURES);
        if (self->connect_attempts && ++failures >= self->connect_attempts)
            return PARLEY_ERR_TIMEOUT;
        if (total == 1 || total % 10 == 0)
            plog_warn ("broker %s not answering HELLO%s%s; retrying", self->endpoint,
                       *self->error ? ": " : "", self->error);
        pclock_nap_ms (backoff, self->stop);
        backoff = backoff * 2 > self->backoff_max_ms ? self->backoff_max_ms : backoff * 2;
    }
    return PARLEY_OK;
}

parley_err_t
client_conn_ensure (client_conn_t *self)
{
    assert (self);
    parley_err_t rc = client_conn_connect (self);
    if (rc == PARLEY_OK || rc == PARLEY_ERR_STOPPED || rc == PARLEY_ERR_NOMEM)
        return rc;
    //  The session's reason, copied: client_conn_fail writes the error text.
    char why [sizeof self->error];
    snprintf (why, sizeof why, "%s", self->error);
    if (rc == PARLEY_ERR_TIMEOUT)
        return client_conn_fail (self, rc, "broker not answering HELLO: %s", why);
    //  Refused for good: there is no broker to talk to.
    return client_conn_fail (self, PARLEY_ERR_LOST, "broker refused HELLO: %s", why);
}

bool
client_conn_up (const client_conn_t *self)
{
    assert (self);
    return client_session_up (self->session);
}

//  ---------------------------------------------------------------------
//  One request

//  The frame in the request encoder is sent again on a fresh session
//  after a timeout or NOT_HELLO, up to `attempts` times. A resend carries
//  the very same frame, so a SEND batch id or an ACT step makes the repeat
//  harmless; reads, HEARTBEAT and LISTEN are harmless twice anyway.
parley_err_t
client_conn_call (client_conn_t *self, pmsg_type_t expect, pmsg_t **reply_p)
{
    assert (self && reply_p);
    *reply_p = NULL;
    self->error [0] = 0;
    if (!penc_ok (&self->enc))
        return client_conn_nomem (self);
    parley_err_t before = self->before ? self->before (self->hooks_arg) : PARLEY_OK;
    if (before != PARLEY_OK)
        return before;
    for (int attempt = 0; attempt < self->attempts; attempt++) {
        parley_err_t rc = client_conn_ensure (self);
        if (rc != PARLEY_OK)
            return rc;
        pmsg_t *reply;
        rc = client_conn_exchange (self, &self->enc, self->enc_id, &reply);
        if (rc == PARLEY_ERR_STOPPED)
            return client_conn_fail (self, rc, "stopped");
        if (rc == PARLEY_ERR_NOMEM)
            return client_conn_fail (self, rc, "out of memory reading the reply (it stays queued)");
        if (rc == PARLEY_OK && pmsg_type (reply) == PMSG_ERROR
        &&  pmsg_uint (reply, "code", 0) == PERR_NOT_HELLO) {
            plog_info ("broker forgot us (NOT_HELLO); saying HELLO again");
            pmsg_destroy (&reply);
            client_conn_close (self, PARLEY_ERR_NOT_HELLO);
            continue;
        }
        if (rc == PARLEY_OK) {
            if (pmsg_type (reply) == expect) {
                *reply_p = reply;
                return PARLEY_OK;
            }
            rc = pmsg_type (reply) == PMSG_ERROR
               ? client_conn_error_reply (self, reply)
               : client_conn_fail (self, PARLEY_ERR_BAD_REPLY, "unexpected reply %s to %s",
                                   pmsg_type_name (pmsg_type (reply)), pmsg_type_name (expect));
            pmsg_destroy (&reply);
            return rc;
        }
        self->timeouts++;
        plog_warn ("no reply from broker in %" PRId64 " ms; reconnecting", self->request_ms);
        client_conn_close (self, PARLEY_ERR_TIMEOUT);
    }
    return client_conn_fail (self, PARLEY_ERR_TIMEOUT, "no reply after %d attempts",
                             self->attempts);
}

//  ---------------------------------------------------------------------

bool
client_conn_busy (const client_conn_t *self)
{
    assert (self);
    return self->busy;
}

void
client_conn_set_busy (client_conn_t *self, bool busy)
{
    assert (self);
    self->busy = busy;
}

int64_t
client_conn_last_send (const client_conn_t *self)
{
    assert (self);
    return self->last_send_ms;
}

uint64_t
client_conn_counter (const client_conn_t *self, parley_counter_t counter)
{
    assert (self);
    switch (counter) {
        case PARLEY_COUNTER_REQUESTS:   return self->requests;
        case PARLEY_COUNTER_TIMEOUTS:   return self->timeouts;
        case PARLEY_COUNTER_KEEPALIVES: return self->keepalives;
        case PARLEY_COUNTER_NOMEM:      return self->nomem;
        case PARLEY_COUNTER_BAD_FRAMES: return client_transport_bad_frames (self->transport);
        default:                        return client_session_counter (self->session, counter);
    }
}

void
client_conn_count (client_conn_t *self, parley_counter_t counter)
{
    assert (self);
    if (counter == PARLEY_COUNTER_TIMEOUTS)
        self->timeouts++;
    else
    if (counter == PARLEY_COUNTER_NOMEM)
        self->nomem++;
}
