// SPDX-License-Identifier: MIT
/*  check_agentmem - AgentMemory (agent/agentmem.h): thoughts and turns,
    retention per type (limit, dedupe), the entry cap, and the exact
    context text, including connectors and observations that fail to render.
*/
#include <check.h>
#include <czmq.h>
#include "agent/agentmem.h"
#include "agent/conn_mailbox.h"
#include "agent/conn_world.h"
#include "agent/textbuf.h"
#include "lib/testsuite.h"

static zlistx_t *
obs_list (const char *type, const char *text)
{
    zlistx_t *list = connector_observation_list ();
    if (type)
        zlistx_add_end (list, observation_new_text ("world", type, text));
    return list;
}

static void
turn (agentmem_t *mem, const char *action, const char *type, const char *text)
{
    zlistx_t *list = obs_list (type, text);
    agentmem_record_turn (mem, action, list);
    ck_assert_uint_eq (zlistx_size (list), 0);      //  moved out
    zlistx_destroy (&list);
}

START_TEST (test_history_text)
{
    agentmem_t *mem = agentmem_new ();
    char *text = agentmem_render_history (mem);
    ck_assert_str_eq (text, "History:\n(nothing yet)");
    free (text);
    zlistx_t *list = connector_observation_list ();
    zlistx_add_end (list, observation_new_text ("world", "world.start", "Started at position 0. I see: lamp."));
    zlistx_add_end (list, observation_new_text ("mailbox", "mail.message", "From Agent2: hello"));
    agentmem_record_turn (mem, "start", list);
    zlistx_destroy (&list);
    agentmem_record_thought (mem, "Forward looks unexplored.");
    turn (mem, "forward (reason: nobody has been east)", "world.moved",
          "Moved from position 0 to position 1. I see: desk.");
    text = agentmem_render_history (mem);
    ck_assert_str_eq (text,
        "History:\n"
        "- Turn 1: start\n"
        "    Started at position 0. I see: lamp.\n"
        "    From Agent2: hello\n"
        "- Thought 2: Forward looks unexplored.\n"
        "- Turn 3: forward (reason: nobody has been east)\n"
        "    Moved from position 0 to position 1. I see: desk.");
    free (text);
    ck_assert_uint_eq (agentmem_thoughts (mem), 1);
    ck_assert_uint_eq (agentmem_turns (mem), 2);
    agentmem_destroy (&mem);
    ck_assert_ptr_null (mem);
}
END_TEST

START_TEST (test_thought_limit_and_dedupe)
{
    agentmem_t *mem = agentmem_new ();
    agentmem_set_retention (mem, "thought", 2, true);
    agentmem_record_thought (mem, "one");
    agentmem_record_thought (mem, "two");
    agentmem_record_thought (mem, "one");       //  dedupe: the older "one" goes
    char *text = agentmem_render_history (mem);
    ck_assert_str_eq (text, "History:\n- Thought 2: two\n- Thought 3: one");
    free (text);
    agentmem_record_thought (mem, "three");     //  limit 2: "two" goes
    text = agentmem_render_history (mem);
    ck_assert_str_eq (text, "History:\n- Thought 3: one\n- Thought 4: three");
    free (text);
    ck_assert_uint_eq (agentmem_dropped (mem), 2);
    agentmem_destroy (&mem);
}
END_TEST

START_TEST (test_observation_retention)
{
    agentmem_t *mem = agentmem_new ();
    agentmem_set_retention (mem, "world.coverage", 1, false);
    agentmem_set_retention (mem, "world.blocked", 0, true);
    turn (mem, "a", "world.coverage", "Team coverage is now 10%.");
    turn (mem, "b", "world.blocked", "Could not move: still at position 0 (edge).");
    turn (mem, "c", "world.coverage", "Team coverage is now 20%.");
    turn (mem, "d", "world.blocked", "Could not move: still at position 0 (edge).");
    turn (mem, "e", "world.other", "kept");
    char *text = agentmem_render_history (mem);
    //  Only the newest coverage stays; the repeated edge text stays once
    //  (the newest); the turns themselves stay, empty.
    ck_assert_str_eq (text,
        "History:\n"
        "- Turn 1: a\n"
        "- Turn 2: b\n"
        "- Turn 3: c\n"
        "    Team coverage is now 20%.\n"
        "- Turn 4: d\n"
        "    Could not move: still at position 0 (edge).\n"
        "- Turn 5: e\n"
        "    kept");
    free (text);
    ck_assert_uint_eq (agentmem_dropped (mem), 2);
    agentmem_destroy (&mem);
}
END_TEST

START_TEST (test_entry_cap)
{
    agentmem_t *mem = agentmem_new ();
    agentmem_set_max_entries (mem, 3);
    for (int i = 0; i < 10; i++) {
        char text[32];
        snprintf (text, sizeof (text), "t%d", i);
        agentmem_record_thought (mem, text);
    }
    ck_assert_uint_eq (agentmem_entries (mem), 3);
    char *text = agentmem_render_history (mem);
    ck_assert_str_eq (text, "History:\n- Thought 8: t7\n- Thought 9: t8\n- Thought 10: t9");
    free (text);
    agentmem_destroy (&mem);
}
END_TEST

//  A connector whose render fails, and one with nothing to say.
static void s_observe_none (void *impl, const char *id, zlistx_t *out) { }
static char *s_render_fail (void *impl) { return NULL; }
static char *s_render_empty (void *impl) { return strdup (""); }
static const connector_ops_t s_broken = { NULL, s_observe_none, s_render_fail, NULL };
static const connector_ops_t s_silent = { NULL, s_observe_none, s_render_empty, NULL };
static char *s_obs_fail (const void *data) { return NULL; }

START_TEST (test_textbuf)
{
    //  Many pieces, formatted pieces longer than the current room, and the
    //  result equal to the same text built the slow way.
    textbuf_t *buf = textbuf_new ();
    ck_assert_uint_eq (textbuf_len (buf), 0);
    ck_assert_str_eq (textbuf_text (buf), "");
    char *slow = strdup ("");
    char big[1000];
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = 0;
    for (int i = 0; i < 3000; i++) {
        const char *piece = i % 500 == 7? big: "";
        textbuf_addf (buf, "%s%d%s", i? ", ": "", i, piece);
        char *more = zsys_sprintf ("%s%s%d%s", slow, i? ", ": "", i, piece);
        free (slow);
        slow = more;
    }
    textbuf_addn (buf, "ab\0c", 2);
    textbuf_add (buf, "!");
    char *more = zsys_sprintf ("%sab!", slow);
    free (slow);
    slow = more;
    ck_assert_uint_eq (textbuf_len (buf), strlen (slow));
    char *text = textbuf_detach (&buf);
    ck_assert_ptr_null (buf);
    ck_assert_str_eq (text, slow);
    free (text);
    free (slow);
    textbuf_t *empty = textbuf_new ();
    textbuf_destroy (&empty);
    ck_assert_ptr_null (empty);
}
END_TEST

START_TEST (test_context_text)
{
    agentmem_t *mem = agentmem_new ();
    zlistx_t *list = connector_observation_list ();
    zlistx_add_end (list, observation_new ("camera", "camera.frame", s_obs_fail, NULL, NULL));
    observation_t *pic = observation_new_text ("camera", "camera.frame", "A red door.");
    observation_set_image (pic, "file:///tmp/frame1.png");
    zlistx_add_end (list, pic);
    agentmem_record_turn (mem, "start", list);
    zlistx_destroy (&list);

    connector_t *world = conn_world_new (NULL);
    conn_world_set_shape (world, "line", 10, 1);
    world_view_t view = { .valid = true, .position = 2, .x = 2, .object_count = 2,
                          .outcome = "moved", .explored = 4, .objects_total = 10, .coverage = 0.4 };
    strcpy (view.objects[0], "lamp");
    strcpy (view.objects[1], "desk");
    conn_world_feed (world, &view);
    connector_t *mailbox = conn_mailbox_new (NULL);
    connector_t *broken = connector_new ("broken", &s_broken, NULL);
    connector_t *silent = connector_new ("silent", &s_silent, NULL);
    connector_t *connectors[] = { world, broken, silent, mailbox };
    char *text = agentmem_build_context (mem, connectors, 4);
    ck_assert_str_eq (text,
        "History:\n"
        "- Turn 1: start\n"
        "    [Error: could not render an observation from camera]\n"
        "    A red door. [image: file:///tmp/frame1.png]\n"
        "\n"
        "Current state:\n"
        "[world]\n"
        "Position: 2 (line of 10 positions)\n"
        "Visible objects: lamp, desk\n"
        "Team coverage: 40% (4 of 10 objects explored)\n"
        "[broken]\n"
        "[Error: could not render state for broken]\n"
        "[mailbox]\n"
        "Communication information:\n"
        "No messages from other agents.");
    free (text);
    connector_destroy (&world);
    connector_destroy (&mailbox);
    connector_destroy (&broken);
    connector_destroy (&silent);
    agentmem_destroy (&mem);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("agentmem");
    TCase *tc = tcase_create ("agentmem");
    tcase_add_test (tc, test_history_text);
    tcase_add_test (tc, test_thought_limit_and_dedupe);
    tcase_add_test (tc, test_observation_retention);
    tcase_add_test (tc, test_entry_cap);
    tcase_add_test (tc, test_context_text);
    tcase_add_test (tc, test_textbuf);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
