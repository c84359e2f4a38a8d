// SPDX-License-Identifier: MIT
/*  welcome_int - parley_welcome_t (parley/client.h), filled by the session
    from each WELCOME.
*/
#ifndef PARLEY_CLIENT_WELCOME_INT_H
#define PARLEY_CLIENT_WELCOME_INT_H

#include "parley/client.h"
#include "pmsg.h"

parley_welcome_t *client_welcome_new (void);
void client_welcome_destroy (parley_welcome_t **self_p);
void client_welcome_decode (parley_welcome_t *self, const pmsg_t *welcome);
//  The broker takes `ack` on SEND (features: send_ack).
bool client_welcome_send_ack (const parley_welcome_t *self);

#endif
