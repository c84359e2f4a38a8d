// SPDX-License-Identifier: MIT
/*  jsonops - state write ops written as JSON ({"op", "key", "value",
    "reducer"}), the way the scene policies, a model's answer and
    parley-ctl's command line give them, checked and turned into
    libparley's parley_ops_t (values packed as msgpack) for WRITE and
    HANDOVER.

    Only the conversion lives here: the requests themselves are
    libparley's (parley_client_write, parley_client_handover).
*/
#ifndef PARLEY_JSONOPS_H
#define PARLEY_JSONOPS_H

#include <jansson.h>
#include <stddef.h>
#include "parley/client.h"

typedef struct _jsonops_t jsonops_t;

typedef enum {
    JSONOPS_DECLARE, JSONOPS_UPDATE, JSONOPS_SET, JSONOPS_CLEAR, JSONOPS_DELETE
} jsonops_kind_t;

//  `ops`: a JSON array of op objects, or NULL (no ops). NULL with the
//  reason in `why` for an op that is not an object, an unknown "op", a
//  missing "key", or a missing "value" (update, set) or "reducer"
//  (declare). Keys and reducers point into `ops`: keep it alive as long.
jsonops_t *jsonops_new (const json_t *ops, char *why, size_t why_size);
void jsonops_destroy (jsonops_t **self_p);
size_t jsonops_count (const jsonops_t *self);
//  Op `index`: its kind, key, reducer (NULL: none) and msgpack value
//  (NULL: none).
jsonops_kind_t jsonops_kind (const jsonops_t *self, size_t index);
const char *jsonops_key (const jsonops_t *self, size_t index);
const char *jsonops_reducer (const jsonops_t *self, size_t index);
const void *jsonops_value (const jsonops_t *self, size_t index, size_t *size);
//  Adds every op to `ops` (a WRITE's, or a HANDOVER's). PARLEY_OK, or
//  what the builder refused.
parley_err_t jsonops_fill (const jsonops_t *self, parley_ops_t *ops);

#endif
