// SPDX-License-Identifier: MIT
/*  web_live - feeds the hub from a running broker.

    Through libparley, as an observer (HELLO with `observe`, so the view
    never shows up as an agent): WELCOME gives the tap endpoint and the
    world's size, SNAPSHOT (paged) the whole shared state, AGENT_LIST the
    agents with their caps, inbox depth and model report. The tap socket
    (a SUB, CURVE when keys are given) gives every frame, and with them
    the STATE_UPDATE and WORLD_EVENT the broker publishes.

    The tap is subscribed before the snapshot is taken, so no update falls
    between the two; the hub ignores an update no newer than its key's
    seq. A gap in the tap sequence (the tap dropped frames) takes a fresh
    snapshot. AGENT_LIST is asked every `agents_ms` and when an agent
    joins or leaves: that is the only way to learn model calls and inbox
    depth, and it costs the broker one request per second.

    The workflow's overview (web_workflow.h) is read at the start, after
    a broker restart and after each WORKFLOW_EVENT the tap shows (once per
    burst), and goes into the hub: every page has it without asking. The
    operator's id is left out of the agent list, and its reads out of the
    timeline (its actions are shown).
*/
#ifndef PARLEY_WEB_LIVE_H
#define PARLEY_WEB_LIVE_H

#include <stdint.h>
#include "web_hub.h"
#include "web_workflow.h"

typedef struct {
    const char *broker;
    const char *curve_key;          //  NULL: plain
    const char *curve_server_key;
    int64_t connect_timeout_ms;
    int64_t agents_ms;
    int hwm;                        //  tap receive queue, frames
    const char *bind_url;           //  for the page's settings
    bool allow_actions;
    web_workflow_t *workflow;       //  the workflow's reads
    const char *operator_id;        //  the id those reads and the actions use
} web_live_config_t;

//  Runs until zsys_interrupted. Returns a PARLEY_EXIT_* code.
int web_live_run (const web_live_config_t *config, web_hub_t *hub);

#endif
