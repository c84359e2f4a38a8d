// SPDX-License-Identifier: MIT
/*  client - parley_client_t: the parts it is made of, its options, and
    what every new session must be told again. The connection (conn.c)
    says HELLO; the requests are in api_*.c; client_internal.h lists the
    parts and their order.

    After every HELLO the client restores, in this order: the duplicate
    filter's idea of the broker (WELCOME's origin), the event socket and
    its subscriptions, the channels it listened to (a restarted broker
    has forgotten them), and the push subscription with the last
    acknowledgement (one lost with the old connection would hold the
    window). These go on the handshake's own encoder: the caller's request
    waits in the request encoder for its resend.
*/
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "agents_int.h"
#include "client_internal.h"
#include "mem.h"
#include "pclock.h"
#include "plog.h"

struct _parley_client_t {
    client_conn_t *conn;
    client_tickets_t *tickets;
    client_flight_t *flight;
    client_sender_t *sender;
    client_push_t *push;
    client_events_t *events;
    client_replica_t *replica;
    client_dedup_t *dedup;
    uint64_t next_batch;
    char channels [PARLEY_MAX_CHANNELS][PARLEY_NAME_MAX + 1];
    size_t channel_count;
    bool has_report;
    uint64_t report [PARLEY_MODEL_FIELDS];
};

static void s_restore (void *arg);
static parley_err_t s_before (void *arg);
static void s_state_update (void *arg, const char *key, const void *body, size_t size);

parley_client_t *
parley_client_new (const char *endpoint, const char *agent_id)
{
    if (!endpoint || !agent_id || strlen (agent_id) > PARLEY_NAME_MAX)
        return NULL;
    parley_client_t *self = (parley_client_t *) client_mem_zalloc (sizeof (parley_client_t));
    if (!self)
        return NULL;
    self->tickets = client_tickets_new ();
    self->flight = client_flight_new ();
    self->push = client_push_new ();
    self->events = client_events_new ();
    self->replica = client_replica_new ();
    self->dedup = client_dedup_new ();
    if (self->tickets && self->flight)
        self->conn = client_conn_new (endpoint, agent_id, self->tickets, self->flight);
    if (self->conn)
        self->sender = client_sender_new (self->conn, self->flight);
    if (!self->sender || !self->push || !self->events || !self->replica || !self->dedup) {
        parley_client_destroy (&self);
        return NULL;
    }
    //  The owners of what the router cannot give the connection itself.
    client_router_t *router = client_conn_router (self->conn);
    client_router_set_owner (router, CLIENT_ROUTE_PUSH, client_push_claim, self->push);
    client_router_set_owner (router, CLIENT_ROUTE_CONFIRM, client_flight_claim_confirm,
                             self->flight);
    client_router_set_owner (router, CLIENT_ROUTE_FLIGHT, client_flight_claim_error,
                             self->flight);
    client_router_set_owner (router, CLIENT_ROUTE_TICKET, client_tickets_claim, self->tickets);
    client_conn_set_hooks (self->conn, s_restore, s_before, self);
    client_events_set_state_sink (self->events, s_state_update, self);
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
    if (!self)
        return;
    //  What is held goes, with up to a second to leave the socket; nothing
    //  waits for its confirm.
    if (self->sender)
        client_sender_farewell (self->sender);
    client_sender_destroy (&self->sender);
    client_conn_destroy (&self->conn);
    client_tickets_destroy (&self->tickets);
    client_flight_destroy (&self->flight);
    client_push_destroy (&self->push);
    client_events_destroy (&self->events);
    client_replica_destroy (&self->replica);
    client_dedup_destroy (&self->dedup);
    client_mem_free (self);
    *self_p = NULL;
}

//  ---------------------------------------------------------------------
//  Options

parley_err_t
parley_client_add_cap (parley_client_t *self, const char *cap)
{
    assert (self && cap);
    parley_err_t rc = client_session_add_cap (client_conn_session (self->conn), cap);
    if (rc == PARLEY_ERR_INVALID)
        return client_conn_fail (self->conn, rc, "at most %d capabilities", CLIENT_MAX_CAPS);
    return rc == PARLEY_ERR_NOMEM ? client_conn_nomem (self->conn) : rc;
}

void
parley_client_set_timeout (parley_client_t *self, int64_t request_ms, int64_t backoff_max_ms)
{
    assert (self);
    client_conn_set_timeout (self->conn, request_ms, backoff_max_ms);
}

void
parley_client_set_attempts (parley_client_t *self, int attempts)
{
    assert (self);
    client_conn_set_attempts (self->conn, attempts);
}

void
parley_client_set_connect_attempts (parley_client_t *self, int attempts)
{
    assert (self);
    client_conn_set_connect_attempts (self->conn, attempts);
}

void
parley_client_set_stop (parley_client_t *self, volatile sig_atomic_t *stop)
{
    assert (self);
    client_conn_set_stop (self->conn, stop);
}

parley_err_t
parley_client_set_security (parley_client_t *self, const char *curve_key,
                            const char *curve_server_key, const char *token_file)
{
    assert (self);
    //  Checked now, so a typo is a usage error and not an endless "not answering".
    char why [512];
    parley_err_t rc = client_transport_set_curve (client_conn_transport (self->conn), curve_key,
                                                  curve_server_key, why, sizeof why);
    if (rc == PARLEY_OK)
        rc = client_session_set_token_file (client_conn_session (self->conn), token_file);
    if (rc == PARLEY_ERR_NOMEM)
        return client_conn_nomem (self->conn);
    return rc == PARLEY_OK ? rc : client_conn_fail (self->conn, rc, "%s", why);
}

void
parley_client_set_observe (parley_client_t *self, bool observe)
{
    assert (self);
    client_session_set_observe (client_conn_session (self->conn), observe);
}

void
parley_client_set_send_wait (parley_client_t *self, int64_t wait_ms)
{
    assert (self);
    client_sender_set_wait (self->sender, wait_ms);
}

void
parley_client_set_report (parley_client_t *self, const uint64_t *values, size_t count)
{
    assert (self);
    self->has_report = values != NULL;
    memset (self->report, 0, sizeof self->report);
    for (size_t f = 0; values && f < count && f < PARLEY_MODEL_FIELDS; f++)
        self->report [f] = values [f];
}

//  ---------------------------------------------------------------------
//  The session

parley_err_t
parley_client_connect (parley_client_t *self)
{
    assert (self);
    //  A session that is up starts again on a fresh connection; without
    //  one, a connection that carried only HELLOs is asked again (a late
    //  WELCOME may still come on it).
    if (client_conn_up (self->conn))
        client_conn_close (self->conn, PARLEY_ERR_TIMEOUT);
    return client_conn_connect (self->conn);
}

bool
parley_client_stopped (parley_client_t *self)
{
    assert (self);
    return client_conn_stopped (self->conn);
}

uint64_t
parley_client_epoch (parley_client_t *self)
{
    assert (self);
    return client_session_epoch (client_conn_session (self->conn));
}

const parley_welcome_t *
parley_client_welcome (parley_client_t *self)
{
    assert (self);
    return client_session_welcome (client_conn_session (self->conn));
}

const char *
parley_client_error_text (parley_client_t *self)
{
    assert (self);
    return client_conn_error (self->conn);
}

uint64_t
parley_client_counter (parley_client_t *self, parley_counter_t counter)
{
    assert (self);
    uint64_t total = client_conn_counter (self->conn, counter)
                   + client_events_counter (self->events, counter)
                   + client_replica_counter (self->replica, counter)
                   + client_flight_counter (self->flight, counter)
                   + client_sender_counter (self->sender, counter);
    if (counter == PARLEY_COUNTER_DUPLICATES)
        total += client_dedup_duplicates (self->dedup);
    if (counter == PARLEY_COUNTER_NOMEM)
        total += client_push_nomem (self->push);
    return total;
}

//  ---------------------------------------------------------------------
//  What a new session is told again

void
client_subscribe_socket (parley_client_t *self, const char *prefix, bool on)
{
    client_transport_t *transport = client_conn_transport (self->conn);
    if (on)
        client_transport_subscribe (transport, prefix);
    else
        client_transport_unsubscribe (transport, prefix);
}

void
client_open_events (parley_client_t *self)
{
    client_transport_t *transport = client_conn_transport (self->conn);
    const char *pub = parley_welcome_pub (parley_client_welcome (self));
    if (!*pub)
        return;
    bool fresh;
    char why [300];
    if (client_transport_sub_open (transport, pub, &fresh, why, sizeof why) != PARLEY_OK) {
        plog_warn ("cannot connect events to %s (%s); polling mail instead", pub, why);
        return;
    }
    if (!fresh)
        return;
    //  libzmq counts subscriptions: the caller's stack on the client's own
    //  (mail., world., ...) and leaving theirs leaves ours in place.
    char topic [PROTO_MAX_KEY + 16];
    snprintf (topic, sizeof topic, "mail.%s", client_session_agent (client_conn_session (self->conn)));
    client_transport_subscribe (transport, topic);
    client_transport_subscribe (transport, "world.");
    if (client_events_workflow (self->events))
        client_transport_subscribe (transport, "workflow.");
    for (size_t i = 0; client_replica_on (self->replica)
                       && i < client_replica_prefix_count (self->replica); i++) {
        snprintf (topic, sizeof topic, "state.%s", client_replica_prefix (self->replica, i));
        client_transport_subscribe (transport, topic);
    }
    for (size_t i = 0; i < client_events_topic_count (self->events); i++)
        client_transport_subscribe (transport, client_events_topic (self->events, i));
}

//  One request on the handshake's encoder, answered OK.
static bool
s_exchange_ok (parley_client_t *self, uint64_t id)
{
    pmsg_t *reply;
    penc_t *enc = client_conn_hello_encoder (self->conn);
    if (client_conn_exchange (self->conn, enc, id, &reply) != PARLEY_OK)
        return false;
    bool ok = pmsg_type (reply) == PMSG_OK;
    if (!ok)
        client_conn_error_reply (self->conn, reply);
    pmsg_destroy (&reply);
    return ok;
}

//  A restarted broker has forgotten the channels.
static void
s_relisten (parley_client_t *self)
{
    penc_t *enc = client_conn_hello_encoder (self->conn);
    for (size_t i = 0; i < self->channel_count; i++) {
        uint64_t id = client_conn_next_id (self->conn);
        penc_begin (enc, PMSG_LISTEN, id, 1);
        penc_kv_cstr (enc, "channel", self->channels [i]);
        if (!s_exchange_ok (self, id))
            plog_warn ("could not listen to %s again", self->channels [i]);
    }
}

//  Lost acknowledgements: an ACK sent without waiting may die with its
//  connection. Mail it covered would come again and be filtered as a
//  duplicate, so nothing would acknowledge it and the window would stay
//  full. The highest acknowledgement goes again on every new session,
//  before CONSUME (an ACK is harmless twice).
static void
s_push_resume (parley_client_t *self)
{
    //  Frames of the old connection: their mail comes again.
    client_push_purge (self->push);
    const parley_welcome_t *welcome = parley_client_welcome (self);
    uint64_t origin = parley_welcome_origin (welcome);
    if (client_push_acked_origin (self->push) != origin)
        client_push_set_acked (self->push, 0, origin);      //  a restarted broker
    if (!client_push_credit (self->push))
        return;
    penc_t *enc = client_conn_hello_encoder (self->conn);
    if (client_push_acked (self->push) > parley_welcome_acked (welcome)) {
        uint64_t id = client_conn_next_id (self->conn);
        penc_begin (enc, PMSG_ACK, id, 1);
        penc_kv_uint (enc, "seq", client_push_acked (self->push));
        if (s_exchange_ok (self, id))
            client_sender_acked (self->sender, client_push_acked (self->push));
        else
            plog_warn ("could not acknowledge mail again after reconnecting");
    }
    uint64_t id = client_conn_next_id (self->conn);
    uint64_t credit_bytes = client_push_credit_bytes (self->push);
    penc_begin (enc, PMSG_CONSUME, id, credit_bytes ? 2 : 1);
    penc_kv_uint (enc, "credit", client_push_credit (self->push));
    if (credit_bytes)
        penc_kv_uint (enc, "credit_bytes", credit_bytes);
    if (!s_exchange_ok (self, id))
        plog_warn ("could not open the push subscription again: %s",
                   client_conn_error (self->conn));
}

static void
s_restore (void *arg)
{
    parley_client_t *self = (parley_client_t *) arg;
    const parley_welcome_t *welcome = parley_client_welcome (self);
    client_dedup_welcome (self->dedup, parley_welcome_origin (welcome),
                          parley_welcome_mail_seq (welcome), parley_welcome_acked (welcome));
    client_open_events (self);
    s_relisten (self);
    s_push_resume (self);
}

//  Pipelined SENDs held back go before any other request, in order.
static parley_err_t
s_before (void *arg)
{
    parley_client_t *self = (parley_client_t *) arg;
    return client_sender_before (self->sender);
}

//  ---------------------------------------------------------------------
//  Events and channels

static void
s_state_update (void *arg, const char *key, const void *body, size_t size)
{
    parley_client_t *self = (parley_client_t *) arg;
    client_replica_update (self->replica, key, body, size);
}

void
client_take_events (parley_client_t *self)
{
    client_transport_t *transport = client_conn_transport (self->conn);
    while (client_transport_sub_readable (transport)) {
        char topic [PROTO_MAX_KEY + 32];
        zmq_msg_t body;
        if (client_transport_sub_recv (transport, topic, sizeof topic, &body) != 0)
            continue;
        client_events_take (self->events, topic, zmq_msg_data (&body), zmq_msg_size (&body));
        zmq_msg_close (&body);
    }
}

parley_err_t
parley_client_listen (parley_client_t *self, const char *channel)
{
    assert (self);
    if (!channel || !pmsg_name_valid (channel, strlen (channel)))
        return client_conn_fail (self->conn, PARLEY_ERR_INVALID, "bad channel name '%.64s'",
                                 channel ? channel : "");
    size_t known = 0;
    while (known < self->channel_count && strcmp (self->channels [known], channel) != 0)
        known++;
    if (known == self->channel_count && known >= PARLEY_MAX_CHANNELS)
        return client_conn_fail (self->conn, PARLEY_ERR_INVALID,
                                 "already listening to %d channels", PARLEY_MAX_CHANNELS);
    penc_t *enc = client_conn_begin (self->conn, PMSG_LISTEN, 1);
    penc_kv_cstr (enc, "channel", channel);
    pmsg_t *reply;
    parley_err_t rc = client_conn_call (self->conn, PMSG_OK, &reply);
    pmsg_destroy (&reply);
    if (rc == PARLEY_OK && known == self->channel_count)
        snprintf (self->channels [self->channel_count++], PARLEY_NAME_MAX + 1, "%s", channel);
    return rc;
}

parley_err_t
parley_client_unlisten (parley_client_t *self, const char *channel)
{
    assert (self);
    if (!channel || !pmsg_name_valid (channel, strlen (channel)))
        return client_conn_fail (self->conn, PARLEY_ERR_INVALID, "bad channel name '%.64s'",
                                 channel ? channel : "");
    penc_t *enc = client_conn_begin (self->conn, PMSG_UNLISTEN, 1);
    penc_kv_cstr (enc, "channel", channel);
    pmsg_t *reply;
    parley_err_t rc = client_conn_call (self->conn, PMSG_OK, &reply);
    pmsg_destroy (&reply);
    //  Forgotten either way: NOT_LISTENING means the broker agrees.
    for (size_t i = 0; i < self->channel_count; i++)
        if (strcmp (self->channels [i], channel) == 0) {
            memmove (self->channels [i], self->channels [i + 1],
                     (self->channel_count - i - 1) * sizeof self->channels [0]);
            self->channel_count--;
            break;
        }
    return rc;
}

//  ---------------------------------------------------------------------
//  For the requests

uint64_t
client_next_batch (parley_client_t *self)
{
    return self->next_batch++;
}

uint64_t
client_send_wait (parley_client_t *self)
{
    return client_sender_wait_ms (self->sender);
}

size_t
client_max_body (parley_client_t *self)
{
    return (size_t) parley_welcome_max_body (parley_client_welcome (self));
}

void
client_encode_heartbeat (parley_client_t *self, penc_t *enc, uint64_t id)
{
    penc_begin (enc, PMSG_HEARTBEAT, id, self->has_report ? PARLEY_MODEL_FIELDS : 0);
    for (size_t f = 0; self->has_report && f < PARLEY_MODEL_FIELDS; f++)
        penc_kv_uint (enc, client_model_field_name ((parley_model_field_t) f), self->report [f]);
}

client_conn_t *client_conn_of (parley_client_t *self) { return self->conn; }
client_tickets_t *client_tickets_of (parley_client_t *self) { return self->tickets; }
client_flight_t *client_flight_of (parley_client_t *self) { return self->flight; }
client_sender_t *client_sender_of (parley_client_t *self) { return self->sender; }
client_push_t *client_push_of (parley_client_t *self) { return self->push; }
client_events_t *client_events_of (parley_client_t *self) { return self->events; }
client_replica_t *client_replica_of (parley_client_t *self) { return self->replica; }
client_dedup_t *client_dedup_of (parley_client_t *self) { return self->dedup; }
