// SPDX-License-Identifier: MIT
/*  confirms - the CONFIRMs due to connections that sent pipelined SENDs.

    A pipelined SEND gets no SENT: what it did is added to its
    connection's record here (request id, messages accepted, its errors),
    and one CONFIRM frame covers every pipelined SEND of that connection
    since the last one. The dispatcher sends a connection's CONFIRM before
    any other reply to it (replies stay in request order) and every
    CONFIRM still due at the end of each loop turn (PROTOCOL.md, SEND).

    Records live one turn at most: created by the first pipelined SEND of
    a connection in a turn, dropped when encoded. The errors of one CONFIRM
    are bounded like SENT's (BROKER_CONFIRM_ERRORS_BUDGET bytes, at most
    PROTO_MAX_BATCH entries); beyond, they are only counted.
*/
#ifndef PARLEY_BROKER_CONFIRMS_H
#define PARLEY_BROKER_CONFIRMS_H

#include <stdbool.h>
#include <stdint.h>
#include "pmsg.h"
#include "core/agents.h"

#define BROKER_CONFIRM_ERRORS_BUDGET (64 * 1024)

typedef struct _confirms_t confirms_t;

confirms_t *confirms_new (void);
void confirms_destroy (confirms_t **self_p);

//  A pipelined SEND `id` from `conn` was answered: `accepted` messages.
//  False when out of memory (the SEND's outcome is then not confirmed:
//  the client's timeout resends it, at-least-once).
bool confirms_add (confirms_t *self, const conn_id_t *conn, bool envelope, uint64_t id,
                   uint64_t accepted);
//  The encoder for one more confirm_error map of `conn`'s record (after
//  confirms_add), or NULL when the budget is spent: the error is then
//  counted in `errors_omitted`.
penc_t *confirms_error (confirms_t *self, const conn_id_t *conn);
//  True when some connection has a CONFIRM due.
bool confirms_due (confirms_t *self);
//  Encodes the CONFIRM due to `conn` into `enc` and forgets it; false
//  when none is due.
bool confirms_take (confirms_t *self, const conn_id_t *conn, penc_t *enc, bool *envelope);
//  The same for the oldest record due, whoever it is for (`conn` is set).
bool confirms_take_next (confirms_t *self, conn_id_t *conn, penc_t *enc, bool *envelope);

#endif
