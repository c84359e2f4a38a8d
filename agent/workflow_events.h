/*  workflow_events - the wake-up side of a workflow: a SUB socket on the
    broker's "workflow." topic. An agent waiting for its turn blocks here
    (zpoller, no polling of the broker) and wakes on WORKFLOW_EVENT.
*/
#ifndef PARLEY_WORKFLOW_EVENTS_H
#define PARLEY_WORKFLOW_EVENTS_H

#include "pmsg.h"

typedef struct _wfevents_t wfevents_t;

//  Subscribes to "workflow." on the PUB endpoint (WELCOME's `pub`).
wfevents_t *wfevents_new (const char *pub_endpoint);
void wfevents_destroy (wfevents_t **self_p);
//  The next WORKFLOW_EVENT, or NULL after timeout_ms (or on interrupt).
pmsg_t *wfevents_next (wfevents_t *self, int timeout_ms);

#endif
