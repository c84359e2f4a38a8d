// SPDX-License-Identifier: MIT
/*  WORLD_RESET -> OK: forget positions and exploration and draw the world
    again (from `seed`, else the world's own seed; a world loaded from a
    file keeps its objects). Publishes the rewritten world.* keys and then
    WORLD_EVENT "reset". It wipes everyone's progress, so with CURVE only a
    key with the admin right may ask (rights.h); in plain mode anyone may.
    The seed it used is in its operation (OP_WORLD_RESET), so a replay
    draws the same world whatever --seed the restarted broker has. */
#include "broker_internal.h"
#include "plog.h"

void
handle_world_reset (broker_t *self, request_t *req)
{
    if (broker_no_world (self, req))
        return;
    uint64_t seed = pmsg_uint (req->msg, "seed", world_seed (self->world));
    call_begin (self, req->agent->id, req->msg, req->frame, req->frame_size, 0);
    op_t op = { .kind = OP_WORLD_RESET, .has_u2 = true, .u2 = seed };
    core_outcome_t out;
    perr_t err = call_apply (self, &op, &out);
    call_end (self);
    if (err) {
        dispatch_error (self, req->id, err, "%s", out.why);
        return;
    }
    plog_info ("world reset by %s (seed %llu)", req->agent->id, (unsigned long long) seed);
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
