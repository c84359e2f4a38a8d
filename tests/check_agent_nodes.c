// SPDX-License-Identifier: MIT
/*  check_agent_nodes - the agent's own stages, run in-process against the
    real parley-broker over real sockets.

    - a move the world refuses (backward at the start of the line) reaches
      the step's observations as "world.blocked": the Perception after the
      Execution must not overwrite the move's outcome with its own
      "perceived" before the world connector is diffed;
    - a MessageTo to a teammate the agent's team list does not know yet
      reaches that teammate as direct mail (the broker resolves the name),
      and a MessageTo to a name that is neither an agent nor a listened
      channel comes back as a "mail.undelivered" observation naming it,
      for the next prompt.
*/
#include <check.h>
#include <czmq.h>
#include "agent/agent_state.h"
#include "agent/conn_state.h"
#include "agent/conn_world.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"

#define MAX_ACTS 12

typedef struct {
    testbroker_t *broker;
    agent_state_t a;
} nodes_t;

static void
nodes_init (nodes_t *n, const char *id)
{
    n->broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (n->broker);
    memset (&n->a, 0, sizeof (n->a));
    agent_parts_t *a = &n->a.parts;
    snprintf (a->id, sizeof (a->id), "%s", id);
    a->max_steps = 100;
    a->link = parley_client_new (testbroker_router (n->broker), id);
    ck_assert_ptr_nonnull (a->link);
    ck_assert_msg (parley_client_connect (a->link) == PARLEY_OK, "%s",
                   parley_client_error_text (a->link));
    const parley_welcome_t *w = parley_client_welcome (a->link);
    a->world = conn_world_new (a->link);
    conn_world_set_shape (a->world, parley_welcome_world_kind (w),
                          parley_welcome_world_width (w), parley_welcome_world_height (w));
    a->state = conn_state_new (a->link, NULL, 0);
}

//  The two stages these tests run, as agent_step calls them.
static stage_outcome_t
perceive (nodes_t *n)
{
    return stage_perception (&n->a.parts, &n->a.perceived, &n->a.counts);
}

static stage_outcome_t
execute (nodes_t *n)
{
    return stage_execution (&n->a.parts, &n->a.perceived, &n->a.decided, &n->a.team,
                            &n->a.counts);
}

static void
nodes_fini (nodes_t *n)
{
    agent_parts_t *a = &n->a.parts;
    agent_state_free_records (&n->a);
    connector_destroy (&a->world);
    connector_destroy (&a->state);
    parley_client_bye (a->link, false);
    parley_client_destroy (&a->link);
    testbroker_stop (&n->broker);
}

//  The observation types of the step so far, "a,b,c", and empties the list.
static char *
drain_types (zlistx_t *list)
{
    char *text = strdup ("");
    observation_t *obs;
    while ((obs = (observation_t *) zlistx_first (list))) {
        char *more = zsys_sprintf ("%s%s,", text, observation_type (obs));
        free (text);
        text = more;
        zlistx_delete (list, zlistx_cursor (list));
    }
    return text;
}

START_TEST (test_blocked_move_observed)
{
    //  The line is 10 positions wide: 12 steps backward from wherever the
    //  agent starts end at least twice against position 0. Each step is
    //  either a move or a refusal, and the refusals are observed.
    nodes_t n;
    nodes_init (&n, "Walker");
    agent_parts_t *a = &n.a.parts;
    decided_t *d = &n.a.decided;
    ck_assert_uint_le (conn_world_width (a->world), MAX_ACTS - 2);
    ck_assert_int_eq (perceive (&n), STAGE_OK);
    char *types = drain_types (n.a.perceived.obs);
    ck_assert_msg (strstr (types, "world.start,"), "%s", types);
    free (types);
    char *text = answer_format (NULL, "backward", "to the start", NULL, NULL, 0);
    d->answer = answer_parse (text, strlen (text));
    free (text);
    snprintf (d->action, sizeof (d->action), "backward");
    int blocked = 0, moved = 0;
    for (int i = 0; i < MAX_ACTS; i++) {
        uint64_t before = conn_world_view (a->world)->position;
        ck_assert_int_eq (execute (&n), STAGE_OK);
        ck_assert_int_eq (perceive (&n), STAGE_OK);
        uint64_t after = conn_world_view (a->world)->position;
        types = drain_types (n.a.perceived.obs);
        if (after == before) {
            ck_assert_msg (strstr (types, "world.blocked,"), "step %d at %" PRIu64 ": %s",
                           i, after, types);
            blocked++;
        }
        else {
            ck_assert_msg (strstr (types, "world.moved,"), "%s", types);
            moved++;
        }
        free (types);
    }
    ck_assert_int_ge (blocked, 2);
    ck_assert_uint_eq (conn_world_view (a->world)->position, 0);
    nodes_fini (&n);
}
END_TEST

START_TEST (test_message_targets_resolved)
{
    nodes_t n;
    nodes_init (&n, "Sender");
    decided_t *d = &n.a.decided;
    testclient_t *bob = testcheck_agent (n.broker, "Bob");
    testclient_t *carol = testcheck_agent (n.broker, "Carol");
    testmail_listen (carol, "news");
    ck_assert_uint_eq (n.a.team.count, 0);      //  the team list knows nobody
    const char *text = "```yaml\naction: stay\nreason: \"talk\"\n```\n"
                       "<MessageTo(Bob, '''hello Bob''')>\n"
                       "<MessageTo(news, '''to the channel''')>\n"
                       "<MessageTo(Bbo, '''misspelt''')>\n";
    d->answer = answer_parse (text, strlen (text));
    ck_assert_uint_eq (answer_directive_count (d->answer), 3);
    snprintf (d->action, sizeof (d->action), "stay");
    ck_assert_int_eq (execute (&n), STAGE_OK);
    ck_assert_uint_eq (n.a.counts.msgs_sent, 2);
    ck_assert_uint_eq (n.a.counts.send_errors, 1);
    char bodies[256];
    ck_assert_uint_eq (testmail_fetch (bob, 0, 0, bodies, sizeof (bodies), NULL), 1);
    ck_assert_str_eq (bodies, "hello Bob");
    ck_assert_uint_eq (testmail_fetch (carol, 0, 0, bodies, sizeof (bodies), NULL), 1);
    ck_assert_str_eq (bodies, "to the channel");
    ck_assert_ptr_nonnull (n.a.perceived.obs);
    ck_assert_uint_eq (zlistx_size (n.a.perceived.obs), 1);
    observation_t *obs = (observation_t *) zlistx_first (n.a.perceived.obs);
    ck_assert_str_eq (observation_type (obs), "mail.undelivered");
    char *line = observation_render (obs);
    ck_assert_msg (strstr (line, "Your message to Bbo was not delivered"), "%s", line);
    //  And the step's line in the prompt's history says so.
    ck_assert_str_eq (d->note, "message to Bbo not delivered (no agent or channel of that name)");
    free (line);
    testclient_destroy (&bob);
    testclient_destroy (&carol);
    nodes_fini (&n);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("agent_nodes");
    TCase *tc = tcase_create ("world");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_blocked_move_observed);
    suite_add_tcase (s, tc);
    TCase *mail = tcase_create ("mail");
    tcase_set_timeout (mail, 120);
    tcase_add_test (mail, test_message_targets_resolved);
    suite_add_tcase (s, mail);
    return testsuite_run (s);
}
