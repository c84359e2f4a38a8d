// SPDX-License-Identifier: MIT
/*  relay.c - many messages from one agent to another, in order: the
    sender pipelines its SENDs (no reply waited for each, the broker
    confirms them together), the receiver has its mail pushed (CONSUME)
    and acknowledges on take. Both clients live in this one thread, which
    alternates between them.

        cc relay.c $(pkg-config --cflags --libs parley) -o relay
        ./relay tcp://127.0.0.1:5555 20000

    Prints what it counted; exit code 0 when every message arrived once,
    in order, and no SEND failed; 1 otherwise (the reason on stderr).
*/
#include <parley/client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

//  The receiver's side: every pushed batch taken, each body checked to be
//  the next number. False at the first message out of order.
static bool
s_take (parley_client_t *receiver, parley_mail_t **mail_p, long *next)
{
    while (parley_client_take_pushed (receiver, mail_p))
        for (size_t i = 0; i < parley_mail_count (*mail_p); i++) {
            const parley_message_t *m = parley_mail_at (*mail_p, i);
            char body [32];
            snprintf (body, sizeof body, "%.*s", (int) parley_message_body_size (m),
                      (const char *) parley_message_body (m));
            if (atol (body) != *next) {
                fprintf (stderr, "message %ld arrived where %ld was due\n", atol (body), *next);
                return false;
            }
            (*next)++;
        }
    return true;
}

int
main (int argc, char *argv [])
{
    const char *endpoint = argc > 1 ? argv [1] : "tcp://127.0.0.1:5555";
    long count = argc > 2 ? atol (argv [2]) : 20000;
    parley_client_t *sender = parley_client_new (endpoint, "RelaySender");
    parley_client_t *receiver = parley_client_new (endpoint, "RelayReceiver");
    parley_outbox_t *out = parley_outbox_new ();
    parley_mail_t *mail = NULL;
    parley_failure_t *failure = NULL;
    long next = 0, failures = 0;
    int status = 1;
    if (!sender || !receiver || !out)
        goto done;
    parley_client_ack_policy (receiver, PARLEY_ACK_ON_TAKE);
    if (parley_client_connect (sender) != PARLEY_OK
    ||  parley_client_connect (receiver) != PARLEY_OK
    ||  parley_client_consume (receiver, 1024, 0) != PARLEY_OK) {
        fprintf (stderr, "setup failed: %s / %s\n", parley_client_error_text (sender),
                 parley_client_error_text (receiver));
        goto done;
    }
    for (long i = 0; i < count; i++) {
        char body [32];
        int len = snprintf (body, sizeof body, "%ld", i);
        parley_outbox_reset (out);
        parley_outbox_to (out, "RelayReceiver", body, (size_t) len);
        parley_err_t rc = parley_client_send_pipelined (sender, out, NULL);
        if (rc != PARLEY_OK) {
            fprintf (stderr, "SEND %ld: %s: %s\n", i, parley_strerror (rc),
                     parley_client_error_text (sender));
            goto done;
        }
        if (i % 64 == 0 && !s_take (receiver, &mail, &next))
            goto done;
    }
    if (parley_client_send_flush (sender) != PARLEY_OK) {
        fprintf (stderr, "flush: %s\n", parley_client_error_text (sender));
        goto done;
    }
    while (parley_client_send_failure (sender, &failure)) {
        fprintf (stderr, "SEND %llu message %zu failed: %s: %s\n",
                 (unsigned long long) parley_failure_ticket (failure),
                 parley_failure_index (failure), parley_strerror (parley_failure_code (failure)),
                 parley_failure_message (failure));
        failures++;
    }
    time_t deadline = time (NULL) + 60;
    while (next < count && time (NULL) < deadline) {
        parley_client_wait (receiver, 100);
        if (!s_take (receiver, &mail, &next))
            goto done;
    }
    //  The last take acknowledged the last batch.
    s_take (receiver, &mail, &next);
    printf ("relay: %ld sent, %ld received in order, %ld failures, %llu duplicates left out\n",
            count, next, failures,
            (unsigned long long) parley_client_counter (receiver, PARLEY_COUNTER_DUPLICATES));
    status = next == count && failures == 0 ? 0 : 1;
    parley_client_bye (sender, true);
    parley_client_bye (receiver, true);
done:
    parley_failure_destroy (&failure);
    parley_mail_destroy (&mail);
    parley_outbox_destroy (&out);
    parley_client_destroy (&receiver);
    parley_client_destroy (&sender);
    return status;
}
