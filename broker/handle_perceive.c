// SPDX-License-Identifier: MIT
/*  PERCEIVE and ACT -> OBSERVATION: the exploration world (world.c).

    The agent is the connection's HELLO identity: nobody can move another
    agent. World calls write world.* state keys in one batch; those changes
    are published like any WRITE. The step that explores the last object
    also publishes WORLD_EVENT "explored" (once: later steps find nothing
    new, so `completed` is not set again until a reset).

    Idempotent ACT: an ACT with `step` equal to the step of the agent's
    last ACT is a retry (its reply was lost, the agent restarted, or the
    broker did): it gets the very same OBSERVATION again, the world
    untouched. The stored answer is the encoded fields (a few hundred bytes
    an agent), journaled with the move (OP_REMEMBER), dropped by a
    step-less ACT and by WORLD_RESET.
    STEP's action goes through world_step too.
*/
#include "broker_internal.h"
#include "plog.h"

bool
world_step (broker_t *self, request_t *req, const char *action, size_t action_len,
            const uint64_t *step, world_obs_t *obs)
{
    if (broker_no_world (self, req))
        return false;
    op_t op = { .kind = OP_MOVE, .text = action, .text_len = action_len,
                .has_u2 = step != NULL, .u2 = step ? *step : 0 };
    core_outcome_t out;
    perr_t err = call_apply (self, &op, &out);
    if (err) {
        dispatch_error (self, req->id, err, "%s", out.why);
        return false;
    }
    *obs = out.obs;
    return true;
}

//  OBSERVATION, remembered for a retry when the ACT carried a step.
static void
s_reply (broker_t *self, request_t *req, const world_obs_t *obs, const uint64_t *step)
{
    size_t fields = world_observation_fields (obs);
    penc_begin (&self->reply, PMSG_OBSERVATION, req->id, fields);
    size_t head = penc_size (&self->reply);
    world_encode_observation (obs, &self->reply);
    if (step)
        remember (self, req->agent, SLOT_ACT, true, *step, head, fields);
}

//  An image travels with an observation: room for the remembered one.
#define S_OBSERVATION_RESERVE (WORLD_IMAGE_MAX + 64 * 1024)

void
handle_perceive (broker_t *self, request_t *req)
{
    call_begin (self, req->agent->id, req->msg, req->frame, req->frame_size, 0);
    world_obs_t obs;
    if (world_step (self, req, NULL, 0, NULL, &obs))
        s_reply (self, req, &obs, NULL);
    call_end (self);
}

void
handle_act (broker_t *self, request_t *req)
{
    if (broker_no_world (self, req))
        return;
    size_t len = 0;
    agent_t *agent = req->agent;
    const char *action = pmsg_str (req->msg, "action", &len);
    if (!action) {
        dispatch_error (self, req->id, PERR_BAD_FIELD, "ACT needs an action");
        return;
    }
    const msgpack_object *step_field = pmsg_field (req->msg, "step");
    uint64_t step = pmsg_uint (req->msg, "step", 0);
    if (step_field
    &&  replay_answer (&agent->slots [SLOT_ACT], step, PMSG_OBSERVATION, req->id, &self->reply))
        return;                 //  a retry: the same answer, no second move
    call_begin (self, agent->id, req->msg, req->frame, req->frame_size,
                     step_field ? S_OBSERVATION_RESERVE : 0);
    if (!step_field)
        remember (self, agent, SLOT_ACT, false, 0, 0, 0);
    world_obs_t obs;
    if (world_step (self, req, action, len, step_field ? &step : NULL, &obs))
        s_reply (self, req, &obs, step_field ? &step : NULL);
    call_end (self);
}
