// SPDX-License-Identifier: MIT
/*  check_connectors - the built-in connectors fed directly (no broker):
    the world's diffs (start, moved, edge, found, coverage, done), the
    mailbox's seed-003 rendering, seq de-duplication and batch limit, and
    the state keys' diffs. The broker path of each is covered end to end
    by check_agent_e2e.
*/
#include <check.h>
#include <czmq.h>
#include "agent/conn_mailbox.h"
#include "agent/conn_state.h"
#include "agent/conn_world.h"
#include "lib/testsuite.h"

//  Observations as "type|text" lines, then empties the list.
static char *
drain (zlistx_t *list)
{
    char *text = strdup ("");
    observation_t *obs;
    while ((obs = (observation_t *) zlistx_first (list))) {
        char *line = observation_render (obs);
        char *more = zsys_sprintf ("%s%s|%s\n", text, observation_type (obs), line);
        free (line);
        free (text);
        text = more;
        zlistx_delete (list, zlistx_cursor (list));
    }
    return text;
}

static world_view_t
view (uint64_t position, const char *outcome, const char *a, const char *b,
      uint64_t explored, bool done)
{
    world_view_t v = { .valid = true, .position = position, .x = position,
                       .explored = explored, .objects_total = 4,
                       .coverage = explored / 4.0, .done = done };
    snprintf (v.outcome, sizeof (v.outcome), "%s", outcome);
    if (a)
        strcpy (v.objects[v.object_count++], a);
    if (b)
        strcpy (v.objects[v.object_count++], b);
    return v;
}

START_TEST (test_world_diffs)
{
    connector_t *world = conn_world_new (NULL);
    ck_assert_str_eq (connector_id (world), "world");
    zlistx_t *out = connector_observation_list ();
    //  Nothing fed: no observations, a clear "unknown" state.
    ck_assert_uint_eq (connector_observe (world, out), 0);
    char *text = connector_render (world);
    ck_assert_str_eq (text, "Position: unknown (not perceived yet)");
    free (text);

    world_view_t v = view (0, "perceived", "lamp", "desk", 2, false);
    conn_world_feed (world, &v);
    connector_observe (world, out);
    text = drain (out);
    ck_assert_str_eq (text,
        "world.start|Started at position 0. I see: lamp, desk.\n"
        "world.found|New objects here: lamp, desk.\n"
        "world.coverage|Team coverage is now 50% (2 of 4 objects).\n");
    free (text);
    //  Same state again: no diff at all.
    conn_world_feed (world, &v);
    ck_assert_uint_eq (connector_observe (world, out), 0);

    v = view (1, "moved", "chair", "lamp", 3, false);
    conn_world_feed (world, &v);
    connector_observe (world, out);
    text = drain (out);
    ck_assert_str_eq (text,
        "world.moved|Moved from position 0 to position 1. I see: chair, lamp.\n"
        "world.found|New objects here: chair.\n"
        "world.coverage|Team coverage is now 75% (3 of 4 objects).\n");
    free (text);

    v = view (1, "edge", "chair", "lamp", 4, true);
    conn_world_feed (world, &v);
    connector_observe (world, out);
    text = drain (out);
    ck_assert_str_eq (text,
        "world.blocked|Could not move: still at position 1 (edge).\n"
        "world.coverage|Team coverage is now 100% (4 of 4 objects).\n"
        "world.done|Everything in the world has been explored.\n");
    free (text);

    conn_world_set_shape (world, "line", 2, 1);
    text = connector_render (world);
    ck_assert_str_eq (text, "Position: 1 (line of 2 positions)\nVisible objects: chair, lamp\n"
                      "Team coverage: 100% (4 of 4 objects explored)\nThe world is fully explored.");
    free (text);
    ck_assert_uint_eq (conn_world_seen_count (world), 3);
    ck_assert_str_eq (conn_world_seen_at (world, 2), "chair");
    zlistx_destroy (&out);
    connector_destroy (&world);
}
END_TEST

START_TEST (test_mailbox_render)
{
    connector_t *box = conn_mailbox_new (NULL);
    char *text = connector_render (box);
    ck_assert_str_eq (text, "Communication information:\nNo messages from other agents.");
    free (text);
    conn_mailbox_feed (box, 1, "Agent2", "Agent1", NULL, "Check position 4.", 17);
    conn_mailbox_feed (box, 2, "Agent3", NULL, "explorers", "heading backward", 16);
    conn_mailbox_feed (box, 3, "Agent2", "all", NULL, "found a lamp", 12);
    conn_mailbox_feed (box, 4, "Agent1", NULL, "explorers", "at the east end", 15);
    conn_mailbox_feed (box, 5, "Agent4", NULL, "scouts", "nothing here", 12);
    text = connector_render (box);
    ck_assert_str_eq (text,
        "Communication information:\n"
        "From Agent2:\n"
        "    Check position 4.\n"
        "From Agent2:\n"
        "    found a lamp\n"
        "In explorers:\n"
        "    From Agent3: heading backward\n"
        "    From Agent1: at the east end\n"
        "In scouts:\n"
        "    From Agent4: nothing here");
    free (text);
    zlistx_t *out = connector_observation_list ();
    ck_assert_uint_eq (connector_observe (box, out), 5);
    text = drain (out);
    ck_assert_str_eq (text,
        "mail.message|From Agent2: Check position 4.\n"
        "mail.message|In explorers, from Agent3: heading backward\n"
        "mail.message|From Agent2: found a lamp\n"
        "mail.message|In explorers, from Agent1: at the east end\n"
        "mail.message|In scouts, from Agent4: nothing here\n");
    free (text);
    //  Reported once only.
    ck_assert_uint_eq (connector_observe (box, out), 0);
    zlistx_destroy (&out);
    connector_destroy (&box);
}
END_TEST

START_TEST (test_mailbox_dedupe_and_limit)
{
    connector_t *box = conn_mailbox_new (NULL);
    ck_assert_int_eq (conn_mailbox_feed (box, 7, "A", "B", NULL, "x", 1), 0);
    //  A redelivery (same or older seq) is dropped.
    ck_assert_int_eq (conn_mailbox_feed (box, 7, "A", "B", NULL, "x", 1), 1);
    ck_assert_int_eq (conn_mailbox_feed (box, 5, "A", "B", NULL, "old", 3), 1);
    ck_assert_uint_eq (conn_mailbox_count (box), 1);
    ck_assert_uint_eq (conn_mailbox_duplicates (box), 2);
    ck_assert_uint_eq (conn_mailbox_last_seq (box), 7);
    conn_mailbox_begin (box);
    ck_assert_uint_eq (conn_mailbox_count (box), 0);
    for (uint64_t seq = 8; seq < 8 + MAILBOX_MAX_BATCH + 3; seq++)
        conn_mailbox_feed (box, seq, "A", "B", NULL, "y", 1);
    ck_assert_uint_eq (conn_mailbox_count (box), MAILBOX_MAX_BATCH);
    ck_assert_uint_eq (conn_mailbox_dropped (box), 3);
    ck_assert_uint_eq (conn_mailbox_received (box), 1 + MAILBOX_MAX_BATCH + 3);
    //  Over-long text is cut.
    conn_mailbox_begin (box);
    char *big = (char *) malloc (MAILBOX_MAX_TEXT * 2);
    memset (big, 'z', MAILBOX_MAX_TEXT * 2);
    conn_mailbox_feed (box, 1000, "A", "B", NULL, big, MAILBOX_MAX_TEXT * 2);
    ck_assert_uint_eq (strlen (conn_mailbox_at (box, 0)->text), MAILBOX_MAX_TEXT + 3);
    free (big);
    connector_destroy (&box);
}
END_TEST

//  Packs a value with `fn` and unpacks it into a zone.
typedef struct {
    msgpack_sbuffer buf;
    msgpack_unpacked unpacked;
} packed_t;

static const msgpack_object *
pack_names (packed_t *p, const char *const *names, size_t count)
{
    msgpack_sbuffer_init (&p->buf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &p->buf, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, count);
    for (size_t i = 0; i < count; i++) {
        msgpack_pack_str (&pk, strlen (names[i]));
        msgpack_pack_str_body (&pk, names[i], strlen (names[i]));
    }
    msgpack_unpacked_init (&p->unpacked);
    msgpack_unpack_next (&p->unpacked, p->buf.data, p->buf.size, NULL);
    return &p->unpacked.data;
}

static const msgpack_object *
pack_positions (packed_t *p, const char *a, uint64_t pa, const char *b, uint64_t pb)
{
    msgpack_sbuffer_init (&p->buf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &p->buf, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 2);
    msgpack_pack_str (&pk, strlen (a));
    msgpack_pack_str_body (&pk, a, strlen (a));
    msgpack_pack_uint64 (&pk, pa);
    msgpack_pack_str (&pk, strlen (b));
    msgpack_pack_str_body (&pk, b, strlen (b));
    msgpack_pack_uint64 (&pk, pb);
    msgpack_unpacked_init (&p->unpacked);
    msgpack_unpack_next (&p->unpacked, p->buf.data, p->buf.size, NULL);
    return &p->unpacked.data;
}

static void
unpack_free (packed_t *p)
{
    msgpack_unpacked_destroy (&p->unpacked);
    msgpack_sbuffer_destroy (&p->buf);
}

START_TEST (test_state_diffs)
{
    const char *keys[] = { STATE_KEY_EXPLORED, STATE_KEY_POSITIONS, "team.plan" };
    connector_t *state = conn_state_new (NULL, keys, 3);
    zlistx_t *out = connector_observation_list ();
    char *text = connector_render (state);
    ck_assert_str_eq (text, "");        //  nothing known: left out of the context
    free (text);
    ck_assert_uint_eq (connector_observe (state, out), 0);

    packed_t p1, p2, p3;
    const char *first[] = { "lamp", "desk" };
    conn_state_feed (state, STATE_KEY_EXPLORED, pack_names (&p1, first, 2));
    conn_state_feed (state, STATE_KEY_POSITIONS, pack_positions (&p2, "Agent1", 0, "Agent2", 5));
    const char *plan[] = { "sweep" };
    conn_state_feed (state, "team.plan", pack_names (&p3, plan, 1));
    unpack_free (&p1);
    unpack_free (&p2);
    unpack_free (&p3);
    connector_observe (state, out);
    text = drain (out);
    ck_assert_str_eq (text,
        "state.world.explored_by_all|The team has now explored 2 objects; new: lamp, desk.\n"
        "state.world.agent_positions|Agent positions: Agent1 at 0, Agent2 at 5.\n"
        "state.team.plan|team.plan is now [sweep].\n");
    free (text);
    text = connector_render (state);
    ck_assert_str_eq (text, "Explored by all (2): lamp, desk\n"
                      "Agent positions: Agent1 at 0, Agent2 at 5\nteam.plan: [sweep]");
    free (text);
    ck_assert (conn_state_explored_has (state, "desk"));
    ck_assert (!conn_state_explored_has (state, "sofa"));
    const char *agent;
    uint64_t position;
    ck_assert (conn_state_agent_at (state, 1, &agent, &position));
    ck_assert_str_eq (agent, "Agent2");
    ck_assert_uint_eq (position, 5);

    //  Only the explored list changes: one observation, naming the new one.
    const char *second[] = { "lamp", "desk", "sofa" };
    conn_state_feed (state, STATE_KEY_EXPLORED, pack_names (&p1, second, 3));
    unpack_free (&p1);
    connector_observe (state, out);
    text = drain (out);
    ck_assert_str_eq (text,
        "state.world.explored_by_all|The team has now explored 3 objects; new: sofa.\n");
    free (text);
    //  A key deleted.
    conn_state_feed (state, "team.plan", NULL);
    connector_observe (state, out);
    text = drain (out);
    ck_assert_str_eq (text, "state.team.plan|team.plan is now deleted.\n");
    free (text);
    zlistx_destroy (&out);
    connector_destroy (&state);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("connectors");
    TCase *tc = tcase_create ("connectors");
    tcase_add_test (tc, test_world_diffs);
    tcase_add_test (tc, test_mailbox_render);
    tcase_add_test (tc, test_mailbox_dedupe_and_limit);
    tcase_add_test (tc, test_state_diffs);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
