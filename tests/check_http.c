// SPDX-License-Identifier: MIT
/*  check_http - http.c, llm.c and the /v1/embeddings side of embedder.c
    against tests/openai_server.py over real loopback HTTP (libcurl).

    The server is started once per run in an unchecked fixture; each test
    names its script through the model ("BEHAVIOUR:TAG", see the server's
    doc), with its own TAG so request counts never mix between tests.
    Backoffs are shortened through http_options_t so retries stay quick;
    no test asserts on elapsed time, only on outcomes and counters.
*/
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/embedder.h"
#include "agent/http.h"
#include "agent/llm.h"
#include "pclock.h"
#include "plog.h"
#include "lib/openai_server.h"
#include "lib/testsuite.h"

static const char *s_url;

static void
s_start (void)
{
    plog_init ("check-http", NULL);
    plog_set_level (PLOG_ERROR);
    s_url = openai_server_start ();
}

static void
s_stop (void)
{
    openai_server_stop ();
}

static llm_t *
s_llm (const char *model, long timeout_ms, int retries)
{
    llm_options_t opts;
    llm_options_default (&opts);
    opts.url = s_url;
    opts.model = model;
    opts.http.timeout_ms = timeout_ms;
    opts.http.max_retries = retries;
    opts.http.backoff_base_ms = 10;
    opts.http.backoff_max_ms = 2000;
    char err [256];
    llm_t *llm = llm_new (&opts, err, sizeof err);
    ck_assert_msg (llm, "llm_new: %s", err);
    return llm;
}

START_TEST (test_endpoint)
{
    char *url = http_endpoint ("http://h:1", "chat/completions");
    ck_assert_str_eq (url, "http://h:1/v1/chat/completions");
    free (url);
    url = http_endpoint ("https://h/v1/", "embeddings");
    ck_assert_str_eq (url, "https://h/v1/embeddings");
    free (url);
    url = http_endpoint ("http://h/api/v1/chat/completions", "chat/completions");
    ck_assert_str_eq (url, "http://h/api/v1/chat/completions");
    free (url);
    ck_assert_ptr_null (http_endpoint ("ftp://h", "embeddings"));
    ck_assert_ptr_null (http_endpoint ("h:8080", "embeddings"));
    ck_assert_ptr_null (http_endpoint (NULL, "embeddings"));
}
END_TEST

START_TEST (test_chat_normal)
{
    llm_t *llm = s_llm ("normal:a", 10000, 0);
    char err [256];
    char *answer = llm_complete (llm, "You are Agent1.", "Where now?", err, sizeof err);
    ck_assert_msg (answer, "llm: %s", err);
    ck_assert_ptr_nonnull (strstr (answer, "action: forward"));
    ck_assert_ptr_nonnull (strstr (answer, "<MessageTo(Agent2"));
    free (answer);
    http_stats_t stats;
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.requests, 1);
    ck_assert_uint_eq (stats.attempts, 1);
    llm_destroy (&llm);
    ck_assert_ptr_null (llm);
}
END_TEST

START_TEST (test_chat_conversation)
{
    llm_t *llm = s_llm ("echo:a", 10000, 0);
    llm_message_t messages [] = {
        { .role = "system", .content = "You are Agent1." },
        { .role = "user", .content = "Where now?" },
        { .role = "assistant", .content = "action: fly" },
        { .role = "user", .content = "Your answer has action \"fly\"; caf\xc3\xa9 \"quoted\"" }
    };
    char err [256];
    char *answer = llm_chat (llm, messages, 4, err, sizeof err);
    ck_assert_msg (answer, "llm: %s", err);
    ck_assert_str_eq (answer, "n=4 last=Your answer has action \"fly\"; caf\xc3\xa9 \"quoted\"");
    free (answer);
    //  Bad roles and invalid UTF-8 are refused before any request.
    llm_message_t bad_role [] = { { .role = "robot", .content = "x" } };
    ck_assert_ptr_null (llm_chat (llm, bad_role, 1, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "role"));
    llm_message_t bad_utf8 [] = { { .role = "user", .content = "\xff\xfe" } };
    ck_assert_ptr_null (llm_chat (llm, bad_utf8, 1, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "UTF-8"));
    ck_assert_ptr_null (llm_chat (llm, messages, 0, err, sizeof err));
    llm_destroy (&llm);
}
END_TEST

START_TEST (test_chat_params_and_key)
{
    llm_t *llm = s_llm ("params:a", 10000, 0);
    char err [256];
    char *answer = llm_complete (llm, "s", "u", err, sizeof err);
    ck_assert_msg (answer, "llm: %s", err);
    ck_assert_str_eq (answer, "temperature=0.2 max_tokens=512");
    free (answer);
    llm_destroy (&llm);

    //  No key: no Authorization header. Then the key from the environment.
    unsetenv ("PARLEY_LLM_API_KEY");
    unsetenv ("OPENAI_API_KEY");
    llm = s_llm ("auth:a", 10000, 0);
    answer = llm_complete (llm, "s", "u", err, sizeof err);
    ck_assert_str_eq (answer, "none");
    free (answer);
    llm_destroy (&llm);
    setenv ("OPENAI_API_KEY", "sk-openai", 1);
    setenv ("PARLEY_LLM_API_KEY", "sk-parley", 1);
    llm = s_llm ("auth:b", 10000, 0);
    answer = llm_complete (llm, "s", "u", err, sizeof err);
    ck_assert_str_eq (answer, "Bearer sk-parley");
    free (answer);
    llm_destroy (&llm);
}
END_TEST

START_TEST (test_chat_invalid_answers)
{
    const char *cases [][2] = {
        { "malformed:a", "invalid JSON" },
        { "nochoices:a", "no choices" },
        { "nullcontent:a", "content is null" },
        { "huge:a", "limit" },
        { "400:a", "HTTP 400: model not found" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        llm_t *llm = s_llm (cases [i][0], 10000, 3);
        char err [256];
        char *answer = llm_complete (llm, "s", "u", err, sizeof err);
        ck_assert_msg (!answer, "%s: expected an error", cases [i][0]);
        ck_assert_msg (strstr (err, cases [i][1]), "%s: error \"%s\" lacks \"%s\"",
                       cases [i][0], err, cases [i][1]);
        //  None of these is transient: exactly one attempt.
        http_stats_t stats;
        llm_stats (llm, &stats);
        ck_assert_uint_eq (stats.attempts, 1);
        llm_destroy (&llm);
    }
}
END_TEST

START_TEST (test_response_cap)
{
    llm_options_t opts;
    llm_options_default (&opts);
    opts.url = s_url;
    opts.model = "huge:cap";
    opts.http.max_response_bytes = 1000;
    char err [256];
    llm_t *llm = llm_new (&opts, err, sizeof err);
    ck_assert_ptr_nonnull (llm);
    ck_assert_ptr_null (llm_complete (llm, "s", "u", err, sizeof err));
    ck_assert_msg (strstr (err, "exceeds the 1000-byte limit"), "error: %s", err);
    http_stats_t stats;
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.attempts, 1);
    llm_destroy (&llm);
}
END_TEST

START_TEST (test_chat_500_then_ok)
{
    llm_t *llm = s_llm ("500-then-ok:a", 10000, 3);
    char err [256];
    char *answer = llm_complete (llm, "s", "u", err, sizeof err);
    ck_assert_msg (answer, "llm: %s", err);
    ck_assert_ptr_nonnull (strstr (answer, "action: forward"));
    free (answer);
    http_stats_t stats;
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.attempts, 2);
    ck_assert_uint_eq (stats.retries, 1);
    llm_destroy (&llm);
}
END_TEST

START_TEST (test_chat_429_retry_after)
{
    llm_t *llm = s_llm ("429-then-ok:a", 10000, 3);
    char err [256];
    char *answer = llm_complete (llm, "s", "u", err, sizeof err);
    ck_assert_msg (answer, "llm: %s", err);
    free (answer);
    http_stats_t stats;
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.attempts, 2);
    //  Retry-After: 1 beats the 10 ms backoff: the wait was 1000 ms.
    ck_assert_int_eq (stats.last_backoff_ms, 1000);
    llm_destroy (&llm);
}
END_TEST

static int s_ticks;
static void s_count_tick (void *arg) { (*(int *) arg)++; }

START_TEST (test_tick_while_waiting)
{
    //  A 3 s answer: libcurl's progress callback ticks about once a second
    //  while the model "thinks" - how often exactly is libcurl's business
    //  (and the scheduler's, on a loaded machine), so at least one tick is
    //  asked for: none at all means the callback is not wired. A 429 with
    //  Retry-After: 1: the backoff ticks before its first HTTP_TICK_MS
    //  slice and again after it, whatever the clock says, so at least two.
    const char *models[] = { "slow:tick", "429-then-ok:tick" };
    for (int i = 0; i < 2; i++) {
        llm_options_t opts;
        llm_options_default (&opts);
        opts.url = s_url;
        opts.model = models[i];
        opts.http.backoff_base_ms = 10;
        opts.http.tick = s_count_tick;
        opts.http.tick_arg = &s_ticks;
        char err [256];
        llm_t *llm = llm_new (&opts, err, sizeof err);
        ck_assert_msg (llm, "llm_new: %s", err);
        s_ticks = 0;
        char *answer = llm_complete (llm, "s", "u", err, sizeof err);
        ck_assert_msg (answer, "llm: %s", err);
        free (answer);
        http_stats_t stats;
        llm_stats (llm, &stats);
        ck_assert_int_ge (s_ticks, i == 0? 1: 2);
        ck_assert_uint_eq (stats.ticks, (uint64_t) s_ticks);
        llm_destroy (&llm);
    }
}
END_TEST

START_TEST (test_chat_timeout)
{
    llm_t *llm = s_llm ("slow:a", 300, 1);
    char err [256];
    char *answer = llm_complete (llm, "s", "u", err, sizeof err);
    ck_assert_ptr_null (answer);
    ck_assert_msg (strstr (err, "imed out") && strstr (err, "gave up after 2 attempts"),
                   "error: %s", err);
    http_stats_t stats;
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.timeouts, 2);
    llm_destroy (&llm);
}
END_TEST

START_TEST (test_chat_retries_exhausted)
{
    llm_t *llm = s_llm ("always-500:a", 10000, 2);
    char err [256];
    ck_assert_ptr_null (llm_complete (llm, "s", "u", err, sizeof err));
    ck_assert_msg (strstr (err, "HTTP 500: down for good") && strstr (err, "3 attempts"),
                   "error: %s", err);
    http_stats_t stats;
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.attempts, 3);
    ck_assert_uint_eq (stats.failures, 1);
    llm_destroy (&llm);
}
END_TEST

START_TEST (test_connection_refused)
{
    llm_options_t opts;
    llm_options_default (&opts);
    opts.url = "http://127.0.0.1:1";     //  nothing listens on port 1
    opts.model = "normal";
    opts.http.max_retries = 1;
    opts.http.backoff_base_ms = 10;
    char err [256];
    llm_t *llm = llm_new (&opts, err, sizeof err);
    ck_assert_ptr_nonnull (llm);
    ck_assert_ptr_null (llm_complete (llm, "s", "u", err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "2 attempts"));
    llm_destroy (&llm);
    opts.model = NULL;
    ck_assert_ptr_null (llm_new (&opts, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "--llm-model"));
    opts.model = "m";
    opts.url = "localhost:8080";
    ck_assert_ptr_null (llm_new (&opts, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "--llm-url"));
}
END_TEST

START_TEST (test_chat_501_not_retried)
{
    //  501 is a 5xx that will never go away: one attempt, typed "refused".
    llm_t *llm = s_llm ("501:a", 10000, 3);
    char err [256];
    ck_assert_ptr_null (llm_complete (llm, "s", "u", err, sizeof err));
    ck_assert_msg (strstr (err, "HTTP 501"), "error: %s", err);
    http_stats_t stats;
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.attempts, 1);
    ck_assert_int_eq (llm_last_call (llm)->result, LLM_RESULT_REFUSED);
    llm_destroy (&llm);
}
END_TEST

START_TEST (test_chat_retry_after_http_date)
{
    //  Retry-After as an HTTP-date 2 s ahead (whole seconds, so libcurl
    //  reads 1 or 2 s): the wait is at least 1000 ms, far above the 10 ms
    //  backoff, which is all an integer-only parser would have waited.
    llm_t *llm = s_llm ("503-date-then-ok:a", 10000, 3);
    char err [256];
    char *answer = llm_complete (llm, "s", "u", err, sizeof err);
    ck_assert_msg (answer, "llm: %s", err);
    free (answer);
    http_stats_t stats;
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.attempts, 2);
    ck_assert_int_ge (stats.last_backoff_ms, 1000);
    ck_assert_int_le (stats.last_backoff_ms, 2000);
    llm_destroy (&llm);
}
END_TEST

START_TEST (test_chat_usage_and_totals)
{
    llm_t *llm = s_llm ("usage:a", 10000, 0);
    char err [256];
    for (int i = 0; i < 2; i++) {
        char *answer = llm_complete (llm, "s", "u", err, sizeof err);
        ck_assert_msg (answer, "llm: %s", err);
        free (answer);
    }
    const llm_call_t *call = llm_last_call (llm);
    ck_assert_int_eq (call->result, LLM_RESULT_OK);
    ck_assert_int_eq (call->prompt_tokens, 120);
    ck_assert_int_eq (call->completion_tokens, 34);
    ck_assert_uint_eq (call->retries, 0);
    ck_assert_int_gt (call->latency_us, 0);
    llm_totals_t t;
    llm_totals (llm, &t);
    ck_assert_uint_eq (t.calls, 2);
    ck_assert_uint_eq (t.ok, 2);
    ck_assert_uint_eq (t.prompt_tokens, 240);
    ck_assert_uint_eq (t.completion_tokens, 68);
    ck_assert_uint_eq (t.calls_with_usage, 2);
    ck_assert_int_ge (t.latency_max_us, call->latency_us);
    //  A server without usage: unknown, not zero.
    llm_t *plain = s_llm ("normal:usage", 10000, 0);
    char *answer = llm_complete (plain, "s", "u", err, sizeof err);
    free (answer);
    ck_assert_int_eq (llm_last_call (plain)->prompt_tokens, -1);
    llm_totals (plain, &t);
    ck_assert_uint_eq (t.calls_with_usage, 0);
    llm_destroy (&plain);
    llm_destroy (&llm);
}
END_TEST

START_TEST (test_chat_deadline)
{
    //  A 3 s model with a 60 s timeout and 3 retries, but a deadline 300 ms
    //  ahead: one attempt, cut at the deadline, and no retry after it.
    llm_t *llm = s_llm ("slow-3:deadline", 60000, 3);
    int64_t deadline = pclock_mono_ms () + 300;
    llm_set_deadline (llm, deadline);
    char err [256];
    ck_assert_ptr_null (llm_complete (llm, "s", "u", err, sizeof err));
    ck_assert_msg (strstr (err, "deadline"), "error: %s", err);
    http_stats_t stats;
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.attempts, 1);
    //  Once passed, no request starts at all. The call above may have
    //  given up a little before the deadline (on a loaded machine its one
    //  attempt can fail early, and no retry fits in what is left): wait
    //  for the clock to pass it.
    for (int64_t now; (now = pclock_mono_ms ()) <= deadline; )
        pclock_sleep_ms (deadline - now + 1);
    ck_assert_ptr_null (llm_complete (llm, "s", "u", err, sizeof err));
    ck_assert_int_eq (llm_last_call (llm)->result, LLM_RESULT_CANCELLED);
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.attempts, 1);
    llm_destroy (&llm);
}
END_TEST

static bool s_cancel_now (void *arg) { return *(int *) arg > 0; }

START_TEST (test_chat_cancel)
{
    //  The cancel function, asked while the 3 s model thinks, ends the
    //  call (typed "cancelled") instead of waiting for it.
    llm_options_t opts;
    llm_options_default (&opts);
    opts.url = s_url;
    opts.model = "slow-3:cancel";
    static int ticks;
    ticks = 0;
    opts.http.tick = s_count_tick;
    opts.http.cancel = s_cancel_now;
    opts.http.tick_arg = &ticks;
    char err [256];
    llm_t *llm = llm_new (&opts, err, sizeof err);
    ck_assert_ptr_nonnull (llm);
    ck_assert_ptr_null (llm_complete (llm, "s", "u", err, sizeof err));
    ck_assert_int_eq (llm_last_call (llm)->result, LLM_RESULT_CANCELLED);
    http_stats_t stats;
    llm_stats (llm, &stats);
    ck_assert_uint_eq (stats.attempts, 1);
    llm_destroy (&llm);
}
END_TEST

START_TEST (test_probe)
{
    char note [256];
    llm_t *llm = s_llm ("normal", 10000, 0);
    ck_assert_int_eq (llm_probe (llm, 5000, note, sizeof note), LLM_RESULT_OK);
    ck_assert_str_eq (note, "");
    llm_destroy (&llm);
    llm = s_llm ("no-such-model", 10000, 0);
    ck_assert_int_eq (llm_probe (llm, 5000, note, sizeof note), LLM_RESULT_OK);
    ck_assert_str_eq (note, "normal, echo, usage");
    llm_destroy (&llm);
    llm_options_t opts;
    llm_options_default (&opts);
    opts.url = "http://127.0.0.1:1";
    opts.model = "normal";
    char err [256];
    llm = llm_new (&opts, err, sizeof err);
    ck_assert_int_eq (llm_probe (llm, 5000, note, sizeof note), LLM_RESULT_UNREACHABLE);
    ck_assert_msg (strstr (note, "127.0.0.1:1"), "%s", note);
    llm_totals_t t;
    llm_totals (llm, &t);
    ck_assert_uint_eq (t.calls, 0);
    llm_destroy (&llm);
}
END_TEST

static embedder_t *
s_embedder (const char *model, int dim, size_t batch)
{
    embedder_options_t opts;
    embedder_options_default (&opts);
    opts.url = s_url;
    opts.model = model;
    opts.dim = dim;
    opts.max_batch = batch;
    opts.http.max_retries = 2;
    opts.http.backoff_base_ms = 10;
    char err [256];
    embedder_t *embedder = embedder_new (&opts, err, sizeof err);
    ck_assert_msg (embedder, "embedder_new: %s", err);
    return embedder;
}

START_TEST (test_embed_http_normal)
{
    embedder_t *embedder = s_embedder ("embed-16:a", 16, 2);
    ck_assert_str_eq (embedder_kind (embedder), "http");
    const char *texts [] = { "one", "two", "three", "one" };
    float out [4 * 16];
    char err [256];
    ck_assert_msg (embedder_embed_batch (embedder, texts, 4, out, err, sizeof err) == 0, "%s", err);
    for (int i = 0; i < 4; i++)
        ck_assert_float_eq_tol (embed_dot (out + i * 16, out + i * 16, 16), 1.0f, 1e-4f);
    //  Same text, same vector, across batches; different texts differ.
    ck_assert_float_eq_tol (embed_dot (out, out + 3 * 16, 16), 1.0f, 1e-4f);
    ck_assert_float_lt (embed_dot (out, out + 16, 16), 0.99f);
    embedder_destroy (&embedder);

    //  Items listed out of order are put back by their index.
    embedder = s_embedder ("embed-reversed-16:a", 16, 8);
    float again [4 * 16];
    ck_assert_int_eq (embedder_embed_batch (embedder, texts, 4, again, err, sizeof err), 0);
    for (int i = 0; i < 4 * 16; i++)
        ck_assert_float_eq_tol (again [i], out [i], 1e-6f);
    embedder_destroy (&embedder);

    //  dim 0: learnt with a probe.
    embedder = s_embedder ("embed-24:a", 0, 8);
    ck_assert_int_eq (embedder_dim (embedder), 24);
    embedder_destroy (&embedder);
}
END_TEST

START_TEST (test_embed_http_invalid)
{
    const char *cases [][2] = {
        { "embed-wrongdim:a", "dimension 7, expected 8" },
        { "embed-nonnumeric:a", "non-numeric" },
        { "embed-count:a", "1 vectors for 2 inputs" },
        { "embed-malformed:a", "invalid JSON" },
        { "embed-32:a", "dimension 32, expected 8" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        embedder_t *embedder = s_embedder (cases [i][0], 8, 8);
        const char *texts [] = { "alpha", "beta" };
        float out [2 * 8];
        char err [256];
        ck_assert_int_eq (embedder_embed_batch (embedder, texts, 2, out, err, sizeof err), -1);
        ck_assert_msg (strstr (err, cases [i][1]), "%s: error \"%s\" lacks \"%s\"",
                       cases [i][0], err, cases [i][1]);
        embedder_destroy (&embedder);
    }
}
END_TEST

START_TEST (test_embed_http_retry)
{
    embedder_t *embedder = s_embedder ("embed-500-then-ok:a", 8, 8);
    float out [8];
    char err [256];
    ck_assert_msg (embedder_embed (embedder, "text", out, err, sizeof err) == 0, "%s", err);
    ck_assert_float_eq_tol (embed_dot (out, out, 8), 1.0f, 1e-4f);
    embedder_destroy (&embedder);

    embedder_options_t opts;
    embedder_options_default (&opts);
    opts.url = s_url;
    opts.model = NULL;
    ck_assert_ptr_null (embedder_new (&opts, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "--embed-model"));
    opts.model = "embed-malformed:probe";
    opts.dim = 0;
    ck_assert_ptr_null (embedder_new (&opts, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "cannot learn the embedding dimension"));
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("http");
    TCase *tc = tcase_create ("llm");
    tcase_add_unchecked_fixture (tc, s_start, s_stop);
    tcase_add_test (tc, test_endpoint);
    tcase_add_test (tc, test_chat_normal);
    tcase_add_test (tc, test_chat_conversation);
    tcase_add_test (tc, test_chat_params_and_key);
    tcase_add_test (tc, test_chat_invalid_answers);
    tcase_add_test (tc, test_response_cap);
    tcase_add_test (tc, test_chat_500_then_ok);
    tcase_add_test (tc, test_chat_429_retry_after);
    tcase_add_test (tc, test_chat_timeout);
    tcase_add_test (tc, test_tick_while_waiting);
    tcase_add_test (tc, test_chat_retries_exhausted);
    tcase_add_test (tc, test_connection_refused);
    tcase_add_test (tc, test_chat_501_not_retried);
    tcase_add_test (tc, test_chat_retry_after_http_date);
    tcase_add_test (tc, test_chat_usage_and_totals);
    tcase_add_test (tc, test_chat_deadline);
    tcase_add_test (tc, test_chat_cancel);
    tcase_add_test (tc, test_probe);
    suite_add_tcase (suite, tc);
    tc = tcase_create ("embeddings");
    tcase_add_unchecked_fixture (tc, s_start, s_stop);
    tcase_add_test (tc, test_embed_http_normal);
    tcase_add_test (tc, test_embed_http_invalid);
    tcase_add_test (tc, test_embed_http_retry);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
