// SPDX-License-Identifier: MIT
/*  agent_step - the agent's step. See agent_step.h. */
#include <assert.h>
#include <czmq.h>
#include "agent_step.h"

//  Entering a stage: a stop signal ends the step before it; otherwise the
//  broker link is serviced (heartbeats, events) and the entry counted.
static bool
s_enter (agent_state_t *s, stage_id_t id, stage_outcome_t *outcome)
{
    agent_parts_t *p = &s->parts;
    if (p->stop && *p->stop) {
        *outcome = STAGE_STOP;
        return false;
    }
    if (p->link)
        parley_client_process (p->link);
    s->entries++;
    s->stats [id].runs++;
    s->stats [id].last_entry = s->entries;
    return true;
}

//  After a stage: true when the step goes on to the next one.
static bool
s_went_on (agent_state_t *s, stage_id_t id, stage_outcome_t result, stage_outcome_t *outcome)
{
    *outcome = result;
    if (result == STAGE_FAILED)
        s->failed_stage = id;
    return stage_went_on (result);
}

stage_outcome_t
agent_step (agent_state_t *s)
{
    assert (s);
    agent_parts_t *p = &s->parts;
    p->stats = s->stats;
    stage_outcome_t o = STAGE_OK;
    if (s_enter (s, STAGE_PERCEPTION, &o)
    &&  s_went_on (s, STAGE_PERCEPTION, stage_perception (p, &s->perceived, &s->counts), &o)
    &&  s_enter (s, STAGE_RETRIEVE_MEMORY, &o)
    &&  s_went_on (s, STAGE_RETRIEVE_MEMORY,
                   stage_retrieve_memory (p, &s->perceived, &s->recalled), &o)
    &&  s_enter (s, STAGE_COMMUNICATION, &o)
    &&  s_went_on (s, STAGE_COMMUNICATION,
                   stage_communication (p, &s->perceived, &s->decided, &s->team, &s->heard,
                                        &s->counts), &o)
    &&  s_enter (s, STAGE_DECISION, &o)
    &&  s_went_on (s, STAGE_DECISION,
                   stage_decision (p, &s->perceived, &s->recalled, &s->team, &s->decided,
                                   &s->counts), &o)
    &&  s_enter (s, STAGE_EXECUTION, &o)
    &&  s_went_on (s, STAGE_EXECUTION,
                   stage_execution (p, &s->perceived, &s->decided, &s->team, &s->counts), &o)
    &&  s_enter (s, STAGE_UPDATE_MEMORY, &o)
    &&  s_went_on (s, STAGE_UPDATE_MEMORY,
                   stage_update_memory (p, &s->perceived, &s->heard, &s->decided, &s->counts,
                                        &s->ending), &o))
        o = STAGE_OK;           //  UpdateMemory went on, with or without its fallback
    return o;
}

void
agent_state_free_records (agent_state_t *s)
{
    assert (s);
    zlistx_destroy (&s->perceived.obs);
    zhashx_destroy (&s->team.index);
    zstr_free (&s->perceived.visible_caption);
    zstr_free (&s->heard.mail_text);
    zstr_free (&s->decided.context);
    zstr_free (&s->decided.refused_answer);
    zstr_free (&s->decided.last_action);
    answer_destroy (&s->decided.answer);
}
