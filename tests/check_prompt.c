// SPDX-License-Identifier: MIT
/*  check_prompt - the model's prompt, against golden files.

    The explore scenario on the default line world (10 positions), seen by
    Agent1 at step 1 (nothing done yet) and at step 40 (39 steps of
    history, mail on two channels and direct, three memories), rendered
    with the default template into tests/prompts/explore_step1.txt and
    explore_late.txt. A difference fails with both texts printed; run with
    PARLEY_UPDATE_GOLDEN=1 to rewrite the files after a deliberate change
    (and read the diff). A workflow role too: the newsroom's reviewer in
    each answer mode, with the tools and the JSON schema generated from
    its role file and scenario (newsroom_reviewer.txt).

    Also checked: the late prompt fits its --context-tokens budget, cut
    from the oldest history while the newest steps, the mail, the map, the
    targets, the actions and the reminder stay; mail appears only in the
    communication block (not in history or memories) and the agent's own
    post is left out; a template override replaces a section everywhere
    it is used, and a bad override is refused.
*/
#include <check.h>
#include <czmq.h>
#include "agent/conn_mailbox.h"
#include "agent/conn_state.h"
#include "agent/conn_world.h"
#include "agent/policy_workflow_llm.h"
#include "agent/prompt.h"
#include "agent/textbuf.h"
#include "lib/testsuite.h"

static const char *const s_actions[] = { "forward", "backward", "stay", "end" };
static const char *const s_team[] = { "Agent2", "Agent3" };
static const char *const s_channels[] = { "explorers" };

typedef struct {
    connector_t *world, *mailbox, *state;
    steplog_t *steps;
    teammap_t *map;
    team_facts_t *facts;
    policy_input_t in;
} scene_t;

static void
scene_init (scene_t *s, uint64_t step, uint64_t position)
{
    memset (s, 0, sizeof (*s));
    s->world = conn_world_new (NULL);
    conn_world_set_shape (s->world, "line", 10, 1);
    world_view_t view = { .valid = true, .position = position, .x = position,
                          .object_count = 2, .objects_total = 13,
                          .explored = step == 1? 2: 9, .coverage = step == 1? 2 / 13.0: 9 / 13.0 };
    strcpy (view.outcome, "perceived");
    strcpy (view.objects[0], "lamp");
    strcpy (view.objects[1], "desk");
    conn_world_feed (s->world, &view);
    s->mailbox = conn_mailbox_new (NULL);
    s->state = conn_state_new (NULL, NULL, 0);
    s->steps = steplog_new ();
    s->map = teammap_new ();
    teammap_set_shape (s->map, 10, 1);
    teammap_visit (s->map, position);
    //  The team's facts as the agent has them: its own visits, and
    //  Agent2's report from the far end, claiming the cell next to it.
    s->facts = team_facts_new ("Agent1");
    team_facts_set_shape (s->facts, 10, 1);
    team_facts_visit (s->facts, position);
    const char *report = "{\"team\":1,\"at\":9,\"claim\":8,\"visited\":[9]}";
    ck_assert (team_facts_read_report (s->facts, "Agent2", report, strlen (report)));
    s->in.agent_id = "Agent1";
    s->in.step = step;
    s->in.max_steps = 60;
    s->in.actions = s_actions;
    s->in.action_count = 4;
    s->in.teammates = s_team;
    s->in.teammate_count = 2;
    s->in.channels = s_channels;
    s->in.channel_count = 1;
    s->in.world = s->world;
    s->in.mailbox = s->mailbox;
    s->in.state = s->state;
    s->in.steps = s->steps;
    s->in.map = s->map;
    s->in.facts = s->facts;
}

static void
scene_fini (scene_t *s)
{
    connector_destroy (&s->world);
    connector_destroy (&s->mailbox);
    connector_destroy (&s->state);
    steplog_destroy (&s->steps);
    teammap_destroy (&s->map);
    team_facts_destroy (&s->facts);
}

static void
feed_mail (scene_t *s, uint64_t seq, const char *from, const char *to, const char *channel,
           const char *text)
{
    ck_assert_int_eq (conn_mailbox_feed (s->mailbox, seq, from, to, channel, text,
                                         strlen (text)), 0);
}

//  39 steps walking the line back and forth, with refusals at the ends.
static void
late_history (scene_t *s)
{
    static const char *const objects[] = { "phone, desk", "filing_cabinet, bookshelf",
        "phone, painting, coffee_mug", "bed", "microwave, keyboard", "sofa", "lamp, desk",
        "stapler", "printer", "lamp" };
    uint64_t at = 0;
    bool up = true;
    for (uint64_t step = 1; step <= 39; step++) {
        steplog_entry_t e;
        memset (&e, 0, sizeof (e));
        e.step = step;
        e.from = at;
        if ((up && at == 9) || (!up && at == 0)) {
            strcpy (e.action, up? "forward": "backward");
            strcpy (e.outcome, "edge");
            up = !up;
        }
        else {
            strcpy (e.action, up? "forward": "backward");
            strcpy (e.outcome, "moved");
            at = up? at + 1: at - 1;
        }
        e.to = at;
        snprintf (e.seen, sizeof (e.seen), "%s", objects[at]);
        if (step == 38)
            snprintf (e.note, sizeof (e.note), "message to Bbo not delivered "
                      "(no agent or channel of that name)");
        steplog_add (s->steps, &e);
        teammap_visit (s->map, at);
        team_facts_visit (s->facts, at);
    }
}

//  "=== system ===\n...\n=== user ===\n...\n"
static char *
render (const policy_input_t *in, size_t *chars, prompt_cut_t *cut)
{
    char *system = prompt_system (NULL);
    char *user = prompt_user (NULL, in, prompt_user_budget (in->context_tokens, strlen (system)),
                              cut);
    *chars = strlen (system) + strlen (user);
    char *text = zsys_sprintf ("=== system ===\n%s\n=== user ===\n%s\n", system, user);
    free (system);
    free (user);
    return text;
}

static void
golden (const char *name, const char *text)
{
    char path[1024];
    snprintf (path, sizeof (path), "%s/prompts/%s", getenv ("PARLEY_TEST_DIR"), name);
    const char *update = getenv ("PARLEY_UPDATE_GOLDEN");
    if (update && streq (update, "1")) {
        FILE *file = fopen (path, "w");
        ck_assert_ptr_nonnull (file);
        fputs (text, file);
        fclose (file);
    }
    FILE *file = fopen (path, "r");
    ck_assert_msg (file, "no golden file %s (PARLEY_UPDATE_GOLDEN=1 writes it)", path);
    char expect[65536];
    size_t n = fread (expect, 1, sizeof (expect) - 1, file);
    fclose (file);
    expect[n] = 0;
    ck_assert_msg (streq (expect, text), "prompt differs from %s\n--- expected:\n%s\n--- got:\n%s",
                   path, expect, text);
}

START_TEST (test_explore_step1)
{
    scene_t s;
    scene_init (&s, 1, 0);
    s.in.context_tokens = 2048;
    size_t chars;
    prompt_cut_t cut;
    char *text = render (&s.in, &chars, &cut);
    golden ("explore_step1.txt", text);
    ck_assert_uint_le (chars, prompt_budget_chars (2048));
    ck_assert (!cut.over_budget);
    ck_assert_uint_eq (cut.history_dropped + cut.memories_dropped + cut.mail_dropped, 0);
    ck_assert (strstr (text, "Your recent steps: none yet."));
    //  The team's line sits in the map section, after the visited ranges.
    ck_assert (strstr (text, "Not yet visited: 1-9.\nTeam map: 2 of 10 cells known; "
                             "unknown near you: 1, 2, 3, 4, 5, 6; claims: Agent2->8.\n"));
    ck_assert (!strstr (text, "Communication information"));
    //  The example answer uses a directive, and end is explained as final.
    ck_assert (strstr (text, "<MessageTo(Agent2, '''"));
    ck_assert (strstr (text, "end is final"));
    free (text);
    scene_fini (&s);
}
END_TEST

START_TEST (test_explore_late)
{
    scene_t s;
    scene_init (&s, 40, 0);
    late_history (&s);
    feed_mail (&s, 101, "Agent2", "Agent1", "", "I found a lamp at position 3.\nGoing to 4 next.");
    feed_mail (&s, 102, "Agent3", "", "explorers", "heading backward");
    feed_mail (&s, 103, "Agent1", "", "explorers", "my own post: never shown to me");
    feed_mail (&s, 104, "Agent3", "all", "", "Everyone: 9 of 13 found.");
    static const char *const memories[] = {
        "At position 3, I saw [lamp, desk]. I decided to forward. Reason: east is open. "
            "Messages received: From Agent2: I found a lamp at position 3.",
        "At position 4, I saw [bed]. I decided to backward. Reason: Agent2 is east",
        "At position 2, I saw [phone, painting, coffee_mug]. I decided to forward. Reason: go on",
    };
    s.in.memories = memories;
    s.in.memory_count = 3;
    s.in.context_tokens = 1536;
    size_t chars;
    prompt_cut_t cut;
    char *text = render (&s.in, &chars, &cut);
    golden ("explore_late.txt", text);
    //  Within the budget, by leaving out old steps only.
    ck_assert_uint_le (chars, prompt_budget_chars (1536));
    ck_assert (!cut.over_budget);
    ck_assert_uint_gt (cut.history_dropped, 0);
    ck_assert_uint_eq (cut.mail_dropped, 0);
    ck_assert_uint_eq (cut.memories_dropped, 0);
    ck_assert (strstr (text, "older steps left out"));
    ck_assert (strstr (text, "39. backward"));
    ck_assert (strstr (text, "saw filing_cabinet, bookshelf; message to Bbo not delivered "
                             "(no agent or channel of that name)\n"));
    ck_assert (!strstr (text, "\n1. forward"));
    //  Mail: once, in the communication block, continuation indented;
    //  the own post left out; none in the memories.
    const char *block = strstr (text, "Communication information:\n");
    ck_assert_ptr_nonnull (block);
    ck_assert (strstr (block, "From Agent2:\n    I found a lamp at position 3.\n    Going to 4 next.\n"));
    ck_assert (strstr (block, "From explorers:\n    From Agent3: heading backward\n"));
    ck_assert (!strstr (text, "my own post"));
    const char *first = strstr (text, "I found a lamp at position 3.");
    ck_assert (first && !strstr (first + 1, "I found a lamp at position 3."));
    ck_assert (strstr (text, "Message targets: teammates Agent2, Agent3; channels explorers."));
    ck_assert (strstr (text, "Visited by the team: 0-9. Not yet visited: none."));
    ck_assert (strstr (text, "Team map: 10 of 10 cells known; claims: Agent2->8.\n"));
    //  The instructions and the answer format end the prompt.
    ck_assert (strstr (text, "Answer now: one fenced yaml block"));

    //  A tiny budget: history, memories and mail go, the rest stays, and
    //  the prompt says it is over budget rather than dropping instructions.
    s.in.context_tokens = 600;
    char *tiny = render (&s.in, &chars, &cut);
    ck_assert (cut.over_budget);
    ck_assert_uint_eq (cut.history_dropped, 39);
    ck_assert (strstr (tiny, "Available actions: forward, backward, stay, end (end is final)."));
    ck_assert (strstr (tiny, "Answer now"));
    free (tiny);
    free (text);
    scene_fini (&s);
}
END_TEST

START_TEST (test_visible_caption)
{
    //  A caption model's sentence for the view follows what the agent sees.
    scene_t s;
    scene_init (&s, 2, 0);
    s.in.visible_caption = "A yellow lamp on a dark floor.";
    char *user = prompt_user (NULL, &s.in, 0, NULL);
    ck_assert (strstr (user, "You are at position 0 and see: lamp, desk.\n"
                             "The view: A yellow lamp on a dark floor.\n"));
    free (user);
    scene_fini (&s);
}
END_TEST

START_TEST (test_template_override)
{
    prompt_template_t *tpl = prompt_template_new ();
    char err[256];
    prompt_section_t section;
    ck_assert (prompt_section_from_name ("goal", &section));
    ck_assert_int_eq (section, PROMPT_GOAL);
    ck_assert (!prompt_section_from_name ("nope", &section));
    ck_assert_int_eq (prompt_template_set (tpl, PROMPT_GOAL, "Goal: map the east side only.",
                                           err, sizeof (err)), 0);
    ck_assert (!prompt_template_is_default (tpl, PROMPT_GOAL));
    char *system = prompt_system (tpl);
    ck_assert (strstr (system, "Goal: map the east side only."));
    ck_assert (!strstr (system, "Go where nobody has been yet"));
    free (system);
    //  The retry's {error} is replaced; a text without it gets the error after.
    char *retry = prompt_retry (tpl, "no action");
    ck_assert (strstr (retry, "could not be used: no action\n"));
    free (retry);
    ck_assert_int_eq (prompt_template_set (tpl, PROMPT_RETRY, "Wrong. %s %n", err, sizeof (err)), 0);
    retry = prompt_retry (tpl, "no action");
    ck_assert_str_eq (retry, "Wrong. %s %n\nno action");
    free (retry);
    //  Bad overrides are refused and change nothing.
    ck_assert_int_eq (prompt_template_set (tpl, PROMPT_ROLE, "", err, sizeof (err)), -1);
    ck_assert_int_eq (prompt_template_set (tpl, PROMPT_ROLE, "\xff\xfe", err, sizeof (err)), -1);
    ck_assert (strstr (err, "UTF-8"));
    ck_assert (prompt_template_is_default (tpl, PROMPT_ROLE));
    prompt_template_destroy (&tpl);
    ck_assert_ptr_null (tpl);
}
END_TEST

//  A workflow role: the newsroom's reviewer after one revision, as its
//  model reads it in each answer mode, with the tools and the JSON schema
//  generated from its role file and the scenario.
START_TEST (test_workflow_reviewer)
{
    char *dir = testsuite_test_path ("../scenarios/newsroom");
    char why[1024] = "";
    scenario_t *scenario = scenario_load (dir, why, sizeof (why));
    ck_assert_msg (scenario, "%s", why);
    const role_t *reviewer = scenario_role (scenario, "reviewer");
    turn_schema_t *schema = turn_schema_new (reviewer, scenario);
    json_t *state = json_pack ("{s:s, s:s, s:[s, s], s:i, s:s}",
                               "assignment", "Three paragraphs on the night bus.",
                               "draft", "The night bus runs from 23:00 to 05:00.",
                               "notes", "draft written", "say when the last bus leaves",
                               "iteration_count", 1, "workflow_status", "in_progress");
    textbuf_t *buf = textbuf_new ();
    const llm_mode_t modes[] = { LLM_MODE_TEXT, LLM_MODE_JSON_SCHEMA, LLM_MODE_TOOLS };
    for (size_t i = 0; i < 3; i++) {
        char *system = wfllm_system (modes[i]);
        char *user = wfllm_prompt (reviewer, schema, modes[i], state);
        textbuf_addf (buf, "=== system (%s) ===\n%s\n=== user (%s) ===\n%s",
                      llm_mode_name (modes[i]), system, llm_mode_name (modes[i]), user);
        free (system);
        free (user);
    }
    char *tools = json_dumps (turn_schema_tools (schema), JSON_INDENT (1) | JSON_SORT_KEYS);
    char *object = json_dumps (turn_schema_object (schema), JSON_INDENT (1) | JSON_SORT_KEYS);
    textbuf_addf (buf, "=== tools ===\n%s\n=== response_format schema ===\n%s\n", tools, object);
    golden ("newsroom_reviewer.txt", textbuf_text (buf));
    //  What the reviewer may do, from its files: notes takes a list, the
    //  turn goes to one of its three roles.
    ck_assert (strstr (object, "\"enum\": [\n    \"writer\",\n    \"editor\",\n    \"approver\""));
    ck_assert (strstr (textbuf_text (buf), "- notes (append: a list: its items are added to the end)"));
    free (tools);
    free (object);
    textbuf_destroy (&buf);
    json_decref (state);
    turn_schema_destroy (&schema);
    scenario_destroy (&scenario);
    free (dir);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("prompt");
    TCase *tc = tcase_create ("prompt");
    tcase_add_test (tc, test_explore_step1);
    tcase_add_test (tc, test_explore_late);
    tcase_add_test (tc, test_template_override);
    tcase_add_test (tc, test_visible_caption);
    tcase_add_test (tc, test_workflow_reviewer);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
