// SPDX-License-Identifier: MIT
/*  WORLD_RESET -> OK: forget positions and exploration and draw the world
    again (from `seed`, else the broker's --seed; a world loaded from a file
    keeps its objects). Publishes the rewritten world.* keys and then
    WORLD_EVENT "reset". It wipes everyone's progress, so with CURVE only a
    key with the admin right may ask (UNAUTHORIZED otherwise); in plain
    mode anyone may. */
#include "broker_internal.h"
#include "pcurve.h"
#include "plog.h"

void
handle_world_reset (broker_t *self, request_t *req)
{
    if (!dispatch_may (self, req, PCURVE_RIGHT_ADMIN, "WORLD_RESET"))
        return;
    if (broker_no_world (self, req))
        return;
    char why [256] = "";
    uint64_t before = state_seq (self->state);
    const msgpack_object *seed_field = pmsg_field (req->msg, "seed");
    uint64_t seed = pmsg_uint (req->msg, "seed", self->config.seed);
    perr_t err = world_reset (self->world, seed_field ? &seed : NULL, why, sizeof why);
    if (err) {
        dispatch_error (self, req->id, err, "%s", why [0] ? why : "the world could not be reset");
        return;
    }
    //  Remembered ACT answers describe the old world: a retry after a
    //  reset moves in the new one.
    for (size_t i = 0; i < agents_size (self->agents); i++)
        replay_forget (&agents_at (self->agents, i)->act_replay);
    plog_info ("world reset by %s (seed %llu)", req->agent->id, (unsigned long long) seed);
    publish_state_changes (self, before);
    publish_world_event (self, "reset");
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
