// SPDX-License-Identifier: MIT
/*  sent_int - parley_sent_t and parley_failure_t (parley/mail.h) as the
    rest of libparley makes and fills them.
*/
#ifndef PARLEY_CLIENT_SENT_INT_H
#define PARLEY_CLIENT_SENT_INT_H

#include "parley/client.h"
#include "pmsg.h"

parley_sent_t *client_sent_new (void);
void client_sent_clear (parley_sent_t *self);
//  SENT (or STEPPED's "sent" record) for a SEND of `count` messages with
//  batch id `batch`. Everything is copied: `map` may go afterwards.
//  PARLEY_OK, or PARLEY_ERR_NOMEM with the result empty.
parley_err_t client_sent_decode (parley_sent_t *self, const msgpack_object *map, uint64_t batch,
                                 size_t count);

//  A failure; the agent and message are cut to fit (64 and 255 bytes).
//  NULL when memory ran out.
parley_failure_t *client_failure_new (parley_ticket_t ticket, bool whole, size_t index, int code,
                                      const char *agent, size_t agent_len, const char *message,
                                      size_t message_len);

#endif
