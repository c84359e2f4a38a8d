// SPDX-License-Identifier: MIT
/*  CONSUME -> OK: open, change or close the connection's push
    subscription for its agent's mail (PROTOCOL.md, CONSUME).

    `credit` is the window in messages: the broker pushes MAIL_PUSH frames
    while the mail handed out and not acknowledged stays below it (0
    closes the subscription). `credit_bytes` bounds the same mail's body
    bytes (default BROKER_CREDIT_BYTES_DEFAULT). Opening a subscription
    restarts from the acknowledged position, like a plain FETCH: whatever
    was handed out and not acknowledged is pushed again, which is how a
    client that reconnected gets it back. Changing the window of an open
    subscription restarts nothing. The pushes themselves go out at the end
    of the loop turn (push.c), after this OK.
*/
#include "broker_internal.h"

void
handle_consume (broker_t *self, request_t *req)
{
    agent_t *agent = req->agent;
    uint64_t credit = pmsg_uint (req->msg, "credit", 0);
    bool has_bytes = pmsg_field (req->msg, "credit_bytes") != NULL;
    uint64_t bytes = pmsg_uint (req->msg, "credit_bytes", BROKER_CREDIT_BYTES_DEFAULT);
    if (credit > BROKER_CREDIT_MAX) {
        dispatch_error (self, req->id, PERR_BAD_FIELD,
                        "CONSUME credit %llu is over the broker's limit of %u messages",
                        (unsigned long long) credit, BROKER_CREDIT_MAX);
        return;
    }
    if (has_bytes && (bytes == 0 || bytes > BROKER_CREDIT_BYTES_MAX)) {
        dispatch_error (self, req->id, PERR_BAD_FIELD,
                        "CONSUME credit_bytes %llu is outside 1..%llu (leave it out for "
                        "the default of %llu)", (unsigned long long) bytes,
                        (unsigned long long) BROKER_CREDIT_BYTES_MAX,
                        (unsigned long long) BROKER_CREDIT_BYTES_DEFAULT);
        return;
    }
    if (agent->credit == 0 && credit > 0) {
        //  Opening: hand everything unacknowledged out again.
        agent->cursor = agent->acked;
        agent->out_count = 0;
        agent->out_bytes = 0;
        agent->push_blocked = false;
    }
    agent->credit = (uint32_t) credit;
    agent->credit_bytes = bytes;
    if (credit)
        mailroom_mark_push (self->mailroom, agent);
    penc_begin (&self->reply, PMSG_OK, req->id, 0);
}
