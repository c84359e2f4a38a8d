// SPDX-License-Identifier: MIT
/*  workflow_int - parley_workflow_t and parley_wf_event_t
    (parley/workflow.h) as the rest of libparley makes and fills them.
*/
#ifndef PARLEY_CLIENT_WORKFLOW_INT_H
#define PARLEY_CLIENT_WORKFLOW_INT_H

#include "parley/client.h"
#include "pmsg.h"

parley_workflow_t *client_workflow_new (void);
//  WORKFLOW_INFO. PARLEY_OK, or _NOMEM with it empty.
parley_err_t client_workflow_decode (parley_workflow_t *self, const pmsg_t *reply);

parley_wf_event_t *client_wf_event_new (void);
//  A WORKFLOW_EVENT. PARLEY_OK, or _NOMEM with it empty.
parley_err_t client_wf_event_decode (parley_wf_event_t *self, const pmsg_t *event);

//  A status name, as parley_wf_status_parse, from a str of a map.
parley_wf_status_t client_wf_status_of (const msgpack_object *map, char *name, size_t name_size);

#endif
