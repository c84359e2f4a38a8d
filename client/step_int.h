// SPDX-License-Identifier: MIT
/*  step_int - parley_step_t (parley/world.h) as parley_client_step reads it.
*/
#ifndef PARLEY_CLIENT_STEP_INT_H
#define PARLEY_CLIENT_STEP_INT_H

#include "parley/client.h"
#include "pmsg.h"

//  STEP with request id `id` into `enc`, bodies cut to `max_body`.
//  PARLEY_OK, or the step's refusal (its parts' too) with `why`.
parley_err_t client_step_encode (const parley_step_t *self, penc_t *enc, uint64_t id,
                                 size_t max_body, const char **why);
//  Its messages.
size_t client_step_message_count (const parley_step_t *self);

#endif
