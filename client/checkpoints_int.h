// SPDX-License-Identifier: MIT
/*  checkpoints_int - parley_checkpoint_list_t and
    parley_checkpoint_state_t (parley/workflow.h) as their requests fill
    them.
*/
#ifndef PARLEY_CLIENT_CHECKPOINTS_INT_H
#define PARLEY_CLIENT_CHECKPOINTS_INT_H

#include "parley/client.h"
#include "pmsg.h"

parley_checkpoint_list_t *client_checkpoint_list_new (void);
//  CHECKPOINT_LIST. PARLEY_OK, or _NOMEM with it empty.
parley_err_t client_checkpoint_list_decode (parley_checkpoint_list_t *self, const pmsg_t *reply);
parley_checkpoint_state_t *client_checkpoint_state_new (void);
//  CHECKPOINT_STATE. PARLEY_OK, or _NOMEM with it empty.
parley_err_t client_checkpoint_state_decode (parley_checkpoint_state_t *self,
                                             const pmsg_t *reply);

#endif
