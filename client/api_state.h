// SPDX-License-Identifier: MIT
/*  api_state - what the state requests share with the rest of libparley:
    WRITE encoded for the pipeline (api_tickets.c), and the replica's
    fresh snapshot for the waits (api_wait.c).
*/
#ifndef PARLEY_CLIENT_API_STATE_H
#define PARLEY_CLIENT_API_STATE_H

#include "parley/client.h"

//  Checks a WRITE and encodes it. PARLEY_OK, or the refusal recorded.
parley_err_t client_encode_write (parley_client_t *self, const parley_ops_t *ops);
//  A fresh snapshot when the replica needs one (a gap, a new session, a
//  failure), outside requests.
void client_replica_refresh (parley_client_t *self);

#endif
