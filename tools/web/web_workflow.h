// SPDX-License-Identifier: MIT
/*  web_workflow - the workflow panel's reads, through libparley and the
    operator's connection (web_operator.h).

      web_workflow_overview   WORKFLOW and CHECKPOINTS: {"info": WORKFLOW_INFO,
                              "checkpoints": [...], "dropped": N}, or
                              {"none": true} when the broker runs no workflow
      GET /api/workflow/checkpoint/N
                              CHECKPOINT N: {"checkpoint", "entries", and
                              "changes": the diff from N-1 when N-1 is kept}
      GET /api/workflow/diff/N/M
                              what differs from N to M, old and new values

    The documents are common/wfjson.h's, as parley-ctl --json prints them.
    The broker answers these requests only on a registered connection (an
    observer may GET, SNAPSHOT, AGENTS and STATS: PROTOCOL.md, HELLO), so
    each read is one use of the operator's connection.
*/
#ifndef PARLEY_WEB_WORKFLOW_H
#define PARLEY_WEB_WORKFLOW_H

#include <jansson.h>
#include "web_operator.h"

typedef struct _web_workflow_t web_workflow_t;

web_workflow_t *web_workflow_new (web_operator_t *operator_);
void web_workflow_destroy (web_workflow_t **self_p);

//  The overview (new reference), or NULL with `why`.
json_t *web_workflow_overview (web_workflow_t *self, char *why, size_t why_size);
//  A web_read_fn (web_server.h): `path` is what follows /api/workflow/.
int web_workflow_serve (void *arg, const char *path, json_t **reply, char *why, size_t why_size);

#endif
