// SPDX-License-Identifier: MIT
/*  check_world - the exploration world (broker/world.h): generation by
    seed, moves at the edges of lines and grids, start positions, coverage
    by unique names with duplicates, done, reset, the state mirror, world
    files good and bad (tests/worlds/), and the OBSERVATION / WORLD_EVENT
    encodings through the real proto decoder.
*/
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker/core/world.h"
#include "lib/mpjson.h"
#include "lib/teststate.h"
#include "lib/testsuite.h"

static char s_why [512];
static char s_text [8192];

static world_t *
load (state_t *state, const char *name)
{
    char relative [256];
    snprintf (relative, sizeof (relative), "worlds/%s", name);
    char *path = testsuite_test_path (relative);
    s_why [0] = 0;
    world_t *world = world_load (state, path, s_why, sizeof (s_why));
    free (path);
    return world;
}

//  Names of an observation's list joined with spaces.
static const char *
joined (const char *const *names, size_t count)
{
    s_text [0] = 0;
    for (size_t i = 0; i < count; i++) {
        strcat (s_text, names [i]);
        if (i + 1 < count)
            strcat (s_text, " ");
    }
    return s_text;
}

static world_obs_t
act_ok (world_t *world, const char *agent, const char *action)
{
    world_obs_t obs;
    perr_t rc = action
        ? world_act (world, agent, action, strlen (action), &obs, s_why, sizeof (s_why))
        : world_perceive (world, agent, &obs, s_why, sizeof (s_why));
    ck_assert_msg (rc == PERR_NONE, "%s %s: %s %s", agent, action? action: "perceive",
                   perr_name (rc), s_why);
    return obs;
}

// ---------------------------------------------------------------------------

START_TEST (test_generate_by_seed)
{
    state_t *state = state_new (NULL);
    world_config_t config = { WORLD_LINE, 0, 0, 42 };
    world_t *a = world_new (state, &config, s_why, sizeof (s_why));
    world_t *b = world_new (state, &config, s_why, sizeof (s_why));
    config.seed = 43;
    world_t *c = world_new (state, &config, s_why, sizeof (s_why));
    ck_assert (a && b && c);
    ck_assert_int_eq (world_kind (a), WORLD_LINE);
    ck_assert_uint_eq (world_width (a), WORLD_DEFAULT_WIDTH);
    ck_assert_uint_eq (world_height (a), 1);
    bool differs = false;
    for (uint32_t p = 0; p < 10; p++) {
        size_t na, nb, nc;
        const char *const *oa = world_objects_at (a, p, &na);
        const char *const *ob = world_objects_at (b, p, &nb);
        const char *const *oc = world_objects_at (c, p, &nc);
        ck_assert (na >= 1 && na <= 3);
        ck_assert_uint_eq (na, nb);
        for (size_t i = 0; i < na; i++) {
            ck_assert_str_eq (oa [i], ob [i]);
            for (size_t k = 0; k < i; k++)
                ck_assert_str_ne (oa [i], oa [k]);      //  distinct in a cell
        }
        differs |= na != nc || strcmp (oa [0], oc [0]) != 0;
    }
    ck_assert_msg (differs, "seeds 42 and 43 gave the same world");
    size_t n;
    ck_assert_ptr_null (world_objects_at (a, 10, &n));
    ck_assert_uint_eq (n, 0);
    //  objects_total counts unique names, at most the slots
    ck_assert (world_objects_total (a) >= 3 && world_objects_total (a) <= 30);
    world_destroy (&a);
    world_destroy (&b);
    world_destroy (&c);
    ck_assert_ptr_null (a);
    //  a grid, and limits
    config = (world_config_t) { WORLD_GRID, 4, 0, 7 };
    a = world_new (state, &config, s_why, sizeof (s_why));
    ck_assert (a);
    ck_assert_uint_eq (world_height (a), 4);
    world_destroy (&a);
    config = (world_config_t) { WORLD_GRID, 100, 100, 7 };
    ck_assert_ptr_null (world_new (state, &config, s_why, sizeof (s_why)));
    ck_assert_msg (strstr (s_why, "limit"), "%s", s_why);
    state_destroy (&state);
}
END_TEST

START_TEST (test_line_edges)
{
    state_t *state = state_new (NULL);
    world_t *world = world_new (state, NULL, s_why, sizeof (s_why));
    world_obs_t obs = act_ok (world, "a", "backward");
    ck_assert_uint_eq (obs.position, 0);
    ck_assert_str_eq (obs.outcome, "edge");
    for (int i = 1; i <= 9; i++) {
        obs = act_ok (world, "a", "forward");
        ck_assert_str_eq (obs.outcome, "moved");
        ck_assert_uint_eq (obs.position, (uint32_t) i);
        ck_assert_uint_eq (obs.x, (uint32_t) i);
        ck_assert_uint_eq (obs.y, 0);
    }
    obs = act_ok (world, "a", "forward");
    ck_assert_str_eq (obs.outcome, "edge");
    ck_assert_uint_eq (obs.position, 9);
    //  walked the whole line: everything explored
    ck_assert (obs.done);
    ck_assert_double_eq (obs.coverage, 1.0);
    //  left/right on a line, unknown actions: BAD_ACTION, nothing changes
    uint64_t seq = state_seq (state);
    world_obs_t bad;
    ck_assert_int_eq (world_act (world, "a", "left", 4, &bad, s_why, sizeof (s_why)),
                      PERR_BAD_ACTION);
    ck_assert_int_eq (world_act (world, "a", "jump", 4, &bad, s_why, sizeof (s_why)),
                      PERR_BAD_ACTION);
    ck_assert_int_eq (world_act (world, "a", "forwardx", 8, &bad, s_why, sizeof (s_why)),
                      PERR_BAD_ACTION);
    ck_assert_int_eq (world_act (world, "", "stay", 4, &bad, s_why, sizeof (s_why)),
                      PERR_BAD_FIELD);
    ck_assert_uint_eq (state_seq (state), seq);
    obs = act_ok (world, "a", "stay");
    ck_assert_str_eq (obs.outcome, "stayed");
    ck_assert_uint_eq (state_change_count (state), 0);   //  nothing to publish
    uint32_t position;
    ck_assert (world_position_of (world, "a", &position));
    ck_assert_uint_eq (position, 9);
    world_destroy (&world);
    state_destroy (&state);
}
END_TEST

START_TEST (test_grid_edges)
{
    state_t *state = state_new (NULL);
    world_t *world = load (state, "grid3x2.json");
    ck_assert_msg (world, "%s", s_why);
    ck_assert_int_eq (world_kind (world), WORLD_GRID);
    world_obs_t obs = act_ok (world, "g", "left");
    ck_assert_str_eq (obs.outcome, "edge");
    ck_assert_uint_eq (obs.position, 0);
    obs = act_ok (world, "g", "right");
    ck_assert_str_eq (obs.outcome, "moved");
    ck_assert_uint_eq (obs.position, 3);
    ck_assert (obs.x == 0 && obs.y == 1);
    ck_assert_str_eq (joined (obs.objects, obs.object_count), "d");
    obs = act_ok (world, "g", "right");
    ck_assert_str_eq (obs.outcome, "edge");
    obs = act_ok (world, "g", "backward");
    ck_assert_str_eq (obs.outcome, "edge");
    obs = act_ok (world, "g", "forward");
    obs = act_ok (world, "g", "forward");
    ck_assert (obs.x == 2 && obs.y == 1 && obs.position == 5);
    ck_assert_str_eq (joined (obs.new_objects, obs.new_count), "f");   //  "a" seen at start
    obs = act_ok (world, "g", "forward");
    ck_assert_str_eq (obs.outcome, "edge");
    obs = act_ok (world, "g", "left");
    ck_assert (obs.x == 2 && obs.y == 0);
    ck_assert_str_eq (obs.outcome, "moved");
    world_destroy (&world);
    state_destroy (&state);
}
END_TEST

//  The i-th agent starts at (i * width / 3) % width.
START_TEST (test_start_positions)
{
    state_t *state = state_new (NULL);
    world_t *world = world_new (state, NULL, s_why, sizeof (s_why));
    const char *agents [] = { "A1", "A2", "A3", "A4" };
    uint32_t expect [] = { 0, 3, 6, 0 };
    for (int i = 0; i < 4; i++) {
        world_obs_t obs = act_ok (world, agents [i], NULL);
        ck_assert_uint_eq (obs.position, expect [i]);
        ck_assert_str_eq (obs.outcome, "perceived");
    }
    ck_assert_uint_eq (world_agents (world), 4);
    ck_assert_str_eq (teststate_value (state, "world.agent_positions"),
                      "{\"A1\":0,\"A2\":3,\"A3\":6,\"A4\":0}");
    //  leave: the key is rewritten without the agent
    ck_assert (world_leave (world, "A2", s_why, sizeof (s_why)));
    ck_assert (!world_leave (world, "A2", s_why, sizeof (s_why)));
    ck_assert_uint_eq (world_agents (world), 3);
    ck_assert (!strstr (teststate_value (state, "world.agent_positions"), "A2"));
    world_destroy (&world);
    state_destroy (&state);
}
END_TEST

//  --start same puts everyone at 0; --start random draws from the seed,
//  the same way every time; names parse, unknown ones do not.
START_TEST (test_start_placements)
{
    world_start_t start;
    ck_assert (world_start_from_name ("spread", &start) && start == WORLD_START_SPREAD);
    ck_assert (world_start_from_name ("same", &start) && start == WORLD_START_SAME);
    ck_assert (world_start_from_name ("random", &start) && start == WORLD_START_RANDOM);
    ck_assert (!world_start_from_name ("corner", &start));
    ck_assert (!world_start_from_name (NULL, &start));
    state_t *state = state_new (NULL);
    world_config_t config = { WORLD_GRID, 8, 8, 5 };
    world_t *same = world_new (state, &config, s_why, sizeof (s_why));
    world_set_start (same, WORLD_START_SAME, 5);
    const char *agents [] = { "A1", "A2", "A3", "A4", "A5", "A6" };
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq (act_ok (same, agents [i], NULL).position, 0);
    world_destroy (&same);
    uint32_t first [6];
    bool differ = false;
    for (int round = 0; round < 2; round++) {
        world_t *random = world_new (state, &config, s_why, sizeof (s_why));
        world_set_start (random, WORLD_START_RANDOM, 5);
        for (int i = 0; i < 6; i++) {
            uint32_t at = act_ok (random, agents [i], NULL).position;
            ck_assert_uint_lt (at, 64);
            if (round == 0)
                first [i] = at;
            else
                ck_assert_uint_eq (at, first [i]);
            differ = differ || at != first [0];
        }
        world_destroy (&random);
    }
    ck_assert (differ);
    state_destroy (&state);
}
END_TEST

//  line4: [chair lamp] [desk] [] [chair plant]: 4 unique names in 5 slots.
START_TEST (test_coverage_unique_names)
{
    state_t *state = state_new (NULL);
    world_t *world = load (state, "line4.json");
    ck_assert_msg (world, "%s", s_why);
    ck_assert_uint_eq (world_objects_total (world), 4);
    ck_assert_uint_eq (world_explored (world), 0);
    //  the first PERCEIVE explores the start position
    world_obs_t obs = act_ok (world, "a", NULL);
    ck_assert_str_eq (joined (obs.new_objects, obs.new_count), "chair lamp");
    ck_assert_uint_eq (obs.explored, 2);
    ck_assert_uint_eq (obs.objects_total, 4);
    ck_assert_double_eq (obs.coverage, 0.5);
    obs = act_ok (world, "a", "forward");
    ck_assert_double_eq (obs.coverage, 0.75);
    obs = act_ok (world, "a", "forward");
    ck_assert_uint_eq (obs.object_count, 0);
    ck_assert_uint_eq (obs.new_count, 0);
    ck_assert (!obs.done);
    obs = act_ok (world, "a", "forward");
    ck_assert_str_eq (joined (obs.objects, obs.object_count), "chair plant");
    ck_assert_str_eq (joined (obs.new_objects, obs.new_count), "plant");
    ck_assert_uint_eq (obs.explored, 4);
    ck_assert_double_eq (obs.coverage, 1.0);
    ck_assert (obs.done && obs.completed);
    obs = act_ok (world, "a", "backward");
    ck_assert (obs.done && !obs.completed);
    ck_assert_str_eq (teststate_value (state, "world.explored_by_all"),
                      "[\"chair\",\"lamp\",\"desk\",\"plant\"]");
    ck_assert_str_eq (teststate_value (state, "world.objects"),
                      "{\"0\":[\"chair\",\"lamp\"],\"1\":[\"desk\"],\"2\":[],"
                      "\"3\":[\"chair\",\"plant\"]}");
    world_destroy (&world);
    state_destroy (&state);
}
END_TEST

//  An agent whose first call is ACT explores its start AND where it lands.
START_TEST (test_first_act_counts_start)
{
    state_t *state = state_new (NULL);
    world_t *world = load (state, "line4.json");
    world_obs_t obs = act_ok (world, "b", "forward");
    ck_assert_uint_eq (obs.position, 1);
    ck_assert_str_eq (joined (obs.new_objects, obs.new_count), "chair lamp desk");
    //  one batch, two keys, contiguous seqs, for the daemon to publish
    ck_assert_uint_eq (state_change_count (state), 2);
    const state_change_t *c0 = state_change_at (state, 0);
    const state_change_t *c1 = state_change_at (state, 1);
    ck_assert_str_eq (c0->key, "world.agent_positions");
    ck_assert_str_eq (c1->key, "world.explored_by_all");
    ck_assert_uint_eq (c1->seq, c0->seq + 1);
    ck_assert_uint_eq (c1->seq, state_seq (state));
    //  clients cannot write the world's keys
    msgpack_unpacked u;
    const msgpack_object *ops = mpjson_object (&u,
        "[{\"op\":\"clear\",\"key\":\"world.explored_by_all\"}]");
    ck_assert_int_eq (state_apply (state, ops, NULL, s_why, sizeof (s_why)), PERR_BAD_FIELD);
    msgpack_unpacked_destroy (&u);
    world_destroy (&world);
    state_destroy (&state);
}
END_TEST

START_TEST (test_reset)
{
    state_t *state = state_new (NULL);
    world_config_t config = { WORLD_LINE, 5, 0, 9 };
    world_t *world = world_new (state, &config, s_why, sizeof (s_why));
    char before [2048];
    snprintf (before, sizeof (before), "%s", teststate_value (state, "world.objects"));
    for (int i = 0; i < 5; i++)
        act_ok (world, "a", "forward");
    ck_assert (world_done (world));
    ck_assert_int_eq (world_reset (world, NULL, s_why, sizeof (s_why)), PERR_NONE);
    ck_assert_uint_eq (state_change_count (state), 3);
    ck_assert_uint_eq (world_explored (world), 0);
    ck_assert_uint_eq (world_agents (world), 0);
    ck_assert (!world_done (world));
    ck_assert_str_eq (teststate_value (state, "world.agent_positions"), "{}");
    ck_assert_str_eq (teststate_value (state, "world.explored_by_all"), "[]");
    ck_assert_str_eq (teststate_value (state, "world.objects"), before);    //  same seed
    //  arrivals restart: the next agent starts at 0 again
    act_ok (world, "z", NULL);
    ck_assert_uint_eq (act_ok (world, "y", NULL).position, 1);
    uint64_t seed = 10;
    ck_assert_int_eq (world_reset (world, &seed, s_why, sizeof (s_why)), PERR_NONE);
    ck_assert_str_ne (teststate_value (state, "world.objects"), before);
    //  back to the configured seed
    ck_assert_int_eq (world_reset (world, NULL, s_why, sizeof (s_why)), PERR_NONE);
    ck_assert_str_eq (teststate_value (state, "world.objects"), before);
    world_destroy (&world);
    //  a world from a file keeps its objects
    world = load (state, "line4.json");
    act_ok (world, "a", NULL);
    ck_assert_int_eq (world_reset (world, &seed, s_why, sizeof (s_why)), PERR_NONE);
    ck_assert_uint_eq (world_objects_total (world), 4);
    ck_assert_uint_eq (world_explored (world), 0);
    world_destroy (&world);
    state_destroy (&state);
}
END_TEST

START_TEST (test_bad_files)
{
    state_t *state = state_new (NULL);
    char *dir = testsuite_test_path ("worlds");
    DIR *handle = opendir (dir);
    ck_assert_msg (handle, "cannot open %s", dir);
    int bad = 0;
    struct dirent *entry;
    while ((entry = readdir (handle))) {
        if (strncmp (entry->d_name, "bad_", 4) != 0)
            continue;
        world_t *world = load (state, entry->d_name);
        ck_assert_msg (!world, "%s loaded", entry->d_name);
        ck_assert_msg (strstr (s_why, entry->d_name), "%s: %s", entry->d_name, s_why);
        bad++;
    }
    closedir (handle);
    free (dir);
    ck_assert_int_ge (bad, 20);
    ck_assert_ptr_null (load (state, "no_such_file.json"));
    ck_assert_ptr_null (load (state, "."));
    //  nothing was written to the state by a failed load
    ck_assert_uint_eq (state_seq (state), 0);
    state_destroy (&state);
}
END_TEST

START_TEST (test_images)
{
    //  The demo world shipped in scenarios/images: positions 0, 2 and 3
    //  have PNG images (2 and 3 the same one), position 1 none. The
    //  OBSERVATION carries the file's exact bytes and type.
    state_t *state = state_new (NULL);
    char *path = testsuite_test_path ("../scenarios/images/world.json");
    world_t *world = world_load (state, path, s_why, sizeof (s_why));
    free (path);
    ck_assert_msg (world, "%s", s_why);
    path = testsuite_test_path ("../scenarios/images/lamp.png");
    FILE *file = fopen (path, "rb");
    free (path);
    ck_assert_ptr_nonnull (file);
    uint8_t lamp [1024];
    size_t lamp_size = fread (lamp, 1, sizeof (lamp), file);
    fclose (file);
    world_obs_t obs = act_ok (world, "a", NULL);
    ck_assert_uint_eq (obs.position, 0);
    ck_assert_ptr_nonnull (obs.image);
    ck_assert_str_eq (obs.image->type, "png");
    ck_assert_uint_eq (obs.image->size, lamp_size);
    ck_assert_mem_eq (obs.image->data, lamp, lamp_size);
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_OBSERVATION, 1, world_observation_fields (&obs));
    world_encode_observation (&obs, &enc);
    perr_t err;
    uint64_t id;
    pmsg_t *msg = pmsg_decode (penc_data (&enc), penc_size (&enc), pwire_default_limits (),
                               &err, &id, s_why, sizeof (s_why));
    ck_assert_msg (msg, "%s", s_why);
    const msgpack_object *image = pmsg_field (msg, "image");
    ck_assert (image && image->type == MSGPACK_OBJECT_BIN);
    ck_assert_uint_eq (image->via.bin.size, lamp_size);
    ck_assert_mem_eq (image->via.bin.ptr, lamp, lamp_size);
    char type [16];
    ck_assert (pmsg_strcpy (msg, "image_type", type, sizeof (type)));
    ck_assert_str_eq (type, "png");
    pmsg_destroy (&msg);
    obs = act_ok (world, "a", "forward");
    ck_assert_ptr_null (obs.image);
    ck_assert_uint_eq (world_observation_fields (&obs), WORLD_OBSERVATION_FIELDS);
    obs = act_ok (world, "a", "forward");
    ck_assert_ptr_nonnull (obs.image);
    penc_fini (&enc);
    world_destroy (&world);
    state_destroy (&state);
}
END_TEST

START_TEST (test_encoders)
{
    state_t *state = state_new (NULL);
    world_t *world = load (state, "line4.json");
    world_obs_t obs = act_ok (world, "a", NULL);
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_OBSERVATION, 5, WORLD_OBSERVATION_FIELDS);
    world_encode_observation (&obs, &enc);
    perr_t err;
    uint64_t id;
    pmsg_t *msg = pmsg_decode (penc_data (&enc), penc_size (&enc), pwire_default_limits (),
                               &err, &id, s_why, sizeof (s_why));
    ck_assert_msg (msg, "%s", s_why);
    ck_assert_uint_eq (pmsg_id (msg), 5);
    ck_assert_uint_eq (pmsg_uint (msg, "explored", 0), 2);
    ck_assert_uint_eq (pmsg_uint (msg, "objects_total", 0), 4);
    ck_assert_double_eq (pmsg_num (msg, "coverage", 0), 0.5);
    char *text = mpjson_dump_object (pmsg_field (msg, "new_objects"));
    ck_assert_str_eq (text, "[\"chair\",\"lamp\"]");
    free (text);
    pmsg_destroy (&msg);
    penc_reset (&enc);
    penc_begin (&enc, PMSG_WORLD_EVENT, 0, WORLD_EVENT_FIELDS);
    world_encode_event (world, "explored", &enc);
    msg = pmsg_decode (penc_data (&enc), penc_size (&enc), pwire_default_limits (),
                       &err, &id, s_why, sizeof (s_why));
    ck_assert_msg (msg, "%s", s_why);
    pmsg_destroy (&msg);
    penc_reset (&enc);
    world_encode_summary (world, &enc);
    text = mpjson_dump (penc_data (&enc), penc_size (&enc));
    ck_assert_str_eq (text, "{\"kind\":\"line\",\"width\":4,\"height\":1,\"objects_total\":4,"
                            "\"explored\":2,\"coverage\":0.5,\"done\":false}");
    free (text);
    penc_fini (&enc);
    world_destroy (&world);
    state_destroy (&state);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("world");
    TCase *tc = tcase_create ("world");
    tcase_add_test (tc, test_generate_by_seed);
    tcase_add_test (tc, test_line_edges);
    tcase_add_test (tc, test_grid_edges);
    tcase_add_test (tc, test_start_positions);
    tcase_add_test (tc, test_start_placements);
    tcase_add_test (tc, test_coverage_unique_names);
    tcase_add_test (tc, test_first_act_counts_start);
    tcase_add_test (tc, test_reset);
    tcase_add_test (tc, test_bad_files);
    tcase_add_test (tc, test_images);
    tcase_add_test (tc, test_encoders);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
