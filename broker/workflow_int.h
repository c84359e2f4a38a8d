// SPDX-License-Identifier: MIT
/*  workflow_int - what the workflow's own files share (not a public API):
    the workflow record and the steps workflow.c, workflow_batch.c and
    workflow_resume.c call in each other.
*/
#ifndef PARLEY_BROKER_WORKFLOW_INT_H
#define PARLEY_BROKER_WORKFLOW_INT_H

#include "workflow.h"

//  The HELLO capability that names an agent's role: "role:critic".
#define WORKFLOW_ROLE_CAP "role:"

struct _workflow_t {
    const scenario_t *scenario;
    const scenario_workflow_t *flow;
    wf_status_t status;
    const role_t *holder;               //  the role holding the turn; NULL once ended
    char agent [PROTO_MAX_NAME + 1];    //  the agent acting for it; "" for none
    uint64_t turn;                      //  turns started
    uint64_t revisions;
    int64_t turn_started_ms;            //  monotonic, for the turn timeout
    char reason [256];
    checkpoints_t *checkpoints;
    uint64_t checkpoint;                //  the latest checkpoint's number
};

bool workflow_ended (const workflow_t *self);
bool workflow_is_key (const workflow_t *self, const char *key, size_t len);
//  Packs 4 "set" write_ops for the workflow keys (no array header).
void workflow_pack_keys (const workflow_t *self, msgpack_packer *packer);
//  Applies a packed array of write_ops as one batch (state_apply).
perr_t workflow_apply_packed (broker_t *broker, const void *data, size_t size,
                              state_result_t *result, char *why, size_t why_size);
void workflow_checkpoint (broker_t *broker);
void workflow_publish (broker_t *broker, const char *event);
void workflow_fail (broker_t *broker, const char *reason);
//  Picks an online agent of the holding role (not `except`) if none acts
//  for it, and publishes turn/paused.
void workflow_assign (broker_t *broker, const char *except);

#endif
