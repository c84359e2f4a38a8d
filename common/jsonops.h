// SPDX-License-Identifier: MIT
/*  jsonops - state write ops written as JSON ({"op", "key", "value",
    "reducer"}), the way the scene policies, a model's answer and
    parley-ctl's command line give them, turned into libparley's typed
    parley_op_t (values packed as msgpack) for WRITE and HANDOVER.

    Only the conversion lives here: the requests themselves are
    libparley's (parley_client_write, parley_client_handover).
*/
#ifndef PARLEY_JSONOPS_H
#define PARLEY_JSONOPS_H

#include <jansson.h>
#include <stddef.h>
#include "parley/client.h"

typedef struct _jsonops_t jsonops_t;

//  `ops`: a JSON array of op objects, or NULL (no ops). NULL with the
//  reason in `why` for an op that is not an object, an unknown "op", a
//  missing "key", or a missing "value" (update, set) or "reducer"
//  (declare). Keys and reducers point into `ops`: keep it alive as long.
jsonops_t *jsonops_new (const json_t *ops, char *why, size_t why_size);
void jsonops_destroy (jsonops_t **self_p);
//  The ops, valid while `self` lives; NULL when there are none.
const parley_op_t *jsonops_ops (const jsonops_t *self);
size_t jsonops_count (const jsonops_t *self);

#endif
