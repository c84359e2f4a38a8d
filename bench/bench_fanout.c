// SPDX-License-Identifier: MIT
/*  bench_fanout - "all" fan-out to 100 and to 1,000 agents: deliveries per
    second.

    One process holds the libparley agents and a sender. Each round the
    sender SENDs a batch of `all` messages (64 B bodies); then every agent
    FETCHes (acknowledging its previous batch) until its inbox is empty:
    the FETCHes of all agents are posted together (libparley's pipeline)
    and collected in turn, again for those whose reply said more is
    pending. A delivery is one message in one agent's MAIL reply. The rate
    is deliveries / wall time over all rounds, sending included. The
    broker runs on CPU 0, this process on CPU 1.

    By default two runs against one broker: 100 agents, 20 rounds of 1,000
    messages (RESULT fanout_deliveries), then 1,000 agents, 2 rounds of
    1,000 (RESULT fanout_deliveries_1000): 2,000,000 deliveries each.
    --agents N makes one run of N agents (key fanout_deliveries_N).

    Usage: bench_fanout [--agents N] [--rounds R] [--batch B] [--quick]
*/
#include <czmq.h>
#include "bench_util.h"
#include "tests/lib/testbroker.h"

static int s_batch = 1000;

typedef struct {
    parley_client_t *client;
    uint64_t ack;
    parley_ticket_t ticket;     //  the FETCH in flight, 0: none
    parley_mail_t *mail;        //  its MAIL, filled again by every collect
} s_agent_t;

static void
s_fetch (s_agent_t *agent)
{
    bench_check (agent->client, parley_client_post_fetch (agent->client, agent->ack, 0, false,
                                                          &agent->ticket), "FETCH");
}

//  Takes one agent's MAIL reply; returns the messages it carried and
//  fetches again while the broker says more is pending.
static long
s_on_mail (s_agent_t *agent)
{
    bench_check (agent->client, parley_client_collect_mail (agent->client, agent->ticket,
                                                            &agent->mail), "FETCH");
    agent->ticket = 0;
    size_t count = parley_mail_count (agent->mail);
    if (count > 0)
        agent->ack = parley_message_seq (parley_mail_at (agent->mail, count - 1));
    if (parley_mail_pending (agent->mail) > 0)
        s_fetch (agent);
    return (long) count;
}

//  One run: `count` agents named <prefix>NNNN, `rounds` rounds; prints
//  RESULT `key`. Returns false when a delivery was missing.
static bool
s_run (const char *router, const char *prefix, int count, int rounds, const char *key)
{
    s_agent_t *agents = calloc ((size_t) count, sizeof (s_agent_t));
    for (int i = 0; i < count; i++) {
        char name [32];
        snprintf (name, sizeof name, "%s%04d", prefix, i);
        agents [i].client = bench_client (router, name);
    }
    char sender_name [32];
    snprintf (sender_name, sizeof sender_name, "%ssrc", prefix);
    parley_client_t *sender = bench_client (router, sender_name);
    char body [64];
    memset (body, 'x', sizeof body);
    parley_outbox_t *batch = parley_outbox_new ();
    for (int i = 0; i < s_batch; i++)
        parley_outbox_to (batch, "all", body, sizeof body);
    parley_sent_t *sent = NULL;

    long deliveries = 0;
    int64_t start = pclock_mono_us ();
    for (int round = 0; round < rounds; round++) {
        bench_check (sender, parley_client_send (sender, batch, &sent), "SEND");
        if (parley_sent_accepted (sent) != (size_t) s_batch) {
            fprintf (stderr, "bench_fanout: the broker did not accept the whole batch\n");
            exit (1);
        }
        for (int i = 0; i < count; i++)
            s_fetch (&agents [i]);
        for (bool busy = true; busy; ) {
            busy = false;
            for (int i = 0; i < count; i++)
                if (agents [i].ticket) {
                    deliveries += s_on_mail (&agents [i]);
                    busy = busy || agents [i].ticket;
                }
        }
    }
    double seconds = (double) (pclock_mono_us () - start) / 1e6;
    long expected = (long) rounds * s_batch * count;
    printf ("bench_fanout: %d agents, %d rounds of %d 'all' messages: %ld deliveries "
            "(expected %ld) in %.2f s\n", count, rounds, s_batch, deliveries, expected, seconds);
    bench_result (key, deliveries / seconds, "deliveries/s");
    if (deliveries != expected)
        fprintf (stderr, "bench_fanout: %ld deliveries, expected %ld\n", deliveries, expected);
    for (int i = 0; i < count; i++) {
        parley_mail_destroy (&agents [i].mail);
        bench_client_leave (&agents [i].client);
    }
    bench_client_leave (&sender);
    free (agents);
    parley_sent_destroy (&sent);
    parley_outbox_destroy (&batch);
    return deliveries == expected;
}

int
main (int argc, char **argv)
{
    int agents = 0, rounds = 0;
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--agents") == 0 && i + 1 < argc)
            agents = atoi (argv [++i]);
        else if (strcmp (argv [i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi (argv [++i]);
        else if (strcmp (argv [i], "--batch") == 0 && i + 1 < argc)
            s_batch = atoi (argv [++i]);
        else if (strcmp (argv [i], "--quick") == 0)
            quick = true;
    }
    //  Each libparley client holds a few sockets of the one process-wide
    //  context; ZeroMQ's default of 1,024 sockets is too few for 1,000.
    zsys_set_max_sockets (0);
    const char *args [] = { "--log-level", "warn", NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker)
        return 1;
    bench_pin (testbroker_pid (broker), 0);
    bench_pin (0, 1);
    const char *router = testbroker_router (broker);
    bool ok;
    if (agents > 0) {
        char key [64];
        snprintf (key, sizeof key, "fanout_deliveries_%d", agents);
        ok = s_run (router, "fan", agents, rounds ? rounds : quick ? 3 : 20, key);
    }
    else
        ok = s_run (router, "fan", 100, rounds ? rounds : quick ? 3 : 20, "fanout_deliveries")
          && s_run (router, "wide", 1000, rounds ? rounds : quick ? 1 : 2,
                    "fanout_deliveries_1000");
    return testbroker_stop (&broker) == 0 && ok ? 0 : 1;
}
