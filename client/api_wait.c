// SPDX-License-Identifier: MIT
/*  api_wait - waiting for the broker (parley/client.h): the waits that
    take events and send HEARTBEATs when nothing else went out, the
    caller's descriptor, and the keepalive for callers stuck in something
    else (a model call's progress callback). A wait or a poll also sends
    what the sender holds (pipelined SENDs, an acknowledgement): the caller
    has nothing more to add to them; and a wait keeps reading the request
    socket while SENDs are in flight, so their confirms free the window.
*/
#include <assert.h>
#include "api_state.h"
#include "client_internal.h"
#include "pclock.h"

static bool
s_heartbeat_due (parley_client_t *self)
{
    client_conn_t *conn = client_conn_of (self);
    int64_t due = (int64_t) parley_welcome_heartbeat_ms (parley_client_welcome (self)) / 2;
    return pclock_mono_ms () - client_conn_last_send (conn) >= (due > 0 ? due : 500);
}

//  A HEARTBEAT with its reply awaited, when one is due.
static void
s_tick (parley_client_t *self)
{
    client_conn_t *conn = client_conn_of (self);
    if (client_conn_up (conn) && s_heartbeat_due (self))
        parley_client_heartbeat (self);
}

//  Pushed mail comes on the request socket: read it when consuming.
static void
s_take_pushed (parley_client_t *self)
{
    client_conn_t *conn = client_conn_of (self);
    if (client_push_credit (client_push_of (self)) && !client_conn_busy (conn))
        client_conn_drain (conn);
}

static bool
s_mail (parley_client_t *self)
{
    return client_events_mail_flag (client_events_of (self))
        || client_push_pending (client_push_of (self));
}

bool
parley_client_wait (parley_client_t *self, int64_t ms)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    client_sender_t *sender = client_sender_of (self);
    int64_t until = pclock_mono_ms () + ms;
    client_events_t *events = client_events_of (self);
    client_transport_take_alarm (client_conn_transport (conn));
    while (!parley_client_stopped (self)) {
        client_take_events (self);
        s_tick (self);
        client_replica_refresh (self);
        s_take_pushed (self);
        client_sender_service (sender, true);
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0 || client_events_wf_pending (events) || client_events_pending (events)
        ||  client_push_pending (client_push_of (self)))
            break;
        int64_t slice = left < CLIENT_ROUTER_SLICE_MS ? left : CLIENT_ROUTER_SLICE_MS;
        //  Up to what the sender holds falls due (rounded up: poll is in ms).
        int64_t due = client_sender_due (sender);
        if (due) {
            int64_t due_ms = (due - pclock_mono_us () + 999) / 1000;
            slice = due_ms < 1 ? 1 : due_ms < slice ? due_ms : slice;
        }
        client_transport_poll (client_conn_transport (conn),
                               client_push_credit (client_push_of (self)) != 0
                               || client_sender_active (sender), false, true, slice);
    }
    client_take_events (self);
    s_take_pushed (self);
    return s_mail (self);
}

bool
parley_client_take_mail (parley_client_t *self)
{
    assert (self);
    client_take_events (self);
    bool mail = s_mail (self);
    client_events_clear_mail (client_events_of (self));
    return mail;
}

bool
parley_client_process (parley_client_t *self)
{
    assert (self);
    client_transport_take_alarm (client_conn_transport (client_conn_of (self)));
    client_take_events (self);
    s_take_pushed (self);
    client_sender_service (client_sender_of (self), true);
    s_tick (self);
    client_replica_refresh (self);
    return s_mail (self);
}

int
parley_client_fd (parley_client_t *self)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    return client_transport_fd (client_conn_transport (conn));
}

void
parley_client_keepalive (parley_client_t *self)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    if (client_conn_busy (conn) || !client_conn_up (conn))
        return;
    client_take_events (self);
    client_conn_drain (conn);
    if (!client_conn_up (conn) || !s_heartbeat_due (self))
        return;
    //  Its own encoder and id: the caller's request must survive.
    penc_t *enc = client_conn_aside_encoder (conn);
    uint64_t id = client_conn_next_id (conn);
    client_encode_heartbeat (self, enc, id);
    if (!penc_ok (enc) || client_conn_send (conn, penc_data (enc), penc_size (enc), false) != 0)
        return;                 //  the next real request finds out why
    client_conn_set_keepalive (conn, id);
}
