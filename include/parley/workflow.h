// SPDX-License-Identifier: MIT
/*  parley/workflow.h - a scenario's workflow: turns, hand-over and
    checkpoints (proto/PROTOCOL.md 4.1, docs/SCENARIOS.md). A client plays a
    role by saying HELLO with the capability "role:<name>"
    (parley_client_add_cap). Included by parley/client.h.

    Statuses and event names are typed; the text as sent is kept next to
    them, so a newer broker's words still reach the caller.
*/
#ifndef PARLEY_API_WORKFLOW_H
#define PARLEY_API_WORKFLOW_H

#include "parley/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PARLEY_WF_UNSET = 0,        //  HANDOVER: leave the status; results: a status this client does not know
    PARLEY_WF_PENDING,
    PARLEY_WF_IN_PROGRESS,
    PARLEY_WF_REVISION,
    PARLEY_WF_DONE,
    PARLEY_WF_FAILED
} parley_wf_status_t;

//  "pending", "in_progress", ...; "" for PARLEY_WF_UNSET.
const char *parley_wf_status_name (parley_wf_status_t status);
//  The status named `name`; PARLEY_WF_UNSET for any other text.
parley_wf_status_t parley_wf_status_parse (const char *name);

//  WORKFLOW: where the workflow stands.
parley_err_t parley_client_workflow (parley_client_t *self, parley_workflow_t **result_p);

//  HANDOVER: this turn's writes and the next role, one atomic request.
parley_handover_t *parley_handover_new (void);
void parley_handover_destroy (parley_handover_t **self_p);
//  Empties it (its ops too), keeping the memory.
void parley_handover_reset (parley_handover_t *self);
//  The turn's writes, to fill as for WRITE.
parley_ops_t *parley_handover_ops (parley_handover_t *self);
//  The role that takes the turn (copied); NULL with status done/failed.
parley_err_t parley_handover_set_next (parley_handover_t *self, const char *role);
//  PARLEY_WF_UNSET (the default): unchanged.
parley_err_t parley_handover_set_status (parley_handover_t *self, parley_wf_status_t status);
//  Why (copied); NULL: none.
parley_err_t parley_handover_set_reason (parley_handover_t *self, const char *reason);
//  `result_p` may be NULL. NOT_TURN_HOLDER, WORKFLOW_ENDED, NO_WORKFLOW,
//  BAD_FIELD and every WRITE error come back as their codes.
parley_err_t parley_client_handover (parley_client_t *self, const parley_handover_t *handover,
                                     parley_workflow_t **result_p);
//  RESUME: forks the run from checkpoint `number`. An operator request: a
//  CURVE broker wants the admin right (docs/SECURITY.md). `result_p` may
//  be NULL.
parley_err_t parley_client_resume (parley_client_t *self, uint64_t number,
                                   parley_workflow_t **result_p);

//  WORKFLOW_INFO: the reply to WORKFLOW, HANDOVER and RESUME.
void parley_workflow_destroy (parley_workflow_t **self_p);
parley_wf_status_t parley_workflow_status (const parley_workflow_t *self);
const char *parley_workflow_status_name (const parley_workflow_t *self);   //  as sent
uint64_t parley_workflow_turn (const parley_workflow_t *self);        //  turns started so far
uint64_t parley_workflow_revisions (const parley_workflow_t *self);   //  revisions made so far
const char *parley_workflow_holder (const parley_workflow_t *self);   //  the role holding the turn, or ""
const char *parley_workflow_agent (const parley_workflow_t *self);    //  the agent acting for it, or ""
bool parley_workflow_paused (const parley_workflow_t *self);          //  the holder is a human role
uint64_t parley_workflow_max_revisions (const parley_workflow_t *self);   //  0: not sent
uint64_t parley_workflow_max_turns (const parley_workflow_t *self);       //  0: not sent
const char *parley_workflow_reason (const parley_workflow_t *self);   //  "" when none
uint64_t parley_workflow_checkpoint (const parley_workflow_t *self);  //  the latest (0 also when not sent)
uint64_t parley_workflow_seq (const parley_workflow_t *self);         //  state seq after the request (0: not sent)

//  ---------------------------------------------------------------------
//  CHECKPOINTS: every checkpoint kept, oldest first.
parley_err_t parley_client_checkpoints (parley_client_t *self,
                                        parley_checkpoint_list_t **result_p);
void parley_checkpoint_list_destroy (parley_checkpoint_list_t **self_p);
size_t parley_checkpoint_list_count (const parley_checkpoint_list_t *self);
const parley_checkpoint_t *parley_checkpoint_list_at (const parley_checkpoint_list_t *self,
                                                      size_t index);
//  Folded away by the broker's retention bound.
uint64_t parley_checkpoint_list_dropped (const parley_checkpoint_list_t *self);

//  One checkpoint's workflow fields.
uint64_t parley_checkpoint_number (const parley_checkpoint_t *self);   //  0 is the workflow's start
uint64_t parley_checkpoint_turn (const parley_checkpoint_t *self);
parley_wf_status_t parley_checkpoint_status (const parley_checkpoint_t *self);
const char *parley_checkpoint_status_name (const parley_checkpoint_t *self);
const char *parley_checkpoint_holder (const parley_checkpoint_t *self);    //  "" when none
uint64_t parley_checkpoint_revisions (const parley_checkpoint_t *self);
uint64_t parley_checkpoint_changed (const parley_checkpoint_t *self);  //  keys changed since the previous one
uint64_t parley_checkpoint_bytes (const parley_checkpoint_t *self);    //  bytes stored for it

//  CHECKPOINT: the whole state at checkpoint `number`.
parley_err_t parley_client_checkpoint (parley_client_t *self, uint64_t number,
                                       parley_checkpoint_state_t **result_p);
//  CHECKPOINT with `since`: the keys that differ between `since` and `number`.
parley_err_t parley_client_checkpoint_diff (parley_client_t *self, uint64_t number, uint64_t since,
                                            parley_checkpoint_state_t **result_p);
void parley_checkpoint_state_destroy (parley_checkpoint_state_t **self_p);
uint64_t parley_checkpoint_state_number (const parley_checkpoint_state_t *self);
//  With since: the entries are what differs from checkpoint `since`.
bool parley_checkpoint_state_has_since (const parley_checkpoint_state_t *self);
uint64_t parley_checkpoint_state_since (const parley_checkpoint_state_t *self);
const parley_checkpoint_t *parley_checkpoint_state_info (const parley_checkpoint_state_t *self);
//  Entries (parley/state.h): key, reducer, value, and `removed` for a key
//  that does not exist at the checkpoint.
size_t parley_checkpoint_state_count (const parley_checkpoint_state_t *self);
const parley_entry_t *parley_checkpoint_state_at (const parley_checkpoint_state_t *self,
                                                  size_t index);

//  ---------------------------------------------------------------------
//  WORKFLOW_EVENT, taken from the event socket once
//  parley_client_workflow_events is on.
typedef enum {
    PARLEY_WF_EVENT_OTHER = 0,  //  an event this client does not know
    PARLEY_WF_EVENT_TURN,
    PARLEY_WF_EVENT_PAUSED,
    PARLEY_WF_EVENT_DONE,
    PARLEY_WF_EVENT_FAILED,
    PARLEY_WF_EVENT_RESUMED
} parley_wf_event_kind_t;

//  Subscribes to (or leaves) the workflow's events, kept over reconnects.
//  Events are queued (at most PARLEY_WF_EVENT_QUEUE; the oldest is dropped
//  and counted beyond that) and parley_client_wait returns as soon as one
//  is queued.
#define PARLEY_WF_EVENT_QUEUE 64
void parley_client_workflow_events (parley_client_t *self, bool on);
//  The oldest queued event, without waiting, into *event_p (made when
//  NULL, else replaced); false when none.
bool parley_client_workflow_event (parley_client_t *self, parley_wf_event_t **event_p);

void parley_wf_event_destroy (parley_wf_event_t **self_p);
parley_wf_event_kind_t parley_wf_event_kind (const parley_wf_event_t *self);
const char *parley_wf_event_name (const parley_wf_event_t *self);     //  the event as sent
parley_wf_status_t parley_wf_event_status (const parley_wf_event_t *self);
const char *parley_wf_event_status_name (const parley_wf_event_t *self);
uint64_t parley_wf_event_turn (const parley_wf_event_t *self);
uint64_t parley_wf_event_revisions (const parley_wf_event_t *self);
const char *parley_wf_event_holder (const parley_wf_event_t *self);
const char *parley_wf_event_agent (const parley_wf_event_t *self);
const char *parley_wf_event_reason (const parley_wf_event_t *self);   //  "" when none
//  The checkpoint recorded at this boundary, if the event names one.
bool parley_wf_event_has_checkpoint (const parley_wf_event_t *self);
uint64_t parley_wf_event_checkpoint (const parley_wf_event_t *self);

#ifdef __cplusplus
}
#endif

#endif
