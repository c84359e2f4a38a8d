// SPDX-License-Identifier: MIT
/*  check_mailroom - the broker's message queue in-process, without
    sockets: posting to one agent, to "all" and to a channel, the seq
    order, FETCH from the head or after the stream cursor, the ack clamp
    and release, both overflow policies, item errors, wake-ups and BYE
    forget. The same paths over the wire are in check_broker_mail.
*/
#include <check.h>
#include <string.h>
#include "broker/core/agents.h"
#include "broker/core/mail.h"
#include "broker/core/mailroom.h"
#include "lib/testsuite.h"

#define BIG (1024 * 1024)

static mailroom_limits_t
limits (size_t max_inbox, overflow_t overflow)
{
    mailroom_limits_t lim = {
        .max_inbox = max_inbox, .max_inbox_bytes = BIG, .max_channel = 100,
        .max_channel_bytes = BIG, .max_channels = 4, .max_body = 1024,
        .max_queued_bytes = 64 * BIG, .overflow = overflow
    };
    return lim;
}

static uint64_t
post (mailroom_t *room, agent_t *from, const char *to, const char *body)
{
    return mailroom_post_direct (room, 0, from, to, strlen (to), body, strlen (body), false);
}

//  The seqs one FETCH returns, as "1,2,3". As the broker does, what was
//  handed out moves the ack clamp (OP_DELIVER).
static const char *
fetch (mailroom_t *room, agent_t *agent, size_t max, bool stream)
{
    static char text [256];
    text [0] = 0;
    size_t count = mailroom_fetch_begin (room, agent, max, BIG, stream);
    mailroom_deliver (room, agent, mailroom_fetch_through (room));
    for (size_t i = 0; i < count; i++) {
        const mail_t *mail = mailroom_fetch_next (room);
        ck_assert_ptr_nonnull (mail);
        size_t used = strlen (text);
        snprintf (text + used, sizeof text - used, "%s%llu", i? ",": "",
                  (unsigned long long) mail->seq);
    }
    return text;
}

START_TEST (test_direct_fetch_ack)
{
    agents_t *agents = agents_new (8);
    agent_t *alice = agents_create (agents, "Alice");
    agent_t *bob = agents_create (agents, "Bob");
    mailroom_limits_t lim = limits (10, OVERFLOW_REJECT);
    mailroom_t *room = mailroom_new (agents, &lim);
    ck_assert_uint_eq (post (room, alice, "Bob", "one"), 1);
    ck_assert_uint_eq (post (room, alice, "Bob", "two"), 2);
    ck_assert_uint_eq (post (room, bob, "Alice", "back"), 3);
    const mailroom_counters_t *c = mailroom_counters (room);
    ck_assert_uint_eq (c->mail_seq, 3);
    ck_assert_uint_eq (c->accepted, 3);
    ck_assert_uint_eq (c->queued, 3);

    //  The body and addresses as posted.
    ck_assert_uint_eq (mailroom_fetch_begin (room, bob, 1, BIG, false), 1);
    mailroom_deliver (room, bob, mailroom_fetch_through (room));
    const mail_t *mail = mailroom_fetch_next (room);
    ck_assert_str_eq (mail_from (mail), "Alice");
    ck_assert_str_eq (mail_to (mail), "Bob");
    ck_assert_uint_eq (mail->body_len, 3);
    ck_assert (memcmp (mail_body (mail), "one", 3) == 0);
    ck_assert_uint_eq (mailroom_fetch_remaining (room), 1);

    //  Reading removes nothing: a plain FETCH starts at the head again,
    //  a streaming one after what was handed out.
    ck_assert_str_eq (fetch (room, bob, 10, false), "1,2");
    ck_assert_str_eq (fetch (room, bob, 10, true), "");
    //  The ack is clamped to what FETCH handed out, and releases.
    mailroom_ack (room, bob, 99);
    ck_assert_uint_eq (bob->acked, 2);
    ck_assert_uint_eq (c->queued, 1);
    ck_assert_str_eq (fetch (room, bob, 10, false), "");
    mailroom_ack (room, bob, 1);                //  lower: ignored
    ck_assert_uint_eq (bob->acked, 2);
    ck_assert_str_eq (fetch (room, alice, 10, false), "3");

    //  Item errors are per SEND: reset before, read after.
    mailroom_errors_reset (room);
    ck_assert_uint_eq (post (room, alice, "Nobody", "lost"), 0);
    ck_assert_uint_eq (mailroom_errors_count (room), 1);
    ck_assert_int_eq (mailroom_error_at (room, 0)->code, PERR_UNKNOWN_RECIPIENT);
    mailroom_errors_reset (room);
    ck_assert_uint_eq (mailroom_errors_count (room), 0);
    mailroom_destroy (&room);
    agents_destroy (&agents);
}
END_TEST

START_TEST (test_all_and_wakeups)
{
    agents_t *agents = agents_new (8);
    agent_t *a = agents_create (agents, "A");
    agent_t *b = agents_create (agents, "B");
    agent_t *c = agents_create (agents, "C");
    mailroom_limits_t lim = limits (10, OVERFLOW_REJECT);
    mailroom_t *room = mailroom_new (agents, &lim);
    const char *body = "to everyone";
    ck_assert_uint_eq (mailroom_post_all (room, 0, a, body, strlen (body), false), 1);
    const mailroom_counters_t *counters = mailroom_counters (room);
    ck_assert_uint_eq (counters->delivered, 2);     //  B and C, not the sender
    ck_assert_uint_eq (counters->queued, 1);        //  one message, two references
    ck_assert_str_eq (fetch (room, a, 10, false), "");
    ck_assert_str_eq (fetch (room, b, 10, false), "1");
    ck_assert_str_eq (fetch (room, c, 10, false), "1");
    //  Each recipient is woken once per turn.
    agent_t *first = mailroom_next_wakeup (room);
    agent_t *second = mailroom_next_wakeup (room);
    ck_assert ((first == b && second == c) || (first == c && second == b));
    ck_assert_ptr_null (mailroom_next_wakeup (room));
    //  Released when the last recipient acknowledges.
    mailroom_ack (room, b, 1);
    ck_assert_uint_eq (counters->queued, 1);
    mailroom_ack (room, c, 1);
    ck_assert_uint_eq (counters->queued, 0);
    mailroom_destroy (&room);
    agents_destroy (&agents);
}
END_TEST

START_TEST (test_overflow_policies)
{
    agents_t *agents = agents_new (8);
    agent_t *a = agents_create (agents, "A");
    agent_t *b = agents_create (agents, "B");
    mailroom_limits_t lim = limits (2, OVERFLOW_REJECT);
    mailroom_t *room = mailroom_new (agents, &lim);
    mailroom_errors_reset (room);
    ck_assert_uint_gt (post (room, a, "B", "1"), 0);
    ck_assert_uint_gt (post (room, a, "B", "2"), 0);
    ck_assert_uint_eq (post (room, a, "B", "3"), 0);
    ck_assert_int_eq (mailroom_error_at (room, 0)->code, PERR_INBOX_FULL);
    ck_assert_uint_eq (mailroom_counters (room)->rejected, 1);
    ck_assert_str_eq (fetch (room, b, 10, false), "1,2");
    mailroom_destroy (&room);
    agents_destroy (&agents);

    //  Drop-oldest: the newest always gets in, every drop is counted.
    agents = agents_new (8);
    a = agents_create (agents, "A");
    b = agents_create (agents, "B");
    lim = limits (2, OVERFLOW_DROP_OLDEST);
    room = mailroom_new (agents, &lim);
    for (int i = 0; i < 5; i++)
        ck_assert_uint_gt (post (room, a, "B", "x"), 0);
    ck_assert_uint_eq (mailroom_counters (room)->dropped, 3);
    ck_assert_str_eq (fetch (room, b, 10, false), "4,5");
    mailroom_destroy (&room);
    agents_destroy (&agents);
}
END_TEST

START_TEST (test_channels_and_forget)
{
    agents_t *agents = agents_new (8);
    agent_t *a = agents_create (agents, "A");
    agent_t *b = agents_create (agents, "B");
    mailroom_limits_t lim = limits (10, OVERFLOW_REJECT);
    mailroom_t *room = mailroom_new (agents, &lim);
    ck_assert_int_eq (mailroom_listen (room, b, "news"), PERR_NONE);
    const char *body = "extra";
    ck_assert_uint_eq (mailroom_post_channel (room, 0, a, "news", 4, body, 5, false), 1);
    ck_assert_str_eq (fetch (room, b, 10, false), "1");
    ck_assert_str_eq (fetch (room, a, 10, false), "");
    ck_assert_int_eq (mailroom_unlisten (room, b, "news"), PERR_NONE);
    ck_assert_int_eq (mailroom_unlisten (room, b, "news"), PERR_NOT_LISTENING);
    //  Queued channel mail stays queued after UNLISTEN.
    ck_assert_str_eq (fetch (room, b, 10, false), "1");
    //  Forget releases the agent's mail and unregisters it.
    ck_assert_uint_eq (post (room, a, "B", "more"), 2);
    ck_assert_uint_eq (mailroom_counters (room)->queued, 2);
    mailroom_forget (room, &b);
    ck_assert_ptr_null (b);
    ck_assert_ptr_null (agents_lookup (agents, "B"));
    ck_assert_uint_eq (mailroom_counters (room)->queued, 0);
    mailroom_destroy (&room);
    agents_destroy (&agents);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("mailroom");
    TCase *tc = tcase_create ("mailroom");
    tcase_add_test (tc, test_direct_fetch_ack);
    tcase_add_test (tc, test_all_and_wakeups);
    tcase_add_test (tc, test_overflow_policies);
    tcase_add_test (tc, test_channels_and_forget);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
