// SPDX-License-Identifier: MIT
/*  stats_int - parley_stats_t (parley/broker.h) as the STATS request
    fills it.
*/
#ifndef PARLEY_CLIENT_STATS_INT_H
#define PARLEY_CLIENT_STATS_INT_H

#include "parley/client.h"
#include "pmsg.h"

parley_stats_t *client_stats_new (void);
//  STATS_REPLY: every field but the envelope's. PARLEY_OK, or _NOMEM
//  with it empty.
parley_err_t client_stats_decode (parley_stats_t *self, const pmsg_t *reply);

#endif
