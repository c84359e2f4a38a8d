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
*/
#include "broker_internal.h"
#include "plog.h"

static void
s_reply (broker_t *self, request_t *req, perr_t err, const world_obs_t *obs,
         const char *why, uint64_t before, const uint64_t *step)
{
    if (err) {
        dispatch_error (self, req->id, err, "%s", why [0] ? why : "the world refused");
        return;
    }
    publish_state_changes (self, before);
    if (obs->completed)
        publish_world_event (self, "explored");
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
    if (broker_no_world (self, req))
        return;
    char why [256] = "";
    world_obs_t obs;
    uint64_t before = state_seq (self->state);
    perr_t err = world_perceive (self->world, req->agent->id, &obs, why, sizeof why);
    s_reply (self, req, err, &obs, why, before, NULL);
}

void
handle_act (broker_t *self, request_t *req)
{
    if (broker_no_world (self, req))
        return;
    char why [256] = "";
    world_obs_t obs;
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
    uint64_t before = state_seq (self->state);
    perr_t err = world_act (self->world, agent->id, action, len, &obs, why, sizeof why);
    if (err == PERR_NONE) {
        agent->acts++;
        if (step_field)
            agent->step = step;
    }
    s_reply (self, req, err, &obs, why, before, step_field ? &step : NULL);
}
