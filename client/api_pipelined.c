// SPDX-License-Identifier: MIT
/*  api_pipelined - pipelined SENDs (parley/mail.h): posted without a SENT,
    confirmed together by the broker's CONFIRM frames, within a window.

    A post waits for room in the window (messages and bytes) by reading
    replies: CONFIRMs, and whatever else comes (the router hands each to
    its owner). Time limits: the oldest SEND in flight must be confirmed
    within the request timeout of when it went out (the broker answers a
    parked SEND within its wait_ms, three quarters of that timeout);
    otherwise the connection is given up and, on the next session, every
    SEND not confirmed is sent again in order (at-least-once). After
    `attempts` rounds without a confirm they fail as PARLEY_ERR_TIMEOUT.
*/
#include <assert.h>
#include <inttypes.h>
#include "api_mail.h"
#include "client_internal.h"
#include "pclock.h"
#include "plog.h"

//  A session, and on a new one every SEND in flight sent again, in order.
static parley_err_t
s_session (parley_client_t *self)
{
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = client_conn_ensure (conn);
    if (rc != PARLEY_OK)
        return rc;
    client_flight_t *flight = client_flight_of (self);
    uint64_t epoch = parley_client_epoch (self);
    if (client_flight_epoch (flight) == epoch || client_flight_count (flight) == 0) {
        client_flight_set_epoch (flight, epoch);
        return PARLEY_OK;
    }
    client_flight_set_epoch (flight, epoch);
    if (client_flight_round (flight) >= client_conn_attempts (conn)) {
        client_flight_give_up (flight);
        return client_conn_fail (conn, PARLEY_ERR_TIMEOUT, "pipelined SENDs unconfirmed after %d "
                            "attempts", client_conn_attempts (conn));
    }
    plog_info ("sending %zu unconfirmed pipelined SENDs again on the new session",
               client_flight_count (flight));
    uint64_t id = 0;
    const void *data;
    size_t size;
    while (client_flight_next (flight, id, &id, &data, &size)) {
        if (client_conn_send (conn, data, size, true) != 0)
            break;              //  the oldest's timeout brings the next round
        client_flight_resent (flight, id, client_conn_last_send (conn));
    }
    return PARLEY_OK;
}

//  Reads replies up to the oldest SEND's deadline; at the deadline the
//  connection is given up (the next s_session sends them all again).
static parley_err_t
s_pump (parley_client_t *self)
{
    client_conn_t *conn = client_conn_of (self);
    client_flight_t *flight = client_flight_of (self);
    if (!client_flight_count (flight) || !client_transport_is_open (client_conn_transport (conn)))
        return PARLEY_OK;
    int64_t left = client_flight_oldest_sent (flight) + client_conn_request_ms (conn) - pclock_mono_ms ();
    if (left <= 0) {
        client_conn_count (conn, PARLEY_COUNTER_TIMEOUTS);
        plog_warn ("no CONFIRM from broker in %" PRId64 " ms; reconnecting",
                   client_conn_request_ms (conn));
        client_conn_close (conn, PARLEY_ERR_TIMEOUT);
        return PARLEY_OK;
    }
    if (parley_client_stopped (self))
        return client_conn_fail (conn, PARLEY_ERR_STOPPED, "stopped");
    client_conn_set_busy (conn, true);
    client_conn_pump (conn, left < CLIENT_ROUTER_SLICE_MS ? left : CLIENT_ROUTER_SLICE_MS);
    client_conn_set_busy (conn, false);
    return PARLEY_OK;
}

parley_err_t
parley_client_send_pipelined (parley_client_t *self, const parley_outbox_t *messages,
                              parley_ticket_t *ticket)
{
    assert (self && messages);
    client_conn_t *conn = client_conn_of (self);
    if (ticket)
        *ticket = 0;
    client_conn_clear_error (conn);
    parley_err_t rc = s_session (self);
    if (rc == PARLEY_OK)
        rc = client_encode_send (self, messages, NULL);
    if (rc != PARLEY_OK)
        return rc;
    client_flight_t *flight = client_flight_of (self);
    penc_t *enc = client_conn_encoder (conn);
    size_t count = parley_outbox_count (messages);
    bool waited = false;
    while (client_flight_full (flight, count, penc_size (enc))) {
        waited = true;
        if ((rc = s_pump (self)) != PARLEY_OK || (rc = s_session (self)) != PARLEY_OK)
            return rc;
    }
    //  Recorded before it goes, so that running out of memory leaves
    //  nothing sent and untracked. The id was given at encode; the ones
    //  resent meanwhile are older, so ids still increase on the connection.
    uint64_t id = client_conn_request_id (conn);
    if (client_flight_push (flight, id, count, penc_data (enc), penc_size (enc),
                            pclock_mono_ms ()) != 0)
        return client_conn_nomem (conn);
    client_conn_set_busy (conn, true);
    int sent = client_conn_send (conn, penc_data (enc), penc_size (enc), true);
    client_conn_set_busy (conn, false);
    if (sent != 0) {
        client_flight_unpush (flight);
        return client_conn_fail (conn, PARLEY_ERR_TIMEOUT, "the socket would not take the request "
                            "within %" PRId64 " ms: %s", client_conn_request_ms (conn),
                            zmq_strerror (zmq_errno ()));
    }
    client_flight_count_post (flight, waited);
    if (ticket)
        *ticket = id;
    //  Take what has come without waiting: confirms free the window early.
    client_conn_drain (conn);
    return PARLEY_OK;
}

parley_err_t
parley_client_send_flush (parley_client_t *self)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    client_conn_clear_error (conn);
    while (client_flight_count (client_flight_of (self))) {
        parley_err_t rc = s_session (self);
        if (rc == PARLEY_OK)
            rc = s_pump (self);
        if (rc != PARLEY_OK)
            return rc;
    }
    return PARLEY_OK;
}

void
parley_client_set_send_window (parley_client_t *self, size_t messages, size_t bytes)
{
    assert (self);
    client_flight_set_window (client_flight_of (self), messages, bytes);
}

bool
parley_client_send_failure (parley_client_t *self, parley_failure_t **failure_p)
{
    assert (self && failure_p);
    return client_flight_take_failure (client_flight_of (self), failure_p);
}
