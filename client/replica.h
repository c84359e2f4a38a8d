// SPDX-License-Identifier: MIT
/*  replica - a local copy of the shared state under a few prefixes, kept
    by the Clone pattern PROTOCOL.md describes: subscribe to
    state.<prefix> first, then SNAPSHOT (paged, by the client), then apply
    each STATE_UPDATE whose seq is greater than that key's.

    Pages of one walk may carry different seqs, so every key keeps its own
    seq. A replica of the whole store ("") decodes each update as it
    comes, to see the gaps; one of a few prefixes (an agent's keys) only
    keeps the newest update frame of each key and decodes it when the key
    is read: an update carries the key's whole value, so the ones in
    between would be decoded for nothing (with ten agents writing, most
    of them). State seqs are contiguous over the whole store, so with the
    prefix "" a jump in the seq of the updates means one was lost (or the
    subscription became live after the snapshot started): the replica is
    then stale, and the client takes a fresh snapshot at the next wait.
    With a narrower prefix other keys' updates are not seen and no gap can
    be told; a new session (the broker may have restarted) takes a fresh
    snapshot either way.

    Running out of memory while applying an update makes the replica
    stale too: the next snapshot puts it right.
*/
#ifndef PARLEY_CLIENT_REPLICA_H
#define PARLEY_CLIENT_REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "parley/client.h"
#include "pmsg.h"

typedef struct _client_replica_t client_replica_t;

//  NULL when memory ran out.
client_replica_t *client_replica_new (void);
void client_replica_destroy (client_replica_t **self_p);
bool client_replica_on (const client_replica_t *self);
//  Follows `prefix` only (the first), or `prefix` too. PARLEY_OK, or
//  PARLEY_ERR_INVALID (too long, too many: `why`).
parley_err_t client_replica_follow (client_replica_t *self, const char *prefix, bool first,
                                    bool *added, char *why, size_t why_size);
size_t client_replica_prefix_count (const client_replica_t *self);
const char *client_replica_prefix (const client_replica_t *self, size_t index);
//  A fresh copy starts (every key forgotten) for session `epoch`;
//  `refresh` counts it as a snapshot taken again (a gap, a new session).
void client_replica_begin (client_replica_t *self, uint64_t epoch, bool refresh);
//  The copy is complete, as of session `epoch` (a reconnect inside the
//  walk took a new one).
void client_replica_copied (client_replica_t *self, uint64_t epoch);
//  One key of a snapshot page; the walk's seq for the gap check.
parley_err_t client_replica_put (client_replica_t *self, const char *key, uint64_t seq,
                                 const void *value, size_t size);
void client_replica_set_seq (client_replica_t *self, uint64_t seq);
//  The copy needs a fresh snapshot: a gap, a failure, or (when a session
//  is `up`) a session other than the copy's.
bool client_replica_stale (const client_replica_t *self, uint64_t epoch, bool up);
void client_replica_mark_stale (client_replica_t *self);
//  A STATE_UPDATE event for `key` (its body): applied now when the
//  replica tells gaps, else held until the key is read.
void client_replica_update (client_replica_t *self, const char *key, const void *body,
                            size_t size);
//  The copy of `key` (its held update applied first); false if absent.
bool client_replica_get (client_replica_t *self, const char *key, const void **value,
                         size_t *value_size, uint64_t *seq);
//  Keys copied (every held update applied first).
size_t client_replica_size (client_replica_t *self);
//  PARLEY_COUNTER_STATE_UPDATES, _RESNAPSHOTS, _BAD_FRAMES and _NOMEM;
//  0 for others.
uint64_t client_replica_counter (const client_replica_t *self, parley_counter_t counter);

#endif
