// SPDX-License-Identifier: MIT
/*  check_hello_late - a WELCOME that comes after the client gave its HELLO
    up, against the real broker over real sockets.

    The broker answers a HELLO it read late (it was stopped, or loaded):
    it registers the id on that connection with a new resume token and
    sends the WELCOME there. A client that had given the HELLO up and said
    HELLO again on a fresh connection never saw that token: its next HELLO
    carried the old one, the broker refused it UNAUTHORIZED (the id is
    held for the new token), and the client took the refusal as final.
    libparley asks again on the connection that carried only HELLOs, so the
    late WELCOME reaches it, its token is kept, and the session comes up.

    The lateness is made, not hoped for: the client talks to the broker
    through a small proxy (a ROUTER in front, a DEALER to the broker per
    client connection, so the broker sees the client's connections as
    they are) that passes requests at once and holds the broker's replies
    until it has passed a second HELLO, which the client sends only after
    giving the first up. No sleep decides anything.
*/
#include <check.h>
#include <czmq.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "parley/client.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  ---------------------------------------------------------------------
//  The proxy

#define S_PEERS 8
#define S_HELD 16

typedef struct {
    char broker [256];
    char endpoint [256];            //  where clients connect
    atomic_bool stop;
    atomic_int hellos;              //  HELLOs passed to the broker
    pthread_t thread;
    void *ctx, *front;
} proxy_t;

typedef struct {
    zmq_msg_t id;
    void *dealer;
} s_peer_t;

static void *
s_proxy_run (void *arg)
{
    proxy_t *self = arg;
    s_peer_t peers [S_PEERS];
    size_t count = 0;
    zmq_msg_t held_id [S_HELD], held_body [S_HELD];
    size_t held = 0;
    while (!atomic_load (&self->stop)) {
        zmq_pollitem_t items [1 + S_PEERS] = { { self->front, 0, ZMQ_POLLIN, 0 } };
        for (size_t i = 0; i < count; i++)
            items [1 + i] = (zmq_pollitem_t) { peers [i].dealer, 0, ZMQ_POLLIN, 0 };
        if (zmq_poll (items, (int) (1 + count), 50) <= 0)
            continue;
        if (items [0].revents & ZMQ_POLLIN) {
            zmq_msg_t id, body;
            zmq_msg_init (&id);
            zmq_msg_init (&body);
            zmq_msg_recv (&id, self->front, 0);
            zmq_msg_recv (&body, self->front, 0);
            size_t p = 0;
            while (p < count && !(zmq_msg_size (&peers [p].id) == zmq_msg_size (&id)
                   && memcmp (zmq_msg_data (&peers [p].id), zmq_msg_data (&id),
                              zmq_msg_size (&id)) == 0))
                p++;
            if (p == count && count < S_PEERS) {
                peers [p].dealer = zmq_socket (self->ctx, ZMQ_DEALER);
                int zero = 0;
                zmq_setsockopt (peers [p].dealer, ZMQ_LINGER, &zero, sizeof zero);
                zmq_connect (peers [p].dealer, self->broker);
                zmq_msg_init (&peers [p].id);
                zmq_msg_copy (&peers [p].id, &id);
                count++;
            }
            perr_t err;
            uint64_t request;
            char why [128];
            pmsg_t *msg = pmsg_decode (zmq_msg_data (&body), zmq_msg_size (&body), NULL, &err,
                                       &request, why, sizeof why);
            if (msg && pmsg_type (msg) == PMSG_HELLO)
                atomic_fetch_add (&self->hellos, 1);
            pmsg_destroy (&msg);
            if (p < count)
                zmq_msg_send (&body, peers [p].dealer, 0);
            zmq_msg_close (&id);
            zmq_msg_close (&body);
        }
        for (size_t i = 0; i < count; i++) {
            if (!(items [1 + i].revents & ZMQ_POLLIN) || held == S_HELD)
                continue;
            zmq_msg_init (&held_body [held]);
            zmq_msg_recv (&held_body [held], peers [i].dealer, 0);
            zmq_msg_init (&held_id [held]);
            zmq_msg_copy (&held_id [held], &peers [i].id);
            held++;
        }
        //  Replies go once the client has given its first HELLO up.
        if (atomic_load (&self->hellos) >= 2) {
            for (size_t i = 0; i < held; i++) {
                zmq_msg_send (&held_id [i], self->front, ZMQ_SNDMORE);
                zmq_msg_send (&held_body [i], self->front, 0);
            }
            held = 0;
        }
    }
    for (size_t i = 0; i < held; i++) {
        zmq_msg_close (&held_id [i]);
        zmq_msg_close (&held_body [i]);
    }
    for (size_t i = 0; i < count; i++) {
        zmq_close (peers [i].dealer);
        zmq_msg_close (&peers [i].id);
    }
    return NULL;
}

static proxy_t *
s_proxy_start (const char *broker)
{
    proxy_t *self = calloc (1, sizeof *self);
    snprintf (self->broker, sizeof self->broker, "%s", broker);
    self->ctx = zmq_ctx_new ();
    self->front = zmq_socket (self->ctx, ZMQ_ROUTER);
    int zero = 0;
    zmq_setsockopt (self->front, ZMQ_LINGER, &zero, sizeof zero);
    ck_assert_int_eq (zmq_bind (self->front, "tcp://127.0.0.1:*"), 0);
    size_t size = sizeof self->endpoint;
    zmq_getsockopt (self->front, ZMQ_LAST_ENDPOINT, self->endpoint, &size);
    ck_assert_int_eq (pthread_create (&self->thread, NULL, s_proxy_run, self), 0);
    return self;
}

static void
s_proxy_stop (proxy_t **self_p)
{
    proxy_t *self = *self_p;
    atomic_store (&self->stop, true);
    pthread_join (self->thread, NULL);
    zmq_close (self->front);
    zmq_ctx_term (self->ctx);
    free (self);
    *self_p = NULL;
}

//  ---------------------------------------------------------------------

//  A token this broker never issued: one kept from another broker's run
//  (a broker restarted without its journal issues new ones).
#define STALE_TOKEN "00112233445566778899aabbccddeeff"

static void
s_write_token (const char *path, const char *token)
{
    FILE *file = fopen (path, "w");
    ck_assert_ptr_nonnull (file);
    fprintf (file, "%s\n", token);
    fclose (file);
}

static void
s_read_token (const char *path, char *token, size_t size)
{
    FILE *file = fopen (path, "r");
    ck_assert_ptr_nonnull (file);
    ck_assert (fgets (token, (int) size, file));
    fclose (file);
    token [strcspn (token, "\n")] = 0;
}

START_TEST (test_late_welcome_token_kept)
{
    testbroker_t *broker = testcheck_start (NULL);
    proxy_t *proxy = s_proxy_start (testbroker_router (broker));
    tproc_dir_t *dir = tproc_dir_new ();
    char *token_file = tproc_dir_path (dir, "Late.token");
    s_write_token (token_file, STALE_TOKEN);

    //  The first HELLO reaches the broker, which registers the id with a
    //  new token (the stale one names no registration) and answers; the
    //  proxy holds the WELCOME past the client's 300 ms. The client says
    //  HELLO again and must come up, with the broker's new token.
    parley_client_t *client = parley_client_new (proxy->endpoint, "Late");
    ck_assert_int_eq (parley_client_set_security (client, NULL, NULL, token_file), PARLEY_OK);
    parley_client_set_timeout (client, 300, 100);
    parley_client_set_connect_attempts (client, 20);
    ck_assert_msg (parley_client_connect (client) == PARLEY_OK, "HELLO: %s",
                   parley_client_error_text (client));
    ck_assert_int_ge (atomic_load (&proxy->hellos), 2);
    ck_assert_uint_eq (parley_client_counter (client, PARLEY_COUNTER_HELLOS), 1);
    ck_assert_uint_ge (parley_client_counter (client, PARLEY_COUNTER_HELLO_FAILURES), 1);
    ck_assert_int_eq (parley_client_heartbeat (client), PARLEY_OK);
    char token [80];
    s_read_token (token_file, token, sizeof token);
    ck_assert_str_ne (token, STALE_TOKEN);

    //  That token is the one the broker holds the id for: a new process
    //  with it takes the id over at once.
    testclient_t *heir = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (heir, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "Late");
    penc_kv_cstr (enc, "token", token);
    pmsg_t *welcome = testclient_call (heir);
    EXPECT (welcome, PMSG_WELCOME);
    pmsg_destroy (&welcome);
    testclient_destroy (&heir);

    parley_client_destroy (&client);
    s_proxy_stop (&proxy);
    free (token_file);
    tproc_dir_destroy (&dir);
    testcheck_stop (&broker);
}
END_TEST

//  A refusal that was an answer, not silence, still ends the session at
//  once: a token that is wrong for a registration made by someone else.
START_TEST (test_wrong_token_still_refused)
{
    testbroker_t *broker = testcheck_start (NULL);
    testclient_t *owner = testcheck_agent (broker, "Held");
    tproc_dir_t *dir = tproc_dir_new ();
    char *token_file = tproc_dir_path (dir, "Held.token");
    s_write_token (token_file, STALE_TOKEN);
    parley_client_t *client = parley_client_new (testbroker_router (broker), "Held");
    ck_assert_int_eq (parley_client_set_security (client, NULL, NULL, token_file), PARLEY_OK);
    parley_client_set_timeout (client, 2000, 100);
    ck_assert_int_eq (parley_client_connect (client), PARLEY_ERR_UNAUTHORIZED);
    parley_client_destroy (&client);
    testclient_destroy (&owner);
    free (token_file);
    tproc_dir_destroy (&dir);
    testcheck_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("hello_late");
    TCase *tc = tcase_create ("hello_late");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_late_welcome_token_kept);
    tcase_add_test (tc, test_wrong_token_still_refused);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
