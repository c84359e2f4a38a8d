// SPDX-License-Identifier: MIT
/*  client_request - libparley's request layer: the frame in self->enc sent
    and its reply awaited, sent again on a fresh session after a timeout or
    NOT_HELLO (the broker expired us, e.g. during a long model call), up to
    `attempts` times. A resend carries the very same frame, so a SEND batch
    id or an ACT step makes the repeat harmless; reads, HEARTBEAT and
    LISTEN are harmless twice anyway.

    An ERROR reply becomes its code (and the broker's sentence in
    parley_client_error_text); a reply of another type than expected is
    PARLEY_ERR_BAD_REPLY. On PARLEY_OK self->reply holds the reply, which the
    typed results point into until the next request.
*/
#include <assert.h>
#include "client_internal.h"
#include "plog.h"

penc_t *
client_begin (parley_client_t *self, pmsg_type_t type, size_t fields)
{
    self->enc_id = self->next_id++;
    penc_begin (&self->enc, type, self->enc_id, fields);
    return &self->enc;
}

parley_err_t
client_error_reply (parley_client_t *self, const pmsg_t *reply)
{
    size_t len = 0;
    const char *text = pmsg_str (reply, "message", &len);
    uint64_t code = pmsg_uint (reply, "code", 0);
    //  The text is the broker's sentence alone: callers print it after the
    //  code they got (parley_strerror), and a text that repeated the code
    //  read "BAD_FIELD: BAD_FIELD: ..." in every tool. Only a reply
    //  without a code keeps what the broker sent as the code's name.
    if (code == 0)
        client_fail (self, PARLEY_ERR_BAD_REPLY, "an ERROR without a code: %.*s",
                     (int) (text? len: 0), text? text: "");
    else
        client_fail (self, (parley_err_t) code, "%.*s", (int) (text? len: 0), text? text: "");
    //  A code this client does not know (a newer broker) stays a number.
    return code == 0? PARLEY_ERR_BAD_REPLY: (parley_err_t) code;
}

parley_err_t
client_call (parley_client_t *self, pmsg_type_t expect)
{
    pmsg_destroy (&self->reply);
    client_results_reset (self);
    self->error [0] = 0;
    for (int attempt = 0; attempt < self->attempts; attempt++) {
        parley_err_t rc = client_ensure_session (self);
        if (rc == PARLEY_ERR_STOPPED)
            return client_fail (self, rc, "stopped");
        if (rc != PARLEY_OK) {
            //  The session layer's reason, copied: client_fail writes self->error.
            char why [sizeof (self->error)];
            snprintf (why, sizeof why, "%s", self->error);
            if (rc == PARLEY_ERR_TIMEOUT)
                return client_fail (self, rc, "broker not answering HELLO: %s", why);
            //  Refused for good: there is no broker to talk to.
            return client_fail (self, PARLEY_ERR_LOST, "broker refused HELLO: %s", why);
        }
        pmsg_t *reply;
        rc = client_exchange (self, &self->enc, self->enc_id, &reply);
        if (rc == PARLEY_ERR_STOPPED)
            return client_fail (self, rc, "stopped");
        if (rc == PARLEY_OK && pmsg_type (reply) == PMSG_ERROR
        &&  pmsg_uint (reply, "code", 0) == PERR_NOT_HELLO) {
            plog_info ("broker forgot us (NOT_HELLO); saying HELLO again");
            pmsg_destroy (&reply);
            client_pending_fail (self, PARLEY_ERR_NOT_HELLO);
            client_close_dealer (self);
            continue;
        }
        if (rc == PARLEY_OK) {
            self->reply = reply;
            if (pmsg_type (reply) == expect)
                return PARLEY_OK;
            if (pmsg_type (reply) == PMSG_ERROR)
                return client_error_reply (self, reply);
            return client_fail (self, PARLEY_ERR_BAD_REPLY, "unexpected reply %s to %s",
                                pmsg_type_name (pmsg_type (reply)),
                                pmsg_type_name (expect));
        }
        self->stats.timeouts++;
        plog_warn ("no reply from broker in %" PRId64 " ms; reconnecting", self->request_ms);
        client_close_dealer (self);
    }
    return client_fail (self, PARLEY_ERR_TIMEOUT, "no reply after %d attempts", self->attempts);
}
