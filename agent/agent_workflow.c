/*  agent_workflow - the turn loop of a role in a workflow. See
    agent_workflow.h.

    Waiting is on the WORKFLOW_EVENT subscription; the broker is asked for
    the WORKFLOW only when an event arrives, once after subscribing (an
    event published before the SUB joined is not lost that way), and as a
    slow safety net every S_RECHECK_MS in case an event was dropped by the
    PUB high-water mark. HEARTBEATs keep the session alive meanwhile.
*/
#include "agent_workflow.h"

#include <czmq.h>
#include <jansson.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "brokerlink.h"
#include "llm.h"
#include "mpjs.h"
#include "pclock.h"
#include "pconfig.h"
#include "plog.h"
#include "policy_scene.h"
#include "policy_workflow_llm.h"
#include "workflow_events.h"
#include "workflow_requests.h"

#define S_RECHECK_MS 5000

typedef struct {
    const agent_workflow_config_t *config;
    brokerlink_t *link;
    wfevents_t *events;
    llm_t *llm;
    char catalogue [1024];
    uint64_t turns;
} s_self_t;

//  The role's keys as one JSON object, plus workflow_status and
//  iteration_count from WORKFLOW_INFO (policies read the workflow there).
static json_t *
s_read_state (s_self_t *self, const pmsg_t *info, char *err, size_t err_size)
{
    const role_t *role = self->config->role;
    json_t *state = json_object ();
    if (role->read_count) {
        pmsg_t *reply = wfreq_get (self->link, (const char *const *) role->reads,
                                   role->read_count, err, err_size);
        if (!reply || pmsg_type (reply) != PMSG_STATE) {
            char message [PROTO_MAX_TEXT + 1];
            if (reply)
                snprintf (err, err_size, "GET refused: %.200s",
                          wfreq_str (reply, "message", message, sizeof message));
            pmsg_destroy (&reply);
            json_decref (state);
            return NULL;
        }
        const msgpack_object *entries = pmsg_field (reply, "entries");
        for (uint32_t i = 0; i < entries->via.array.size; i++) {
            const msgpack_object *entry = &entries->via.array.ptr [i];
            char key [PROTO_MAX_KEY + 1];
            static const msgpack_object nil = { .type = MSGPACK_OBJECT_NIL };
            const msgpack_object *value = pobj_get (entry, "value");
            if (pobj_strcpy (entry, "key", key, sizeof key))
                json_object_set_new (state, key, mpjs_to_json (value ? value : &nil));
        }
        pmsg_destroy (&reply);
    }
    char status [32];
    json_object_set_new (state, "workflow_status",
                         json_string (wfreq_str (info, "status", status, sizeof status)));
    json_object_set_new (state, "iteration_count", json_integer ((json_int_t) pmsg_uint (info, "revisions", 0)));
    return state;
}

static int
s_decide (s_self_t *self, json_t *state, scene_turn_t *turn, char *err, size_t err_size)
{
    const agent_workflow_config_t *config = self->config;
    if (config->policy == ROLE_POLICY_LLM)
        return wfllm_decide (self->llm, config->role, state, turn, err, err_size);
    scene_input_t input = { .state = state, .role = config->role, .catalogue = self->catalogue };
    return scene_decide (config->policy, &input, turn, err, err_size);
}

//  One turn: read, decide, hand over. A turn that cannot be decided ends
//  the run with the reason rather than leaving it stalled.
static void
s_take_turn (s_self_t *self, const pmsg_t *info)
{
    const agent_workflow_config_t *config = self->config;
    char err [512] = "";
    scene_turn_t turn = { 0 };
    json_t *state = s_read_state (self, info, err, sizeof err);
    int rc = state ? s_decide (self, state, &turn, err, sizeof err) : -1;
    json_decref (state);
    pmsg_t *reply;
    if (rc) {
        char reason [700];
        snprintf (reason, sizeof reason, "%s (%s) could not take its turn: %s",
                  config->role->name, config->id, err);
        plog_error ("%s", reason);
        reply = wfreq_handover (self->link, NULL, NULL, "failed", reason, err, sizeof err);
    }
    else
        reply = wfreq_handover (self->link, turn.ops, turn.next [0] ? turn.next : NULL,
                                turn.status [0] ? turn.status : NULL, NULL, err, sizeof err);
    if (reply && pmsg_type (reply) == PMSG_WORKFLOW_INFO) {
        self->turns++;
        char next [80], status [32];
        if (config->progress)
            fprintf (config->progress, "[%s] turn %llu: %s -> %s (%s)\n", config->id,
                     (unsigned long long) pmsg_uint (info, "turn", 0),
                     rc ? "gave up" : turn.summary,
                     wfreq_str (reply, "holder", next, sizeof next)[0] ? next : "end",
                     wfreq_str (reply, "status", status, sizeof status));
    }
    else
    if (reply) {
        char message [PROTO_MAX_TEXT + 1];
        plog_error ("HANDOVER refused: %s", wfreq_str (reply, "message", message, sizeof message));
    }
    else
        plog_error ("HANDOVER got no reply: %s", err);
    if (config->progress)
        fflush (config->progress);
    pmsg_destroy (&reply);
    json_decref (turn.ops);
}

//  Looks at the workflow: plays a turn that is ours; 1 when the run ended
//  (*exit_code set), 0 to keep waiting.
static int
s_check (s_self_t *self, int *exit_code)
{
    char err [256] = "", status [32], holder [80], agent [80];
    pmsg_t *info = wfreq_info (self->link, err, sizeof err);
    if (!info || pmsg_type (info) != PMSG_WORKFLOW_INFO) {
        pmsg_destroy (&info);
        return 0;
    }
    wfreq_str (info, "status", status, sizeof status);
    if (strcmp (status, "done") == 0 || strcmp (status, "failed") == 0) {
        char reason [PROTO_MAX_TEXT + 1];
        plog_info ("workflow %s after %llu turns (%llu mine)%s%s", status,
                   (unsigned long long) pmsg_uint (info, "turn", 0),
                   (unsigned long long) self->turns,
                   wfreq_str (info, "reason", reason, sizeof reason)[0] ? ": " : "", reason);
        *exit_code = strcmp (status, "done") == 0 ? PARLEY_EXIT_OK : PARLEY_EXIT_FAILURE;
        pmsg_destroy (&info);
        return 1;
    }
    wfreq_str (info, "holder", holder, sizeof holder);
    wfreq_str (info, "agent", agent, sizeof agent);
    if (strcmp (holder, self->config->role->name) == 0 && strcmp (agent, self->config->id) == 0)
        s_take_turn (self, info);
    pmsg_destroy (&info);
    return 0;
}

static int
s_loop (s_self_t *self)
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
        brokerlink_tick (self->link);
        pmsg_t *event = wfevents_next (self->events, 250);
        wake = event != NULL;
        pmsg_destroy (&event);
    }
    return PARLEY_EXIT_OK;
}

static void
s_keepalive (void *arg)
{
    brokerlink_keepalive (arg);
}

static int
s_setup (s_self_t *self, char *err, size_t err_size)
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
    }
    self->events = wfevents_new (brokerlink_welcome (self->link)->pub);
    if (!self->events) {
        snprintf (err, err_size, "cannot subscribe to %s", brokerlink_welcome (self->link)->pub);
        return -1;
    }
    return 0;
}

int
agent_workflow_run (const agent_workflow_config_t *config)
{
    s_self_t self = { .config = config };
    char cap [80], err [512] = "";
    //  main's SIGINT/SIGTERM handlers raise config->stop; czmq must not
    //  replace them when the first socket is made.
    zsys_handler_set (NULL);
    snprintf (cap, sizeof cap, "role:%s", config->role->name);
    self.link = brokerlink_new (config->broker, config->id);
    if (!self.link)
        return PARLEY_EXIT_FAILURE;
    brokerlink_add_cap (self.link, cap);
    brokerlink_set_stop (self.link, config->stop);
    brokerlink_set_timeout (self.link, config->request_timeout_ms, 2000);
    int rc = PARLEY_EXIT_OK;
    if (brokerlink_connect (self.link, err, sizeof err)) {
        if (!*config->stop)
            plog_error ("broker refused us: %s", err);
        rc = *config->stop ? PARLEY_EXIT_OK : PARLEY_EXIT_NETWORK;
        goto done;
    }
    pmsg_t *info = wfreq_info (self.link, err, sizeof err);
    bool none = info && pmsg_type (info) == PMSG_ERROR
             && pmsg_uint (info, "code", 0) == PERR_NO_WORKFLOW;
    pmsg_destroy (&info);
    if (none) {
        brokerlink_bye (self.link);
        rc = AGENT_WORKFLOW_NONE;
        goto done;
    }
    if (s_setup (&self, err, sizeof err)) {
        plog_error ("%s", err);
        rc = PARLEY_EXIT_USAGE;
    }
    else {
        plog_info ("playing role %s (policy %s)", config->role->name,
                   role_policy_name (config->policy));
        rc = s_loop (&self);
    }
    brokerlink_bye (self.link);
done:
    wfevents_destroy (&self.events);
    llm_destroy (&self.llm);
    brokerlink_destroy (&self.link);
    return rc;
}
