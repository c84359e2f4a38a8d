// SPDX-License-Identifier: MIT
/*  parley/broker.h - the broker and the other agents: AGENTS, STATS,
    HEARTBEAT (with the model report), BYE, and any event by topic.
    Included by parley/client.h.
*/
#ifndef PARLEY_API_BROKER_H
#define PARLEY_API_BROKER_H

#include "parley/base.h"

#ifdef __cplusplus
extern "C" {
#endif

//  What an agent's model calls cost so far (totals since it started), as
//  HEARTBEAT's model_* fields carry them and AGENT_LIST lists them. A
//  report is an array of uint64_t indexed by these; a later version adds
//  fields at the end.
typedef enum {
    PARLEY_MODEL_CALLS,                 //  model calls made
    PARLEY_MODEL_OK,                    //  calls that got an answer
    PARLEY_MODEL_FAILED,                //  calls that got none
    PARLEY_MODEL_SKIPPED,               //  decisions not sent: circuit open
    PARLEY_MODEL_RETRIES,               //  HTTP retries
    PARLEY_MODEL_PROMPT_TOKENS,         //  as the server reported them
    PARLEY_MODEL_COMPLETION_TOKENS,
    PARLEY_MODEL_LATENCY_MS,            //  sum of call latencies
    PARLEY_MODEL_LATENCY_MAX_MS,        //  slowest call
    PARLEY_MODEL_FIELDS                 //  how many this header knows
} parley_model_field_t;

//  The model report every HEARTBEAT carries from now on: `count` values
//  indexed by parley_model_field_t (copied; fields past `count` are 0,
//  values past the ones this library knows are ignored). NULL: none. The
//  broker keeps the last one it got; call parley_client_heartbeat to
//  deliver a new one at once.
void parley_client_set_report (parley_client_t *self, const uint64_t *values, size_t count);
parley_err_t parley_client_heartbeat (parley_client_t *self);
//  BYE (best effort, short timeout); `forget` also deletes the
//  registration and its mail. The client can connect again afterwards.
parley_err_t parley_client_bye (parley_client_t *self, bool forget);

//  ---------------------------------------------------------------------
//  AGENTS.
parley_err_t parley_client_agents (parley_client_t *self, parley_agent_list_t **result_p);
void parley_agent_list_destroy (parley_agent_list_t **self_p);
size_t parley_agent_list_count (const parley_agent_list_t *self);
const parley_agent_t *parley_agent_list_at (const parley_agent_list_t *self, size_t index);
//  The agent named `name`, or NULL.
const parley_agent_t *parley_agent_list_find (const parley_agent_list_t *self, const char *name);

const char *parley_agent_name (const parley_agent_t *self);
bool parley_agent_online (const parley_agent_t *self);
uint64_t parley_agent_idle_ms (const parley_agent_t *self);
uint64_t parley_agent_pending (const parley_agent_t *self);
size_t parley_agent_cap_count (const parley_agent_t *self);
const char *parley_agent_cap (const parley_agent_t *self, size_t index);
//  The agent sent a model report (fields it left out read 0).
bool parley_agent_model_reported (const parley_agent_t *self);
uint64_t parley_agent_model (const parley_agent_t *self, parley_model_field_t field);
uint64_t parley_agent_unacked (const parley_agent_t *self);      //  of pending: handed out, not acknowledged
uint64_t parley_agent_inbox_bytes (const parley_agent_t *self);  //  body bytes of the pending messages
uint64_t parley_agent_step (const parley_agent_t *self);         //  the step of its last ACT that moved
uint64_t parley_agent_acts (const parley_agent_t *self);         //  ACTs that moved

//  ---------------------------------------------------------------------
//  STATS: every field the broker sent, known to this library or not, so
//  an operator tool shows a newer broker's counters without a new
//  release; PROTOCOL.md says what each counts. The kind is the value's
//  msgpack type; the unit comes from the protocol's naming rule
//  (PROTOCOL.md, STATS): *_ms "ms", *_us "us", *bytes* "bytes", rate_*
//  "messages/s", *_seq "seq", else "count" (and "" for text and bool);
//  `help` is the protocol table's sentence, "" for a field this library
//  does not know. Order: as the broker sent them.
typedef enum {
    PARLEY_STAT_UINT,
    PARLEY_STAT_INT,
    PARLEY_STAT_NUM,
    PARLEY_STAT_BOOL,
    PARLEY_STAT_TEXT,
    PARLEY_STAT_OTHER           //  an array or map: see parley_stat_value
} parley_stat_kind_t;

parley_err_t parley_client_stats (parley_client_t *self, parley_stats_t **result_p);
void parley_stats_destroy (parley_stats_t **self_p);
size_t parley_stats_count (const parley_stats_t *self);
const parley_stat_t *parley_stats_at (const parley_stats_t *self, size_t index);
//  The field named `name`, or NULL.
const parley_stat_t *parley_stats_find (const parley_stats_t *self, const char *name);
//  A numeric field by name: 0 when absent (or not a number).
uint64_t parley_stats_uint (const parley_stats_t *self, const char *name);
double parley_stats_num (const parley_stats_t *self, const char *name);

const char *parley_stat_name (const parley_stat_t *self);
parley_stat_kind_t parley_stat_kind (const parley_stat_t *self);
uint64_t parley_stat_uint (const parley_stat_t *self);   //  UINT, and BOOL as 0/1
int64_t parley_stat_int (const parley_stat_t *self);     //  INT
double parley_stat_num (const parley_stat_t *self);      //  NUM, and every number kind converted
const char *parley_stat_text (const parley_stat_t *self);    //  TEXT; "" otherwise
//  The value as msgpack bytes, every kind.
const void *parley_stat_value (const parley_stat_t *self);
size_t parley_stat_value_size (const parley_stat_t *self);
const char *parley_stat_unit (const parley_stat_t *self);
const char *parley_stat_help (const parley_stat_t *self);
//  The unit of a field named `name`, by the rule above.
const char *parley_stat_unit_of (const char *name, parley_stat_kind_t kind);

//  ---------------------------------------------------------------------
//  Any event, by topic prefix (PROTOCOL.md, event frames): "agent.",
//  "world.", "state.<key prefix>", "workflow.", "mail.<agent>", "" for
//  all. Subscriptions are kept over reconnects (at most
//  PARLEY_MAX_EVENT_TOPICS). Events are queued (at most
//  PARLEY_EVENT_QUEUE; beyond that the oldest is dropped and counted in
//  PARLEY_COUNTER_EVENTS_DROPPED) and parley_client_wait returns as soon
//  as one is queued. Independent of the typed workflow events and the
//  replica, which see their events too.
#define PARLEY_EVENT_QUEUE 256
#define PARLEY_MAX_EVENT_TOPICS 8
//  PARLEY_ERR_INVALID for too many topics or one longer than a state key + 16.
parley_err_t parley_client_subscribe (parley_client_t *self, const char *prefix);
void parley_client_unsubscribe (parley_client_t *self, const char *prefix);
//  The oldest queued event, without waiting, into *event_p (made when
//  NULL, else replaced); false when none.
bool parley_client_event (parley_client_t *self, parley_event_t **event_p);

void parley_event_destroy (parley_event_t **self_p);
const char *parley_event_topic (const parley_event_t *self);     //  as published, e.g. "agent.Agent1"
const char *parley_event_type (const parley_event_t *self);      //  "AGENT_EVENT", "STATE_UPDATE", ...
//  The event map, msgpack.
const void *parley_event_body (const parley_event_t *self);
size_t parley_event_body_size (const parley_event_t *self);
uint64_t parley_event_received_us (const parley_event_t *self);  //  when this client took it (wall clock)

#ifdef __cplusplus
}
#endif

#endif
