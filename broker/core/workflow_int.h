// SPDX-License-Identifier: MIT
/*  workflow_int - the workflow record, shared by workflow_core.c and
    workflow_resume.c (not a public API).
*/
#ifndef PARLEY_CORE_WORKFLOW_INT_H
#define PARLEY_CORE_WORKFLOW_INT_H

#include "workflow_core.h"

struct _workflow_t {
    const scenario_t *scenario;
    const scenario_workflow_t *flow;
    wf_status_t status;
    const role_t *holder;               //  the role holding the turn; NULL once ended
    uint64_t turn;                      //  turns started
    uint64_t revisions;
    uint32_t max_turns, max_revisions;  //  the limits in force (core_limits_t)
    size_t retain;                      //  checkpoints kept
    uint64_t restore_next;              //  while restoring a snapshot
    uint64_t restore_dropped;
    char reason [256];
    checkpoints_t *checkpoints;
    uint64_t checkpoint;                //  the latest checkpoint's number
};

//  Records a checkpoint of the state and the fields now (aborts on out of
//  memory: the live run and its replay must not differ).
void workflow_checkpoint (workflow_t *self, state_t *state);

#endif
