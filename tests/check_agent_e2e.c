// SPDX-License-Identifier: MIT
/*  check_agent_e2e - real parley-broker, real parley-agent processes over
    real loopback sockets.

    - three agents with the heuristic policy explore the default world to
      full coverage: every agent ends with "world fully explored" (or its
      own end action, taken when the world said done), and a separate
      client's WELCOME confirms done from the broker's side; the agents
      talked to each other (messages sent and received);
    - the broker is stopped in the middle of a run and started again on the
      same endpoints: the agent reconnects, says HELLO again and carries on
      to --max-steps, exiting 0;
    - an agent resumes with its memories from its memory directory;
    - an llm agent whose model answers slower than the broker's liveness
      is kept alive by HEARTBEATs sent while it waits (not expired);
    - a step makes one request, its STEP, which carries the step number
      and the move (seen on the tap);
    - an agent killed before its memory was saved gets its mail again;
    - --help documents the flags, variables and exit codes; a bad id is a
      usage error.
    No timing assertions: waits have generous deadlines, and ordering uses
    what the processes print.
*/
#include <check.h>
#include <czmq.h>
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include "agent/http.h"
#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/openai_server.h"
#include "lib/testagent.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/tproc.h"
#include "lib/testsuite.h"

#define DEADLINE_MS 90000

//  The last few KiB of a process's output, for failure messages: Check
//  refuses (and exits) on a message over its size limit.
static const char *
s_tail (const char *text)
{
    size_t len = strlen (text);
    return len > 1500? text + len - 1500: text;
}

static tproc_t *
start_agent (const char *router, const char *id, const char *memdir, const char *const *extra)
{
    tproc_t *proc = tproc_agent (router, id, memdir, "info", extra);
    ck_assert_ptr_nonnull (proc);
    return proc;
}

START_TEST (test_three_agents_full_coverage)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    tproc_dir_t *dir = tproc_dir_new ();
    //  --team-size: the three start together. Without it, on a loaded
    //  machine one agent could explore the whole world before the others
    //  had registered, and nobody would receive a message.
    const char *extra[] = { "--max-steps", "60", "--step-delay-ms", "20", "--team-size", "3",
                            NULL };
    tproc_t *agents[3];
    for (int i = 0; i < 3; i++) {
        char id[16];
        snprintf (id, sizeof (id), "Agent%d", i + 1);
        char *mem = tproc_dir_path (dir, id);
        agents[i] = start_agent (testbroker_router (broker), id, mem, extra);
        free (mem);
    }
    uint64_t sent = 0, received = 0;
    for (int i = 0; i < 3; i++) {
        int status = tproc_wait (agents[i], DEADLINE_MS);
        const char *out = tproc_out (agents[i]);
        ck_assert_msg (status == 0, "agent %d exit %d\n%s\n%s", i + 1, status, s_tail (out),
                       s_tail (tproc_err (agents[i])));
        ck_assert_msg (strstr (out, "] step 1 pos "), "no progress lines:\n%s", s_tail (out));
        const char *end = testagent_summary (out, "end");
        ck_assert_msg (streq (end, "\"world fully explored\"") || streq (end, "\"chose to end\""),
                       "agent %d ended with %s", i + 1, end);
        ck_assert_str_eq (testagent_summary (out, "coverage"), "100%");
        sent += strtoull (testagent_summary (out, "sent"), NULL, 10);
        received += strtoull (testagent_summary (out, "received"), NULL, 10);
        ck_assert (strstr (out, "] found: "));
        tproc_destroy (&agents[i]);
    }
    ck_assert_uint_gt (sent, 0);
    ck_assert_uint_gt (received, 0);
    //  The broker agrees: the world is done.
    testclient_t *client = testclient_new (testbroker_router (broker));
    pmsg_t *welcome = testclient_hello (client, "observer");
    ck_assert_int_eq (pmsg_type (welcome), PMSG_WELCOME);
    const msgpack_object *world = pmsg_field (welcome, "world");
    ck_assert_ptr_nonnull (world);
    ck_assert (pobj_bool (world, "done", false));
    pmsg_destroy (&welcome);
    testclient_destroy (&client);
    tproc_dir_destroy (&dir);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

START_TEST (test_broker_restart)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *router = tproc_dir_endpoint (dir, "router");
    char *pub = tproc_dir_endpoint (dir, "pub");
    const char *args[] = { "--router", router, "--pub", pub, "--liveness-ms", "2000", NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    char *mem = tproc_dir_path (dir, "mem");
    //  The default request timeout (3 s), not less: a HELLO that the new
    //  broker, just started on a loaded machine, answers after the agent
    //  gave up on it still registers the id, under a token the agent never
    //  read, and every later HELLO is refused (UNAUTHORIZED) while the
    //  agent's last steps run out without a broker.
    const char *extra[] = { "--max-steps", "12", "--step-delay-ms", "150",
                            "--no-stop-when-explored", "--request-timeout-ms", "3000", NULL };
    tproc_t *agent = start_agent (router, "Rover", mem, extra);
    ck_assert_msg (tproc_wait_for (agent, "step 3 ", DEADLINE_MS), "agent made no progress:\n%s",
                   s_tail (tproc_err (agent)));
    ck_assert_int_eq (testbroker_stop (&broker), 0);
    //  While the broker is gone the agent keeps trying; it must not exit
    //  (1.5 s by the clock: tproc_read returns at each line it logs).
    int64_t gone_until = pclock_mono_ms () + 1500;
    for (int64_t left; (left = gone_until - pclock_mono_ms ()) > 0; )
        if (!tproc_read (agent, (int) left))
            break;
    ck_assert_msg (!tproc_exited (agent), "agent exited without a broker:\n%s",
                   s_tail (tproc_err (agent)));
    broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    int status = tproc_wait (agent, DEADLINE_MS);
    const char *out = tproc_out (agent);
    ck_assert_msg (status == 0, "exit %d\n%s\n%s", status, s_tail (out),
                   s_tail (tproc_err (agent)));
    ck_assert_str_eq (testagent_summary (out, "steps"), "12");
    ck_assert_str_eq (testagent_summary (out, "end"), "\"reached --max-steps\"");
    ck_assert_msg (strstr (tproc_err (agent), "reconnected to broker"), "%s",
                   s_tail (tproc_err (agent)));
    //  The new broker knows the agent: it said HELLO again.
    testclient_t *client = testclient_new (router);
    pmsg_t *welcome = testclient_hello (client, "observer");
    pmsg_destroy (&welcome);
    pmsg_t *list = testclient_call0 (client, PMSG_AGENTS);
    ck_assert_int_eq (pmsg_type (list), PMSG_AGENT_LIST);
    ck_assert (testcheck_find_agent (list, "Rover"));
    pmsg_destroy (&list);
    testclient_destroy (&client);
    tproc_destroy (&agent);
    testbroker_stop (&broker);
    free (router);
    free (pub);
    free (mem);
    tproc_dir_destroy (&dir);
}
END_TEST

START_TEST (test_memory_resumes)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    tproc_dir_t *dir = tproc_dir_new ();
    char *mem = tproc_dir_path (dir, "mem");
    const char *extra[] = { "--max-steps", "3", "--no-stop-when-explored", NULL };
    tproc_t *agent = start_agent (testbroker_router (broker), "Keeper", mem, extra);
    ck_assert_int_eq (tproc_wait (agent, DEADLINE_MS), 0);
    ck_assert_str_eq (testagent_summary (tproc_out (agent), "memories"), "3");
    tproc_destroy (&agent);
    agent = start_agent (testbroker_router (broker), "Keeper", mem, extra);
    ck_assert_int_eq (tproc_wait (agent, DEADLINE_MS), 0);
    ck_assert_str_eq (testagent_summary (tproc_out (agent), "memories"), "6");
    ck_assert (strstr (tproc_err (agent), "resumed with 3 memories"));
    tproc_destroy (&agent);
    free (mem);
    tproc_dir_destroy (&dir);
    testbroker_stop (&broker);
}
END_TEST

START_TEST (test_help_and_usage)
{
    const char *help[] = { "parley-agent", "--help", NULL };
    tproc_t *proc = tproc_run (help, true);
    ck_assert_int_eq (tproc_status (proc), 0);
    const char *out = tproc_out (proc);
    const char *expect[] = { "--broker", "--id", "--policy", "--llm-url", "--llm-model",
                             "--embed-url", "--embed-model", "--memory-dir", "--memory-index",
                             "--top-k", "--max-steps", "stop-when-explored", "--seed",
                             "--step-delay-ms", "--log-level", "PARLEY_BROKER",
                             "PARLEY_AGENT_ID", "PARLEY_POLICY", "OPENAI_API_KEY" };
    for (size_t i = 0; i < sizeof (expect) / sizeof (expect[0]); i++)
        ck_assert_msg (strstr (out, expect[i]), "--help lacks %s", expect[i]);
    tproc_destroy (&proc);
    const char *bad[] = { "parley-agent", "--id", "-bad name", "--broker", "tcp://127.0.0.1:1", NULL };
    proc = tproc_run (bad, true);
    ck_assert_int_eq (tproc_status (proc), 2);
    ck_assert (strstr (tproc_err (proc), "not a valid name"));
    tproc_destroy (&proc);
}
END_TEST

START_TEST (test_one_request_per_step)
{
    //  A step makes one broker request, its STEP, seen on the broker's
    //  tap: it names its step, which rises by one from 1 to 8, and carries
    //  the move. Between the first numbered STEP and the last the agent
    //  sends nothing else that a step used to need (PERCEIVE, GET, FETCH,
    //  SEND, WRITE, ACT, AGENTS): its view and mail come in STEPPED, the
    //  state keys from its replica, the team from AGENT_EVENTs. Only the
    //  replica's SNAPSHOT after a missed update would be allowed. The tap
    //  has joined before the agent starts, so no frame is missed.
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    testsub_t *tap = testsub_new (testbroker_tap (broker), "");
    ck_assert_ptr_nonnull (tap);
    testcheck_tap_joined (broker, tap, DEADLINE_MS);
    const char *extra[] = { "--max-steps", "8", "--no-stop-when-explored",
                            "--step-delay-ms", "50", NULL };
    tproc_t *agent = start_agent (testbroker_router (broker), "Stepper", "none", extra);
    int status = tproc_wait (agent, DEADLINE_MS);
    ck_assert_msg (status == 0, "exit %d\n%s", status, s_tail (tproc_err (agent)));
    uint64_t steps = 0, last = 0, others = 0, snapshots = 0;
    //  Up to the agent's BYE, its last frame: the tap keeps the broker's
    //  order, so every STEP came before it (a pause in the stream proves
    //  nothing on a loaded machine).
    bool bye = false;
    int64_t until = pclock_mono_ms () + DEADLINE_MS;
    while (!bye) {
        int64_t left = until - pclock_mono_ms ();
        pmsg_t *event = left > 0? testsub_recv (tap, NULL, 0, (int) left): NULL;
        ck_assert_msg (event, "the agent's BYE never showed on the tap");
        const msgpack_object *body = pmsg_field (event, "body");
        char dir[8] = "", peer[64] = "";
        pmsg_strcpy (event, "dir", dir, sizeof (dir));
        pmsg_strcpy (event, "peer", peer, sizeof (peer));
        if (body && body->type == MSGPACK_OBJECT_BIN && streq (dir, "in")
        &&  streq (peer, "Stepper")) {
            perr_t code;
            uint64_t id;
            char why[128];
            pmsg_t *frame = pmsg_decode (body->via.bin.ptr, body->via.bin.size,
                                         pwire_default_limits (), &code, &id, why, sizeof (why));
            ck_assert_ptr_nonnull (frame);
            pmsg_type_t type = pmsg_type (frame);
            bye |= type == PMSG_BYE;
            uint64_t step = type == PMSG_STEP? pmsg_uint (frame, "step", 0): 0;
            if (step) {
                ck_assert_msg (pmsg_field (frame, "action"), "STEP %" PRIu64 " without a move",
                               step);
                if (steps > 0)
                    ck_assert_uint_eq (step, last + 1);
                last = step;
                steps++;
            }
            else
            if (steps > 0 && last < 8) {
                //  A HEARTBEAT is what a client sends when it has been
                //  quiet for heartbeat_ms: on a loaded machine a step can
                //  take that long. It is no request a step needs.
                ck_assert_msg (type == PMSG_SNAPSHOT || type == PMSG_HEARTBEAT,
                               "a %s inside the steps", pmsg_type_name (type));
                snapshots += type == PMSG_SNAPSHOT;
            }
            else
                others++;
            pmsg_destroy (&frame);
        }
        pmsg_destroy (&event);
    }
    ck_assert_uint_eq (steps, 8);
    ck_assert_uint_eq (last, 8);
    ck_assert_uint_le (snapshots, 2);
    ck_assert_uint_gt (others, 0);          //  HELLO, the first look, BYE...
    testsub_destroy (&tap);
    tproc_destroy (&agent);
    testbroker_stop (&broker);
}
END_TEST

//  --team-size with a teammate that never comes: the agent waits at most
//  --team-wait-ms, says so, and plays alone.
START_TEST (test_team_wait_has_a_deadline)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *extra[] = { "--max-steps", "2", "--no-stop-when-explored", "--team-size", "3",
                            "--team-wait-ms", "300", NULL };
    tproc_t *agent = start_agent (testbroker_router (broker), "Lonely", "none", extra);
    int status = tproc_wait (agent, DEADLINE_MS);
    ck_assert_msg (status == 0, "exit %d\n%s", status, s_tail (tproc_err (agent)));
    ck_assert_msg (strstr (tproc_err (agent), "starting with 1 of the 3 agents"), "%s",
                   s_tail (tproc_err (agent)));
    tproc_destroy (&agent);
    testbroker_stop (&broker);
}
END_TEST

//  One agent stopped by `signum` in the middle of a long step delay: it
//  exits 0 well before the delay ends, says why, has saved its memory (a
//  second run resumes it) and has said BYE (the broker lists it offline at
//  once, long before --liveness-ms would expire it).
static void
s_stops_on_signal (int signum, const char *id)
{
    const char *args[] = { "--liveness-ms", "600000", NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    tproc_dir_t *dir = tproc_dir_new ();
    char *mem = tproc_dir_path (dir, id);
    const char *extra[] = { "--max-steps", "1000", "--no-stop-when-explored",
                            "--step-delay-ms", "600000", NULL };
    tproc_t *agent = start_agent (testbroker_router (broker), id, mem, extra);
    ck_assert_msg (tproc_wait_for (agent, "step 1 ", DEADLINE_MS), "%s",
                   s_tail (tproc_err (agent)));
    tproc_signal (agent, signum);
    //  The bound is 20 s (the promise is 2 s; the margin is for a loaded
    //  machine, where saving the memory may wait seconds on the disk):
    //  without a working handler the agent sleeps 10 minutes.
    int status = tproc_wait (agent, 20000);
    ck_assert_msg (status == 0, "exit %d after signal %d\n%s", status, signum,
                   s_tail (tproc_err (agent)));
    ck_assert_str_eq (testagent_summary (tproc_out (agent), "end"), "\"stopped by a signal\"");
    tproc_destroy (&agent);

    testclient_t *client = testcheck_agent (broker, "observer");
    pmsg_t *list = testclient_call0 (client, PMSG_AGENTS);
    const msgpack_object *info = testcheck_find_agent (list, id);
    ck_assert_ptr_nonnull (info);
    ck_assert_msg (!pobj_bool (info, "online", true), "%s still online: no BYE", id);
    pmsg_destroy (&list);
    testclient_destroy (&client);

    const char *again[] = { "--max-steps", "1", "--no-stop-when-explored", NULL };
    agent = start_agent (testbroker_router (broker), id, mem, again);
    ck_assert_int_eq (tproc_wait (agent, DEADLINE_MS), 0);
    ck_assert_msg (strstr (tproc_err (agent), "resumed with 1 memories"), "%s",
                   s_tail (tproc_err (agent)));
    tproc_destroy (&agent);
    free (mem);
    tproc_dir_destroy (&dir);
    testbroker_stop (&broker);
}

START_TEST (test_sigterm_stops_agent)
{
    s_stops_on_signal (SIGTERM, "Termed");
}
END_TEST

START_TEST (test_sigint_stops_agent)
{
    s_stops_on_signal (SIGINT, "Interrupted");
}
END_TEST

static const char *s_url;
static void server_up (void) { s_url = openai_server_start (); }
static void server_down (void) { openai_server_stop (); }

START_TEST (test_llm_agent_survives_bad_answers)
{
    //  The model ("echo") never answers in the format, and the embeddings
    //  come from the same server: every step falls back to the heuristic,
    //  the agent finishes its steps and exits 0.
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *extra[] = { "--max-steps", "3", "--no-stop-when-explored", "--policy", "llm",
                            "--llm-url", s_url, "--llm-model", "echo:e2e",
                            "--embed-url", s_url, "--embed-model", "embed-16", NULL };
    tproc_t *agent = start_agent (testbroker_router (broker), "Talker", "none", extra);
    int status = tproc_wait (agent, DEADLINE_MS);
    const char *out = tproc_out (agent);
    ck_assert_msg (status == 0, "exit %d\n%s\n%s", status, s_tail (out),
                   s_tail (tproc_err (agent)));
    ck_assert_str_eq (testagent_summary (out, "steps"), "3");
    ck_assert_str_eq (testagent_summary (out, "invalid_answers"), "6");
    ck_assert_str_eq (testagent_summary (out, "fallbacks"), "3");
    ck_assert_str_eq (testagent_summary (out, "memories"), "3");
    ck_assert (strstr (out, "[fallback]"));
    tproc_destroy (&agent);
    testbroker_stop (&broker);
}
END_TEST

START_TEST (test_llm_agent_kept_alive_during_slow_model)
{
    //  Each model answer takes 8 s, the broker expires an agent silent for
    //  6 s: libcurl calls the progress callback that sends the keepalive
    //  about once a second, which leaves 5 s for a loaded machine to stall
    //  the agent, while 8 s of silence still expire it (so the test can
    //  fail). The agent's HTTP wait sends HEARTBEATs
    //  (libcurl's progress callback -> parley_client_keepalive), so the broker
    //  never expires it: one HELLO for the whole run, and no "expired" in
    //  the broker's log.
    //  Without the keepalive this test fails (the broker logs "agent Slow
    //  expired" and the agent says HELLO again after NOT_HELLO).
    const char *args[] = { "--heartbeat-ms", "300", "--liveness-ms", "6000", NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    const char *extra[] = { "--max-steps", "2", "--no-stop-when-explored", "--policy", "llm",
                            "--llm-url", s_url, "--llm-model", "slow-8:keepalive", NULL };
    tproc_t *agent = start_agent (testbroker_router (broker), "Slow", "none", extra);
    int status = tproc_wait (agent, DEADLINE_MS);
    const char *out = tproc_out (agent);
    ck_assert_msg (status == 0, "exit %d\n%s\n%s", status, s_tail (out),
                   s_tail (tproc_err (agent)));
    ck_assert_str_eq (testagent_summary (out, "steps"), "2");
    ck_assert_str_eq (testagent_summary (out, "fallbacks"), "0");
    ck_assert_str_eq (testagent_summary (out, "hellos"), "1");
    ck_assert_int_gt (atoi (testagent_summary (out, "keepalives")), 0);
    //  Step times are reported (model time excluded; no timing asserted).
    double median = atof (testagent_summary (out, "step_ms_median"));
    double p90 = atof (testagent_summary (out, "step_ms_p90"));
    ck_assert (median >= 0 && p90 >= median);
    ck_assert_msg (!strstr (tproc_err (agent), "NOT_HELLO"), "%s", s_tail (tproc_err (agent)));
    bool expired = testbroker_log_contains (broker, "agent Slow expired");
    if (expired)
        testbroker_log (broker);
    ck_assert (!expired);
    tproc_destroy (&agent);
    testbroker_stop (&broker);
}
END_TEST

//  Mail is acknowledged only after the memory holding it is saved (every
//  few steps, and at the end): an agent killed between two saves gets its
//  mail again when it comes back, so nothing it was sent is lost.
START_TEST (test_kill_before_save_keeps_mail)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *router = testbroker_router (broker);
    tproc_dir_t *dir = tproc_dir_new ();
    char *mem = tproc_dir_path (dir, "mem");
    //  The broker learns of Keeper (HELLO, BYE keeps its mail), then 5
    //  messages are queued for it.
    testclient_t *client = testagent_mail_for (router, "Keeper", 5, "remember me");
    //  A second between steps: the kill after step 4 must land before the
    //  save at step 10, and six seconds are room for a loaded machine to
    //  be slow in seeing the line and sending the signal (50 ms were not).
    const char *extra [] = { "--max-steps", "100", "--step-delay-ms", "1000",
                             "--no-stop-when-explored", NULL };
    tproc_t *agent = start_agent (router, "Keeper", mem, extra);
    //  Several steps (and their FETCHes) after the mail came, before the
    //  first save at step 10.
    ck_assert_msg (tproc_wait_for (agent, "step 4 ", DEADLINE_MS), "no progress:\n%s",
                   s_tail (tproc_err (agent)));
    tproc_signal (agent, SIGKILL);
    tproc_wait (agent, DEADLINE_MS);
    ck_assert_msg (!strstr (tproc_out (agent), "step 10 "),
                   "the kill came after the save at step 10: the check proves nothing");
    tproc_destroy (&agent);
    const char *again [] = { "--max-steps", "2", "--no-stop-when-explored", NULL };
    agent = start_agent (router, "Keeper", mem, again);
    int status = tproc_wait (agent, DEADLINE_MS);
    const char *out = tproc_out (agent);
    ck_assert_msg (status == 0, "exit %d\n%s\n%s", status, s_tail (out),
                   s_tail (tproc_err (agent)));
    ck_assert_str_eq (testagent_summary (out, "received"), "5");
    tproc_destroy (&agent);
    testclient_destroy (&client);
    free (mem);
    tproc_dir_destroy (&dir);
    testbroker_stop (&broker);
}
END_TEST

static int
count_of (const char *text, const char *needle)
{
    int n = 0;
    for (const char *at = strstr (text, needle); at; at = strstr (at + 1, needle))
        n++;
    return n;
}

START_TEST (test_llm_agent_model_never_reached)
{
    //  Nothing listens at --llm-url: the probe at start says so clearly,
    //  the circuit opens once (one warning, not one per step), no step
    //  waits for the dead server, the summary shows zero answers and the
    //  agent exits 4, not 0.
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *extra[] = { "--max-steps", "6", "--no-stop-when-explored", "--policy", "llm",
                            "--llm-url", "http://127.0.0.1:1", "--llm-model", "m", NULL };
    tproc_t *agent = start_agent (testbroker_router (broker), "Unreached", "none", extra);
    int status = tproc_wait (agent, DEADLINE_MS);
    const char *out = tproc_out (agent), *err = tproc_err (agent);
    ck_assert_msg (status == 4, "exit %d\n%s\n%s", status, s_tail (out), s_tail (err));
    ck_assert_int_eq (count_of (err, "model server not reachable at start"), 1);
    ck_assert_int_eq (count_of (err, "model server not called for"), 1);
    ck_assert_int_eq (count_of (err, "the heuristic decides\n"), 0);
    ck_assert_int_eq (count_of (err, "the model server was never reached"), 1);
    ck_assert_str_eq (testagent_summary (out, "steps"), "6");
    ck_assert_str_eq (testagent_summary (out, "fallbacks"), "6");
    ck_assert_msg (strstr (out, "MODEL calls=0 ok=0 failed=0 skipped=6 breaker_openings=1"),
                   "%s", out);
    tproc_destroy (&agent);
    testbroker_stop (&broker);
}
END_TEST

//  Files in `dir` whose name contains `part`.
static int
files_with (const char *dir, const char *part)
{
    DIR *d = opendir (dir);
    ck_assert_ptr_nonnull (d);
    int n = 0;
    struct dirent *entry;
    while ((entry = readdir (d)))
        n += strstr (entry->d_name, part) != NULL;
    closedir (d);
    return n;
}

static off_t
file_size (const char *dir, const char *name)
{
    char path[1024];
    snprintf (path, sizeof (path), "%s/%s", dir, name);
    struct stat st;
    return stat (path, &st) == 0? st.st_size: -1;
}

static int
run_agent (testbroker_t *broker, const char *id, const char *mem, const char *const *extra,
           char **err_p)
{
    tproc_t *agent = start_agent (testbroker_router (broker), id, mem, extra);
    int status = tproc_wait (agent, DEADLINE_MS);
    if (err_p)
        *err_p = strdup (tproc_err (agent));
    tproc_destroy (&agent);
    return status;
}

START_TEST (test_llm_agent_reports_cost)
{
    //  The server reports usage (120 prompt and 34 completion tokens a
    //  call): the agent's MODEL line sums them, and the broker lists the
    //  same totals for the agent in AGENTS after it has gone.
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *extra[] = { "--max-steps", "3", "--no-stop-when-explored", "--policy", "llm",
                            "--llm-url", s_url, "--llm-model", "usage:cost", NULL };
    tproc_t *agent = start_agent (testbroker_router (broker), "Costly", "none", extra);
    int status = tproc_wait (agent, DEADLINE_MS);
    const char *out = tproc_out (agent);
    ck_assert_msg (status == 0, "exit %d\n%s\n%s", status, s_tail (out),
                   s_tail (tproc_err (agent)));
    ck_assert_msg (strstr (out, "MODEL calls=3 ok=3 failed=0 skipped=0 breaker_openings=0 "
                                "retries=0 prompt_tokens=360 completion_tokens=102 "
                                "calls_with_usage=3"), "%s", out);
    tproc_destroy (&agent);
    testclient_t *client = testcheck_agent (broker, "observer");
    pmsg_t *list = testclient_call0 (client, PMSG_AGENTS);
    const msgpack_object *info = testcheck_find_agent (list, "Costly");
    ck_assert_ptr_nonnull (info);
    ck_assert_uint_eq (pobj_uint (info, "model_calls", 0), 3);
    ck_assert_uint_eq (pobj_uint (info, "model_ok", 0), 3);
    ck_assert_uint_eq (pobj_uint (info, "model_prompt_tokens", 0), 360);
    ck_assert_uint_eq (pobj_uint (info, "model_completion_tokens", 0), 102);
    pmsg_destroy (&list);
    testclient_destroy (&client);
    testbroker_stop (&broker);
}
END_TEST

START_TEST (test_agent_captions_images)
{
    //  The demo world with images, and a caption model: every image the
    //  agent stands on is captioned once (2 distinct images in the world,
    //  so at most 2 caption requests however many steps), and the run ends
    //  normally.
    char *world = testsuite_test_path ("../scenarios/images/world.json");
    const char *args[] = { "--world-file", world, NULL };
    testbroker_t *broker = testbroker_start (args);
    ck_assert_ptr_nonnull (broker);
    const char *extra[] = { "--max-steps", "8", "--no-stop-when-explored",
                            "--caption-url", s_url, "--caption-model", "caption:e2e", NULL };
    tproc_t *agent = start_agent (testbroker_router (broker), "Viewer", "none", extra);
    int status = tproc_wait (agent, DEADLINE_MS);
    ck_assert_msg (status == 0, "exit %d\n%s", status, s_tail (tproc_err (agent)));
    ck_assert_msg (!strstr (tproc_err (agent), "caption failed"), "%s", s_tail (tproc_err (agent)));
    tproc_destroy (&agent);
    //  The scripted server lists the requests it got for a model.
    char *url = zsys_sprintf ("%s/requests/caption:e2e", s_url);
    http_t *http = http_new (url, NULL, NULL);
    json_t *doc = NULL;
    char err[256];
    ck_assert_msg (http_get_json (http, url, 5000, &doc, err, sizeof (err)) == 0, "%s", err);
    size_t requests = json_array_size (json_object_get (doc, "requests"));
    ck_assert_msg (requests >= 1 && requests <= 2, "%zu caption requests", requests);
    json_decref (doc);
    http_destroy (&http);
    free (url);
    free (world);
    testbroker_stop (&broker);
}
END_TEST

START_TEST (test_sigterm_during_model_call)
{
    //  The model takes 60 s to answer; SIGTERM while it thinks abandons
    //  the call (http's cancel), and the agent exits 0 at once.
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *extra[] = { "--max-steps", "5", "--no-stop-when-explored", "--policy", "llm",
                            "--llm-url", s_url, "--llm-model", "slow-60:sigterm", NULL };
    tproc_t *agent = start_agent (testbroker_router (broker), "Thinker", "none", extra);
    //  The call is under way once the probe and the first PERCEIVE are
    //  done: wait for the connected line on stderr.
    ck_assert_msg (tproc_wait_for_err (agent, "connected to", DEADLINE_MS), "%s",
                   s_tail (tproc_err (agent)));
    tproc_read (agent, 500);
    tproc_signal (agent, SIGTERM);
    //  Far below the model's 60 s, with room for a loaded machine.
    int status = tproc_wait (agent, 20000);
    ck_assert_msg (status == 0, "exit %d\n%s", status, s_tail (tproc_err (agent)));
    ck_assert_str_eq (testagent_summary (tproc_out (agent), "end"), "\"stopped by a signal\"");
    tproc_destroy (&agent);
    testbroker_stop (&broker);
}
END_TEST

START_TEST (test_memory_keeps_its_embedder)
{
    //  A memory made by the builtin embedder (256 dimensions) is refused,
    //  untouched, by a run with a server embedder of the same dimension:
    //  the two vector spaces must not mix. A wrong --embed-dim is found by
    //  probing the server before the memory is opened, and the memory is
    //  not moved aside either. The right settings resume it.
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    tproc_dir_t *dir = tproc_dir_new ();
    char *mem = tproc_dir_path (dir, "Keeper");
    const char *builtin[] = { "--max-steps", "2", "--no-stop-when-explored", NULL };
    ck_assert_int_eq (run_agent (broker, "Keeper", mem, builtin, NULL), 0);
    off_t size = file_size (mem, "memory.log");
    ck_assert_int_gt (size, 0);
    ck_assert_int_gt (file_size (mem, "embedder.id"), 0);
    const char *server[] = { "--max-steps", "2", "--no-stop-when-explored",
                             "--embed-url", s_url, "--embed-model", "embed-256", NULL };
    char *err = NULL;
    ck_assert_int_eq (run_agent (broker, "Keeper", mem, server, &err), 2);
    ck_assert_msg (strstr (err, "was made by the embedder [kind=builtin"), "%s", err);
    free (err);
    ck_assert_int_eq (file_size (mem, "memory.log"), size);
    ck_assert_int_eq (files_with (mem, ".bad-"), 0);

    char *mem16 = tproc_dir_path (dir, "Keeper16");
    const char *right[] = { "--max-steps", "2", "--no-stop-when-explored",
                            "--embed-url", s_url, "--embed-model", "embed-16", NULL };
    ck_assert_int_eq (run_agent (broker, "Keeper", mem16, right, NULL), 0);
    size = file_size (mem16, "memory.log");
    const char *wrong[] = { "--max-steps", "2", "--no-stop-when-explored", "--embed-url", s_url,
                            "--embed-model", "embed-16", "--embed-dim", "32", NULL };
    ck_assert_int_eq (run_agent (broker, "Keeper", mem16, wrong, &err), 2);
    ck_assert_msg (strstr (err, "does not fit --embed-dim 32"), "%s", err);
    free (err);
    ck_assert_int_eq (file_size (mem16, "memory.log"), size);
    ck_assert_int_eq (files_with (mem16, ".bad-"), 0);
    ck_assert_int_eq (run_agent (broker, "Keeper", mem16, right, &err), 0);
    ck_assert_msg (strstr (err, "resumed with 2 memories"), "%s", err);
    free (err);
    free (mem);
    free (mem16);
    tproc_dir_destroy (&dir);
    testbroker_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("agent_e2e");
    TCase *tc = tcase_create ("agent_e2e");
    tcase_set_timeout (tc, 300);
    tcase_add_test (tc, test_three_agents_full_coverage);
    tcase_add_test (tc, test_broker_restart);
    tcase_add_test (tc, test_memory_resumes);
    tcase_add_test (tc, test_help_and_usage);
    tcase_add_test (tc, test_one_request_per_step);
    tcase_add_test (tc, test_team_wait_has_a_deadline);
    tcase_add_test (tc, test_kill_before_save_keeps_mail);
    suite_add_tcase (s, tc);
    TCase *signals = tcase_create ("signals");
    tcase_set_timeout (signals, 300);
    tcase_add_test (signals, test_sigterm_stops_agent);
    tcase_add_test (signals, test_sigint_stops_agent);
    suite_add_tcase (s, signals);
    TCase *llm = tcase_create ("llm");
    tcase_set_timeout (llm, 300);
    tcase_add_unchecked_fixture (llm, server_up, server_down);
    tcase_add_test (llm, test_llm_agent_survives_bad_answers);
    tcase_add_test (llm, test_llm_agent_kept_alive_during_slow_model);
    tcase_add_test (llm, test_llm_agent_model_never_reached);
    tcase_add_test (llm, test_memory_keeps_its_embedder);
    tcase_add_test (llm, test_llm_agent_reports_cost);
    tcase_add_test (llm, test_agent_captions_images);
    tcase_add_test (llm, test_sigterm_during_model_call);
    suite_add_tcase (s, llm);
    return testsuite_run (s);
}
