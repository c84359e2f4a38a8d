// SPDX-License-Identifier: MIT
/*  web_live - the broker side of parley-web. See web_live.h. */
#include <assert.h>
#include <czmq.h>
#include <parley/client.h>
#include "pclock.h"
#include "pconfig.h"
#include "pcurve.h"
#include "plog.h"
#include "tap_discover.h"
#include "tap_record.h"
#include "web_feed.h"
#include "web_live.h"

//  Marker GETs (one per turn of the loop, which waits up to 200 ms)
//  before giving up on finding the view's own connection; its frames then
//  stay in the timeline, which is harmless.
#define WEB_LIVE_MARKERS 300

//  Every state key into the hub, a page of 512 keys at a time.
static parley_err_t
s_snapshot (parley_client_t *client, web_hub_t *hub)
{
    char after [1024] = "";
    parley_state_t *state = NULL;
    parley_err_t err;
    while ((err = parley_client_snapshot (client, NULL, after [0]? after: NULL, 512, &state))
           == PARLEY_OK) {
        size_t count = parley_state_count (state);
        for (size_t i = 0; i < count; i++) {
            const parley_entry_t *entry = parley_state_at (state, i);
            web_hub_state (hub, parley_entry_key (entry), parley_entry_seq (entry),
                           web_feed_value (parley_entry_value (entry),
                                           parley_entry_value_size (entry)));
        }
        if (!parley_state_more (state) || !count)
            break;
        snprintf (after, sizeof after, "%s", parley_entry_key (parley_state_at (state, count - 1)));
    }
    parley_state_destroy (&state);
    return err;
}

static parley_err_t
s_agents (parley_client_t *client, web_hub_t *hub, const char *hidden)
{
    parley_agent_list_t *list = NULL;
    parley_err_t err = parley_client_agents (client, &list);
    if (err != PARLEY_OK) {
        parley_agent_list_destroy (&list);
        return err;
    }
    json_t *agents = json_array ();
    for (size_t i = 0; i < parley_agent_list_count (list); i++) {
        const parley_agent_t *info = parley_agent_list_at (list, i);
        if (hidden && streq (parley_agent_name (info), hidden))
            continue;               //  the operator, for the length of one use
        json_t *caps = json_array ();
        for (size_t c = 0; c < parley_agent_cap_count (info); c++) {
            json_t *cap = json_string (parley_agent_cap (info, c));
            if (cap)
                json_array_append_new (caps, cap);
        }
        bool reported = parley_agent_model_reported (info);
        json_t *agent = json_pack ("{s:s,s:b,s:I,s:I,s:o,s:b}", "agent", parley_agent_name (info),
            "online", parley_agent_online (info), "idle_ms", (json_int_t) parley_agent_idle_ms (info),
            "pending", (json_int_t) parley_agent_pending (info), "caps", caps,
            "model_reported", reported);
        if (agent && reported)
            json_object_set_new (agent, "model", json_pack ("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
                "calls", (json_int_t) parley_agent_model (info, PARLEY_MODEL_CALLS),
                "ok", (json_int_t) parley_agent_model (info, PARLEY_MODEL_OK),
                "failed", (json_int_t) parley_agent_model (info, PARLEY_MODEL_FAILED),
                "prompt_tokens", (json_int_t) parley_agent_model (info, PARLEY_MODEL_PROMPT_TOKENS),
                "completion_tokens",
                (json_int_t) parley_agent_model (info, PARLEY_MODEL_COMPLETION_TOKENS),
                "latency_ms", (json_int_t) parley_agent_model (info, PARLEY_MODEL_LATENCY_MS),
                "retries", (json_int_t) parley_agent_model (info, PARLEY_MODEL_RETRIES)));
        if (agent)
            json_array_append_new (agents, agent);
    }
    parley_agent_list_destroy (&list);
    web_hub_agents (hub, agents);
    return PARLEY_OK;
}

static void
s_info (const web_live_config_t *config, parley_client_t *client, web_hub_t *hub)
{
    const parley_welcome_t *welcome = parley_client_welcome (client);
    web_hub_set_info (hub, json_pack ("{s:s,s:s,s:s,s:b,s:{s:s,s:I,s:I,s:I,s:I,s:f,s:b}}",
        "mode", "live", "broker", config->broker, "url", config->bind_url,
        "allow_actions", config->allow_actions,
        "world", "kind", parley_welcome_world_kind (welcome),
        "width", (json_int_t) parley_welcome_world_width (welcome),
        "height", (json_int_t) parley_welcome_world_height (welcome),
        "objects_total", (json_int_t) parley_welcome_objects_total (welcome),
        "explored", (json_int_t) parley_welcome_explored (welcome),
        "coverage", parley_welcome_coverage (welcome), "done", parley_welcome_done (welcome)));
}

static zsock_t *
s_tap (const web_live_config_t *config, const char *endpoint)
{
    zsock_t *sub = zsock_new (ZMQ_SUB);
    zsock_set_linger (sub, 0);
    zsock_set_rcvhwm (sub, config->hwm);
    zsock_set_maxmsgsize (sub, TAP_RECORD_MAX);
    zsock_set_subscribe (sub, "tap.");
    char why [512];
    if (pcurve_client (sub, config->curve_key, config->curve_server_key, why, sizeof why)) {
        plog_error ("%s", why);
        zsock_destroy (&sub);
        return NULL;
    }
    if (zsock_connect (sub, "%s", endpoint) != 0) {
        plog_error ("cannot connect to tap %s: %s", endpoint, zmq_strerror (zmq_errno ()));
        zsock_destroy (&sub);
    }
    return sub;
}

//  The workflow's overview into the hub; an error there too, so the page
//  can say why it has none.
static void
s_workflow (const web_live_config_t *config, web_hub_t *hub)
{
    if (!config->workflow)
        return;
    char why [512] = "";
    json_t *overview = web_workflow_overview (config->workflow, why, sizeof why);
    if (!overview) {
        plog_warn ("the workflow's overview: %s", why);
        overview = json_pack ("{s:s}", "error", why);
    }
    if (overview)
        web_hub_workflow (hub, overview);
}

static int
s_exit_code (parley_err_t err)
{
    return err == PARLEY_ERR_TIMEOUT || err == PARLEY_ERR_SOCKET || err == PARLEY_ERR_STOPPED
         ? PARLEY_EXIT_NETWORK: PARLEY_EXIT_FAILURE;
}

int
web_live_run (const web_live_config_t *config, web_hub_t *hub)
{
    assert (config);
    assert (hub);
    char name [PARLEY_NAME_MAX + 1];
    snprintf (name, sizeof name, "web-%d", (int) getpid ());
    parley_client_t *client = parley_client_new (config->broker, name);
    if (!client) {
        plog_error ("out of memory");
        return PARLEY_EXIT_FAILURE;
    }
    parley_client_add_cap (client, "web");
    parley_client_set_observe (client, true);
    parley_client_set_timeout (client, config->connect_timeout_ms, 0);
    parley_client_set_stop (client, (volatile sig_atomic_t *) &zsys_interrupted);
    if (parley_client_set_security (client, config->curve_key, config->curve_server_key, NULL)
        != PARLEY_OK) {
        plog_error ("%s", parley_client_error_text (client));
        parley_client_destroy (&client);
        return PARLEY_EXIT_USAGE;
    }
    //  The first HELLO gets one try (exit 3 at once: a wrong --broker, or a
    //  service manager that should restart us later); once connected, a
    //  broker restart is waited for as long as it takes.
    parley_client_set_connect_attempts (client, 1);
    parley_err_t err = parley_client_connect (client);
    parley_client_set_connect_attempts (client, 0);
    if (err != PARLEY_OK) {
        plog_error ("broker %s: %s: %s", config->broker, parley_strerror (err),
                    parley_client_error_text (client));
        parley_client_destroy (&client);
        return s_exit_code (err);
    }
    char endpoint [512];
    snprintf (endpoint, sizeof endpoint, "%s", parley_welcome_tap (parley_client_welcome (client)));
    zsock_t *sub = NULL;
    if (!*endpoint || streq (endpoint, "off"))
        plog_warn ("the broker has no tap: no message timeline, and the state is read once");
    else {
        tap_discover_fix_wildcard (endpoint, sizeof endpoint, config->broker);
        sub = s_tap (config, endpoint);
        if (!sub) {
            parley_client_destroy (&client);
            return PARLEY_EXIT_NETWORK;
        }
    }
    s_info (config, client, hub);
    web_feed_t *feed = web_feed_new (hub);
    web_feed_set_own_name (feed, name);
    web_feed_hide_agent (feed, config->operator_id);
    bool workflow_due = true;
    int rc = PARLEY_EXIT_OK;
    bool resnapshot = true;
    bool agents_due = true;
    int64_t next_agents = 0;
    uint64_t epoch = parley_client_epoch (client);
    int markers = 0;
    zpoller_t *poller = sub? zpoller_new (sub, NULL): NULL;
    while (!zsys_interrupted) {
        if (parley_client_epoch (client) != epoch) {
            epoch = parley_client_epoch (client);
            resnapshot = agents_due = workflow_due = true;     //  the broker restarted
            s_info (config, client, hub);
        }
        //  Not before the tap shows our marker: the feed leaves the reads'
        //  frames out by their HELLO, which it must have seen.
        bool tap_live = !sub || web_feed_knows_self (feed) || markers >= WEB_LIVE_MARKERS;
        if (workflow_due && tap_live) {
            s_workflow (config, hub);
            workflow_due = false;
        }
        if (resnapshot) {
            err = s_snapshot (client, hub);
            if (err == PARLEY_ERR_STOPPED)
                break;
            if (err != PARLEY_OK)
                plog_warn ("SNAPSHOT: %s: %s (trying again)", parley_strerror (err),
                           parley_client_error_text (client));
            resnapshot = err != PARLEY_OK;
        }
        int64_t now = pclock_mono_ms ();
        if (agents_due || now >= next_agents) {
            err = s_agents (client, hub, config->operator_id);
            if (err == PARLEY_ERR_STOPPED)
                break;
            if (err != PARLEY_OK)
                plog_warn ("AGENT_LIST: %s: %s", parley_strerror (err),
                           parley_client_error_text (client));
            agents_due = false;
            next_agents = now + config->agents_ms;
        }
        if (sub && !web_feed_knows_self (feed) && markers < WEB_LIVE_MARKERS) {
            markers++;
            //  The marker GET (web_feed.h); repeated until the tap, whose
            //  subscription takes a moment to reach the broker, shows it.
            const char *marker = name;
            parley_state_t *ignored = NULL;
            err = parley_client_get (client, &marker, 1, &ignored);
            parley_state_destroy (&ignored);
            if (err == PARLEY_ERR_STOPPED)
                break;
        }
        int64_t wait = next_agents - pclock_mono_ms ();
        if (wait < 1)
            wait = 1;
        if (!poller) {
            zclock_sleep ((int) (wait < 200? wait: 200));
            continue;
        }
        if (!zpoller_wait (poller, (int) (wait < 200? wait: 200)))
            continue;
        //  Everything queued, without waiting again, before the next request.
        for (int burst = 0; burst < 1000 && (zsock_events (sub) & ZMQ_POLLIN); burst++) {
            zmsg_t *msg = zmsg_recv (sub);
            if (!msg)
                break;
            zframe_t *body = zmsg_last (msg);   //  frame 1 is the topic
            if (body) {
                web_feed_outcome_t outcome = web_feed_frame (feed, zframe_data (body), zframe_size (body));
                if (outcome == WEB_FEED_GAP)
                    resnapshot = agents_due = true;
                if (outcome == WEB_FEED_AGENTS)
                    agents_due = true;
                if (outcome == WEB_FEED_WORKFLOW)
                    workflow_due = true;
            }
            zmsg_destroy (&msg);
        }
    }
    plog_info ("%" PRIu64 " tap frames, %" PRIu64 " bad", web_feed_frames (feed), web_feed_bad (feed));
    zpoller_destroy (&poller);
    web_feed_destroy (&feed);
    zsock_destroy (&sub);
    parley_client_destroy (&client);
    return rc;
}
