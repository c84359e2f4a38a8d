// SPDX-License-Identifier: MIT
/*  agent_step - one step of the agent, readable in one place.

        Perception -> RetrieveMemory -> Communication -> Decision
                   -> Execution -> UpdateMemory

    agent_step() calls the six stages (agent_state.h) in that order. Before
    each, a stop signal ends the step (STAGE_STOP) and the broker link is
    serviced. A stage that went on (STAGE_OK, STAGE_FALLBACK) leads to the
    next; STAGE_FAILED ends the step (failed_stage says which stage), and
    UpdateMemory's STAGE_END says the run is over. A step that ran to its
    end and wants another returns STAGE_OK.
*/
#ifndef PARLEY_AGENT_STEP_H
#define PARLEY_AGENT_STEP_H

#include "agent_state.h"

//  STAGE_OK (step again), STAGE_END, STAGE_STOP or STAGE_FAILED.
stage_outcome_t agent_step (agent_state_t *state);

#endif
