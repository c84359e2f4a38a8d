// SPDX-License-Identifier: MIT
/*  dedup - the duplicate filter for mail: the highest seq handed out to
    the caller in this process. A redelivery (a plain FETCH after a lost
    reply, a reconnect, the pushes a new session sends again) is left
    out, so the caller sees each message once.

    The watermark follows the broker: a restarted broker's fresh mail
    counter (WELCOME's origin changed, or an older broker's mail_seq below
    what was handed out) starts again from what WELCOME says was
    acknowledged. Comparing mail_seq alone is not enough: a busy restarted
    broker may be past the old watermark already, and its first messages
    would be taken for duplicates and lost.
*/
#ifndef PARLEY_CLIENT_DEDUP_H
#define PARLEY_CLIENT_DEDUP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct _client_dedup_t client_dedup_t;

client_dedup_t *client_dedup_new (void);
void client_dedup_destroy (client_dedup_t **self_p);
void client_dedup_set_on (client_dedup_t *self, bool on);
//  After each WELCOME.
void client_dedup_welcome (client_dedup_t *self, uint64_t origin, uint64_t mail_seq,
                           uint64_t acked);
//  True when `seq` was handed out before (and the filter is on): counted.
bool client_dedup_seen (client_dedup_t *self, uint64_t seq);
//  `seq` is handed out now.
void client_dedup_hand (client_dedup_t *self, uint64_t seq);
uint64_t client_dedup_handed (const client_dedup_t *self);
uint64_t client_dedup_duplicates (const client_dedup_t *self);

#endif
