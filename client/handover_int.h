// SPDX-License-Identifier: MIT
/*  handover_int - parley_handover_t (parley/workflow.h) as
    parley_client_handover reads it.
*/
#ifndef PARLEY_CLIENT_HANDOVER_INT_H
#define PARLEY_CLIENT_HANDOVER_INT_H

#include "parley/client.h"
#include "pmsg.h"

//  HANDOVER with request id `id` into `enc`. PARLEY_OK, or the
//  hand-over's refusal (its ops' too) with `why`.
parley_err_t client_handover_encode (const parley_handover_t *self, penc_t *enc, uint64_t id,
                                     const char **why);

#endif
