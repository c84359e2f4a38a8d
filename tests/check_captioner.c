// SPDX-License-Identifier: MIT
/*  check_captioner - captions of the view's image (visible_caption)
    against tests/openai_server.py: the exact request (one user message,
    the instruction and the image as an image_url part), the cache by
    image (the same image asks nothing), and a dead caption server paused
    after one failure instead of costing every step its retries.
*/
#include <check.h>
#include <czmq.h>
#include "agent/captioner.h"
#include "agent/conn_world.h"
#include "agent/http.h"
#include "lib/openai_server.h"
#include "lib/testimage.h"
#include "lib/testsuite.h"
#include "plog.h"

static const char *s_url;
static void server_up (void) { plog_init ("check-captioner", NULL); s_url = openai_server_start (); }
static void server_down (void) { openai_server_stop (); }

//  Every request body the scripted server received for `model`.
static json_t *
server_requests (const char *model)
{
    char *url = zsys_sprintf ("%s/requests/%s", s_url, model);
    http_t *http = http_new (url, NULL, NULL);
    json_t *doc = NULL;
    char err[256];
    ck_assert_msg (http_get_json (http, url, 5000, &doc, err, sizeof (err)) == 0, "%s", err);
    json_t *list = json_incref (json_object_get (doc, "requests"));
    json_decref (doc);
    http_destroy (&http);
    zstr_free (&url);
    return list;
}

static captioner_t *
captioner_at (const char *url, const char *model)
{
    llm_options_t lo;
    llm_options_default (&lo);
    lo.url = url;
    lo.model = model;
    lo.http.max_retries = 0;
    char err[256];
    llm_t *llm = llm_new (&lo, err, sizeof (err));
    ck_assert_msg (llm, "%s", err);
    return captioner_new (llm);
}

START_TEST (test_caption_cached_by_image)
{
    //  The caption request is one user message: the instruction and the
    //  image part. The same image again is answered from the cache (no
    //  request); another image asks again. The caption is one line.
    const char *model = "caption:captioner";
    char err[256];
    captioner_t *captioner = captioner_at (s_url, model);
    size_t size;
    uint8_t *png = testimage_read ("lamp.png", &size);
    connector_t *world = conn_world_new (NULL);
    conn_world_feed_image (world, png, size, "png");
    const world_image_view_t *image = conn_world_image (world);
    ck_assert_ptr_nonnull (image);
    const char *caption = captioner_caption (captioner, image, err, sizeof (err));
    ck_assert_msg (caption, "%s", err);
    ck_assert_str_eq (caption, "A yellow lamp on a dark floor.");
    caption = captioner_caption (captioner, image, err, sizeof (err));
    ck_assert_str_eq (caption, "A yellow lamp on a dark floor.");
    uint64_t requests, hits;
    captioner_counts (captioner, &requests, &hits);
    ck_assert_uint_eq (requests, 1);
    ck_assert_uint_eq (hits, 1);
    json_t *sent = server_requests (model);
    ck_assert_uint_eq (json_array_size (sent), 1);
    char *b64 = testimage_base64 (png, size);
    char *url = zsys_sprintf ("data:image/png;base64,%s", b64);
    json_t *expect = json_pack ("[{s:s, s:[{s:s, s:s}, {s:s, s:{s:s, s:s}}]}]",
                                "role", "user", "content",
                                "type", "text", "text", CAPTIONER_INSTRUCTION,
                                "type", "image_url", "image_url", "url", url, "detail", "low");
    json_t *messages = json_object_get (json_array_get (sent, 0), "messages");
    ck_assert_msg (json_equal (messages, expect), "%s", json_dumps (messages, 0));
    json_decref (expect);
    json_decref (sent);
    //  Another image: one more request.
    png[size - 13] ^= 1;                //  inside the IEND chunk's neighbour bytes
    conn_world_feed_image (world, png, size, "png");
    ck_assert_ptr_nonnull (captioner_caption (captioner, conn_world_image (world), err,
                                              sizeof (err)));
    captioner_counts (captioner, &requests, &hits);
    ck_assert_uint_eq (requests, 2);
    free (url);
    free (b64);
    free (png);
    connector_destroy (&world);
    captioner_destroy (&captioner);
}
END_TEST

START_TEST (test_dead_server_paused)
{
    //  Nothing listens on port 1: the first caption fails (one request
    //  tried), the next is refused at once without a request.
    captioner_t *captioner = captioner_at ("http://127.0.0.1:1", "caption");
    size_t size;
    uint8_t *png = testimage_read ("desk.png", &size);
    connector_t *world = conn_world_new (NULL);
    conn_world_feed_image (world, png, size, "png");
    char err[256];
    ck_assert_ptr_null (captioner_caption (captioner, conn_world_image (world), err, sizeof (err)));
    ck_assert_ptr_null (captioner_caption (captioner, conn_world_image (world), err, sizeof (err)));
    ck_assert_msg (strstr (err, "paused"), "%s", err);
    uint64_t requests, hits;
    captioner_counts (captioner, &requests, &hits);
    ck_assert_uint_eq (requests, 1);
    free (png);
    connector_destroy (&world);
    captioner_destroy (&captioner);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("captioner");
    TCase *tc = tcase_create ("captioner");
    tcase_add_unchecked_fixture (tc, server_up, server_down);
    tcase_add_test (tc, test_caption_cached_by_image);
    tcase_add_test (tc, test_dead_server_paused);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
