// SPDX-License-Identifier: MIT
/*  check_answer - the answer parser on the corpus in tests/answers/
    (realistic good and broken LLM answers), plus limits, validation
    messages, the formatter's round trip and a garbage sweep.  */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/answer.h"
#include "lib/testsuite.h"

static const char *s_actions [] = { "forward", "backward", "left", "right", "end" };
#define S_ACTIONS 5

//  Parses tests/answers/<name>.
static answer_t *
s_parse_file (const char *name)
{
    char relative [256];
    snprintf (relative, sizeof relative, "answers/%s", name);
    size_t len;
    char *text = testsuite_read_test_file (relative, &len);
    answer_t *answer = answer_parse (text, len);
    free (text);
    ck_assert_ptr_nonnull (answer);
    return answer;
}

#define S_STR_OR_NULL(got, want) do { \
    if (want) ck_assert_msg ((got) && strcmp ((got), (want)) == 0, "%s: got \"%s\" want \"%s\"", \
                             c->file, (got) ? (got) : "(null)", (want)); \
    else ck_assert_msg (!(got), "%s: got \"%s\" want NULL", c->file, (got)); \
} while (0)

typedef struct {
    const char *file, *method, *action, *reason, *message, *thinking;
    size_t directives;
    const char *invalid;        //  NULL if valid, else a word of the error
} s_case_t;

static const s_case_t s_cases [] = {
    { "good_fenced.txt", "yaml", "forward", "Continue exploring new areas",
      "I found chair and table at position 3", "I saw new objects, should inform other Agents", 0, NULL },
    { "good_prose_around.txt", "yaml", "right", "Agent2 reported position 4, so I go right.",
      NULL, "Position 4 has been explored by Agent2.\nThe right side is unexplored.", 0, NULL },
    { "no_fence.txt", "yaml", "backward", "dead end ahead", NULL, "nothing new here", 0, NULL },
    { "colons_in_values.txt", "lines", "left", "go left: unexplored area, then back: maybe",
      "Agent2: I am going left", "note: position 5 is a dead end", 0, NULL },
    { "no_fence_prose_colons.txt", "lines", "forward", "unexplored: nothing seen there yet",
      NULL, "I should keep going, it looks promising", 0, NULL },
    { "markdown_bold.txt", "lines", "forward", "explore", NULL, "the lamp is new", 0, NULL },
    { "directives_channels.txt", "yaml", "left", "Agent3 covers the right", NULL, "coordinate", 4, NULL },
    { "directives_quotes.txt", "yaml", "forward", "go", NULL, NULL, 3, NULL },
    { "directive_inside_yaml.txt", "yaml", "end", "all explored", NULL, "tell them", 1, NULL },
    { "broken_directives.txt", "lines", "forward", "test broken directives", NULL, NULL, 0, NULL },
    { "unknown_action.txt", "yaml", "fly", "birds do it", NULL, "let's fly", 0, "\"fly\"" },
    { "missing_reason.txt", "yaml", "forward", NULL, NULL, NULL, 0, "no reason" },
    { "two_fences.txt", "yaml", "right", "second block has the action", NULL, NULL, 0, NULL },
    { "empty.txt", "none", NULL, NULL, NULL, NULL, 0, "no action" },
    { "garbage.txt", "none", NULL, NULL, NULL, NULL, 0, "no action" },
    { "yaml_list_root.txt", "lines", "forward", "list", NULL, NULL, 0, NULL },
    { "nested_values.txt", "yaml", "forward", "nested thinking is skipped", NULL, NULL, 0, NULL },
    { "unclosed_fence.txt", "lines", "left", "the model ran out of tokens",
      NULL, "cut off by max_tokens", 0, NULL },
};

START_TEST (test_corpus)
{
    const s_case_t *c = &s_cases [_i];
    answer_t *answer = s_parse_file (c->file);
    ck_assert_msg (strcmp (answer_method (answer), c->method) == 0, "%s: method %s, want %s",
                   c->file, answer_method (answer), c->method);
    S_STR_OR_NULL (answer_action (answer), c->action);
    S_STR_OR_NULL (answer_reason (answer), c->reason);
    S_STR_OR_NULL (answer_message (answer), c->message);
    if (c->thinking)
        S_STR_OR_NULL (answer_thinking (answer), c->thinking);
    ck_assert_msg (answer_directive_count (answer) == c->directives, "%s: %zu directives",
                   c->file, answer_directive_count (answer));
    char err [512];
    bool valid = answer_validate (answer, s_actions, S_ACTIONS, err, sizeof err);
    if (c->invalid) {
        ck_assert_msg (!valid, "%s: should be invalid", c->file);
        ck_assert_msg (strstr (err, c->invalid), "%s: error \"%s\"", c->file, err);
        ck_assert_ptr_nonnull (strstr (err, "forward, backward, left, right, end")
                               ? err : strstr (err, "reason"));
        ck_assert_ptr_nonnull (strstr (err, "Reply again"));
    }
    else
        ck_assert_msg (valid, "%s: %s", c->file, err);
    answer_destroy (&answer);
    ck_assert_ptr_null (answer);
}
END_TEST

static void
s_expect_directive (answer_t *answer, size_t i, answer_directive_kind_t kind,
                    const char *target, const char *text)
{
    const answer_directive_t *d = answer_directive (answer, i);
    ck_assert_ptr_nonnull (d);
    ck_assert_int_eq (d->kind, kind);
    ck_assert_str_eq (d->target, target);
    if (text)
        ck_assert_str_eq (d->text, text);
    else
        ck_assert_ptr_null (d->text);
}

START_TEST (test_directives)
{
    answer_t *answer = s_parse_file ("directives_channels.txt");
    s_expect_directive (answer, 0, ANSWER_MESSAGE_TO, "Agent2",
                        "Prepare to scan position 6 (the hall) -> report back > soon.");
    s_expect_directive (answer, 1, ANSWER_MESSAGE_TO, "CombatGroup1",
                        "Focus fire on the nearest Drones.\nOnce engaged, maintain pressure.");
    s_expect_directive (answer, 2, ANSWER_LISTEN_TO, "explorers", NULL);
    s_expect_directive (answer, 3, ANSWER_LISTEN_TO, "team-b", NULL);
    ck_assert_ptr_null (answer_directive (answer, 4));
    answer_destroy (&answer);

    answer = s_parse_file ("directives_quotes.txt");
    s_expect_directive (answer, 0, ANSWER_MESSAGE_TO, "Agent2", "double quoted, with ) inside");
    s_expect_directive (answer, 1, ANSWER_MESSAGE_TO, "Agent3", "it's single quoted");
    s_expect_directive (answer, 2, ANSWER_MESSAGE_TO, "all", "plain text no quotes");
    answer_destroy (&answer);

    answer = s_parse_file ("directive_inside_yaml.txt");
    s_expect_directive (answer, 0, ANSWER_MESSAGE_TO, "Agent1", "done: all explored");
    answer_destroy (&answer);
}
END_TEST

START_TEST (test_limits)
{
    //  Too many directives: ANSWER_MAX_DIRECTIVES kept, the rest counted.
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    fputs ("action: forward\nreason: spam\n", out);
    for (int i = 0; i < ANSWER_MAX_DIRECTIVES + 5; i++)
        fprintf (out, "<ListenTo(ch%d)>\n", i);
    //  One over-long directive text and an over-long name.
    fputs ("<MessageTo(", out);
    for (int i = 0; i < 200; i++)
        fputc ('N', out);
    fputs (", '''", out);
    for (int i = 0; i < ANSWER_MAX_DIRECTIVE_TEXT * 2; i++)
        fputc ('x', out);
    fputs ("''')>\n", out);
    fclose (out);
    answer_t *answer = answer_parse (text, size);
    ck_assert_uint_eq (answer_directive_count (answer), ANSWER_MAX_DIRECTIVES);
    ck_assert_uint_eq (answer_directives_dropped (answer), 6);
    ck_assert_str_eq (answer_action (answer), "forward");
    answer_destroy (&answer);
    free (text);

    //  Directive text cut at its limit (counted), name cut too.
    size = 0;
    out = open_memstream (&text, &size);
    fputs ("<MessageTo(Agent2, '''", out);
    for (int i = 0; i < ANSWER_MAX_DIRECTIVE_TEXT * 2; i++)
        fputc ('y', out);
    fputs ("''')>\n", out);
    fclose (out);
    answer = answer_parse (text, size);
    ck_assert_uint_eq (answer_directive_count (answer), 1);
    ck_assert_uint_eq (strlen (answer_directive (answer, 0)->text), ANSWER_MAX_DIRECTIVE_TEXT);
    ck_assert_uint_eq (answer_fields_truncated (answer), 1);
    answer_destroy (&answer);
    free (text);

    //  Huge input: only ANSWER_MAX_BYTES read, flagged.
    size = ANSWER_MAX_BYTES * 4;
    text = malloc (size);
    memset (text, 'z', size);
    memcpy (text, "action: left\nreason: big\nthinking: ", 35);
    answer = answer_parse (text, size);
    ck_assert (answer_input_truncated (answer));
    ck_assert_str_eq (answer_action (answer), "left");
    ck_assert_uint_eq (strlen (answer_thinking (answer)), ANSWER_MAX_FIELD_BYTES);
    answer_destroy (&answer);
    free (text);

    //  NUL bytes inside, NULL input.
    answer = answer_parse ("action: end\0\nreason: nul", 24);
    ck_assert_str_eq (answer_action (answer), "end");
    ck_assert_str_eq (answer_reason (answer), "nul");
    answer_destroy (&answer);
    answer = answer_parse (NULL, 100);
    ck_assert_str_eq (answer_method (answer), "none");
    answer_destroy (&answer);
}
END_TEST

START_TEST (test_format_round_trip)
{
    answer_directive_t directives [] = {
        { ANSWER_MESSAGE_TO, "Agent2", "line one\nline two ) > with '''triple''' quotes" },
        { ANSWER_LISTEN_TO, "explorers", NULL },
    };
    const char *thinking = "tricky: \"quotes\", back\\slash,\ttab\nnewline, caf\xc3\xa9";
    char *text = answer_format (thinking, "forward", "reason: with colon", "found: lamp",
                                directives, 2);
    ck_assert_ptr_nonnull (text);
    answer_t *answer = answer_parse (text, strlen (text));
    ck_assert_str_eq (answer_method (answer), "yaml");
    ck_assert_str_eq (answer_thinking (answer), thinking);
    ck_assert_str_eq (answer_action (answer), "forward");
    ck_assert_str_eq (answer_reason (answer), "reason: with colon");
    ck_assert_str_eq (answer_message (answer), "found: lamp");
    ck_assert_uint_eq (answer_directive_count (answer), 2);
    ck_assert_str_eq (answer_directive (answer, 0)->text,
                      "line one\nline two ) > with '' 'triple'' ' quotes");
    ck_assert_str_eq (answer_directive (answer, 1)->target, "explorers");
    char err [256];
    ck_assert (answer_validate (answer, s_actions, S_ACTIONS, err, sizeof err));
    answer_destroy (&answer);
    free (text);
    //  No message, no thinking.
    text = answer_format (NULL, "end", "done", NULL, NULL, 0);
    answer = answer_parse (text, strlen (text));
    ck_assert_str_eq (answer_action (answer), "end");
    ck_assert_ptr_null (answer_message (answer));
    ck_assert_ptr_null (answer_thinking (answer));
    answer_destroy (&answer);
    free (text);
}
END_TEST

//  Deterministic pseudo-random garbage built from answer-like pieces: the
//  parser must never crash, leak or produce an invalid directive.
START_TEST (test_garbage_sweep)
{
    static const char *pieces [] = {
        "```yaml\n", "```", "action:", " forward", "reason:", ": ", "\n", "  ", "|\n", ">\n",
        "<MessageTo(", "<ListenTo(", "'''", "\"", "'", ")>", ")", ">", ",", "Agent2",
        "[", "{", "&a ", "*a", "- ", "? ", "#", "\t", "\xc3", "\xff", "%YAML 1.2\n", "---\n",
    };
    uint64_t seed = 42;
    for (int round = 0; round < 3000; round++) {
        char buffer [512];
        size_t len = 0;
        int n = (int) (seed % 40);
        for (int i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            const char *piece = pieces [(seed >> 33) % (sizeof pieces / sizeof pieces [0])];
            size_t plen = strlen (piece);
            if (len + plen >= sizeof buffer)
                break;
            memcpy (buffer + len, piece, plen);
            len += plen;
        }
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        answer_t *answer = answer_parse (buffer, len);
        ck_assert_ptr_nonnull (answer);
        for (size_t i = 0; i < answer_directive_count (answer); i++) {
            const answer_directive_t *d = answer_directive (answer, i);
            ck_assert (d->target && *d->target);
            ck_assert ((d->kind == ANSWER_MESSAGE_TO) == (d->text != NULL));
        }
        char err [256];
        answer_validate (answer, s_actions, S_ACTIONS, err, sizeof err);
        answer_destroy (&answer);
    }
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("answer");
    TCase *tc = tcase_create ("parse");
    tcase_add_loop_test (tc, test_corpus, 0, sizeof s_cases / sizeof s_cases [0]);
    tcase_add_test (tc, test_directives);
    tcase_add_test (tc, test_limits);
    tcase_add_test (tc, test_format_round_trip);
    tcase_add_test (tc, test_garbage_sweep);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
