// SPDX-License-Identifier: MIT
/*  example.c - a small complete Parley agent on libparley.

    It says HELLO, sends itself a message, fetches and acknowledges it,
    writes a key of the shared state and reads it back, and says BYE.
    Build it against the installed library:

        cc example.c $(pkg-config --cflags --libs parley) -o example
        ./example tcp://127.0.0.1:5555 Example1

    Exit code 0 when every step worked, 1 otherwise (the reason on stderr).
*/
#include <parley/client.h>
#include <stdio.h>
#include <string.h>

static int
s_fail (parley_client_t *client, const char *what, parley_err_t rc)
{
    fprintf (stderr, "%s failed: %s (%s)\n", what, parley_strerror (rc),
             parley_client_error_text (client));
    parley_client_destroy (&client);
    return 1;
}

int
main (int argc, char *argv [])
{
    const char *endpoint = argc > 1? argv [1]: "tcp://127.0.0.1:5555";
    const char *agent = argc > 2? argv [2]: "Example1";

    parley_client_t *client = parley_client_new (endpoint, agent);
    parley_client_add_cap (client, "example");
    parley_client_set_connect_attempts (client, 5);
    parley_err_t rc = parley_client_connect (client);
    if (rc != PARLEY_OK)
        return s_fail (client, "HELLO", rc);
    const parley_welcome_t *welcome = parley_client_welcome (client);
    printf ("welcome: world %s %llu cells, heartbeat %llu ms\n", welcome->world_kind,
            (unsigned long long) welcome->world_width,
            (unsigned long long) welcome->heartbeat_ms);

    //  A message to ourselves, so the example needs no second agent.
    const char *text = "hello from the example";
    parley_outgoing_t message = { .to = agent, .body = text, .body_len = strlen (text) };
    parley_sent_t sent;
    rc = parley_client_send (client, &message, 1, &sent);
    if (rc != PARLEY_OK || sent.accepted != 1)
        return s_fail (client, "SEND", rc);
    printf ("sent: seq %llu\n", (unsigned long long) sent.seqs [0]);

    parley_mail_batch_t mail;
    rc = parley_client_fetch (client, 0, 10, false, &mail);
    if (rc != PARLEY_OK)
        return s_fail (client, "FETCH", rc);
    uint64_t last = 0;
    for (size_t i = 0; i < mail.count; i++) {
        printf ("mail: from %s: %.*s\n", mail.messages [i].from,
                (int) mail.messages [i].body_len, mail.messages [i].body);
        last = mail.messages [i].seq;
    }
    rc = parley_client_ack (client, last);
    if (rc != PARLEY_OK)
        return s_fail (client, "ACK", rc);
    printf ("acked: %llu\n", (unsigned long long) last);

    //  Shared state: values are msgpack; scalars have helpers.
    char key [128];
    snprintf (key, sizeof key, "example.%s", agent);
    unsigned char value [64];
    size_t size = parley_pack_str (value, sizeof value, "done");
    parley_op_t op = { .op = PARLEY_OP_SET, .key = key, .value = value, .value_size = size };
    parley_written_t written;
    rc = parley_client_write (client, &op, 1, &written);
    if (rc != PARLEY_OK)
        return s_fail (client, "WRITE", rc);
    const char *keys [] = { key };
    parley_state_t state;
    rc = parley_client_get (client, keys, 1, &state);
    if (rc != PARLEY_OK || state.count != 1)
        return s_fail (client, "GET", rc);
    char back [64] = "";
    parley_value_str (state.entries [0].value, state.entries [0].value_size, back, sizeof back);
    printf ("state: %s = %s (seq %llu)\n", key, back, (unsigned long long) state.entries [0].seq);

    rc = parley_client_bye (client, false);
    printf ("bye: %s\n", parley_strerror (rc));
    parley_client_destroy (&client);
    return rc == PARLEY_OK? 0: 1;
}
