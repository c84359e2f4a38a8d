// SPDX-License-Identifier: MIT
/*  events - what comes on the event socket, sorted by topic: "mail.<me>"
    raises the mail flag, "world." is counted, "workflow." is queued as a
    typed WORKFLOW_EVENT when asked for, "state." goes to the replica
    (through the sink the client sets), and a copy of every event whose
    topic the caller subscribed to is queued for parley_client_event. Both
    queues are bounded: a caller that never takes them must not grow the
    client for ever, so the oldest is dropped and counted.

    The topics are kept here; the client subscribes the socket to them
    (again after every reconnect).
*/
#ifndef PARLEY_CLIENT_EVENTS_H
#define PARLEY_CLIENT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "parley/client.h"

typedef struct _client_events_t client_events_t;
//  A STATE_UPDATE for `key`: the event's body.
typedef void (client_events_state_fn) (void *arg, const char *key, const void *body, size_t size);

client_events_t *client_events_new (void);
void client_events_destroy (client_events_t **self_p);
void client_events_set_state_sink (client_events_t *self, client_events_state_fn *sink, void *arg);

//  The caller's topic prefixes. PARLEY_ERR_INVALID for too many or one
//  too long (the reason in `why`), _NOMEM; PARLEY_OK for one already there.
parley_err_t client_events_subscribe (client_events_t *self, const char *prefix, bool *added,
                                      char *why, size_t why_size);
//  True when it was subscribed.
bool client_events_unsubscribe (client_events_t *self, const char *prefix);
size_t client_events_topic_count (const client_events_t *self);
const char *client_events_topic (const client_events_t *self, size_t index);

void client_events_set_workflow (client_events_t *self, bool on);
bool client_events_workflow (const client_events_t *self);

//  One event off the socket.
void client_events_take (client_events_t *self, const char *topic, const void *body, size_t size);
//  The caller's queue: something waits; the oldest into *event_p.
bool client_events_pending (const client_events_t *self);
bool client_events_next (client_events_t *self, parley_event_t **event_p);
//  The workflow queue: the same.
bool client_events_wf_pending (const client_events_t *self);
bool client_events_wf_next (client_events_t *self, parley_wf_event_t **event_p);
//  A MAIL_READY came since the flag was last cleared.
bool client_events_mail_flag (const client_events_t *self);
void client_events_clear_mail (client_events_t *self);
//  PARLEY_COUNTER_MAIL_WAKEUPS, _WORLD_EVENTS, _WORKFLOW_*, _EVENTS*,
//  _BAD_FRAMES (events that did not decode) and _NOMEM; 0 for others.
uint64_t client_events_counter (const client_events_t *self, parley_counter_t counter);

#endif
