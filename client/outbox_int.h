// SPDX-License-Identifier: MIT
/*  outbox_int - parley_outbox_t (parley/mail.h) as the requests that take
    it read it.
*/
#ifndef PARLEY_CLIENT_OUTBOX_INT_H
#define PARLEY_CLIENT_OUTBOX_INT_H

#include "parley/client.h"
#include "pmsg.h"

//  The first thing the outbox refused (PARLEY_OK when none), and why.
parley_err_t client_outbox_error (const parley_outbox_t *self, const char **why);
//  The "messages" field (key and array), bodies cut to `max_body` (0: no
//  cut) at a UTF-8 character boundary.
void client_outbox_encode (const parley_outbox_t *self, penc_t *enc, size_t max_body);
//  The items alone, one map each, appended to what `enc` holds (a
//  coalesced SEND writes its array header when it knows every post).
void client_outbox_encode_items (const parley_outbox_t *self, penc_t *enc, size_t max_body);

#endif
