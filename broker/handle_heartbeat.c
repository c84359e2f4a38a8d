// SPDX-License-Identifier: MIT
/*  HEARTBEAT -> OK. The dispatcher already refreshed the agent's liveness
    (every request does); this request exists for agents with nothing else
    to say, and carries an agent's optional model report (model_* fields),
    which replaces the previous one and is listed by AGENTS. */
#include "broker_internal.h"

void
handle_heartbeat (broker_t *self, request_t *req)
{
    agent_t *agent = req->agent;
    uint32_t mask = 0;
    uint64_t values [AGENTS_MODEL_FIELDS];
    for (size_t i = 0; i < AGENTS_MODEL_FIELDS; i++)
        if (pmsg_field (req->msg, agents_model_fields [i])) {
            values [i] = pmsg_uint (req->msg, agents_model_fields [i], 0);
            mask |= 1u << i;
        }
    if (agent && mask) {
        memcpy (agent->model, values, sizeof values);
        agent->model_mask = mask;
    }
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
