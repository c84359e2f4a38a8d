// SPDX-License-Identifier: MIT
/*  api_mail - what the mail requests share with the pipeline's
    (api_tickets.c, api_pipelined.c): SEND and FETCH encoded into the
    request encoder, and a MAIL reply decoded into a result.
*/
#ifndef PARLEY_CLIENT_API_MAIL_H
#define PARLEY_CLIENT_API_MAIL_H

#include "parley/client.h"
#include "pmsg.h"

//  Checks an outbox for SEND. PARLEY_OK, or the refusal recorded.
parley_err_t client_check_send (parley_client_t *self, const parley_outbox_t *messages);
//  Checks a SEND and encodes it with a fresh batch id, and a held
//  acknowledgement riding on it. PARLEY_OK, or the refusal recorded.
parley_err_t client_encode_send (parley_client_t *self, const parley_outbox_t *messages,
                                 uint64_t *batch_p);
void client_encode_fetch (parley_client_t *self, uint64_t ack, size_t max, bool stream);
//  MAIL into `mail` through the duplicate filter (taking the reply on
//  success). PARLEY_OK or _NOMEM recorded.
parley_err_t client_mail_result (parley_client_t *self, pmsg_t **reply_p, parley_mail_t *mail);

#endif
