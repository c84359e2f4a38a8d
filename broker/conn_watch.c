// SPDX-License-Identifier: MIT
/*  conn_watch - ROUTER disconnects through a libzmq socket monitor; see
    conn_watch.h for why a monitor and how descriptor reuse is handled.

    A monitor event is two frames: 6 bytes (uint16 event, int32 value, host
    order) then the endpoint. For ZMQ_EVENT_DISCONNECTED the value is the
    descriptor. That event and ZMQ_EVENT_ACCEPTED (counted for the
    metrics' open connections) are asked for, so the pipe carries nothing
    else, and one DONTWAIT receive per event keeps the loop non-blocking.
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "conn_watch.h"

struct _conn_watch_t {
    void *router;               //  libzmq handle of the monitored ROUTER
    zsock_t *pair;              //  receives the monitor's events
    uint64_t accepted;          //  ZMQ_EVENT_ACCEPTED seen (metrics)
    uint64_t closed;            //  ZMQ_EVENT_DISCONNECTED seen
};

conn_watch_t *
conn_watch_new (zsock_t *router)
{
    assert (router);
    conn_watch_t *self = calloc (1, sizeof (conn_watch_t));
    if (!self)
        return NULL;
    self->router = zsock_resolve (router);
    //  The address only has to be unique in this process's context.
    char endpoint [64];
    snprintf (endpoint, sizeof endpoint, "inproc://parley-conn-watch-%p", (void *) self);
    if (zmq_socket_monitor (self->router, endpoint,
                            ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_ACCEPTED) != 0) {
        free (self);
        return NULL;
    }
    //  libzmq's I/O thread sends monitor events with a blocking send: at a
    //  full pipe (1000 events: a thousand clients gone while the loop was
    //  busy, or stopping) it would stall every connection of the broker,
    //  and the close at shutdown would wait for it forever. A receive HWM
    //  of 0 makes this inproc pipe unbounded; an event is ~60 bytes.
    self->pair = zsock_new (ZMQ_PAIR);
    if (self->pair)
        zsock_set_rcvhwm (self->pair, 0);
    if (!self->pair || zsock_connect (self->pair, "%s", endpoint) != 0) {
        zmq_socket_monitor (self->router, NULL, 0);
        zsock_destroy (&self->pair);
        free (self);
        return NULL;
    }
    zsock_set_linger (self->pair, 0);
    return self;
}

void
conn_watch_destroy (conn_watch_t **self_p)
{
    assert (self_p);
    conn_watch_t *self = *self_p;
    if (self) {
        zmq_socket_monitor (self->router, NULL, 0);
        zsock_destroy (&self->pair);
        free (self);
        *self_p = NULL;
    }
}

zsock_t *
conn_watch_sock (conn_watch_t *self)
{
    assert (self);
    return self->pair;
}

int
conn_watch_next (conn_watch_t *self)
{
    assert (self);
    void *pair = zsock_resolve (self->pair);
    zmq_msg_t head;
    zmq_msg_init (&head);
    if (zmq_msg_recv (&head, pair, ZMQ_DONTWAIT) == -1) {
        zmq_msg_close (&head);
        return -1;
    }
    uint16_t event = 0;
    int32_t value = -1;
    if (zmq_msg_size (&head) >= 6) {
        memcpy (&event, zmq_msg_data (&head), sizeof event);
        memcpy (&value, (uint8_t *) zmq_msg_data (&head) + 2, sizeof value);
    }
    bool more = zmq_msg_more (&head);
    zmq_msg_close (&head);
    //  The endpoint frame (already here: multipart is atomic).
    while (more) {
        zmq_msg_t part;
        zmq_msg_init (&part);
        more = zmq_msg_recv (&part, pair, ZMQ_DONTWAIT) != -1 && zmq_msg_more (&part);
        zmq_msg_close (&part);
    }
    //  ACCEPTED is only counted; report it as "nothing to end" rather
    //  than as the end of the queue.
    if (event == ZMQ_EVENT_ACCEPTED)
        self->accepted++;
    if (event == ZMQ_EVENT_DISCONNECTED)
        self->closed++;
    return event == ZMQ_EVENT_DISCONNECTED && value >= 0 ? (int) value : -2;
}

int
conn_watch_fd (zmq_msg_t *frame)
{
    assert (frame);
    //  ZMQ_SRCFD is marked deprecated in favour of metadata, but metadata
    //  has no descriptor; libzmq 4.3 still fills it for every stream engine.
    return zmq_msg_get (frame, ZMQ_SRCFD);
}

uint64_t
conn_watch_open (conn_watch_t *self)
{
    assert (self);
    //  A connection whose handshake failed may close without having been
    //  counted as accepted on another transport; never show a negative.
    return self->accepted > self->closed ? self->accepted - self->closed : 0;
}
