// SPDX-License-Identifier: MIT
/*  agent_workflow - the turn loop of a role in a workflow. See
    agent_workflow.h.

    Every request goes through libparley (parley_client_workflow, _get,
    _handover). Waiting is on the WORKFLOW_EVENT subscription
    (parley_client_workflow_events): the broker is asked for the WORKFLOW
    only when an event arrives, once after subscribing (an event published
    before the SUB joined is not lost that way), and as a slow safety net
    every S_RECHECK_MS in case an event was dropped by the PUB high-water
    mark. parley_client_wait sends the HEARTBEATs meanwhile.
*/
#include "agent_workflow_int.h"

#include <jansson.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "jsonops.h"
#include "llm.h"
#include "mpjs.h"
#include "parley/client.h"
#include "pclock.h"
#include "pconfig.h"
#include "plog.h"
#include "policy_scene.h"
#include "policy_workflow_llm.h"

#define S_RECHECK_MS 5000

json_t *
workflow_read_state (workflow_agent_t *self, const parley_workflow_t *info, char *err,
                     size_t err_size)
{
    const role_t *role = self->config->role;
    json_t *state = json_object ();
    if (role->read_count) {
        parley_state_t *got = NULL;
        parley_err_t rc = parley_client_get (self->link, (const char *const *) role->reads,
                                             role->read_count, &got);
        if (rc != PARLEY_OK) {
            snprintf (err, err_size, "GET refused: %s: %.200s", parley_strerror (rc),
                      parley_client_error_text (self->link));
            json_decref (state);
            return NULL;
        }
        for (size_t i = 0; i < parley_state_count (got); i++) {
            const parley_entry_t *entry = parley_state_at (got, i);
            json_t *value = parley_entry_value (entry)
                          ? mpjs_decode (parley_entry_value (entry),
                                         parley_entry_value_size (entry))
                          : NULL;
            json_object_set_new (state, parley_entry_key (entry), value ? value : json_null ());
        }
        parley_state_destroy (&got);
    }
    json_object_set_new (state, "workflow_status",
                         json_string (parley_workflow_status_name (info)));
    json_object_set_new (state, "iteration_count",
                         json_integer ((json_int_t) parley_workflow_revisions (info)));
    return state;
}

void
workflow_progress (workflow_agent_t *self, const parley_workflow_t *info, const char *summary,
                   const parley_workflow_t *reply)
{
    self->turns++;
    FILE *out = self->config->progress;
    if (!out)
        return;
    const char *holder = parley_workflow_holder (reply);
    fprintf (out, "[%s] turn %llu: %s -> %s (%s)\n", self->config->id,
             (unsigned long long) parley_workflow_turn (info), summary,
             *holder ? holder : "end", parley_workflow_status_name (reply));
    fflush (out);
}

bool
workflow_handover_of (const scene_turn_t *turn, parley_handover_t *handover, char *err,
                      size_t err_size)
{
    parley_handover_reset (handover);
    jsonops_t *ops = jsonops_new (turn->ops, err, err_size);
    if (!ops)
        return false;
    parley_wf_status_t status = parley_wf_status_parse (turn->status);
    if (turn->status [0] && status == PARLEY_WF_UNSET) {
        snprintf (err, err_size, "status \"%s\" is not in_progress, revision, done or failed",
                  turn->status);
        jsonops_destroy (&ops);
        return false;
    }
    parley_err_t rc = jsonops_fill (ops, parley_handover_ops (handover));
    jsonops_destroy (&ops);
    if (rc == PARLEY_OK)
        rc = parley_handover_set_next (handover, turn->next [0] ? turn->next : NULL);
    if (rc == PARLEY_OK)
        rc = parley_handover_set_status (handover, status);
    if (rc != PARLEY_OK)
        snprintf (err, err_size, "the turn's hand-over: %s", parley_strerror (rc));
    return rc == PARLEY_OK;
}

//  One turn of a built-in policy: read, decide, hand over. Its turns are
//  deterministic, so one that cannot be decided ends the run with the
//  reason rather than leaving it stalled.
static void
s_builtin_turn (workflow_agent_t *self, const parley_workflow_t *info)
{
    const agent_workflow_config_t *config = self->config;
    char err [512] = "";
    scene_turn_t turn = { 0 };
    parley_handover_t *handover = parley_handover_new ();
    if (!handover) {
        plog_error ("out of memory: the turn waits for the next look");
        return;
    }
    json_t *state = workflow_read_state (self, info, err, sizeof err);
    scene_input_t input = { .state = state, .role = config->role, .catalogue = self->catalogue };
    int rc = state ? scene_decide (config->policy, &input, &turn, err, sizeof err) : -1;
    json_decref (state);
    if (rc == 0 && !workflow_handover_of (&turn, handover, err, sizeof err))
        rc = -1;
    char reason [700];
    if (rc) {
        snprintf (reason, sizeof reason, "%s (%s) could not take its turn: %s",
                  config->role->name, config->id, err);
        plog_error ("%s", reason);
        parley_handover_reset (handover);
        parley_handover_set_status (handover, PARLEY_WF_FAILED);
        parley_handover_set_reason (handover, reason);
    }
    parley_workflow_t *reply = NULL;
    parley_err_t sent = parley_client_handover (self->link, handover, &reply);
    if (sent == PARLEY_OK)
        workflow_progress (self, info, rc ? "gave up" : turn.summary, reply);
    else
        plog_error ("HANDOVER refused: %s: %s", parley_strerror (sent),
                    parley_client_error_text (self->link));
    parley_workflow_destroy (&reply);
    parley_handover_destroy (&handover);
    json_decref (turn.ops);
}

//  Looks at the workflow: plays a turn that is ours; 1 when the run ended
//  (*exit_code set), 0 to keep waiting.
static int
s_check (workflow_agent_t *self, int *exit_code)
{
    parley_workflow_t *info = NULL;
    if (parley_client_workflow (self->link, &info) != PARLEY_OK)
        return 0;
    int ended = 0;
    parley_wf_status_t status = parley_workflow_status (info);
    if (status == PARLEY_WF_DONE || status == PARLEY_WF_FAILED) {
        const char *reason = parley_workflow_reason (info);
        plog_info ("workflow %s after %llu turns (%llu mine)%s%s",
                   parley_workflow_status_name (info),
                   (unsigned long long) parley_workflow_turn (info),
                   (unsigned long long) self->turns, *reason ? ": " : "", reason);
        *exit_code = status == PARLEY_WF_DONE ? PARLEY_EXIT_OK : PARLEY_EXIT_FAILURE;
        ended = 1;
    }
    else
    if (strcmp (parley_workflow_holder (info), self->config->role->name) == 0
    &&  strcmp (parley_workflow_agent (info), self->config->id) == 0) {
        if (self->model)
            agent_turn_model (self, info);
        else
            s_builtin_turn (self, info);
    }
    parley_workflow_destroy (&info);
    return ended;
}

static int
s_loop (workflow_agent_t *self)
{
    int exit_code = PARLEY_EXIT_OK;
    int64_t recheck = pclock_mono_ms () + S_RECHECK_MS;
    bool wake = true;
    while (!*self->config->stop) {
        if (wake || pclock_mono_ms () >= recheck) {
            if (s_check (self, &exit_code))
                return exit_code;
            recheck = pclock_mono_ms () + S_RECHECK_MS;
        }
        parley_client_wait (self->link, 250);
        //  Every queued event is taken: one look at the workflow covers them.
        wake = false;
        while (parley_client_workflow_event (self->link, &self->event))
            wake = true;
    }
    return PARLEY_EXIT_OK;
}

//  The run's model figures, as the exploring agent's MODEL line.
static void
s_summary (workflow_agent_t *self)
{
    FILE *out = self->config->progress;
    if (!out)
        return;
    llm_totals_t t, probe;
    llm_totals (self->llm, &t);
    llm_probe_totals (self->llm, &probe);
    fprintf (out, "[%s] MODEL calls=%llu ok=%llu failed=%llu retries=%llu prompt_tokens=%llu "
             "completion_tokens=%llu latency_ms_mean=%.1f latency_ms_max=%.1f turns=%llu "
             "corrections=%llu fallbacks=%llu waits=%llu mode=%s probe_calls=%llu\n",
             self->config->id, (unsigned long long) t.calls, (unsigned long long) t.ok,
             (unsigned long long) t.failed, (unsigned long long) t.retries,
             (unsigned long long) t.prompt_tokens, (unsigned long long) t.completion_tokens,
             t.calls ? t.latency_us / 1000.0 / (double) t.calls : 0.0,
             t.latency_max_us / 1000.0, (unsigned long long) self->turns,
             (unsigned long long) self->corrections, (unsigned long long) self->fallbacks,
             (unsigned long long) self->waits, llm_mode_name (wfllm_mode (self->model)),
             (unsigned long long) probe.calls);
    fflush (out);
}

static void
s_keepalive (void *arg)
{
    parley_client_keepalive (arg);
}

static int
s_setup (workflow_agent_t *self, char *err, size_t err_size)
{
    const agent_workflow_config_t *config = self->config;
    char *dir = strdup (config->role->path);
    snprintf (self->catalogue, sizeof self->catalogue, "%s/../catalogue.json",
              dir ? dirname (dir) : ".");
    free (dir);
    if (config->policy == ROLE_POLICY_LLM) {
        llm_options_t options;
        llm_options_default (&options);
        options.url = config->llm_url;
        options.model = config->llm_model;
        options.max_tokens = 2048;
        if (config->llm_timeout_ms > 0)
            options.http.timeout_ms = config->llm_timeout_ms;
        //  Heartbeats go on while the model thinks.
        options.http.tick = s_keepalive;
        options.http.tick_arg = self->link;
        self->llm = llm_new (&options, err, err_size);
        if (!self->llm)
            return -1;
        const scenario_t *scenario = config->scenario;
        unsigned corrections = scenario && scenario->workflow.enabled
                             ? scenario->workflow.corrections : 3;
        self->model = wfllm_new (self->llm, config->llm_mode, config->role, scenario,
                                 corrections);
        if (!self->model) {
            snprintf (err, err_size, "out of memory");
            return -1;
        }
    }
    parley_client_workflow_events (self->link, true);
    return 0;
}

int
agent_workflow_run (const agent_workflow_config_t *config)
{
    workflow_agent_t self = { .config = config };
    char cap [80], err [512] = "";
    //  main's SIGINT/SIGTERM handlers raise config->stop. czmq was set up
    //  before them (main's key probe made the first socket), so it will not
    //  install its own; zsys_handler_set (NULL) here would put back the
    //  defaults it saved then, and SIGTERM would kill us mid-turn.
    snprintf (cap, sizeof cap, "role:%s", config->role->name);
    self.link = parley_client_new (config->broker, config->id);
    if (!self.link)
        return PARLEY_EXIT_FAILURE;
    parley_client_add_cap (self.link, cap);
    parley_client_set_stop (self.link, config->stop);
    parley_client_set_timeout (self.link, config->request_timeout_ms, 2000);
    int rc = PARLEY_EXIT_OK;
    //  The key files were checked when the configuration was read.
    if (parley_client_set_security (self.link, config->curve_key, config->curve_server_key,
                                    config->token_file) != PARLEY_OK) {
        plog_error ("%s", parley_client_error_text (self.link));
        rc = PARLEY_EXIT_USAGE;
        goto done;
    }
    parley_err_t connected = parley_client_connect (self.link);
    if (connected != PARLEY_OK) {
        if (!*config->stop)
            plog_error ("broker refused us: %s: %s", parley_strerror (connected),
                        parley_client_error_text (self.link));
        rc = *config->stop ? PARLEY_EXIT_OK : PARLEY_EXIT_NETWORK;
        goto done;
    }
    parley_workflow_t *info = NULL;
    parley_err_t asked = parley_client_workflow (self.link, &info);
    parley_workflow_destroy (&info);
    if (asked == PARLEY_ERR_NO_WORKFLOW) {
        parley_client_bye (self.link, false);
        rc = AGENT_WORKFLOW_NONE;
        goto done;
    }
    if (s_setup (&self, err, sizeof err)) {
        plog_error ("%s", err);
        rc = PARLEY_EXIT_USAGE;
    }
    else {
        plog_info ("playing role %s (policy %s%s%s)", config->role->name,
                   role_policy_name (config->policy), self.model ? ", answers: " : "",
                   self.model ? llm_mode_name (config->llm_mode) : "");
        rc = s_loop (&self);
    }
    if (self.model) {
        agent_turn_report (&self);
        s_summary (&self);
    }
    parley_client_bye (self.link, false);
done:
    parley_wf_event_destroy (&self.event);
    wfllm_destroy (&self.model);
    llm_destroy (&self.llm);
    parley_client_destroy (&self.link);
    return rc;
}
