// SPDX-License-Identifier: MIT
/*  tickets - requests posted without waiting (parley/pipeline.h): a short
    unordered table of at most PARLEY_MAX_IN_FLIGHT entries, searched by
    id. A reply that comes while another one is awaited is parked in its
    entry; `code` is set when it can no longer come (the socket it went
    out on was closed).
*/
#ifndef PARLEY_CLIENT_TICKETS_H
#define PARLEY_CLIENT_TICKETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "parley/client.h"
#include "pmsg.h"

typedef struct _client_tickets_t client_tickets_t;

client_tickets_t *client_tickets_new (void);
void client_tickets_destroy (client_tickets_t **self_p);
//  Records request `id` whose success is `expect` (a SEND's batch id and
//  message count too). 0, or -1 when memory ran out.
int client_tickets_add (client_tickets_t *self, uint64_t id, pmsg_type_t expect, uint64_t batch,
                        size_t count);
size_t client_tickets_count (const client_tickets_t *self);
//  The router's claim: parks a reply to a ticket that waits for one.
bool client_tickets_claim (void *self, pmsg_t **msg_p);
//  Every ticket still waiting fails with `code`.
void client_tickets_fail (client_tickets_t *self, parley_err_t code);
//  Whether `id` is out, and what it expects.
bool client_tickets_find (const client_tickets_t *self, uint64_t id, pmsg_type_t *expect);
//  Whether `id`'s reply (or failure) is there.
bool client_tickets_done (const client_tickets_t *self, uint64_t id);
//  Gives a reply that was awaited for `id` to its entry.
void client_tickets_answer (client_tickets_t *self, uint64_t id, pmsg_t *reply);
//  Takes `id` out of the table: its reply (the caller's, or NULL), the
//  code it failed with, its batch and count.
void client_tickets_take (client_tickets_t *self, uint64_t id, pmsg_t **reply_p,
                         parley_err_t *code, uint64_t *batch, size_t *count);

#endif
