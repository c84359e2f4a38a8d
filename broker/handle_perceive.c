/*  PERCEIVE and ACT -> OBSERVATION: the exploration world (world.c).

    The agent is the connection's HELLO identity: nobody can move another
    agent. World calls write world.* state keys in one batch; those changes
    are published like any WRITE. The step that explores the last object
    also publishes WORLD_EVENT "explored" (once: later steps find nothing
    new, so `completed` is not set again until a reset).
*/
#include "broker_internal.h"

static void
s_reply (broker_t *self, request_t *req, perr_t err, const world_obs_t *obs,
         const char *why, uint64_t before)
{
    if (err) {
        dispatch_error (self, req->id, err, "%s", why [0] ? why : "the world refused");
        return;
    }
    publish_state_changes (self, before);
    if (obs->completed)
        publish_world_event (self, "explored");
    penc_begin (&self->reply, PMSG_OBSERVATION, req->id, WORLD_OBSERVATION_FIELDS);
    world_encode_observation (obs, &self->reply);
}

void
handle_perceive (broker_t *self, request_t *req)
{
    char why [256] = "";
    world_obs_t obs;
    uint64_t before = state_seq (self->state);
    perr_t err = world_perceive (self->world, req->agent->id, &obs, why, sizeof why);
    s_reply (self, req, err, &obs, why, before);
}

void
handle_act (broker_t *self, request_t *req)
{
    char why [256] = "";
    world_obs_t obs;
    size_t len = 0;
    const char *action = pmsg_str (req->msg, "action", &len);
    if (!action) {
        dispatch_error (self, req->id, PERR_BAD_FIELD, "ACT needs an action");
        return;
    }
    uint64_t before = state_seq (self->state);
    perr_t err = world_act (self->world, req->agent->id, action, len, &obs, why, sizeof why);
    s_reply (self, req, err, &obs, why, before);
}
