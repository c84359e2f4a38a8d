// SPDX-License-Identifier: MIT
/*  api_pipelined - pipelined SENDs (parley/mail.h): posted without a SENT,
    confirmed together by the broker's CONFIRM frames, within a window,
    coalesced into multi-item SENDs while earlier ones are in flight. The
    sender (sender.c) holds, sends, waits and resends; these are the
    calls.
*/
#include <assert.h>
#include "api_mail.h"
#include "client_internal.h"

parley_err_t
parley_client_send_pipelined (parley_client_t *self, const parley_outbox_t *messages,
                              parley_ticket_t *ticket)
{
    assert (self && messages);
    client_conn_t *conn = client_conn_of (self);
    if (ticket)
        *ticket = 0;
    client_conn_clear_error (conn);
    parley_err_t rc = client_check_send (self, messages);
    if (rc != PARLEY_OK)
        return rc;
    return client_sender_post (client_sender_of (self), messages, ticket);
}

parley_err_t
parley_client_send_flush (parley_client_t *self)
{
    assert (self);
    client_conn_clear_error (client_conn_of (self));
    return client_sender_flush (client_sender_of (self));
}

void
parley_client_set_send_window (parley_client_t *self, size_t messages, size_t bytes)
{
    assert (self);
    client_flight_set_window (client_flight_of (self), messages, bytes);
}

void
parley_client_set_coalesce (parley_client_t *self, size_t messages, size_t bytes,
                            int64_t linger_us)
{
    assert (self);
    client_sender_set_coalesce (client_sender_of (self), messages, bytes, linger_us);
}

bool
parley_client_send_failure (parley_client_t *self, parley_failure_t **failure_p)
{
    assert (self && failure_p);
    return client_flight_take_failure (client_flight_of (self), failure_p);
}
