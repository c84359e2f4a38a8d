// SPDX-License-Identifier: MIT
/*  observation_int - parley_observation_t (parley/world.h) as the rest of
    libparley makes and fills it.
*/
#ifndef PARLEY_CLIENT_OBSERVATION_INT_H
#define PARLEY_CLIENT_OBSERVATION_INT_H

#include "parley/client.h"
#include "pmsg.h"

parley_observation_t *client_observation_new (void);
//  OBSERVATION (or STEPPED's "observation" record `map`). The image
//  points into the frame: with `reply_p` the observation takes it (on
//  success only), without it the frame must outlive the observation.
//  PARLEY_OK, or _NOMEM with it empty.
parley_err_t client_observation_decode (parley_observation_t *self, pmsg_t **reply_p,
                                        const msgpack_object *map);

#endif
