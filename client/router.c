// SPDX-License-Identifier: MIT
/*  router - every reply to its owner. See router.h. */
#include <assert.h>
#include "mem.h"
#include "pclock.h"
#include "router.h"

typedef struct {
    client_router_claim_fn *claim;
    void *owner;
} s_route_t;

struct _client_router_t {
    client_transport_t *transport;
    s_route_t routes [CLIENT_ROUTES];
    bool awaiting;
    uint64_t awaited_id;
    pmsg_t *awaited;            //  the awaited reply, once routed
    uint64_t dropped;
};

client_router_t *
client_router_new (client_transport_t *transport)
{
    assert (transport);
    client_router_t *self = (client_router_t *) client_mem_zalloc (sizeof (client_router_t));
    if (self)
        self->transport = transport;
    return self;
}

void
client_router_destroy (client_router_t **self_p)
{
    assert (self_p);
    client_router_t *self = *self_p;
    if (self) {
        pmsg_destroy (&self->awaited);
        client_mem_free (self);
        *self_p = NULL;
    }
}

void
client_router_set_owner (client_router_t *self, client_route_t route,
                         client_router_claim_fn *claim, void *owner)
{
    assert (self && route < CLIENT_ROUTES);
    self->routes [route] = (s_route_t) { claim, owner };
}

static bool
s_claim (client_router_t *self, client_route_t route, pmsg_t **msg_p)
{
    s_route_t *entry = &self->routes [route];
    return entry->claim && entry->claim (entry->owner, msg_p);
}

void
client_router_route (client_router_t *self, pmsg_t *msg)
{
    assert (self && msg);
    pmsg_type_t type = pmsg_type (msg);
    uint64_t id = pmsg_id (msg);
    bool taken;
    if (type == PMSG_MAIL_PUSH)
        taken = s_claim (self, CLIENT_ROUTE_PUSH, &msg);
    else
    if (type == PMSG_CONFIRM)
        taken = s_claim (self, CLIENT_ROUTE_CONFIRM, &msg);
    else
    if (self->awaiting && !self->awaited
    &&  (id == self->awaited_id || (id == 0 && type == PMSG_ERROR))) {
        self->awaited = msg;
        msg = NULL;
        taken = true;
    }
    else
        taken = s_claim (self, CLIENT_ROUTE_FLIGHT, &msg)
             || s_claim (self, CLIENT_ROUTE_TICKET, &msg)
             || s_claim (self, CLIENT_ROUTE_KEEPALIVE, &msg)
             || s_claim (self, CLIENT_ROUTE_SESSION, &msg);
    if (!taken)
        self->dropped++;
    pmsg_destroy (&msg);
}

parley_err_t
client_router_drain (client_router_t *self)
{
    assert (self);
    //  A reply awaited ends the read: what came after it is routed after
    //  its caller saw it (a push subscription opened by that reply must
    //  not see the pushes that followed it as older than itself).
    while (!self->awaited && client_transport_readable (self->transport)) {
        bool nomem = false;
        pmsg_t *msg = client_transport_recv (self->transport, true, &nomem);
        if (nomem)
            return PARLEY_ERR_NOMEM;
        if (msg)
            client_router_route (self, msg);
    }
    return PARLEY_OK;
}

parley_err_t
client_router_await (client_router_t *self, uint64_t id, int64_t until,
                     volatile sig_atomic_t *stop, pmsg_t **reply_p)
{
    assert (self && reply_p);
    *reply_p = NULL;
    pmsg_destroy (&self->awaited);
    self->awaiting = true;
    self->awaited_id = id;
    parley_err_t rc = PARLEY_ERR_STOPPED;
    while (!(stop && *stop)) {
        rc = client_router_drain (self);
        if (rc != PARLEY_OK || self->awaited)
            break;
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0 || !client_transport_is_open (self->transport)) {
            rc = PARLEY_ERR_TIMEOUT;
            break;
        }
        client_transport_poll (self->transport, true, false, false,
                               left < CLIENT_ROUTER_SLICE_MS ? left : CLIENT_ROUTER_SLICE_MS);
        rc = PARLEY_ERR_STOPPED;
    }
    self->awaiting = false;
    if (self->awaited) {
        *reply_p = self->awaited;
        self->awaited = NULL;
        return PARLEY_OK;
    }
    return rc;
}

uint64_t
client_router_dropped (const client_router_t *self)
{
    assert (self);
    return self->dropped;
}
