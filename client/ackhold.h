// SPDX-License-Identifier: MIT
/*  ackhold - the acknowledgement held to ride on the next SEND (sender.h):
    the highest seq acknowledged without waiting and not yet sent, since
    when it waits, and the highest that rode on a SEND (held again when
    that SEND turns out refused: acknowledgements are cumulative, so
    sending one twice is harmless, losing one holds the window).
*/
#ifndef PARLEY_CLIENT_ACKHOLD_H
#define PARLEY_CLIENT_ACKHOLD_H

#include <stdbool.h>
#include <stdint.h>
#include "parley/client.h"

typedef struct _client_ackhold_t client_ackhold_t;

client_ackhold_t *client_ackhold_new (void);
void client_ackhold_destroy (client_ackhold_t **self_p);
//  Up to `seq`, held from `now` (monotonic us) unless one was already.
void client_ackhold_hold (client_ackhold_t *self, uint64_t seq, int64_t now);
//  Up to `seq` again, due at once (`now`, less `linger`): a SEND that
//  carried it was not applied.
void client_ackhold_again (client_ackhold_t *self, uint64_t seq, int64_t now, int64_t linger);
//  The last one that rode, held again as above.
void client_ackhold_refused (client_ackhold_t *self, int64_t now, int64_t linger);
//  What is held (0: nothing), and since when.
uint64_t client_ackhold_seq (const client_ackhold_t *self);
int64_t client_ackhold_since (const client_ackhold_t *self);
//  Takes what is held to ride on a SEND (counted); 0 when nothing.
uint64_t client_ackhold_ride (client_ackhold_t *self);
//  An ACK up to `seq` went: nothing up to it is held any more.
void client_ackhold_sent (client_ackhold_t *self, uint64_t seq);
//  PARLEY_COUNTER_ACKS_RIDDEN; 0 for others.
uint64_t client_ackhold_counter (const client_ackhold_t *self, parley_counter_t counter);

#endif
