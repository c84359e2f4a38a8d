/*  workflow_events - WORKFLOW_EVENT subscriber. See workflow_events.h. */
#include "workflow_events.h"

#include <czmq.h>

struct _wfevents_t {
    zsock_t *sub;
    zpoller_t *poller;
};

wfevents_t *
wfevents_new (const char *pub_endpoint)
{
    wfevents_t *self = calloc (1, sizeof (wfevents_t));
    if (!self)
        return NULL;
    self->sub = zsock_new (ZMQ_SUB);
    if (self->sub) {
        zsock_set_maxmsgsize (self->sub, PROTO_MAX_FRAME);
        zsock_set_subscribe (self->sub, "workflow.");
    }
    if (!self->sub || zsock_connect (self->sub, "%s", pub_endpoint)
    ||  !(self->poller = zpoller_new (self->sub, NULL))) {
        wfevents_destroy (&self);
        return NULL;
    }
    return self;
}

void
wfevents_destroy (wfevents_t **self_p)
{
    wfevents_t *self = *self_p;
    if (self) {
        zpoller_destroy (&self->poller);
        zsock_destroy (&self->sub);
        free (self);
        *self_p = NULL;
    }
}

pmsg_t *
wfevents_next (wfevents_t *self, int timeout_ms)
{
    if (!zpoller_wait (self->poller, timeout_ms))
        return NULL;
    zmsg_t *msg = zmsg_recv (self->sub);
    if (!msg)
        return NULL;
    pmsg_t *event = NULL;
    if (zmsg_size (msg) == 2) {
        zframe_t *topic = zmsg_first (msg);
        zframe_t *body = zmsg_next (msg);
        (void) topic;
        perr_t err;
        uint64_t id;
        char why [128];
        event = pmsg_decode (zframe_data (body), zframe_size (body), pwire_default_limits (),
                             &err, &id, why, sizeof why);
        if (event && pmsg_type (event) != PMSG_WORKFLOW_EVENT)
            pmsg_destroy (&event);
    }
    zmsg_destroy (&msg);
    return event;
}
