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

int
main (int argc, char *argv [])
{
    const char *endpoint = argc > 1? argv [1]: "tcp://127.0.0.1:5555";
    const char *agent = argc > 2? argv [2]: "Example1";

    parley_client_t *client = parley_client_new (endpoint, agent);
    if (!client)
        return 1;
    //  Requests take and give objects: made once, reused, destroyed at the end.
    parley_outbox_t *message = parley_outbox_new ();
    parley_ops_t *ops = parley_ops_new ();
    parley_sent_t *sent = NULL;
    parley_mail_t *mail = NULL;
    parley_state_t *state = NULL;
    const char *failed = NULL;
    parley_err_t rc;

    parley_client_add_cap (client, "example");
    parley_client_set_connect_attempts (client, 5);
    if ((rc = parley_client_connect (client)) != PARLEY_OK) {
        failed = "HELLO";
        goto done;
    }
    const parley_welcome_t *welcome = parley_client_welcome (client);
    printf ("welcome: world %s %llu cells, heartbeat %llu ms\n",
            parley_welcome_world_kind (welcome),
            (unsigned long long) parley_welcome_world_width (welcome),
            (unsigned long long) parley_welcome_heartbeat_ms (welcome));

    //  A message to ourselves, so the example needs no second agent.
    const char *text = "hello from the example";
    parley_outbox_to (message, agent, text, strlen (text));
    rc = parley_client_send (client, message, &sent);
    if (rc != PARLEY_OK || parley_sent_accepted (sent) != 1) {
        failed = "SEND";
        goto done;
    }
    printf ("sent: seq %llu\n", (unsigned long long) parley_sent_seq (sent, 0));

    if ((rc = parley_client_fetch (client, 0, 10, false, &mail)) != PARLEY_OK) {
        failed = "FETCH";
        goto done;
    }
    for (size_t i = 0; i < parley_mail_count (mail); i++) {
        const parley_message_t *m = parley_mail_at (mail, i);
        printf ("mail: from %s: %.*s\n", parley_message_from (m),
                (int) parley_message_body_size (m), (const char *) parley_message_body (m));
    }
    uint64_t last = parley_mail_last_seq (mail);
    if ((rc = parley_client_ack (client, last)) != PARLEY_OK) {
        failed = "ACK";
        goto done;
    }
    printf ("acked: %llu\n", (unsigned long long) last);

    //  Shared state: values are msgpack; scalars have helpers.
    char key [128];
    snprintf (key, sizeof key, "example.%s", agent);
    unsigned char value [64];
    parley_ops_set (ops, key, value, parley_pack_str (value, sizeof value, "done"));
    if ((rc = parley_client_write (client, ops, NULL)) != PARLEY_OK) {
        failed = "WRITE";
        goto done;
    }
    const char *keys [] = { key };
    rc = parley_client_get (client, keys, 1, &state);
    const parley_entry_t *entry = rc == PARLEY_OK ? parley_state_find (state, key) : NULL;
    if (!entry) {
        failed = "GET";
        goto done;
    }
    char back [64] = "";
    parley_value_str (parley_entry_value (entry), parley_entry_value_size (entry), back,
                      sizeof back);
    printf ("state: %s = %s (seq %llu)\n", key, back,
            (unsigned long long) parley_entry_seq (entry));

    rc = parley_client_bye (client, false);
    printf ("bye: %s\n", parley_strerror (rc));
done:
    if (failed)
        fprintf (stderr, "%s failed: %s (%s)\n", failed, parley_strerror (rc),
                 parley_client_error_text (client));
    parley_state_destroy (&state);
    parley_mail_destroy (&mail);
    parley_sent_destroy (&sent);
    parley_ops_destroy (&ops);
    parley_outbox_destroy (&message);
    parley_client_destroy (&client);
    return failed || rc != PARLEY_OK ? 1 : 0;
}
