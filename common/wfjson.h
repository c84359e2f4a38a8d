// SPDX-License-Identifier: MIT
/*  wfjson - the workflow's replies as JSON, and what changed between two
    checkpoints with each key's old and new value.

    parley-ctl prints these (--json) and parley-web serves them to its
    page, so both say the same thing the same way. The requests are
    libparley's (parley_client_checkpoint_diff); only the conversion and
    the two-way diff live here.

        {"status", "turn", "revisions", "holder", "agent", "paused", ...}  WORKFLOW_INFO
        {"number", "turn", "status", "holder", "revisions", "changed", "bytes"}  a checkpoint
        [{"key", "reducer", "value", "removed"}]                          a CHECKPOINT's entries
        {"from", "to", "info", "entries": [{"key", "reducer", "old", "new"}]}  a diff

    Fields empty or zero in an optional place are left out.
*/
#ifndef PARLEY_WFJSON_H
#define PARLEY_WFJSON_H

#include <jansson.h>
#include "parley/client.h"

//  New JSON values (the caller owns them).
json_t *wfjson_info (const parley_workflow_t *info);
json_t *wfjson_checkpoint (const parley_checkpoint_t *info);
json_t *wfjson_entries (const parley_checkpoint_state_t *state);

//  What differs from checkpoint `from` to `to`, each key with its value at
//  both: "old" absent for a key `to` added, "new" absent for one it
//  removed. Two CHECKPOINT requests (`to` since `from`, then `from` since
//  `to`: the same keys, each with its value at the checkpoint asked for).
//  NULL with *err set when a request failed (parley_client_error_text
//  says why).
json_t *wfjson_diff (parley_client_t *client, uint64_t from, uint64_t to, parley_err_t *err);

#endif
