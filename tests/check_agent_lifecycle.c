// SPDX-License-Identifier: MIT
/*  check_agent_lifecycle - a parley-agent's start and its end, against a
    real broker with real agent processes.

    - Waiting for --team-size, the agent learns who joins from the
      AGENT_EVENTs it subscribes to, asking AGENTS once and then only as
      a slow safety check: over a window of seconds the broker counts a
      handful of its requests, not dozens a second; the team starts when
      the teammate joins.
    - At a clean exit the agent acknowledges the mail it took: mail its
      last STEP brought for a step that never came goes into its memory
      first, so nothing it took is left at the broker and the next start
      does not receive it again. Without a memory to keep it in, that mail
      stays for the next start.
    Deadlines are by clock and generous; the request count is measured
    over a window (a loaded machine makes fewer requests, never more).
*/
#include <check.h>
#include <czmq.h>
#include "parley/client.h"
#include "pclock.h"
#include "lib/testagent.h"
#include "lib/testbroker.h"
#include "lib/testclient.h"
#include "lib/testparley.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

#define DEADLINE_MS 90000

//  The requests the broker has handled, as an observer (no registration)
//  reads them from STATS.
static uint64_t
s_requests (parley_client_t *observer)
{
    parley_stats_t *stats = NULL;
    ck_assert_int_eq (parley_client_stats (observer, &stats), PARLEY_OK);
    uint64_t requests = parley_stats_uint (stats, "requests");
    parley_stats_destroy (&stats);
    return requests;
}

//  What AGENTS says of one agent.
typedef struct {
    bool online;
    uint64_t pending;
} agent_seen_t;

//  The agent `id` as AGENTS lists it; false when it is not registered.
static bool
s_agent (parley_client_t *observer, const char *id, agent_seen_t *info)
{
    parley_agent_list_t *list = NULL;
    ck_assert_int_eq (parley_client_agents (observer, &list), PARLEY_OK);
    const parley_agent_t *agent = parley_agent_list_find (list, id);
    if (agent)
        *info = (agent_seen_t) { parley_agent_online (agent), parley_agent_pending (agent) };
    parley_agent_list_destroy (&list);
    return agent != NULL;
}

START_TEST (test_team_wait_follows_events)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *router = testbroker_router (broker);
    parley_client_t *observer = testparley_observer (router, "Observer", 5000);
    const char *extra [] = { "--max-steps", "2", "--no-stop-when-explored", "--team-size", "2",
                             "--team-wait-ms", "0", NULL };
    tproc_t *first = tproc_agent (router, "Early", "none", "info", extra);
    ck_assert_ptr_nonnull (first);
    //  Early is in and waiting once it is online and has made no step.
    agent_seen_t info = { 0 };
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    while (!(s_agent (observer, "Early", &info) && info.online) && pclock_mono_ms () < deadline)
        tproc_read (first, 50);
    ck_assert_msg (info.online, "Early never came online:\n%s", tproc_err (first));
    //  Three seconds of waiting: a heartbeat a second and an AGENTS every
    //  two, not one every 20 ms (the old poll made about a hundred here).
    uint64_t before = s_requests (observer);
    int64_t window_end = pclock_mono_ms () + 3000;
    while (pclock_mono_ms () < window_end)
        tproc_read (first, 100);
    uint64_t during = s_requests (observer) - before - 1;      //  one is our STATS
    ck_assert_msg (!strstr (tproc_out (first), "step 1 "), "Early did not wait:\n%s",
                   tproc_out (first));
    ck_assert_msg (during <= 12, "%llu requests in 3 s while waiting for the team",
                   (unsigned long long) during);
    //  The teammate joins: both start and finish.
    tproc_t *second = tproc_agent (router, "Late", "none", "info", extra);
    ck_assert_ptr_nonnull (second);
    ck_assert_int_eq (tproc_wait (first, DEADLINE_MS), 0);
    ck_assert_int_eq (tproc_wait (second, DEADLINE_MS), 0);
    ck_assert_str_eq (testagent_summary (tproc_out (first), "steps"), "2");
    ck_assert_str_eq (testagent_summary (tproc_out (second), "steps"), "2");
    ck_assert_ptr_null (strstr (tproc_err (first), "starting with"));
    tproc_destroy (&first);
    tproc_destroy (&second);
    parley_client_destroy (&observer);
    testbroker_stop (&broker);
}
END_TEST

//  `count` messages "m<i>" for `to`, which is registered (HELLO, then BYE
//  that keeps its mail) before any is sent; the sender goes.
static void
s_mail_for (const char *router, const char *to, int count)
{
    testclient_t *sender = testagent_mail_for (router, to, count, NULL);
    testclient_destroy (&sender);
}

//  70 messages wait for Reader: its first look takes 64 (one step's
//  view), its one step's STEP brings the other 6 (and its own post of
//  that step), and then it is done. Those go into its memory and are
//  acknowledged with the rest: none is left pending, and a second start
//  receives nothing.
START_TEST (test_exit_acknowledges_stored_mail)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *router = testbroker_router (broker);
    s_mail_for (router, "Reader", 70);
    tproc_dir_t *dir = tproc_dir_new ();
    char *mem = tproc_dir_path (dir, "mem");
    const char *extra [] = { "--max-steps", "1", "--no-stop-when-explored", NULL };
    tproc_t *agent = tproc_agent (router, "Reader", mem, "info", extra);
    ck_assert_ptr_nonnull (agent);
    int status = tproc_wait (agent, DEADLINE_MS);
    ck_assert_msg (status == 0, "exit %d\n%s", status, tproc_err (agent));
    ck_assert_msg (strstr (tproc_err (agent), "messages received after the last step kept"),
                   "%s", tproc_err (agent));
    tproc_destroy (&agent);
    parley_client_t *observer = testparley_observer (router, "Observer", 5000);
    agent_seen_t info = { 0 };
    ck_assert (s_agent (observer, "Reader", &info));
    ck_assert_msg (info.pending == 0, "%llu messages still pending after a clean exit",
                   (unsigned long long) info.pending);
    //  The next start: nothing comes again, and the memory has them.
    agent = tproc_agent (router, "Reader", mem, "info", extra);
    ck_assert_int_eq (tproc_wait (agent, DEADLINE_MS), 0);
    ck_assert_str_eq (testagent_summary (tproc_out (agent), "received"), "0");
    //  Two memories from the first run (its step, the mail after it), at
    //  least one from this one.
    ck_assert_int_ge (atoi (testagent_summary (tproc_out (agent), "memories")), 3);
    tproc_destroy (&agent);
    parley_client_destroy (&observer);
    free (mem);
    tproc_dir_destroy (&dir);
    testbroker_stop (&broker);
}
END_TEST

//  With no memory to keep it in, the mail the last STEP brought stays at
//  the broker: the next start receives it (and nothing else again).
START_TEST (test_exit_without_memory_keeps_unread_mail)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    const char *router = testbroker_router (broker);
    s_mail_for (router, "Forgetful", 70);
    const char *extra [] = { "--max-steps", "1", "--no-stop-when-explored", "--no-memory", NULL };
    tproc_t *agent = tproc_agent (router, "Forgetful", "none", "info", extra);
    ck_assert_int_eq (tproc_wait (agent, DEADLINE_MS), 0);
    ck_assert_str_eq (testagent_summary (tproc_out (agent), "received"), "64");
    tproc_destroy (&agent);
    parley_client_t *observer = testparley_observer (router, "Observer", 5000);
    agent_seen_t info = { 0 };
    ck_assert (s_agent (observer, "Forgetful", &info));
    ck_assert_uint_ge (info.pending, 6);        //  and its own post, if it made one
    agent = tproc_agent (router, "Forgetful", "none", "info", extra);
    ck_assert_int_eq (tproc_wait (agent, DEADLINE_MS), 0);
    ck_assert_str_eq (testagent_summary (tproc_out (agent), "received"), "6");
    tproc_destroy (&agent);
    parley_client_destroy (&observer);
    testbroker_stop (&broker);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("agent_lifecycle");
    TCase *tc = tcase_create ("agent_lifecycle");
    tcase_set_timeout (tc, 240);
    tcase_add_test (tc, test_team_wait_follows_events);
    tcase_add_test (tc, test_exit_acknowledges_stored_mail);
    tcase_add_test (tc, test_exit_without_memory_keeps_unread_mail);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
