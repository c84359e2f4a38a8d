// SPDX-License-Identifier: MIT
/*  STATS -> STATS_REPLY: see stats.c for what each number counts. */
#include "broker_internal.h"

void
handle_stats (broker_t *self, request_t *req)
{
    stats_encode (self, req->id);
}
