/*  bench_fanout - "all" fan-out to 100 agents: deliveries per second.

    One process holds 100 DEALER agents (one ZeroMQ context) and a sender.
    Each round the sender SENDs a batch of `all` messages (64 B bodies);
    then every agent FETCHes (max 4096, acknowledging its previous batch)
    until its inbox is empty. A delivery is one message in one agent's MAIL
    reply. The rate is deliveries / wall time over all rounds, sending
    included. The broker runs on CPU 0, this process on CPU 1.

    Usage: bench_fanout [--agents N] [--rounds R] [--batch B] [--quick]
*/
#include "bench_util.h"
#include "tests/lib/testbroker.h"

static int s_agents = 100;
static int s_rounds = 20;
static int s_batch = 1000;

typedef struct {
    bench_conn_t *conn;
    uint64_t ack;
    bool busy;                  //  a FETCH is in flight
} s_agent_t;

static void
s_fetch (s_agent_t *agent)
{
    penc_t *enc = bench_conn_begin (agent->conn, PMSG_FETCH, agent->ack ? 1 : 0);
    if (agent->ack)
        penc_kv_uint (enc, "ack", agent->ack);
    bench_conn_send (agent->conn);
    agent->busy = true;
}

//  Handles one MAIL reply; returns the messages it carried and refetches
//  while the broker says more is pending.
static long
s_on_mail (s_agent_t *agent)
{
    const msgpack_object *mail = bench_conn_recv (agent->conn, 30000);
    bench_expect (mail, "MAIL");
    const msgpack_object *items = pobj_get (mail, "messages");
    size_t n = items->via.array.size;
    agent->busy = false;
    if (n > 0)
        agent->ack = pobj_uint (&items->via.array.ptr [n - 1], "seq", 0);
    if (pobj_uint (mail, "pending", 0) > 0)
        s_fetch (agent);
    return (long) n;
}

int
main (int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--agents") == 0 && i + 1 < argc)
            s_agents = atoi (argv [++i]);
        else if (strcmp (argv [i], "--rounds") == 0 && i + 1 < argc)
            s_rounds = atoi (argv [++i]);
        else if (strcmp (argv [i], "--batch") == 0 && i + 1 < argc)
            s_batch = atoi (argv [++i]);
        else if (strcmp (argv [i], "--quick") == 0)
            s_rounds = 3;
    }
    const char *args [] = { "--log-level", "warn", NULL };
    testbroker_t *broker = testbroker_start (args);
    if (!broker)
        return 1;
    bench_pin (testbroker_pid (broker), 0);
    bench_pin (0, 1);
    const char *router = testbroker_router (broker);

    void *ctx = zmq_ctx_new ();
    s_agent_t *agents = calloc ((size_t) s_agents, sizeof (s_agent_t));
    zmq_pollitem_t *items = calloc ((size_t) s_agents, sizeof (zmq_pollitem_t));
    for (int i = 0; i < s_agents; i++) {
        char name [32];
        snprintf (name, sizeof name, "fan%03d", i);
        agents [i].conn = bench_conn_new_in (ctx, router);
        bench_hello (agents [i].conn, name);
    }
    bench_conn_t *sender = bench_conn_new_in (ctx, router);
    bench_hello (sender, "fansrc");
    char body [64];
    memset (body, 'x', sizeof body);

    long deliveries = 0;
    int64_t start = pclock_mono_us ();
    for (int round = 0; round < s_rounds; round++) {
        penc_t *enc = bench_conn_begin (sender, PMSG_SEND, 1);
        penc_key (enc, "messages");
        msgpack_packer *pk = penc_packer (enc);
        msgpack_pack_array (pk, (uint32_t) s_batch);
        for (int i = 0; i < s_batch; i++) {
            msgpack_pack_map (pk, 2);
            penc_kv_cstr (enc, "to", "all");
            penc_kv_str (enc, "body", body, sizeof body);
        }
        const msgpack_object *sent = bench_call (sender);
        bench_expect (sent, "SENT");
        if (pobj_uint (sent, "accepted", 0) != (uint64_t) s_batch) {
            fprintf (stderr, "bench_fanout: the broker did not accept the whole batch\n");
            return 1;
        }
        for (int i = 0; i < s_agents; i++)
            s_fetch (&agents [i]);
        int busy = s_agents;
        while (busy > 0) {
            for (int i = 0; i < s_agents; i++)
                items [i] = (zmq_pollitem_t) { agents [i].conn->sock, 0, ZMQ_POLLIN, 0 };
            if (zmq_poll (items, s_agents, 30000) <= 0) {
                fprintf (stderr, "bench_fanout: no reply within 30 s\n");
                return 1;
            }
            for (int i = 0; i < s_agents; i++)
                if (items [i].revents & ZMQ_POLLIN) {
                    deliveries += s_on_mail (&agents [i]);
                    if (!agents [i].busy)
                        busy--;
                }
        }
    }
    double seconds = (double) (pclock_mono_us () - start) / 1e6;
    long expected = (long) s_rounds * s_batch * s_agents;
    printf ("bench_fanout: %d agents, %d rounds of %d 'all' messages: %ld deliveries "
            "(expected %ld) in %.2f s\n", s_agents, s_rounds, s_batch, deliveries, expected, seconds);
    bench_result ("fanout_deliveries", deliveries / seconds, "deliveries/s");
    if (deliveries != expected)
        fprintf (stderr, "bench_fanout: %ld deliveries, expected %ld\n", deliveries, expected);

    for (int i = 0; i < s_agents; i++)
        bench_conn_destroy (&agents [i].conn);
    bench_conn_destroy (&sender);
    zmq_ctx_term (ctx);
    free (agents);
    free (items);
    return testbroker_stop (&broker) == 0 && deliveries == expected ? 0 : 1;
}
