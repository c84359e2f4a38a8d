// SPDX-License-Identifier: MIT
/*  check_team_report - the team report scanner (agent/team_report.c) and
    jansson give every body the same meaning.

    team_facts_read_report scans the form the agents write and hands any
    other body to team_facts_read_report_json. Each test here feeds the
    same body to two team_facts that start alike, one through each
    reader, and asserts that they answer the same and know the same
    afterwards: every cell, the teammates and where they stand, the claims
    (and who makes them), the count of found names.

    Bodies: reports written by team_facts_report (visits within and
    beyond TEAM_MAX_VISITED, claims and null, found names within and
    beyond TEAM_MAX_FOUND, names jansson escapes or writes as UTF-8),
    which the scanner must take; hand-written variants of them (keys in
    another order, spaces, escapes, leading zeros, 18, 19 and 20 digit
    numbers, negative numbers and -0, fractions and exponents, duplicate
    keys, team other than 1, claims of other types, trailing bytes,
    non-ASCII and invalid UTF-8, control bytes, positions off the map);
    every prefix of each report; and bodies mutated at random from the
    reports (a fixed seed, so a failure repeats).
*/
#include <check.h>
#include <czmq.h>
#include "agent/team_facts.h"
#include "agent/team_report.h"
#include "lib/testsuite.h"

#define FROM "Agent2"
#define FUZZ_ROUNDS 20000

//  Counts of bodies each reader took, so a test can check that the
//  scanner took some (else it compared jansson with itself).
static size_t s_scanned;

static team_facts_t *
s_facts (uint64_t width)
{
    team_facts_t *facts = team_facts_new ("Agent1");
    team_facts_set_shape (facts, width, width? width: 1);
    //  A claim and a position known before the body, so a release, a new
    //  claim and a move are all seen.
    team_facts_claim (facts, FROM, 7, 3);
    const char *seed = "{\"team\":1,\"at\":3,\"claim\":7}";
    ck_assert (team_facts_read_report_json (facts, "Agent3", seed, strlen (seed)));
    team_facts_visit (facts, 1);
    return facts;
}

//  Both readers know the same; `what` names the body in a failure.
static void
s_assert_same (team_facts_t *a, team_facts_t *b, const char *what)
{
    ck_assert_msg (team_facts_cells (a) == team_facts_cells (b), "cells differ after %s", what);
    //  Check records every passed assertion (a write each): the cells are
    //  compared in plain C and only a difference reaches Check.
    for (size_t i = 0; i < team_facts_cells (a); i++)
        if (team_facts_cell (a, i) != team_facts_cell (b, i))
            ck_abort_msg ("cell %zu differs after %s", i, what);
    ck_assert_msg (team_facts_found_count (a) == team_facts_found_count (b),
                   "found %zu vs %zu after %s", team_facts_found_count (a),
                   team_facts_found_count (b), what);
    ck_assert_msg (team_facts_mate_count (a) == team_facts_mate_count (b),
                   "mates differ after %s", what);
    const char *agent_a, *agent_b;
    uint64_t pos_a, pos_b, at_a, at_b;
    for (size_t i = 0; team_facts_mate_at (a, i, &agent_a, &pos_a); i++) {
        ck_assert (team_facts_mate_at (b, i, &agent_b, &pos_b));
        ck_assert_msg (streq (agent_a, agent_b) && pos_a == pos_b,
                       "mate %zu: %s@%" PRIu64 " vs %s@%" PRIu64 " after %s",
                       i, agent_a, pos_a, agent_b, pos_b, what);
    }
    ck_assert_msg (team_facts_claim_count (a) == team_facts_claim_count (b),
                   "claims differ after %s", what);
    for (size_t i = 0; team_facts_claim_at (a, i, &agent_a, &pos_a, &at_a); i++) {
        ck_assert (team_facts_claim_at (b, i, &agent_b, &pos_b, &at_b));
        ck_assert_msg (streq (agent_a, agent_b) && pos_a == pos_b && at_a == at_b,
                       "claim %zu: %s->%" PRIu64 " (at %" PRIu64 ") vs %s->%" PRIu64
                       " (at %" PRIu64 ") after %s", i, agent_a, pos_a, at_a,
                       agent_b, pos_b, at_b, what);
    }
    ck_assert_uint_eq (team_facts_claim_of (a, FROM), team_facts_claim_of (b, FROM));
    ck_assert_uint_eq (team_facts_mate_position (a, FROM), team_facts_mate_position (b, FROM));
}

//  Feeds `body` to both readers, on a grid of `width` (0: a line of
//  unknown length), and asserts the same outcome.
static void
s_same_on (const char *body, size_t len, uint64_t width)
{
    team_report_t report;
    s_scanned += team_report_scan (body, len, &report);
    team_facts_t *a = s_facts (width);
    team_facts_t *b = s_facts (width);
    bool read_a = team_facts_read_report (a, FROM, body, len);
    bool read_b = team_facts_read_report_json (b, FROM, body, len);
    char what[160];
    snprintf (what, sizeof (what), "\"%.*s\"%s (%zu bytes, width %" PRIu64 ")",
              len < 120? (int) len: 120, body, len < 120? "": "...", len, width);
    ck_assert_msg (read_a == read_b, "read %d vs %d: %s", read_a, read_b, what);
    s_assert_same (a, b, what);
    team_facts_destroy (&a);
    team_facts_destroy (&b);
}

static void
s_same (const char *body)
{
    s_same_on (body, strlen (body), 64);
    s_same_on (body, strlen (body), 0);
}

static const char *s_names[] = {
    "lamp", "o12a", "key", "a b", "", "quote\"d", "back\\slash", "tab\there",
    "l\xc3\xa4mp", "\xe2\x82\xac", "x~", "{}[],:" };
#define NAME_COUNT (sizeof (s_names) / sizeof (s_names[0]))

//  A report as team_facts_report writes it, from `visits` visits, a claim
//  or none, and `found` names (caller frees).
static char *
s_report (unsigned seed, size_t visits, bool claim, size_t found,
          bool ascii_names)
{
    team_facts_t *writer = team_facts_new (FROM);
    team_facts_set_shape (writer, 64, 64);
    unsigned state = seed;
    for (size_t i = 0; i < visits; i++) {
        state = state * 1103515245u + 12345u;
        team_facts_visit (writer, (state >> 8) % 4096);
    }
    team_facts_set_own_claim (writer, claim? (seed * 37) % 4096: TEAM_NO_CELL);
    const char *names[40];
    for (size_t i = 0; i < found && i < 40; i++)
        names[i] = s_names[ascii_names? i % 3: (seed + i) % NAME_COUNT];
    char *text = team_facts_report (writer, (seed * 13) % 4096, names, found);
    if (!text) {        //  nothing new: a claim change makes it say something
        team_facts_set_own_claim (writer, 4095);
        text = team_facts_report (writer, (seed * 13) % 4096, names, found);
    }
    ck_assert_ptr_nonnull (text);
    team_facts_destroy (&writer);
    return text;
}

START_TEST (test_written_reports_scanned)
{
    //  What the agents write is what the scanner takes, and it means the
    //  same as it does to jansson: visits up to and beyond TEAM_MAX_VISITED
    //  (the writer keeps the latest 64), claims and null, found names up
    //  to and beyond TEAM_MAX_FOUND (the writer writes 16 at most).
    size_t visits[] = { 0, 1, 2, 10, TEAM_MAX_VISITED - 1, TEAM_MAX_VISITED, TEAM_MAX_VISITED + 30 };
    size_t found[] = { 0, 1, TEAM_MAX_FOUND, TEAM_MAX_FOUND + 4 };
    for (size_t v = 0; v < sizeof (visits) / sizeof (visits[0]); v++)
    for (size_t f = 0; f < sizeof (found) / sizeof (found[0]); f++)
    for (unsigned seed = 0; seed < 4; seed++) {
        char *text = s_report (seed * 7 + (unsigned) v, visits[v], seed % 2, found[f], true);
        team_report_t report;
        ck_assert_msg (team_report_scan (text, strlen (text), &report), "not scanned: %s", text);
        s_same (text);
        free (text);
    }
}
END_TEST

START_TEST (test_variants)
{
    const char *bodies[] = {
        //  The form itself, and the least of it.
        "{\"team\":1,\"at\":0,\"claim\":null,\"visited\":[],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10,11,12],\"found\":[\"lamp\"]}",
        //  Other key orders, missing and extra keys.
        "{\"at\":12,\"team\":1,\"claim\":40,\"visited\":[10,11,12],\"found\":[\"lamp\"]}",
        "{\"team\":1,\"at\":12,\"visited\":[10],\"claim\":40,\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10,11,12]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[],\"x\":1}",
        "{\"team\":1}", "{\"team\":1,\"at\":5}", "{\"at\":5}", "{}",
        //  Spaces and trailing bytes.
        "{\"team\": 1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{ \"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10 ],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]} ",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}\n",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}x",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[],}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10,],\"found\":[]}",
        //  Escapes and names: escaped quotes, \u, non-ASCII, invalid UTF-8,
        //  control bytes, DEL.
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[\"l\\u0061mp\"]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[\"a\\\"b\",\"\\\\\"]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[\"\\u0000\"]}",
        "{\"t\\u0065am\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[\"l\xc3\xa4mp\"]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[\"\xff\"]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[\"\xc3\"]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[\"a\x01\"]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[\"a\x7f\"]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[\"a\tb\"]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[1,\"pen\",null]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":\"pen\"}",
        //  Leading zeros.
        "{\"team\":01,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":012,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":0,\"claim\":00,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[0,01],\"found\":[]}",
        //  18, 19 and 20 digits (2^63 - 1 is 19 digits; 2^63 overflows).
        "{\"team\":1,\"at\":999999999999999999,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":9223372036854775807,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":9223372036854775808,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":1000000000000000000,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10,99999999999999999999],\"found\":[]}",
        "{\"team\":1000000000000000001,\"at\":12,\"claim\":40,\"visited\":[],\"found\":[]}",
        "{\"team\":0000000000000000001,\"at\":12,\"claim\":40,\"visited\":[],\"found\":[]}",
        //  Negative numbers, -0, fractions, exponents.
        "{\"team\":1,\"at\":-1,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":-5,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[-1,10,-0],\"found\":[]}",
        "{\"team\":-1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":-0,\"claim\":-0,\"visited\":[10],\"found\":[]}",
        "{\"team\":1.0,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":1.5,\"claim\":2.0,\"visited\":[10,1e1,1E1],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":4e1,\"visited\":[10],\"found\":[]}",
        //  Duplicate keys.
        "{\"team\":1,\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"at\":13,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[],\"found\":[]}",
        //  team other than 1, claim of other types.
        "{\"team\":0,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":2,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":\"1\",\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":true,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":\"x\",\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":false,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":[],\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":nul,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":nullx,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":null,\"claim\":40,\"visited\":[10],\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":10,\"found\":[]}",
        "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[[10]],\"found\":[]}",
        //  Positions off a 64 x 64 map and beyond what a line grows to.
        "{\"team\":1,\"at\":4096,\"claim\":5000,\"visited\":[4095,4096,1048574,1048575],\"found\":[]}",
        "{\"team\":1,\"at\":1048576,\"claim\":40,\"visited\":[1048577],\"found\":[]}",
        //  Not objects.
        "[1]", "{", "{\"team\":1", "{\"team\":1,\"at\":12,\"claim\":40,\"visited\":[10],\"found\":[\"",
    };
    for (size_t i = 0; i < sizeof (bodies) / sizeof (bodies[0]); i++)
        s_same (bodies[i]);
    //  The same body sent by ourselves is nobody's report.
    team_facts_t *facts = s_facts (64);
    ck_assert (!team_facts_read_report (facts, "Agent1", bodies[1], strlen (bodies[1])));
    team_facts_destroy (&facts);
}
END_TEST

START_TEST (test_long_lists)
{
    //  visited longer than TEAM_MAX_VISITED, found beyond TEAM_MAX_FOUND
    //  (only the first ones count), as the scanner's form and with a
    //  non-integer or non-string past and before the limit.
    for (int variant = 0; variant < 6; variant++) {
        char body[TEAM_MAX_REPORT + 64];
        int n = snprintf (body, sizeof (body), "{\"team\":1,\"at\":7,\"claim\":%s,\"visited\":[",
                          variant % 2? "null": "9");
        for (int i = 0; i < TEAM_MAX_VISITED + 20; i++) {
            const char *cell = (variant == 2 && i == TEAM_MAX_VISITED + 3)? "-1"
                             : (variant == 3 && i == 5)? "\"5\"": NULL;
            n += cell? snprintf (body + n, sizeof (body) - (size_t) n, "%s%s", i? ",": "", cell)
                     : snprintf (body + n, sizeof (body) - (size_t) n, "%s%d", i? ",": "", i * 3 + variant);
        }
        n += snprintf (body + n, sizeof (body) - (size_t) n, "],\"found\":[");
        for (int i = 0; i < TEAM_MAX_FOUND + 10; i++) {
            const char *name = (variant == 4 && i == TEAM_MAX_FOUND + 2)? "1"
                             : (variant == 5 && i == 3)? "null": "\"n\"";
            n += snprintf (body + n, sizeof (body) - (size_t) n, "%s%s", i? ",": "", name);
        }
        n += snprintf (body + n, sizeof (body) - (size_t) n, "]}");
        s_same_on (body, (size_t) n, 64);
        s_same_on (body, (size_t) n, 0);
    }
    //  A body of exactly TEAM_MAX_REPORT bytes is read; one more is not
    //  (a found name pads it to the length).
    for (size_t extra = 0; extra < 2; extra++) {
        size_t len = TEAM_MAX_REPORT + extra;
        char *body = (char *) malloc (len + 1);
        const char *head = "{\"team\":1,\"at\":7,\"claim\":9,\"visited\":[1],\"found\":[\"";
        const char *tail = "\"]}";
        size_t n = strlen (head), pad = len - n - strlen (tail);
        memcpy (body, head, n);
        memset (body + n, 'x', pad);
        memcpy (body + n + pad, tail, strlen (tail) + 1);
        ck_assert_uint_eq (strlen (body), len);
        s_same_on (body, len, 64);
        team_facts_t *facts = s_facts (64);
        ck_assert (team_facts_read_report (facts, FROM, body, len) == (extra == 0));
        team_facts_destroy (&facts);
        free (body);
    }
}
END_TEST

START_TEST (test_truncations)
{
    //  Every prefix of written reports: none is scanned, all mean the same.
    for (unsigned seed = 0; seed < 6; seed++) {
        char *text = s_report (seed, 3 + seed, seed % 2, seed % 3, false);
        size_t len = strlen (text);
        for (size_t cut = 1; cut <= len; cut++)
            s_same_on (text, cut, 64);
        free (text);
    }
}
END_TEST

START_TEST (test_random_mutations)
{
    //  Written reports with one to three bytes replaced, inserted or
    //  removed, bytes drawn mostly from JSON's own. The scanner must have
    //  taken a share of them, or this compared jansson with itself.
    const char alphabet[] = "0123456789-+.eE,:[]{}\" \\nultrfa\x01\x7f\xc3\xa4\xff";
    unsigned state = 12345;
    s_scanned = 0;
    size_t rounds = 0;
    for (unsigned seed = 0; rounds < FUZZ_ROUNDS; seed++) {
        char *text = s_report (seed, seed % 70, seed % 3 != 0, seed % 20, seed % 4 != 0);
        size_t len = strlen (text);
        for (int m = 0; m < 50 && rounds < FUZZ_ROUNDS; m++, rounds++) {
            char body[TEAM_MAX_REPORT];
            ck_assert (len + 8 < sizeof (body));
            memcpy (body, text, len);
            size_t n = len;
            state = state * 1103515245u + 12345u;
            int edits = 1 + (int) ((state >> 16) % 3);
            for (int e = 0; e < edits && n > 1; e++) {
                state = state * 1103515245u + 12345u;
                size_t at = (state >> 8) % n;
                state = state * 1103515245u + 12345u;
                char byte = alphabet[(state >> 8) % (sizeof (alphabet) - 1)];
                switch ((state >> 20) % 3) {
                    case 0: body[at] = byte; break;
                    case 1: memmove (body + at + 1, body + at, n - at); body[at] = byte; n++; break;
                    default: memmove (body + at, body + at + 1, n - at - 1); n--; break;
                }
            }
            s_same_on (body, n, (rounds % 5)? 64: 0);
        }
        free (text);
    }
    ck_assert_msg (s_scanned > FUZZ_ROUNDS / 20, "the scanner took only %zu bodies", s_scanned);
    ck_assert_msg (s_scanned < FUZZ_ROUNDS, "the scanner took every body");
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("team_report");
    TCase *tc = tcase_create ("differential");
    tcase_set_timeout (tc, 300);
    tcase_add_test (tc, test_written_reports_scanned);
    tcase_add_test (tc, test_variants);
    tcase_add_test (tc, test_long_lists);
    tcase_add_test (tc, test_truncations);
    tcase_add_test (tc, test_random_mutations);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
