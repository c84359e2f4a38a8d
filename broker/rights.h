// SPDX-License-Identifier: MIT
/*  rights - what a connection's key may ask, checked in one place.

    Every request is checked here, before its handler, against the
    rights its key has NOW (auth.h reads the allowlist again when it
    changes): a key removed from the allowlist, or whose rights were
    edited, is refused from its next request on. In plain mode every
    connection has every right.

        request                                   needs
        HELLO observe, an observer's reads        tap
        WORLD_RESET, RESUME                       admin
        WRITE, STEP or HANDOVER whose ops delete  agent and admin
          or clear a key
        every other request                       agent

    HANDOVER's ops obey exactly WRITE's rule: a hand-over is no way
    around it. Refusals are ERROR UNAUTHORIZED naming the right, counted
    (STATS unauthorized) and logged a few times a second at most.
*/
#ifndef PARLEY_BROKER_RIGHTS_H
#define PARLEY_BROKER_RIGHTS_H

#include "broker_internal.h"

//  True when the request's key may ask it; otherwise the ERROR is written.
//  Always true while recovery replays old request records.
bool rights_allow (broker_t *self, request_t *req);
//  The state ops of a request (WRITE's, HANDOVER's, a STEP's part): the
//  admin right when one deletes or clears. The ERROR (or the STEP part's
//  error) is written when not.
bool rights_allow_ops (broker_t *self, request_t *req, const msgpack_object *ops);

#endif
