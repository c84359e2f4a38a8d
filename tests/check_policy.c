// SPDX-License-Identifier: MIT
/*  check_policy - the decision policies.

    Heuristic: same seed and inputs give the same answers; it heads for
    unexplored positions as learnt from structured facts only (teammates'
    reports in the declared format and positions), never from free text
    such as its own stored reasons; it honours teammates' claims until
    they are released or the teammate leaves; it reports to the explorers
    channel when it has something new, listens to it, ends when the world
    is done; its answers pass the same parser and validation as a model's.
    Team reports that are not in the format are ignored, bounded.

    LLM: through the real Decision node, against tests/openai_server.py (a
    real HTTP server over libcurl): a good answer is taken as is; an answer
    without a valid action is retried with the error told to the model (the
    retry carries 4 messages, the last one the correction); when it still
    fails, and when the server fails, the heuristic decides that step. A
    reply that is not JSON is resent as the very same request (the model
    is not blamed for the server); a refused request (501) and a server
    whose retries are spent are not resent; after three failed decisions
    the circuit opens and the server is not called again. With vision,
    the view's image rides in the user message as an image_url part
    (exact parts checked), or is left out when the budget has no room.
*/
#include <check.h>
#include <czmq.h>
#include "agent/agent_state.h"
#include "agent/conn_mailbox.h"
#include "agent/conn_state.h"
#include "agent/conn_world.h"
#include "agent/prompt.h"
#include "lib/openai_server.h"
#include "lib/testimage.h"
#include "lib/testsuite.h"

static const char *const s_line_actions[] = { "forward", "backward", "stay", "end" };

typedef struct {
    connector_t *world, *mailbox, *state;
    policy_input_t in;
} fixture_t;

static void
fixture_init (fixture_t *f, uint64_t position, bool done)
{
    f->world = conn_world_new (NULL);
    conn_world_set_shape (f->world, "line", 10, 1);
    world_view_t view = { .valid = true, .position = position, .x = position,
                          .object_count = 1, .objects_total = 10, .explored = 3,
                          .coverage = done? 1.0: 0.3, .done = done };
    strcpy (view.objects[0], "lamp");
    conn_world_feed (f->world, &view);
    f->mailbox = conn_mailbox_new (NULL);
    f->state = conn_state_new (NULL, NULL, 0);
    memset (&f->in, 0, sizeof (f->in));
    f->in.agent_id = "Agent1";
    f->in.step = 1;
    f->in.max_steps = 20;
    f->in.context = "History:\n(nothing yet)";
    f->in.actions = s_line_actions;
    f->in.action_count = 4;
    f->in.world = f->world;
    f->in.mailbox = f->mailbox;
    f->in.state = f->state;
}

static void
fixture_fini (fixture_t *f)
{
    connector_destroy (&f->world);
    connector_destroy (&f->mailbox);
    connector_destroy (&f->state);
}

static answer_t *
decide (policy_t *policy, fixture_t *f)
{
    char err[256];
    char *text = policy_decide (policy, &f->in, err, sizeof (err));
    ck_assert_msg (text, "no answer: %s", err);
    answer_t *answer = answer_parse (text, strlen (text));
    ck_assert (answer_validate (answer, s_line_actions, 4, err, sizeof (err)));
    free (text);
    return answer;
}

START_TEST (test_heuristic_deterministic)
{
    //  Two heuristics with the same seed and id give the same answers, and
    //  every one of them is a valid answer (not, say, two equal NULLs).
    policy_t *a = policy_heuristic_new (42, "Agent1");
    policy_t *b = policy_heuristic_new (42, "Agent1");
    ck_assert_str_eq (policy_name (a), "heuristic");
    fixture_t f;
    fixture_init (&f, 4, false);
    for (int step = 0; step < 5; step++) {
        char err[256];
        char *x = policy_decide (a, &f.in, err, sizeof (err));
        ck_assert_msg (x, "step %d, first policy: no answer: %s", step, err);
        char *y = policy_decide (b, &f.in, err, sizeof (err));
        ck_assert_msg (y, "step %d, second policy: no answer: %s", step, err);
        const char *texts[] = { x, y };
        for (int i = 0; i < 2; i++) {
            answer_t *answer = answer_parse (texts[i], strlen (texts[i]));
            ck_assert_ptr_nonnull (answer);
            ck_assert_msg (answer_validate (answer, s_line_actions, 4, err, sizeof (err)),
                           "step %d: invalid answer (%s): %s", step, err, texts[i]);
            answer_destroy (&answer);
        }
        ck_assert_str_eq (x, y);
        free (x);
        free (y);
    }
    fixture_fini (&f);
    policy_destroy (&a);
    policy_destroy (&b);
}
END_TEST

START_TEST (test_heuristic_ignores_free_text)
{
    //  Memories and mail in free text name positions: the agent's own past
    //  reasons ("... leads toward position 4 ...") and a teammate's prose.
    //  None of it is a fact about a cell: 9 of 10 cells stay unexplored
    //  (only our own position is known), whatever the seed.
    fixture_t f;
    fixture_init (&f, 5, false);
    const char *memories[] = {
        "At position 6, I saw [desk]. I decided to backward. Reason: backward leads toward "
        "position 4, the nearest place nobody has explored",
        "At position 7, I saw [sofa]. I decided to forward. Reason: forward leads toward "
        "position 8. Visited positions: 0 1 2 3",
        "Messages received: From Agent2: I am at position 9 and found: pen." };
    f.in.memories = memories;
    f.in.memory_count = 3;
    const char *prose = "I am at position 3 and found: cup. Visited positions: 0 1 2 3 4.";
    conn_mailbox_feed (f.mailbox, 1, "Agent2", "all", NULL, prose, strlen (prose));
    for (uint64_t seed = 0; seed < 8; seed++) {
        policy_t *p = policy_heuristic_new (seed, "Agent1");
        answer_t *answer = decide (p, &f);
        ck_assert_msg (strstr (answer_thinking (answer), "9 position(s) are still unexplored"),
                       "%s", answer_thinking (answer));
        answer_destroy (&answer);
        policy_destroy (&p);
    }
    fixture_fini (&f);
}
END_TEST

START_TEST (test_heuristic_uses_reports)
{
    //  A teammate's report in the declared format: 0..3 visited, so from 4
    //  the way is forward.
    fixture_t f;
    fixture_init (&f, 4, false);
    const char *body = "{\"team\":1,\"at\":3,\"claim\":null,\"visited\":[0,1,2,3],"
                       "\"found\":[\"cup\"]}";
    conn_mailbox_feed (f.mailbox, 1, "Agent2", NULL, "explorers", body, strlen (body));
    for (uint64_t seed = 0; seed < 8; seed++) {
        policy_t *p = policy_heuristic_new (seed, "Agent1");
        answer_t *answer = decide (p, &f);
        ck_assert_str_eq (answer_action (answer), "forward");
        ck_assert (strstr (answer_thinking (answer), "5 position(s) are still unexplored"));
        answer_destroy (&answer);
        policy_destroy (&p);
    }
    fixture_fini (&f);
}
END_TEST

//  One decision of a fresh heuristic on the shared facts.
static char *
decide_on (team_facts_t *facts, fixture_t *f, uint64_t seed)
{
    f->in.facts = facts;
    policy_t *p = policy_heuristic_new (seed, "Agent1");
    answer_t *answer = decide (p, f);
    char *action = strdup (answer_action (answer));
    answer_destroy (&answer);
    policy_destroy (&p);
    return action;
}

START_TEST (test_heuristic_claims)
{
    //  We stand at 5 of a line of 20; Agent3 stands at 0, Agent2 at 19.
    //  Unclaimed, the nearest cells are 4 and 6 and we take 6, further from
    //  the others. When Agent2 claims 6 we leave it and go backward; when it
    //  releases the claim (null), or leaves the team (no longer online in
    //  AGENTS), we take 6 again.
    fixture_t f;
    fixture_init (&f, 5, false);
    const char *here = "{\"team\":1,\"at\":0}";
    const char *claim = "{\"team\":1,\"at\":19,\"claim\":6}";
    const char *release = "{\"team\":1,\"at\":19,\"claim\":null}";
    for (uint64_t seed = 0; seed < 4; seed++) {
        team_facts_t *facts = team_facts_new ("Agent1");
        team_facts_set_shape (facts, 20, 1);
        ck_assert (team_facts_read_report (facts, "Agent3", here, strlen (here)));
        ck_assert (team_facts_read_report (facts, "Agent2", release, strlen (release)));
        char *action = decide_on (facts, &f, seed);
        ck_assert_str_eq (action, "forward");
        free (action);
        ck_assert (team_facts_read_report (facts, "Agent2", claim, strlen (claim)));
        ck_assert_str_eq (team_facts_claimed_by (facts, 6), "Agent2");
        action = decide_on (facts, &f, seed);
        ck_assert_str_eq (action, "backward");
        free (action);
        char *line = team_facts_line (facts, 5);
        ck_assert_msg (strstr (line, "claims: Agent2->6"), "%s", line);
        ck_assert_msg (strstr (line, "Team map: 3 of 20 cells known; unknown near you: 4, 6,"),
                       "%s", line);
        free (line);
        ck_assert (team_facts_read_report (facts, "Agent2", release, strlen (release)));
        ck_assert_ptr_null (team_facts_claimed_by (facts, 6));
        action = decide_on (facts, &f, seed);
        ck_assert_str_eq (action, "forward");
        free (action);
        //  Claimed again, then Agent2 leaves: AGENTS lists only Agent3 online.
        ck_assert (team_facts_read_report (facts, "Agent2", claim, strlen (claim)));
        const char *online[] = { "Agent3" };
        team_facts_set_online (facts, online, 1);
        ck_assert_ptr_null (team_facts_claimed_by (facts, 6));
        action = decide_on (facts, &f, seed);
        ck_assert_str_eq (action, "forward");
        free (action);
        team_facts_destroy (&facts);
    }
    f.in.facts = NULL;
    fixture_fini (&f);
}
END_TEST

START_TEST (test_prompt_shows_team_facts)
{
    //  The model sees the same facts: known cells and the team's claims.
    fixture_t f;
    fixture_init (&f, 5, false);
    char *text = prompt_user (NULL, &f.in, 0, NULL);
    ck_assert_ptr_null (strstr (text, "Team map:"));
    free (text);
    team_facts_t *facts = team_facts_new ("Agent1");
    team_facts_set_shape (facts, 10, 1);
    team_facts_visit (facts, 5);
    const char *claim = "{\"team\":1,\"at\":0,\"claim\":2,\"visited\":[0,1]}";
    ck_assert (team_facts_read_report (facts, "Agent2", claim, strlen (claim)));
    f.in.facts = facts;
    text = prompt_user (NULL, &f.in, 0, NULL);
    ck_assert_msg (strstr (text, "\nTeam map: 3 of 10 cells known; unknown near you: 4, 6, 3, 7, "
                                 "2, 8; claims: Agent2->2."), "%s", text);
    free (text);
    //  The line is never cut from the prompt, so it names at most 12 claims.
    for (int i = 3; i < 17; i++) {
        char from[16], report[64];
        snprintf (from, sizeof (from), "Agent%d", i);
        snprintf (report, sizeof (report), "{\"team\":1,\"at\":0,\"claim\":%d}", i % 10);
        ck_assert (team_facts_read_report (facts, from, report, strlen (report)));
    }
    ck_assert_uint_eq (team_facts_claim_count (facts), 15);
    text = prompt_user (NULL, &f.in, 0, NULL);
    ck_assert_msg (strstr (text, "Agent13->3, ... (3 more).\n"), "%s", text);
    ck_assert_ptr_null (strstr (text, "Agent14->"));
    free (text);
    team_facts_destroy (&facts);
    f.in.facts = NULL;
    fixture_fini (&f);
}
END_TEST

START_TEST (test_team_reports_bad_input)
{
    //  Not reports: ignored, nothing learnt, nothing crashes.
    team_facts_t *facts = team_facts_new ("Agent1");
    team_facts_set_shape (facts, 10, 1);
    const char *bad[] = {
        "", "hello", "{", "[1,2]", "{\"team\":2,\"at\":3}", "{\"team\":\"1\"}",
        "{\"team\":1,\"team\":1}", "{\"at\":3}" };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
        ck_assert_msg (!team_facts_read_report (facts, "Agent2", bad[i], strlen (bad[i])), "%s", bad[i]);
    //  Our own report, and values off the map or of the wrong type: skipped.
    const char *own = "{\"team\":1,\"visited\":[1]}";
    ck_assert (!team_facts_read_report (facts, "Agent1", own, strlen (own)));
    const char *odd = "{\"team\":1,\"at\":-1,\"claim\":\"x\",\"visited\":[99,-2,\"3\",4.5,2],"
                      "\"found\":[1,\"pen\"]}";
    ck_assert (team_facts_read_report (facts, "Agent2", odd, strlen (odd)));
    ck_assert_uint_eq (team_facts_unknown (facts), 9);
    ck_assert_uint_eq (team_facts_claim_count (facts), 0);
    ck_assert_uint_eq (team_facts_found_count (facts), 1);
    //  Too long to be a report.
    char *big = (char *) malloc (TEAM_MAX_REPORT + 2);
    memset (big, ' ', TEAM_MAX_REPORT + 1);
    big[0] = '{';
    big[TEAM_MAX_REPORT + 1] = 0;
    ck_assert (!team_facts_read_report (facts, "Agent2", big, strlen (big)));
    free (big);
    //  Our own report carries what is new, once.
    team_facts_visit (facts, 4);
    team_facts_set_own_claim (facts, 5);
    const char *found[] = { "lamp" };
    char *report = team_facts_report (facts, 4, found, 1);
    ck_assert_str_eq (report, "{\"team\":1,\"at\":4,\"claim\":5,\"visited\":[4],\"found\":[\"lamp\"]}");
    free (report);
    ck_assert_ptr_null (team_facts_report (facts, 4, found, 1));
    team_facts_destroy (&facts);
}
END_TEST

START_TEST (test_heuristic_avoids_teammates)
{
    //  Nothing explored, a teammate stands right ahead at 6: go backward.
    fixture_t f;
    fixture_init (&f, 5, false);
    msgpack_sbuffer buf;
    msgpack_sbuffer_init (&buf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buf, msgpack_sbuffer_write);
    msgpack_pack_map (&pk, 2);
    msgpack_pack_str (&pk, 6);
    msgpack_pack_str_body (&pk, "Agent1", 6);
    msgpack_pack_uint64 (&pk, 5);
    msgpack_pack_str (&pk, 6);
    msgpack_pack_str_body (&pk, "Agent2", 6);
    msgpack_pack_uint64 (&pk, 6);
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    msgpack_unpack_next (&unpacked, buf.data, buf.size, NULL);
    conn_state_feed (f.state, STATE_KEY_POSITIONS, &unpacked.data);
    msgpack_unpacked_destroy (&unpacked);
    msgpack_sbuffer_destroy (&buf);
    for (uint64_t seed = 0; seed < 8; seed++) {
        policy_t *p = policy_heuristic_new (seed, "Agent1");
        answer_t *answer = decide (p, &f);
        ck_assert_str_eq (answer_action (answer), "backward");
        answer_destroy (&answer);
        policy_destroy (&p);
    }
    fixture_fini (&f);
}
END_TEST

START_TEST (test_heuristic_tells_and_ends)
{
    fixture_t f;
    fixture_init (&f, 2, false);
    policy_t *p = policy_heuristic_new (1, "Agent1");
    answer_t *answer = decide (p, &f);
    //  Listens to the channel and tells it, in the declared format, where
    //  it is, what it claims, where it has been and what it found.
    ck_assert_ptr_null (answer_message (answer));
    ck_assert_uint_eq (answer_directive_count (answer), 2);
    ck_assert_int_eq (answer_directive (answer, 0)->kind, ANSWER_LISTEN_TO);
    ck_assert_str_eq (answer_directive (answer, 0)->target, HEURISTIC_CHANNEL);
    ck_assert_int_eq (answer_directive (answer, 1)->kind, ANSWER_MESSAGE_TO);
    ck_assert_str_eq (answer_directive (answer, 1)->target, HEURISTIC_CHANNEL);
    const char *report = answer_directive (answer, 1)->text;
    ck_assert_msg (testsuite_matches (report, "^\\{\"team\":1,\"at\":2,\"claim\":[13],"
                                      "\"visited\":\\[2\\],\"found\":\\[\"lamp\"\\]\\}$"),
                   "%s", report);
    ck_assert_ptr_nonnull (answer_thinking (answer));
    answer_destroy (&answer);
    //  Same place, same goal: nothing new to tell, already listening.
    answer = decide (p, &f);
    ck_assert_ptr_null (answer_message (answer));
    ck_assert_uint_eq (answer_directive_count (answer), 0);
    answer_destroy (&answer);
    fixture_fini (&f);
    //  The world is done: end, and release the claim.
    fixture_init (&f, 2, true);
    answer = decide (p, &f);
    ck_assert_str_eq (answer_action (answer), "end");
    ck_assert_uint_eq (answer_directive_count (answer), 1);
    ck_assert_int_eq (answer_directive (answer, 0)->kind, ANSWER_MESSAGE_TO);
    ck_assert (strstr (answer_directive (answer, 0)->text, "\"claim\":null"));
    answer_destroy (&answer);
    policy_destroy (&p);
    fixture_fini (&f);
}
END_TEST

// ---------------------------------------------------------------------------
//  The llm policy through the Decision node.

static const char *s_url;

static void
server_up (void)
{
    s_url = openai_server_start ();
}

static void
server_down (void)
{
    openai_server_stop ();
}

typedef struct {
    fixture_t f;
    agent_state_t a;
} decision_t;

static void
decision_init_breaker (decision_t *d, const char *model, int64_t breaker_ms)
{
    fixture_init (&d->f, 3, false);
    memset (&d->a, 0, sizeof (d->a));
    agent_parts_t *a = &d->a.parts;
    strcpy (a->id, "Agent1");
    a->max_steps = 20;
    d->a.perceived.step = 1;
    a->world = d->f.world;
    a->mailbox = d->f.mailbox;
    a->state = d->f.state;
    a->connectors[0] = a->world;
    a->connectors[1] = a->mailbox;
    a->connectors[2] = a->state;
    a->mem = agentmem_new ();
    for (size_t i = 0; i < 4; i++)
        a->actions[i] = s_line_actions[i];
    a->action_count = 4;
    a->heuristic = policy_heuristic_new (1, "Agent1");
    llm_options_t lo;
    llm_options_default (&lo);
    lo.url = s_url;
    lo.model = model;
    lo.http.max_retries = 0;
    char err[256];
    llm_t *llm = llm_new (&lo, err, sizeof (err));
    ck_assert_msg (llm, "%s", err);
    a->policy = policy_llm_new (llm, breaker_ms);
}

//  The Decision stage, as agent_step calls it.
static stage_outcome_t
run_decision (decision_t *d)
{
    agent_state_t *s = &d->a;
    return stage_decision (&s->parts, &s->perceived, &s->recalled, &s->team, &s->decided,
                           &s->counts);
}

static void
decision_init (decision_t *d, const char *model)
{
    decision_init_breaker (d, model, 0);
}

//  Every request body the scripted server received for `model` (a JSON
//  array; the caller decrefs).
static json_t *
server_requests (const char *model)
{
    char *base = zsys_sprintf ("%s/requests/%s", s_url, model);
    http_t *http = http_new (base, NULL, NULL);
    ck_assert_ptr_nonnull (http);
    json_t *doc = NULL;
    char err[256];
    ck_assert_msg (http_get_json (http, base, 5000, &doc, err, sizeof (err)) == 0, "%s", err);
    json_t *list = json_incref (json_object_get (doc, "requests"));
    ck_assert (json_is_array (list));
    json_decref (doc);
    http_destroy (&http);
    zstr_free (&base);
    return list;
}

static policy_llm_report_t
report (decision_t *d)
{
    policy_llm_report_t r;
    policy_llm_report (d->a.parts.policy, &r);
    return r;
}

static void
decision_fini (decision_t *d)
{
    agent_parts_t *a = &d->a.parts;
    policy_destroy (&a->policy);
    policy_destroy (&a->heuristic);
    agentmem_destroy (&a->mem);
    agent_state_free_records (&d->a);
    fixture_fini (&d->f);
}

START_TEST (test_llm_good_answer)
{
    decision_t d;
    decision_init (&d, "normal:policy-good");
    ck_assert (stage_went_on (run_decision (&d)));
    ck_assert (!d.a.decided.by_fallback);
    ck_assert_uint_eq (d.a.counts.invalid_answers, 0);
    ck_assert_str_eq (d.a.decided.action, "forward");
    ck_assert_str_eq (answer_message (d.a.decided.answer), "I found chair and lamp at position 3");
    ck_assert_uint_eq (answer_directive_count (d.a.decided.answer), 1);
    ck_assert_str_eq (answer_directive (d.a.decided.answer, 0)->target, "Agent2");
    ck_assert_str_eq (answer_directive (d.a.decided.answer, 0)->text, "Check position 4 (the door) > now");
    //  The thinking went into AgentMemory.
    ck_assert_uint_eq (agentmem_thoughts (d.a.parts.mem), 1);
    //  The prompt the model saw was built from the context.
    ck_assert (strstr (d.a.decided.context, "Current state:\n[world]\nPosition: 3"));
    decision_fini (&d);
}
END_TEST

START_TEST (test_llm_bad_answer_retried_then_fallback)
{
    //  "echo" answers "n=<messages> last=<last message>": never a valid
    //  answer, and it shows what the model was sent.
    decision_t d;
    decision_init (&d, "echo:policy-bad");
    ck_assert (stage_went_on (run_decision (&d)));
    ck_assert_uint_eq (d.a.counts.invalid_answers, 2);
    //  The retry carried system, user, the bad answer and the correction.
    ck_assert_msg (strncmp (d.a.decided.refused_answer, "n=4 last=Your previous answer could not be used: ",
                            48) == 0, "%s", d.a.decided.refused_answer);
    ck_assert (strstr (d.a.decided.refused_answer + 48, "action"));
    //  Then the heuristic decided, and the agent goes on.
    ck_assert (d.a.decided.by_fallback);
    ck_assert_uint_eq (d.a.counts.fallbacks, 1);
    ck_assert (streq (d.a.decided.action, "forward") || streq (d.a.decided.action, "backward"));
    ck_assert_uint_eq (report (&d).totals.calls, 2);
    ck_assert_uint_eq (report (&d).totals.failed, 0);
    decision_fini (&d);
}
END_TEST

START_TEST (test_llm_server_down_fallback)
{
    //  http's retries are spent (none here): the Decision node does not
    //  multiply them with a second try of its own.
    decision_t d;
    decision_init (&d, "always-500:policy-down");
    ck_assert (stage_went_on (run_decision (&d)));
    ck_assert (d.a.decided.by_fallback);
    ck_assert_uint_eq (report (&d).totals.calls, 1);
    ck_assert_uint_eq (report (&d).totals.failed, 1);
    ck_assert_int_eq (report (&d).last_result, LLM_RESULT_UNREACHABLE);
    ck_assert (streq (d.a.decided.action, "forward") || streq (d.a.decided.action, "backward"));
    decision_fini (&d);
}
END_TEST

START_TEST (test_llm_garbled_reply_resends_original)
{
    //  The first reply is not JSON: the model said nothing, so the retry is
    //  the very same request (2 messages), not "your previous answer could
    //  not be used" with an empty assistant turn.
    const char *model = "malformed-then-ok:policy-resend";
    decision_t d;
    decision_init (&d, model);
    ck_assert (stage_went_on (run_decision (&d)));
    ck_assert (!d.a.decided.by_fallback);
    ck_assert_str_eq (d.a.decided.action, "forward");
    ck_assert_uint_eq (d.a.counts.invalid_answers, 0);
    json_t *requests = server_requests (model);
    ck_assert_uint_eq (json_array_size (requests), 2);
    json_t *first = json_array_get (requests, 0), *second = json_array_get (requests, 1);
    ck_assert_uint_eq (json_array_size (json_object_get (first, "messages")), 2);
    ck_assert_msg (json_equal (first, second), "the retry differs from the request");
    json_decref (requests);
    decision_fini (&d);
}
END_TEST

START_TEST (test_llm_refused_not_resent)
{
    //  501 says the server will never do it: one request, no retry of any
    //  kind, and the heuristic decides.
    const char *model = "501:policy-refused";
    decision_t d;
    decision_init (&d, model);
    ck_assert (stage_went_on (run_decision (&d)));
    ck_assert (d.a.decided.by_fallback);
    ck_assert_int_eq (report (&d).last_result, LLM_RESULT_REFUSED);
    json_t *requests = server_requests (model);
    ck_assert_uint_eq (json_array_size (requests), 1);
    json_decref (requests);
    decision_fini (&d);
}
END_TEST

START_TEST (test_llm_breaker_opens)
{
    //  Three failed decisions in a row open the circuit: the next two are
    //  not sent at all (the server saw 3 requests, not 5), and it opened
    //  once. The heuristic decided all five.
    const char *model = "always-500:policy-breaker";
    decision_t d;
    decision_init_breaker (&d, model, 600000);
    for (int i = 0; i < 5; i++) {
        ck_assert (stage_went_on (run_decision (&d)));
        ck_assert (d.a.decided.by_fallback);
    }
    policy_llm_report_t r = report (&d);
    ck_assert_uint_eq (r.totals.calls, 3);
    ck_assert_uint_eq (r.skipped, 2);
    ck_assert_uint_eq (r.breaker_openings, 1);
    ck_assert (r.breaker_open);
    json_t *requests = server_requests (model);
    ck_assert_uint_eq (json_array_size (requests), 3);
    json_decref (requests);
    decision_fini (&d);
}
END_TEST

START_TEST (test_llm_vision_image_part)
{
    //  With --llm-vision and an image at the position, the user message is
    //  sent as content parts: the prompt text, then the image as a base64
    //  PNG data URL at detail "low". The system message stays a string.
    const char *model = "normal:policy-vision";
    decision_t d;
    decision_init (&d, model);
    size_t size;
    uint8_t *png = testimage_read ("lamp.png", &size);
    conn_world_feed_image (d.f.world, png, size, "png");
    d.a.parts.llm_vision = true;
    d.a.parts.context_tokens = 4096;
    ck_assert (stage_went_on (run_decision (&d)));
    ck_assert (!d.a.decided.by_fallback);
    json_t *requests = server_requests (model);
    ck_assert_uint_eq (json_array_size (requests), 1);
    json_t *messages = json_object_get (json_array_get (requests, 0), "messages");
    ck_assert (json_is_string (json_object_get (json_array_get (messages, 0), "content")));
    json_t *parts = json_object_get (json_array_get (messages, 1), "content");
    ck_assert (json_is_array (parts));
    char *b64 = testimage_base64 (png, size);
    char *url = zsys_sprintf ("data:image/png;base64,%s", b64);
    const char *text = json_string_value (json_object_get (json_array_get (parts, 0), "text"));
    ck_assert (text && strstr (text, "You are Agent1."));
    json_t *expect = json_pack ("[{s:s, s:s}, {s:s, s:{s:s, s:s}}]",
                                "type", "text", "text", text,
                                "type", "image_url", "image_url", "url", url, "detail", "low");
    ck_assert_msg (json_equal (parts, expect), "%s", json_dumps (parts, 0));
    json_decref (expect);
    policy_llm_report_t r = report (&d);
    ck_assert_uint_eq (r.images_sent, 1);
    json_decref (requests);
    decision_fini (&d);

    //  A context too small for the image: it is left out, and counted.
    model = "normal:policy-vision-small";
    decision_init (&d, model);
    conn_world_feed_image (d.f.world, png, size, "png");
    d.a.parts.llm_vision = true;
    d.a.parts.context_tokens = 1024;
    ck_assert (stage_went_on (run_decision (&d)));
    requests = server_requests (model);
    messages = json_object_get (json_array_get (requests, 0), "messages");
    ck_assert (json_is_string (json_object_get (json_array_get (messages, 1), "content")));
    ck_assert_uint_eq (report (&d).images_left_out, 1);
    json_decref (requests);
    decision_fini (&d);
    free (url);
    free (b64);
    free (png);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("policy");
    TCase *tc = tcase_create ("heuristic");
    tcase_add_test (tc, test_heuristic_deterministic);
    tcase_add_test (tc, test_heuristic_ignores_free_text);
    tcase_add_test (tc, test_heuristic_uses_reports);
    tcase_add_test (tc, test_heuristic_claims);
    tcase_add_test (tc, test_team_reports_bad_input);
    tcase_add_test (tc, test_prompt_shows_team_facts);
    tcase_add_test (tc, test_heuristic_avoids_teammates);
    tcase_add_test (tc, test_heuristic_tells_and_ends);
    suite_add_tcase (s, tc);
    TCase *llm = tcase_create ("llm");
    tcase_add_unchecked_fixture (llm, server_up, server_down);
    tcase_add_test (llm, test_llm_good_answer);
    tcase_add_test (llm, test_llm_bad_answer_retried_then_fallback);
    tcase_add_test (llm, test_llm_server_down_fallback);
    tcase_add_test (llm, test_llm_garbled_reply_resends_original);
    tcase_add_test (llm, test_llm_refused_not_resent);
    tcase_add_test (llm, test_llm_breaker_opens);
    tcase_add_test (llm, test_llm_vision_image_part);
    suite_add_tcase (s, llm);
    return testsuite_run (s);
}
