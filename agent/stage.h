// SPDX-License-Identifier: MIT
/*  stage - the outcomes of the agent's six stages and the one retry and
    fallback rule they all follow.

    A step (agent_step.h) is six stage calls in a fixed order:

        Perception -> RetrieveMemory -> Communication -> Decision
                   -> Execution -> UpdateMemory

    Each returns a stage_outcome_t. A stage that can fail does its work
    through stage_attempt(): the work is tried 1 + stage_max_retries(id)
    times (a try answers STAGE_OK or STAGE_RETRY; a retry starts clean, so
    a try touches only what it produces); when every try failed, the
    stage's fallback is called once and answers STAGE_FALLBACK (the step
    goes on with a degraded result) or STAGE_FAILED (the run ends).

    The retries per stage are the agent's: Perception 2 (an agent that
    stops whenever the broker hiccups is worse than one acting on a
    step-old view), RetrieveMemory 1, Communication 1, Decision 1 (the
    retry tells the model what was wrong), Execution 0 (ACT is already
    resent by the client), UpdateMemory 1.

    Counts are kept per stage when the caller gives a stats array, so tests
    and logs see what happened without timing anything.
*/
#ifndef PARLEY_STAGE_H
#define PARLEY_STAGE_H

#include <stdint.h>

//  What a stage (or one try of its work) ended in.
typedef enum {
    STAGE_OK = 0,           //  done; the step goes on
    STAGE_RETRY,            //  this try failed; try again (stage_attempt only)
    STAGE_FALLBACK,         //  every try failed; the fallback's result is used
    STAGE_END,              //  the run is over (UpdateMemory: end, limits)
    STAGE_STOP,             //  a stop signal arrived before the stage
    STAGE_FAILED            //  the work and its fallback failed: the run ends
} stage_outcome_t;

//  The stages, in the order a step runs them.
typedef enum {
    STAGE_PERCEPTION = 0,
    STAGE_RETRIEVE_MEMORY,
    STAGE_COMMUNICATION,
    STAGE_DECISION,
    STAGE_EXECUTION,
    STAGE_UPDATE_MEMORY,
    STAGE__COUNT
} stage_id_t;

typedef struct {
    uint64_t runs;          //  times the stage was entered
    uint64_t attempts;      //  tries of its work
    uint64_t retries;       //  tries that were retries
    uint64_t fallbacks;     //  fallback calls
    uint64_t errors;        //  times it ended in STAGE_FAILED
    uint64_t last_entry;    //  the step-wide entry number of its last run
} stage_stats_t;

//  One try of a stage's work: STAGE_OK or STAGE_RETRY.
typedef stage_outcome_t (stage_try_fn) (void *arg);
//  The stage's way on when every try failed: STAGE_FALLBACK or STAGE_FAILED.
typedef stage_outcome_t (stage_fallback_fn) (void *arg);

//  "Perception", "RetrieveMemory", ... (logs and summaries).
const char *stage_name (stage_id_t id);
//  Extra tries after the first, per stage (the table above).
unsigned stage_max_retries (stage_id_t id);
//  True when the step goes on after `outcome` (STAGE_OK, STAGE_FALLBACK).
static inline int stage_went_on (stage_outcome_t outcome)
{
    return outcome == STAGE_OK || outcome == STAGE_FALLBACK;
}

//  Runs `attempt` up to 1 + stage_max_retries(id) times, then `fallback`
//  (may be NULL: STAGE_FAILED). Returns STAGE_OK, STAGE_FALLBACK or
//  STAGE_FAILED. `stats` is an array of STAGE__COUNT, or NULL.
stage_outcome_t stage_attempt (stage_id_t id, stage_stats_t *stats,
                               stage_try_fn *attempt, stage_fallback_fn *fallback, void *arg);

#endif
