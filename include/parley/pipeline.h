// SPDX-License-Identifier: MIT
/*  parley/pipeline.h - several requests in flight on one client.
    Included by parley/client.h.

    parley_client_post_* checks and sends a request without waiting for its
    reply and gives its ticket; parley_client_collect_* waits for the reply
    of one ticket (up to the request timeout from the collect) and fills
    the same result, with the same errors, as the blocking function.
    Replies are matched by request id: those that come for other tickets
    are kept until collected, so tickets may be collected in any order.
    Every ticket must be collected (its reply is held until then). Blocking
    requests may be made while tickets are out.

    A posted request is sent once and never again: the broker remembers
    only the last SEND batch, so a resend of an earlier SEND still in
    flight would post it twice. When a reply does not come in time, or the
    broker has forgotten the session (NOT_HELLO), the connection is closed:
    that ticket and every other one without a reply fail with
    PARLEY_ERR_TIMEOUT (PARLEY_ERR_NOT_HELLO), and the next request says
    HELLO again. Whether to post again is the caller's choice.
*/
#ifndef PARLEY_API_PIPELINE_H
#define PARLEY_API_PIPELINE_H

#include "parley/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PARLEY_MAX_IN_FLIGHT 256        //  posted and not yet collected

//  PARLEY_ERR_INVALID when PARLEY_MAX_IN_FLIGHT tickets are out, or for
//  what the blocking request refuses; `ticket` is then 0.
parley_err_t parley_client_post_send (parley_client_t *self, const parley_outbox_t *messages,
                                      parley_ticket_t *ticket);
parley_err_t parley_client_post_fetch (parley_client_t *self, uint64_t ack, size_t max,
                                       bool stream, parley_ticket_t *ticket);
parley_err_t parley_client_post_write (parley_client_t *self, const parley_ops_t *ops,
                                       parley_ticket_t *ticket);
//  PARLEY_ERR_INVALID for a ticket that is not out or of another request.
//  `result_p` may be NULL for SENT and WRITTEN.
parley_err_t parley_client_collect_sent (parley_client_t *self, parley_ticket_t ticket,
                                         parley_sent_t **result_p);
parley_err_t parley_client_collect_mail (parley_client_t *self, parley_ticket_t ticket,
                                         parley_mail_t **result_p);
parley_err_t parley_client_collect_written (parley_client_t *self, parley_ticket_t ticket,
                                            parley_written_t **result_p);
//  Tickets posted and not yet collected.
size_t parley_client_in_flight (parley_client_t *self);

#ifdef __cplusplus
}
#endif

#endif
