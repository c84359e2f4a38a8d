// SPDX-License-Identifier: MIT
/*  PERCEIVE and ACT -> OBSERVATION: the exploration world (world.c).

    The agent is the connection's HELLO identity: nobody can move another
    agent. World calls write world.* state keys in one batch; those changes
    are published like any WRITE. The step that explores the last object
    also publishes WORLD_EVENT "explored" (once: later steps find nothing
    new, so `completed` is not set again until a reset).

    Idempotent ACT: an ACT with `step` equal to the step of the agent's
    last ACT is a retry (its reply was lost, or the agent restarted): it
    gets the very same OBSERVATION again, the world untouched. The stored
    answer is the encoded fields (a few hundred bytes an agent), kept
    across reconnects, dropped by a step-less ACT and by WORLD_RESET.
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
    char why [256] = "";
    uint64_t before = state_seq (self->state);
    perr_t err = action
               ? world_act (self->world, req->agent->id, action, action_len, obs, why, sizeof why)
               : world_perceive (self->world, req->agent->id, obs, why, sizeof why);
    if (err) {
        dispatch_error (self, req->id, err, "%s", why [0] ? why : "the world refused");
        return false;
    }
    if (action) {
        req->agent->acts++;
        if (step)
            req->agent->step = *step;
    }
    publish_state_changes (self, before);
    if (obs->completed)
        publish_world_event (self, "explored");
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
    if (step && !replay_keep (&req->agent->act_replay, *step, &self->reply, head,
                              fields))
        plog_warn ("no memory to keep ACT step %llu of %s: a retry would move again",
                   (unsigned long long) *step, req->agent->id);
}

void
handle_perceive (broker_t *self, request_t *req)
{
    world_obs_t obs;
    if (world_step (self, req, NULL, 0, NULL, &obs))
        s_reply (self, req, &obs, NULL);
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
    &&  replay_answer (&agent->act_replay, step, PMSG_OBSERVATION, req->id, &self->reply))
        return;                 //  a retry: the same answer, no second move
    if (!step_field)
        replay_forget (&agent->act_replay);
    world_obs_t obs;
    if (world_step (self, req, action, len, step_field ? &step : NULL, &obs))
        s_reply (self, req, &obs, step_field ? &step : NULL);
}
