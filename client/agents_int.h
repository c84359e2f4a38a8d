// SPDX-License-Identifier: MIT
/*  agents_int - parley_agent_list_t (parley/broker.h) as the AGENTS
    request fills it, and the model report's wire names.
*/
#ifndef PARLEY_CLIENT_AGENTS_INT_H
#define PARLEY_CLIENT_AGENTS_INT_H

#include "parley/client.h"
#include "pmsg.h"

parley_agent_list_t *client_agent_list_new (void);
//  AGENT_LIST. Everything is copied. PARLEY_OK, or _NOMEM with it empty.
parley_err_t client_agent_list_decode (parley_agent_list_t *self, const pmsg_t *reply);
//  "model_calls", ... by parley_model_field_t (HEARTBEAT and agent_info).
const char *client_model_field_name (parley_model_field_t field);

#endif
