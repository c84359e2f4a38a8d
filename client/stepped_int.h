// SPDX-License-Identifier: MIT
/*  stepped_int - parley_stepped_t (parley/world.h) as the request that
    makes it fills it.
*/
#ifndef PARLEY_CLIENT_STEPPED_INT_H
#define PARLEY_CLIENT_STEPPED_INT_H

#include "parley/client.h"
#include "dedup.h"
#include "pmsg.h"

parley_stepped_t *client_stepped_new (void);
//  STEPPED for a STEP whose messages carried `batch` and numbered
//  `count`; the mail goes through `dedup`. Takes the reply on success.
//  PARLEY_OK, or _NOMEM with the result empty (the reply the caller's).
parley_err_t client_stepped_decode (parley_stepped_t *self, pmsg_t **reply_p, uint64_t batch,
                                    size_t count, client_dedup_t *dedup);

#endif
