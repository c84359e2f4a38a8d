// SPDX-License-Identifier: MIT
/*  agent_turn - one workflow turn decided by the model, to its end.

    ask the model ─▶ answer ─▶ HANDOVER ─▶ accepted: the turn is over
        ▲              │            │
        │        refused here   refused by the broker
        │              └─────┬──────┘
        └── told to the model (correction N of M), while N <= M
                             │ N > M
                             ▼
               the scenario's fallback (workflow.fallback)

    Refusals are the model's mistakes: its answer is sent back with the
    sentence that refused it (policy_workflow_llm.h), at most
    workflow.corrections times (default 3). Then the turn goes where the
    scenario says, once per agent (a second fallback fails the run, so
    a model that never corrects cannot keep a run going round):

        fail    the run fails, with the reason
        entry   the entry role gets the turn, with the reason written to
                workflow.fallback_note (the entry role itself fails
                instead: giving the turn back to the same model loops)
        ROLE    a human role gets the turn (the run pauses for a person),
                with the reason in the note when there is one

    No answer at all (the server cannot be reached, refuses the request,
    or answers something that is not a chat completion) is not a
    refusal: nothing is told to the model, no correction is spent, and
    nothing is handed over. The agent holds the turn and asks again after
    a pause (1 s, doubling up to --llm-breaker-ms), logging the outage
    once and the model's return once. Only the scenario's turn timeout,
    or a stop signal, takes such a turn away.
*/
#include <stdio.h>
#include <string.h>

#include "agent_workflow_int.h"
#include "pclock.h"
#include "plog.h"

#define S_FIRST_PAUSE_MS 1000
#define S_DEFAULT_MAX_PAUSE_MS 30000

void
agent_turn_report (workflow_agent_t *self)
{
    if (!self->llm || parley_client_stopped (self->link))
        return;
    llm_totals_t t;
    llm_totals (self->llm, &t);
    uint64_t report [PARLEY_MODEL_FIELDS] = {
        [PARLEY_MODEL_CALLS] = t.calls, [PARLEY_MODEL_OK] = t.ok,
        [PARLEY_MODEL_FAILED] = t.failed, [PARLEY_MODEL_SKIPPED] = self->waits,
        [PARLEY_MODEL_RETRIES] = t.retries, [PARLEY_MODEL_PROMPT_TOKENS] = t.prompt_tokens,
        [PARLEY_MODEL_COMPLETION_TOKENS] = t.completion_tokens,
        [PARLEY_MODEL_LATENCY_MS] = (uint64_t) (t.latency_us / 1000),
        [PARLEY_MODEL_LATENCY_MAX_MS] = (uint64_t) (t.latency_max_us / 1000)
    };
    parley_client_set_report (self->link, report, PARLEY_MODEL_FIELDS);
    if (parley_client_heartbeat (self->link) != PARLEY_OK)
        plog_debug ("model report not sent: %s", parley_client_error_text (self->link));
}

//  True while the turn is still ours (the run goes on, we hold it).
static bool
s_still_ours (workflow_agent_t *self)
{
    parley_workflow_t *info = NULL;
    if (parley_client_workflow (self->link, &info) != PARLEY_OK)
        return true;            //  the broker will tell us later; keep the turn
    parley_wf_status_t status = parley_workflow_status (info);
    bool ours = status != PARLEY_WF_DONE && status != PARLEY_WF_FAILED
             && strcmp (parley_workflow_holder (info), self->config->role->name) == 0
             && strcmp (parley_workflow_agent (info), self->config->id) == 0;
    parley_workflow_destroy (&info);
    return ours;
}

//  Waits `ms` holding the turn (heartbeats go on); false when the turn
//  was taken, the run ended or a stop signal came.
static bool
s_pause (workflow_agent_t *self, int64_t ms)
{
    int64_t until = pclock_mono_ms () + ms;
    while (!*self->config->stop) {
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0)
            return s_still_ours (self);
        parley_client_wait (self->link, left < 250 ? left : 250);
        bool woken = false;
        while (parley_client_workflow_event (self->link, &self->event))
            woken = true;
        if (woken && !s_still_ours (self))
            return false;
    }
    return false;
}

//  A refusal caused by the answer itself (told to the model), rather
//  than by the broker's state or our session.
static bool
s_model_refused (parley_err_t rc)
{
    switch (rc) {
        case PARLEY_ERR_TOO_LARGE: case PARLEY_ERR_BAD_FIELD: case PARLEY_ERR_BAD_NAME:
        case PARLEY_ERR_RESERVED_NAME: case PARLEY_ERR_BAD_REDUCER:
        case PARLEY_ERR_REDUCER_MISMATCH: case PARLEY_ERR_REDUCER_CONFLICT:
        case PARLEY_ERR_STATE_FULL: case PARLEY_ERR_NO_SUCH_KEY: case PARLEY_ERR_INVALID:
            return true;
        default:
            return false;
    }
}

//  The reason as the note's value for the key's reducer.
static json_t *
s_note_ops (const scenario_t *scenario, const char *reason)
{
    const char *key = scenario ? scenario->workflow.fallback_note : NULL;
    if (!key)
        return json_array ();
    const scenario_key_t *declared = scenario_key (scenario, key);
    bool list = declared && strcmp (declared->reducer, "replace") != 0;
    json_t *value = list ? json_pack ("[s]", reason) : json_string (reason);
    return json_pack ("[{s:s, s:s, s:o}]", "op", "update", "key", key, "value", value);
}

//  The turn after its corrections are spent: the scenario's fallback.
static void
s_fallback (workflow_agent_t *self, const parley_workflow_t *info, const char *why)
{
    const agent_workflow_config_t *config = self->config;
    const scenario_t *scenario = config->scenario;
    const scenario_workflow_t *flow = scenario ? &scenario->workflow : NULL;
    scenario_fallback_t kind = flow ? flow->fallback : SCENARIO_FALLBACK_FAIL;
    const char *target = kind == SCENARIO_FALLBACK_ENTRY ? flow->entry
                       : kind == SCENARIO_FALLBACK_HUMAN ? flow->fallback_role : NULL;
    char reason [900];
    int len = snprintf (reason, sizeof reason, "%s (%s): the model's answer was refused %u "
                        "times: %.600s", config->role->name, config->id,
                        wfllm_refusals (self->model), why);
    if (target && strcmp (target, config->role->name) == 0) {
        snprintf (reason + len, sizeof reason - (size_t) len, "; the fallback is this role "
                  "itself, so the run fails rather than loop");
        target = NULL;
    }
    else
    if (target && self->fallbacks > 0) {
        snprintf (reason + len, sizeof reason - (size_t) len, "; this agent fell back once "
                  "already, so the run fails rather than loop");
        target = NULL;
    }
    self->fallbacks++;
    json_t *ops = target ? s_note_ops (scenario, reason) : json_array ();
    scene_turn_t turn = { .ops = ops };
    snprintf (turn.next, sizeof turn.next, "%s", target ? target : "");
    snprintf (turn.status, sizeof turn.status, "%s", target ? "in_progress" : "failed");
    parley_handover_t *handover = parley_handover_new ();
    char err [512];
    if (handover && !workflow_handover_of (&turn, handover, err, sizeof err)) {
        parley_handover_reset (handover);
        parley_handover_set_status (handover, PARLEY_WF_FAILED);
    }
    if (handover)
        parley_handover_set_reason (handover, reason);
    plog_warn ("turn %llu: %s; %s", (unsigned long long) parley_workflow_turn (info), reason,
               target ? "the scenario's fallback takes the turn" : "the run fails");
    parley_workflow_t *reply = NULL;
    parley_err_t rc = handover ? parley_client_handover (self->link, handover, &reply)
                               : PARLEY_ERR_NOMEM;
    if (rc != PARLEY_OK && target && handover) {
        //  The fallback itself refused (a scenario the checks let through):
        //  the run still must not stall.
        plog_error ("the fallback hand-over was refused (%s: %s); the run fails",
                    parley_strerror (rc), parley_client_error_text (self->link));
        parley_handover_reset (handover);
        parley_handover_set_status (handover, PARLEY_WF_FAILED);
        parley_handover_set_reason (handover, reason);
        rc = parley_client_handover (self->link, handover, &reply);
    }
    if (rc == PARLEY_OK)
        workflow_progress (self, info, "the model's answers were refused (fallback)", reply);
    else
        plog_error ("HANDOVER refused: %s: %s", parley_strerror (rc),
                    handover ? parley_client_error_text (self->link) : "out of memory");
    parley_workflow_destroy (&reply);
    parley_handover_destroy (&handover);
    json_decref (ops);
}

//  One answer handed over: 1 when the turn is over (accepted, or no longer
//  ours), 0 when the broker refused it for the model to correct (`why`).
static int
s_hand_over (workflow_agent_t *self, const parley_workflow_t *info, scene_turn_t *turn,
             char *why, size_t why_size)
{
    parley_handover_t *handover = parley_handover_new ();
    char err [512];
    if (!handover) {
        plog_warn ("HANDOVER not made: out of memory");
        return 1;               //  the loop looks at the workflow again
    }
    if (!workflow_handover_of (turn, handover, err, sizeof err)) {
        snprintf (why, why_size, "%s", err);
        parley_handover_destroy (&handover);
        return 0;
    }
    parley_workflow_t *reply = NULL;
    parley_err_t rc = parley_client_handover (self->link, handover, &reply);
    parley_handover_destroy (&handover);
    if (rc == PARLEY_OK) {
        workflow_progress (self, info, turn->summary, reply);
        parley_workflow_destroy (&reply);
        return 1;
    }
    const char *text = parley_client_error_text (self->link);
    if (s_model_refused (rc)) {
        //  The client's text already starts with the code's name, mostly.
        const char *code = parley_strerror (rc);
        bool named = strncmp (text, code, strlen (code)) == 0;
        snprintf (why, why_size, "HANDOVER refused: %s%s%.800s", named ? "" : code,
                  named ? "" : ": ", text);
        return 0;
    }
    //  Not the answer's fault (the turn was taken, the run ended, the
    //  broker is away): the loop looks at the workflow again.
    plog_warn ("HANDOVER not made: %s: %s", parley_strerror (rc), text);
    return 1;
}

void
agent_turn_model (workflow_agent_t *self, const parley_workflow_t *info)
{
    const agent_workflow_config_t *config = self->config;
    char err [1024] = "";
    json_t *state = workflow_read_state (self, info, err, sizeof err);
    if (!state) {
        plog_warn ("turn %llu: %s; trying again", (unsigned long long) parley_workflow_turn (info), err);
        return;
    }
    wfllm_begin (self->model, state);
    json_decref (state);
    const scenario_t *scenario = config->scenario;
    unsigned corrections = scenario && scenario->workflow.enabled
                         ? scenario->workflow.corrections : 3;
    int64_t max_pause = config->llm_breaker_ms > 0 ? config->llm_breaker_ms
                                                   : S_DEFAULT_MAX_PAUSE_MS;
    int64_t pause = S_FIRST_PAUSE_MS;
    bool away = false;
    while (!*config->stop) {
        scene_turn_t turn = { 0 };
        wfllm_outcome_t outcome = wfllm_ask (self->model, &turn, err, sizeof err);
        agent_turn_report (self);
        if (outcome == WFLLM_NO_ANSWER) {
            if (*config->stop)
                break;
            llm_result_t result = llm_last_call (self->llm)->result;
            if (!away)
                plog_warn ("turn %llu: the model gave no answer (%s: %s); holding the turn "
                           "and asking again (without the model this agent never hands "
                           "over)", (unsigned long long) parley_workflow_turn (info), llm_result_name (result),
                           err);
            else
                plog_debug ("the model still gives no answer (%s)", err);
            away = true;
            self->waits++;
            if (!s_pause (self, pause))
                break;
            pause = pause * 2 < max_pause ? pause * 2 : max_pause;
            continue;
        }
        if (away)
            plog_info ("turn %llu: the model answers again", (unsigned long long) parley_workflow_turn (info));
        away = false;
        pause = S_FIRST_PAUSE_MS;
        int done = 0;
        if (outcome == WFLLM_TURN) {
            done = s_hand_over (self, info, &turn, err, sizeof err);
            if (!done)
                wfllm_refused (self->model, err);
        }
        json_decref (turn.ops);
        if (done)
            break;
        unsigned refusals = wfllm_refusals (self->model);
        if (refusals > corrections) {
            plog_info ("turn %llu: answer refused, the %u corrections spent: %s",
                       (unsigned long long) parley_workflow_turn (info), corrections, err);
            s_fallback (self, info, err);
            break;
        }
        self->corrections++;
        plog_info ("turn %llu: answer refused; correction %u of %u asked: %s",
                   (unsigned long long) parley_workflow_turn (info), refusals, corrections, err);
    }
}
