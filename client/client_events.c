// SPDX-License-Identifier: MIT
/*  client_events - libparley's event side: the SUB socket on the endpoint
    WELCOME names (mail.<agent>, world., state.<prefix> for the replica,
    workflow. when asked for), heartbeats when nothing else went out,
    waits that look at the stop flag, and the non-blocking keepalive for callers stuck in
    something else (a model call's progress callback).
*/
#include <assert.h>
#include "client_internal.h"
#include "pclock.h"
#include "plog.h"

void
client_open_sub (parley_client_t *self)
{
    if (!*self->welcome.pub)
        return;
    if (self->sub && streq (self->sub_endpoint, self->welcome.pub))
        return;
    client_fd_forget (self, self->sub);
    zsock_destroy (&self->sub);
    self->sub = client_socket_new (self, ZMQ_SUB, self->welcome.pub);
    if (!self->sub) {
        plog_warn ("cannot connect events to %s; polling mail instead", self->welcome.pub);
        return;
    }
    char topic [PROTO_MAX_KEY + 8];
    snprintf (topic, sizeof (topic), "mail.%s", self->agent);
    zsock_set_subscribe (self->sub, topic);
    zsock_set_subscribe (self->sub, "world.");
    if (self->workflow_on)
        zsock_set_subscribe (self->sub, "workflow.");
    for (size_t i = 0; self->replica_on && i < self->replica_prefix_count; i++) {
        snprintf (topic, sizeof (topic), "state.%s", self->replica_prefixes [i]);
        zsock_set_subscribe (self->sub, topic);
    }
    client_events_subscribe_all (self);
    snprintf (self->sub_endpoint, sizeof (self->sub_endpoint), "%s", self->welcome.pub);
    client_fd_sync (self);
}

static void
s_event (parley_client_t *self, zmsg_t *msg)
{
    char *topic = zmsg_popstr (msg);
    client_events_queue (self, topic, msg);
    if (topic && strncmp (topic, "mail.", 5) == 0) {
        self->stats.mail_wakeups++;
        self->mail_flag = true;
    }
    else
    if (topic && strncmp (topic, "world.", 6) == 0)
        self->stats.world_events++;
    else
    if (topic && strncmp (topic, "workflow.", 9) == 0)
        client_workflow_queue (self, zmsg_first (msg));
    else
    if (topic && strncmp (topic, "state.", 6) == 0 && self->replica_on)
        client_replica_update (self, topic + 6, zmsg_first (msg));
    free (topic);
}

void
client_drain_events (parley_client_t *self)
{
    while (self->sub && (zsock_events (self->sub) & ZMQ_POLLIN)) {
        zmsg_t *msg = zmsg_recv (self->sub);
        if (!msg)
            break;
        s_event (self, msg);
        zmsg_destroy (&msg);
    }
}

static bool
s_heartbeat_due (parley_client_t *self)
{
    int64_t due = (int64_t) self->welcome.heartbeat_ms / 2;
    return pclock_mono_ms () - self->last_send_ms >= (due > 0? due: 500);
}

//  A HEARTBEAT with its reply awaited, when one is due.
static void
s_tick (parley_client_t *self)
{
    if (self->session && s_heartbeat_due (self))
        parley_client_heartbeat (self);
}

bool
parley_client_wait (parley_client_t *self, int64_t ms)
{
    assert (self);
    int64_t until = pclock_mono_ms () + ms;
    while (!parley_client_stopped (self)) {
        client_drain_events (self);
        s_tick (self);
        client_replica_refresh (self);
        if (self->credit && !self->busy)
            client_drain_replies (self);
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0 || client_workflow_pending (self) || client_events_pending (self)
        ||  client_push_pending (self))
            break;
        int64_t slice = left < CLIENT_POLL_SLICE_MS? left: CLIENT_POLL_SLICE_MS;
        //  The DEALER too while consuming: pushed mail comes there.
        zmq_pollitem_t items [2];
        int count = 0;
        if (self->sub)
            items [count++] = (zmq_pollitem_t) { zsock_resolve (self->sub), 0, ZMQ_POLLIN, 0 };
        if (self->dealer && self->credit)
            items [count++] = (zmq_pollitem_t) { zsock_resolve (self->dealer), 0, ZMQ_POLLIN, 0 };
        if (count)
            zmq_poll (items, count, slice);
        else
            pclock_sleep_ms (slice);
    }
    client_drain_events (self);
    if (self->credit && !self->busy)
        client_drain_replies (self);
    return self->mail_flag;
}

bool
parley_client_take_mail (parley_client_t *self)
{
    assert (self);
    client_drain_events (self);
    bool flag = self->mail_flag;
    self->mail_flag = false;
    return flag;
}

bool
parley_client_process (parley_client_t *self)
{
    assert (self);
    client_drain_events (self);
    if (self->credit && !self->busy)
        client_drain_replies (self);
    s_tick (self);
    client_replica_refresh (self);
    return self->mail_flag;
}

//  Takes what the DEALER holds without waiting: the reply to our last
//  keepalive HEARTBEAT is matched by id (NOT_HELLO there means the broker
//  expired us: the session is dropped, and the next request says HELLO);
//  replies to posted requests are kept for their collect; anything else is
//  a late reply to a request given up on, dropped.
void
client_drain_replies (parley_client_t *self)
{
    while (self->dealer && (zsock_events (self->dealer) & ZMQ_POLLIN)) {
        pmsg_t *msg = client_recv_reply (self, true);
        if (!msg)
            continue;
        if (self->keepalive_id && pmsg_id (msg) == self->keepalive_id) {
            self->keepalive_id = 0;
            if (pmsg_type (msg) == PMSG_ERROR && pmsg_uint (msg, "code", 0) == PERR_NOT_HELLO) {
                plog_info ("broker forgot us (NOT_HELLO) during a wait; will say HELLO again");
                client_pending_fail (self, PARLEY_ERR_NOT_HELLO);
                client_close_dealer (self);
            }
        }
        else
        if (client_pending_keep (self, msg))
            continue;
        pmsg_destroy (&msg);
    }
}

void
parley_client_keepalive (parley_client_t *self)
{
    assert (self);
    if (self->busy || !self->session || !self->dealer)
        return;
    client_drain_events (self);
    client_drain_replies (self);
    if (!self->session || !s_heartbeat_due (self))
        return;
    //  Own encoder and id: the caller's request in `enc` must survive.
    self->keepalive_id = self->next_id++;
    client_begin_heartbeat (self, &self->keepalive, self->keepalive_id);
    if (zmq_send (zsock_resolve (self->dealer), penc_data (&self->keepalive),
                  penc_size (&self->keepalive), ZMQ_DONTWAIT) < 0)
        return;                 //  the next real request finds out why
    self->last_send_ms = pclock_mono_ms ();
    self->stats.keepalives++;
}
