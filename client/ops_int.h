// SPDX-License-Identifier: MIT
/*  ops_int - parley_ops_t (parley/state.h) as the requests that take it
    read it.
*/
#ifndef PARLEY_CLIENT_OPS_INT_H
#define PARLEY_CLIENT_OPS_INT_H

#include "parley/client.h"
#include "pmsg.h"

//  The first thing the ops refused (PARLEY_OK when none), and why.
parley_err_t client_ops_error (const parley_ops_t *self, const char **why);
//  The "ops" field (key and array).
void client_ops_encode (const parley_ops_t *self, penc_t *enc);

#endif
