// SPDX-License-Identifier: MIT
/*  check_scenario - scenario and role files: the shipped scenarios load
    into the structs they describe, YAML values become the msgpack the
    broker writes, and every bad file in tests/corpus/config gets exactly
    its expected error (file, line, key and sentence).
*/
#include <check.h>
#include <glob.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "role.h"
#include "scenario.h"
#include "lib/testsuite.h"

//  The first line of a corpus file: "# expect: LINE: SENTENCE".
static char *
s_expected (const char *path)
{
    char *text = testsuite_read_file (path, NULL);
    const char *tag = "# expect: ";
    ck_assert_msg (strncmp (text, tag, strlen (tag)) == 0, "%s has no expect line", path);
    char *end = strchr (text, '\n');
    if (end)
        *end = 0;
    char *expect = NULL;
    ck_assert_int_ge (asprintf (&expect, "%s:%s", path, text + strlen (tag)), 0);
    free (text);
    return expect;
}

static size_t
s_each (const char *pattern, void (*visit) (const char *path))
{
    char *dir = testsuite_test_path ("corpus/config");
    char *glob_pattern = NULL;
    ck_assert_int_ge (asprintf (&glob_pattern, "%s/%s", dir, pattern), 0);
    glob_t found;
    size_t count = 0;
    if (glob (glob_pattern, 0, NULL, &found) == 0) {
        for (size_t i = 0; i < found.gl_pathc; i++)
            visit (found.gl_pathv [i]);
        count = found.gl_pathc;
        globfree (&found);
    }
    free (glob_pattern);
    free (dir);
    return count;
}

static void
s_bad_role (const char *path)
{
    char why [1024] = "";
    role_t *role = role_load (path, why, sizeof why);
    ck_assert_msg (!role, "%s loaded", path);
    char *expect = s_expected (path);
    ck_assert_msg (strcmp (why, expect) == 0, "\n got: %s\nwant: %s", why, expect);
    free (expect);
}

static void
s_bad_scenario (const char *path)
{
    char why [1024] = "";
    scenario_t *scenario = scenario_load (path, why, sizeof why);
    ck_assert_msg (!scenario, "%s loaded", path);
    char *expect = s_expected (path);
    ck_assert_msg (strcmp (why, expect) == 0, "\n got: %s\nwant: %s", why, expect);
    free (expect);
}

//  A folder case: its `expect` file, with DIR standing for the folder.
static void
s_bad_folder (const char *dir)
{
    char *expect_path = NULL;
    ck_assert_int_ge (asprintf (&expect_path, "%s/expect", dir), 0);
    char *text = testsuite_read_file (expect_path, NULL);
    char *end = strchr (text, '\n');
    if (end)
        *end = 0;
    char expect [2048] = "";
    snprintf (expect, sizeof expect, "%s/", dir);
    for (const char *p = text; *p; p++) {
        if (strncmp (p, "DIR", 3) == 0) {
            strncat (expect, dir, sizeof expect - strlen (expect) - 1);
            p += 2;
        }
        else
            strncat (expect, p, 1);
    }
    char why [1024] = "";
    scenario_t *scenario = scenario_load (dir, why, sizeof why);
    ck_assert_msg (!scenario, "%s loaded", dir);
    ck_assert_msg (strcmp (why, expect) == 0, "\n got: %s\nwant: %s", why, expect);
    free (text);
    free (expect_path);
}

START_TEST (test_bad_files)
{
    size_t roles = s_each ("*.role.yaml", s_bad_role);
    size_t scenarios = s_each ("*.scenario.yaml", s_bad_scenario);
    size_t folders = s_each ("*.dir", s_bad_folder);
    ck_assert_uint_ge (roles, 15);
    ck_assert_uint_ge (scenarios, 15);
    ck_assert_uint_ge (folders, 5);
}
END_TEST

START_TEST (test_missing_file)
{
    char why [512] = "";
    ck_assert_ptr_null (role_load ("/nonexistent/role.yaml", why, sizeof why));
    ck_assert_str_eq (why, "/nonexistent/role.yaml: cannot open: No such file or directory");
    ck_assert_ptr_null (scenario_load ("/nonexistent", why, sizeof why));
    ck_assert_str_eq (why, "/nonexistent: cannot open: No such file or directory");
}
END_TEST

static scenario_t *
s_load (const char *name)
{
    char *path = testsuite_test_path (name);
    char why [1024] = "";
    scenario_t *scenario = scenario_load (path, why, sizeof why);
    ck_assert_msg (scenario, "%s: %s", path, why);
    free (path);
    return scenario;
}

START_TEST (test_scene)
{
    scenario_t *scene = s_load ("../scenarios/scene");
    ck_assert_str_eq (scene->name, "scene");
    ck_assert_int_eq (scene->world, SCENARIO_WORLD_NONE);
    ck_assert_uint_eq (scene->role_count, 6);
    const scenario_workflow_t *flow = &scene->workflow;
    ck_assert (flow->enabled);
    ck_assert_str_eq (flow->entry, "orchestrator");
    ck_assert_uint_eq (flow->max_revisions, 3);
    ck_assert_uint_eq (flow->max_turns, 40);
    ck_assert_int_eq (flow->on_timeout, SCENARIO_TIMEOUT_REPLACE);
    ck_assert_uint_eq (flow->clear_count, 1);
    ck_assert_str_eq (flow->clear_on_revision [0], "validation_issues");
    ck_assert_str_eq (flow->holder_key, "current_agent");
    ck_assert_str_eq (flow->status_key, "workflow_status");

    //  The source document's reducers: lists appended, the rest replaced.
    const char *appended [] = { "scene_objects", "validation_issues", "messages", "errors" };
    for (size_t i = 0; i < 4; i++)
        ck_assert_str_eq (scenario_key (scene, appended [i])->reducer, "append");
    const char *replaced [] = { "master_plan", "lighting_setup", "camera_setup" };
    for (size_t i = 0; i < 3; i++)
        ck_assert_str_eq (scenario_key (scene, replaced [i])->reducer, "replace");

    //  Values are msgpack: a str, an empty array, false, and nothing.
    const scenario_key_t *prompt = scenario_key (scene, "user_prompt");
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    ck_assert_int_eq (msgpack_unpack_next (&unpacked, prompt->value, prompt->size, NULL),
                      MSGPACK_UNPACK_SUCCESS);
    const char *text = "a cozy bedroom with a white bed, a desk and a warm lamp";
    ck_assert_int_eq (unpacked.data.type, MSGPACK_OBJECT_STR);
    ck_assert_uint_eq (unpacked.data.via.str.size, strlen (text));
    ck_assert (memcmp (unpacked.data.via.str.ptr, text, strlen (text)) == 0);
    msgpack_unpacked_destroy (&unpacked);
    const scenario_key_t *objects = scenario_key (scene, "scene_objects");
    ck_assert_uint_eq (objects->size, 1);
    ck_assert_uint_eq (((unsigned char *) objects->value) [0], 0x90);
    ck_assert_uint_eq (((unsigned char *) scenario_key (scene, "validation_passed")->value) [0], 0xc2);
    ck_assert_ptr_null (scenario_key (scene, "master_plan")->value);

    const role_t *critic = scenario_role (scene, "critic");
    ck_assert_ptr_nonnull (critic);
    ck_assert_int_eq (critic->policy, ROLE_POLICY_SCENE_CRITIC);
    ck_assert (!critic->human);
    ck_assert (!critic->sees_world);
    ck_assert_uint_eq (critic->read_count, 5);
    ck_assert_uint_eq (critic->handover_count, 1);
    ck_assert_str_eq (critic->handover [0], "orchestrator");
    ck_assert_str_eq (role_write_of (critic, "validation_issues")->reducer, "append");
    ck_assert_ptr_null (role_write_of (critic, "scene_objects"));
    const role_t *orchestrator = scenario_role (scene, "orchestrator");
    ck_assert_uint_eq (orchestrator->handover_count, 4);
    ck_assert_uint_eq (orchestrator->top_k, 2);
    ck_assert_uint_eq (orchestrator->store, ROLE_STORE_DECISIONS);
    scenario_destroy (&scene);
    ck_assert_ptr_null (scene);
}
END_TEST

START_TEST (test_newsroom)
{
    //  The model-driven team: its fallback is the person approving, every
    //  model role may hand the turn there and write the note.
    scenario_t *news = s_load ("../scenarios/newsroom");
    const scenario_workflow_t *flow = &news->workflow;
    ck_assert_str_eq (flow->entry, "writer");
    ck_assert_uint_eq (flow->corrections, 3);
    ck_assert_int_eq (flow->fallback, SCENARIO_FALLBACK_HUMAN);
    ck_assert_str_eq (flow->fallback_role, "approver");
    ck_assert_str_eq (flow->fallback_note, "notes");
    ck_assert (scenario_role (news, "approver")->human);
    ck_assert_int_eq (scenario_role (news, "writer")->policy, ROLE_POLICY_LLM);
    ck_assert (scenario_knows_key (news, "workflow_status"));
    ck_assert (scenario_knows_key (news, "world.agent_positions"));
    ck_assert (!scenario_knows_key (news, "drafts"));
    scenario_destroy (&news);
}
END_TEST

START_TEST (test_explore)
{
    scenario_t *explore = s_load ("../scenarios/explore/scenario.yaml");
    ck_assert_int_eq (explore->world, SCENARIO_WORLD_LINE);
    ck_assert_uint_eq (explore->world_width, 20);
    ck_assert (explore->world_seed_set);
    ck_assert_uint_eq (explore->world_seed, 7);
    ck_assert (!explore->workflow.enabled);
    const role_t *explorer = scenario_role (explore, "explorer");
    ck_assert_ptr_nonnull (explorer);
    ck_assert_int_eq (explorer->policy, ROLE_POLICY_HEURISTIC);
    ck_assert (explorer->sees_world);
    ck_assert_uint_eq (explorer->moves, ROLE_MOVE_FORWARD | ROLE_MOVE_BACKWARD | ROLE_MOVE_STAY);
    ck_assert_uint_eq (explorer->channel_count, 1);
    ck_assert_str_eq (explorer->channels [0], "explorers");
    ck_assert_str_eq (explorer->index, "flat");
    ck_assert_uint_eq (explorer->top_k, 3);
    scenario_destroy (&explore);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("scenario");
    TCase *tc = tcase_create ("files");
    tcase_add_test (tc, test_bad_files);
    tcase_add_test (tc, test_missing_file);
    tcase_add_test (tc, test_scene);
    tcase_add_test (tc, test_explore);
    tcase_add_test (tc, test_newsroom);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
