// SPDX-License-Identifier: MIT
/*  check_tap - parley-tap as a user runs it: the real binary on real files.

    These cases write record files by hand (the format documented in
    tools/tap/tap_record.h, with an independent bitwise CRC-32 here) so gaps,
    undecodable bodies and every kind of file damage are exact, then replay
    them; JSON lines are read back with jansson and once with python3's json
    module, as a jq user would. check_tap_live.c runs it against a broker.
*/
#include <check.h>
#include <czmq.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pmsg.h"
#include "lib/tproc.h"
#include "lib/testsuite.h"

//  --------------------------------------------------------------------------
//  Record files by hand

static uint32_t
s_crc32 (const void *data, size_t size)
{
    //  Bitwise, deliberately not the tool's table version.
    const uint8_t *p = (const uint8_t *) data;
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; i++) {
        crc ^= p [i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

static void
s_put32 (FILE *file, uint32_t value)
{
    uint8_t bytes [4] = { (uint8_t) (value >> 24), (uint8_t) (value >> 16),
                          (uint8_t) (value >> 8), (uint8_t) value };
    ck_assert_int_eq (fwrite (bytes, 1, 4, file), 4);
}

static void
s_record (FILE *file, const void *data, size_t size)
{
    s_put32 (file, (uint32_t) size);
    s_put32 (file, s_crc32 (data, size));
    ck_assert_int_eq (fwrite (data, 1, size, file), size);
}

//  A TAP frame around `body`, written as one record.
static void
s_record_tap (FILE *file, uint64_t tseq, const char *dir, const char *peer,
              const void *body, size_t body_size)
{
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_TAP, 0, 5);
    penc_kv_uint (&enc, "tseq", tseq);
    penc_kv_uint (&enc, "ts", 1763714401123456ull + tseq);
    penc_kv_cstr (&enc, "dir", dir);
    penc_kv_cstr (&enc, "peer", peer);
    penc_kv_bin (&enc, "body", body, body_size);
    s_record (file, penc_data (&enc), penc_size (&enc));
    penc_fini (&enc);
}

//  SEND of one message to `to` (or "#channel").
static void
s_record_send (FILE *file, uint64_t tseq, const char *from, const char *to, const char *text)
{
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_SEND, tseq, 1);
    penc_key (&enc, "messages");
    msgpack_pack_array (penc_packer (&enc), 1);
    msgpack_pack_map (penc_packer (&enc), 2);
    if (to [0] == '#')
        penc_kv_cstr (&enc, "channel", to + 1);
    else
        penc_kv_cstr (&enc, "to", to);
    penc_kv_cstr (&enc, "body", text);
    s_record_tap (file, tseq, "in", from, penc_data (&enc), penc_size (&enc));
    penc_fini (&enc);
}

static void
s_record_error (FILE *file, uint64_t tseq, const char *to)
{
    penc_t enc;
    penc_init (&enc);
    penc_error (&enc, tseq, PERR_INBOX_FULL, "inbox of %s is full", "Agent2");
    s_record_tap (file, tseq, "out", to, penc_data (&enc), penc_size (&enc));
    penc_fini (&enc);
}

//  MAIL to `to` carrying two messages, the first with `text`.
static void
s_record_mail (FILE *file, uint64_t tseq, const char *to, const char *text)
{
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_MAIL, tseq, 3);
    penc_key (&enc, "messages");
    msgpack_pack_array (penc_packer (&enc), 2);
    msgpack_pack_map (penc_packer (&enc), 5);
    penc_kv_uint (&enc, "seq", 41);
    penc_kv_uint (&enc, "ts", 1763714401123456ull);
    penc_kv_cstr (&enc, "from", "Agent1");
    penc_kv_cstr (&enc, "to", to);
    penc_kv_cstr (&enc, "body", text);
    msgpack_pack_map (penc_packer (&enc), 5);
    penc_kv_uint (&enc, "seq", 42);
    penc_kv_uint (&enc, "ts", 1763714401123457ull);
    penc_kv_cstr (&enc, "from", "Agent3");
    penc_kv_cstr (&enc, "channel", "news");
    penc_kv_cstr (&enc, "body", "short");
    penc_kv_uint (&enc, "pending", 0);
    penc_kv_uint (&enc, "acked", 40);
    s_record_tap (file, tseq, "out", to, penc_data (&enc), penc_size (&enc));
    penc_fini (&enc);
}

static FILE *
s_new_file (const char *path)
{
    FILE *file = fopen (path, "wb");
    ck_assert_ptr_nonnull (file);
    ck_assert_int_eq (fwrite ("PARLTAP1", 1, 8, file), 8);
    return file;
}

//  tseq 1, 2, 5, 6: a gap of 2. Agent1 -> Agent2, Agent2 -> #news,
//  an undecodable body, an ERROR reply.
static void
s_sample_file (const char *path)
{
    FILE *file = s_new_file (path);
    s_record_send (file, 1, "Agent1", "Agent2", "hello\nthere, Agent2");
    s_record_send (file, 2, "Agent2", "#news", "found a key at 3");
    s_record_tap (file, 5, "in", "Agent3", "\xc1\x01\x02", 3);
    s_record_error (file, 6, "Agent1");
    fclose (file);
}

//  --------------------------------------------------------------------------
//  Offline: replay of crafted files

START_TEST (test_replay_text)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "sample.rec");
    s_sample_file (path);
    tproc_t *run = tproc_tap ((const char *[]) { "--replay", path, NULL });
    ck_assert_int_eq (tproc_status (run), 0);
    const char *out = tproc_out (run);
    ck_assert_int_eq (tproc_count_lines (out), 5);             //  4 frames + 1 gap line
    ck_assert_ptr_nonnull (strstr (out, "in  Agent1"));
    ck_assert_ptr_nonnull (strstr (out, "SEND         id=1 1 msg: to Agent2 \"hello\\nthere, Agent2\""));
    ck_assert_ptr_nonnull (strstr (out, "#news \"found a key at 3\""));
    ck_assert_ptr_nonnull (strstr (out, "-- dropped 2 frames (tseq 3..4 missing)"));
    ck_assert_ptr_nonnull (strstr (out, "!MALFORMED   undecodable body (3 bytes)"));
    ck_assert_ptr_nonnull (strstr (out, "ERROR        id=6 INBOX_FULL(21): inbox of Agent2 is full"));
    ck_assert_ptr_nonnull (strstr (tproc_err (run), "4 frames received, 4 shown, 2 dropped in 1 gaps, 1 undecodable"));
    tproc_destroy (&run);
    free (path);
    tproc_dir_destroy (&dir);
}
END_TEST

START_TEST (test_replay_json)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "sample.rec");
    s_sample_file (path);
    tproc_t *run = tproc_tap ((const char *[]) { "--replay", path, "--json", NULL });
    ck_assert_int_eq (tproc_status (run), 0);
    json_t *lines = tproc_json_lines (tproc_out (run));
    ck_assert_int_eq (json_array_size (lines), 5);
    json_t *first = json_array_get (lines, 0);
    ck_assert_str_eq (json_string_value (json_object_get (first, "kind")), "frame");
    ck_assert_str_eq (json_string_value (json_object_get (first, "type")), "SEND");
    ck_assert_str_eq (json_string_value (json_object_get (first, "dir")), "in");
    ck_assert_str_eq (json_string_value (json_object_get (first, "peer")), "Agent1");
    ck_assert_int_eq (json_integer_value (json_object_get (first, "tseq")), 1);
    json_t *item = json_array_get (json_object_get (json_object_get (first, "msg"), "messages"), 0);
    ck_assert_str_eq (json_string_value (json_object_get (item, "body")), "hello\nthere, Agent2");
    json_t *gap = json_array_get (lines, 2);
    ck_assert_str_eq (json_string_value (json_object_get (gap, "kind")), "dropped");
    ck_assert_int_eq (json_integer_value (json_object_get (gap, "count")), 2);
    ck_assert_int_eq (json_integer_value (json_object_get (gap, "after_tseq")), 2);
    json_t *bad = json_array_get (lines, 3);
    ck_assert (json_is_null (json_object_get (bad, "type")));
    ck_assert_str_eq (json_string_value (json_object_get (bad, "error")), "MALFORMED");
    json_t *error = json_array_get (lines, 4);
    ck_assert_str_eq (json_string_value (json_object_get (json_object_get (error, "msg"), "error")),
                      "INBOX_FULL");
    json_decref (lines);

    //  The same output read by python3's json module, as jq would read it.
    char *jsonl = tproc_dir_path (dir, "sample.jsonl");
    tproc_write_file (jsonl, tproc_out (run));
    tproc_t *py = tproc_run ((const char *[]) { "python3", "-c",
        "import json,sys\n"
        "rows=[json.loads(l) for l in open(sys.argv[1])]\n"
        "assert [r['kind'] for r in rows]==['frame','frame','dropped','frame','frame'], rows\n"
        "assert rows[1]['msg']['messages'][0]['channel']=='news'\n",
        jsonl, NULL }, false);
    ck_assert_msg (tproc_status (py) == 0, "python3: %s", tproc_err (py));
    tproc_destroy (&py);
    tproc_destroy (&run);
    free (jsonl);
    free (path);
    tproc_dir_destroy (&dir);
}
END_TEST

START_TEST (test_replay_filters)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "sample.rec");
    s_sample_file (path);
    struct { const char *args [6]; int lines; const char *must; } cases [] = {
        { { "--type", "send", NULL }, 3, "SEND" },                  //  2 + gap line
        { { "--type", "ERROR", "--type", "SEND", NULL }, 4, "ERROR" },
        { { "--type=OK,ERROR", NULL }, 2, "INBOX_FULL" },
        { { "--agent", "Agent2", NULL }, 2, "#news" },
        { { "-a", "Agent1,Agent3", NULL }, 4, "Agent3" },
        { { "--channel", "news", NULL }, 2, "found a key" },
        { { "--channel", "news", "--agent", "Agent1", NULL }, 1, "dropped" },
        { { "--count", "1", NULL }, 1, "Agent1" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        const char *argv [10] = { "--replay", path };
        for (int a = 0; cases [i].args [a]; a++)
            argv [2 + a] = cases [i].args [a];
        tproc_t *run = tproc_tap (argv);
        ck_assert_msg (tproc_status (run) == 0, "case %zu: %s", i, tproc_err (run));
        ck_assert_msg (tproc_count_lines (tproc_out (run)) == cases [i].lines,
                       "case %zu: %d lines:\n%s", i, tproc_count_lines (tproc_out (run)),
                       tproc_out (run));
        ck_assert_msg (strstr (tproc_out (run), cases [i].must), "case %zu:\n%s", i,
                       tproc_out (run));
        tproc_destroy (&run);
    }
    free (path);
    tproc_dir_destroy (&dir);
}
END_TEST

//  Bodies longer than a summary shows: cut on the line, whole with --full
//  (escaped, for SEND and for every message of a MAIL), whole in --json.
START_TEST (test_replay_full)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "long.rec");
    //  300 bytes: quotes, a newline, UTF-8, a tail that a cut would lose.
    char text [400] = "";
    for (int i = 0; i < 28; i++)
        strcat (text, "0123456789");
    strcat (text, "\"q\"\n\xc3\xa9 THE-END");
    FILE *file = s_new_file (path);
    s_record_send (file, 1, "Agent1", "Agent2", text);
    s_record_mail (file, 2, "Agent2", text);
    s_record_error (file, 3, "Agent1");
    fclose (file);

    const char *plain [] = { "--replay", path, NULL };
    tproc_t *run = tproc_tap (plain);
    ck_assert_int_eq (tproc_status (run), 0);
    ck_assert_int_eq (tproc_count_lines (tproc_out (run)), 3);
    ck_assert_ptr_null (strstr (tproc_out (run), "THE-END"));
    ck_assert_ptr_nonnull (strstr (tproc_out (run), "0123456789..."));
    tproc_destroy (&run);

    const char *full [] = { "--replay", path, "--full", NULL };
    run = tproc_tap (full);
    ck_assert_msg (tproc_status (run) == 0, "%s", tproc_err (run));
    const char *out = tproc_out (run);
    //  SEND: its line and one body line; MAIL: its line and two; ERROR: one.
    ck_assert_msg (tproc_count_lines (out) == 6, "%s", out);
    char want [600];
    snprintf (want, sizeof want, "\n    [0] to Agent2: \"%.280s\\\"q\\\"\\n\xc3\xa9 THE-END\"\n", text);
    ck_assert_msg (strstr (out, want), "no\n%s\nin\n%s", want, out);
    snprintf (want, sizeof want, "\n    [0] #41 from Agent1 to Agent2: \"%.280s\\\"q\\\"\\n\xc3\xa9 THE-END\"\n",
              text);
    ck_assert_msg (strstr (out, want), "no\n%s\nin\n%s", want, out);
    ck_assert_ptr_nonnull (strstr (out, "\n    [1] #42 from Agent3 #news: \"short\"\n"));
    //  The summary lines are as without --full.
    ck_assert (testsuite_matches (out, "^[0-9:.]+ in  Agent1 +SEND +id=1 1 msg: to Agent2 \"0123"));
    tproc_destroy (&run);

    //  Filters choose the frames; --full prints the bodies of those only.
    const char *filtered [] = { "--replay", path, "--full", "--type", "MAIL", NULL };
    run = tproc_tap (filtered);
    ck_assert_int_eq (tproc_status (run), 0);
    ck_assert_msg (tproc_count_lines (tproc_out (run)) == 3, "%s", tproc_out (run));
    ck_assert_ptr_null (strstr (tproc_out (run), "[0] to Agent2"));
    tproc_destroy (&run);

    const char *json [] = { "--replay", path, "--json", "--full", NULL };
    run = tproc_tap (json);
    ck_assert_int_eq (tproc_status (run), 0);
    json_t *lines = tproc_json_lines (tproc_out (run));
    ck_assert_ptr_nonnull (lines);
    ck_assert_int_eq (json_array_size (lines), 3);
    json_t *messages = json_object_get (json_object_get (json_array_get (lines, 0), "msg"), "messages");
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (messages, 0), "body")), text);
    json_decref (lines);
    tproc_destroy (&run);
    free (path);
    tproc_dir_destroy (&dir);
}
END_TEST

//  Each damaged file: the bytes after a good first record, and the message.
START_TEST (test_replay_corrupt)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "bad.rec");
    struct { const char *tail; size_t size; const char *why; } cases [] = {
        { "\x00\x00\x01", 3, "truncated record header at offset" },
        { "\x00\x00\x00\x00\x00\x00\x00\x00", 8, "length 0 is outside" },
        { "\xff\xff\xff\xf0\x00\x00\x00\x00", 8, "length 4294967280 is outside" },
        { "\x00\x00\x03\xe8\x00\x00\x00\x00" "0123456789", 18, "claims 1000 bytes, only 10 remain" },
        { "\x00\x00\x00\x02\x12\x34\x56\x78" "\x80\x80", 10, "checksum mismatch" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        FILE *file = s_new_file (path);
        s_record_send (file, 1, "Agent1", "Agent2", "before the damage");
        ck_assert_int_eq (fwrite (cases [i].tail, 1, cases [i].size, file), cases [i].size);
        fclose (file);
        tproc_t *run = tproc_tap ((const char *[]) { "--replay", path, NULL });
        ck_assert_msg (tproc_status (run) == 1, "case %zu: status %d", i, tproc_status (run));
        ck_assert_msg (strstr (tproc_err (run), cases [i].why), "case %zu: %s", i, tproc_err (run));
        //  What came before the damage is still shown.
        ck_assert_msg (strstr (tproc_out (run), "before the damage"), "case %zu", i);
        tproc_destroy (&run);
    }
    //  Not a record file at all, and an empty one.
    tproc_write_file (path, "{\"kind\":\"frame\"}\n");
    tproc_t *run = tproc_tap ((const char *[]) { "--replay", path, NULL });
    ck_assert_int_eq (tproc_status (run), 1);
    ck_assert_ptr_nonnull (strstr (tproc_err (run), "is not a parley-tap record file"));
    tproc_destroy (&run);
    tproc_write_file (path, "");
    run = tproc_tap ((const char *[]) { "--replay", path, NULL });
    ck_assert_int_eq (tproc_status (run), 1);
    tproc_destroy (&run);
    //  The magic alone is a valid, empty recording.
    tproc_write_file (path, "PARLTAP1");
    run = tproc_tap ((const char *[]) { "--replay", path, NULL });
    ck_assert_int_eq (tproc_status (run), 0);
    ck_assert_int_eq (tproc_count_lines (tproc_out (run)), 0);
    tproc_destroy (&run);
    //  A missing file.
    free (path);
    path = tproc_dir_path (dir, "missing.rec");
    run = tproc_tap ((const char *[]) { "--replay", path, NULL });
    ck_assert_int_eq (tproc_status (run), 1);
    ck_assert_ptr_nonnull (strstr (tproc_err (run), "cannot open"));
    tproc_destroy (&run);
    free (path);
    tproc_dir_destroy (&dir);
}
END_TEST

//  A record that is not a TAP map, and a TAP map without a body: shown as
//  such, never a crash.
START_TEST (test_replay_bad_tap)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "odd.rec");
    FILE *file = s_new_file (path);
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_HEARTBEAT, 9, 0);
    s_record (file, penc_data (&enc), penc_size (&enc));
    s_record (file, "\x93\x01\x02\x03", 4);
    penc_fini (&enc);
    fclose (file);
    tproc_t *run = tproc_tap ((const char *[]) { "--replay", path, "--json", NULL });
    ck_assert_int_eq (tproc_status (run), 0);
    json_t *lines = tproc_json_lines (tproc_out (run));
    ck_assert_int_eq (json_array_size (lines), 2);
    for (size_t i = 0; i < 2; i++)
        ck_assert_str_eq (json_string_value (json_object_get (json_array_get (lines, i), "kind")),
                          "bad_tap");
    json_decref (lines);
    tproc_destroy (&run);
    run = tproc_tap ((const char *[]) { "--replay", path, NULL });
    ck_assert_int_eq (tproc_status (run), 0);
    ck_assert_ptr_nonnull (strstr (tproc_out (run), "undecodable TAP frame"));
    tproc_destroy (&run);
    free (path);
    tproc_dir_destroy (&dir);
}
END_TEST

START_TEST (test_usage)
{
    tproc_t *run = tproc_tap ((const char *[]) { "--help", NULL });
    ck_assert_int_eq (tproc_status (run), 0);
    const char *help = tproc_out (run);
    const char *needles [] = { "--broker", "--tap", "json", "--agent", "--type", "--channel",
        "stats", "--record", "--replay", "--count", "--timeout-ms", "PARLEY_BROKER",
        "PARLEY_TAP", "Exit codes", "PARLTAP1" };
    for (size_t i = 0; i < sizeof needles / sizeof needles [0]; i++)
        ck_assert_msg (strstr (help, needles [i]), "--help lacks %s", needles [i]);
    tproc_destroy (&run);

    const char *bad [][4] = {
        { "--type", "NOPE", NULL }, { "--channel", ".bad", NULL },
        { "--record", "/tmp/x", "--replay=/tmp/y", NULL }, { "--count", "-1", NULL },
        { "--agent", ",", NULL }, { "--bogus", NULL },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        run = tproc_tap (bad [i]);
        ck_assert_msg (tproc_status (run) == 2, "case %zu: status %d", i, tproc_status (run));
        ck_assert_msg (strlen (tproc_err (run)) > 0, "case %zu: no message", i);
        tproc_destroy (&run);
    }
}
END_TEST

//  No broker answers: exit 3 within the connect timeout; a tap endpoint
//  that stays silent: --timeout-ms before --count is a failure (exit 1).
START_TEST (test_no_broker)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *router = tproc_dir_endpoint (dir, "nobody");
    tproc_t *run = tproc_tap ((const char *[]) { "--broker", router,
                                                 "--connect-timeout-ms", "300", NULL });
    ck_assert_int_eq (tproc_status (run), 3);
    ck_assert_ptr_nonnull (strstr (tproc_err (run), "no reply within 300 ms"));
    tproc_destroy (&run);
    run = tproc_tap ((const char *[]) { "--tap", router, "--count", "5", "--timeout-ms", "300", NULL });
    ck_assert_int_eq (tproc_status (run), 1);
    ck_assert_ptr_nonnull (strstr (tproc_err (run), "stopped after 0 of 5 frames"));
    tproc_destroy (&run);
    free (router);
    tproc_dir_destroy (&dir);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("tap");
    TCase *offline = tcase_create ("replay");
    tcase_add_test (offline, test_replay_text);
    tcase_add_test (offline, test_replay_json);
    tcase_add_test (offline, test_replay_filters);
    tcase_add_test (offline, test_replay_full);
    tcase_add_test (offline, test_replay_corrupt);
    tcase_add_test (offline, test_replay_bad_tap);
    tcase_add_test (offline, test_usage);
    tcase_add_test (offline, test_no_broker);
    suite_add_tcase (suite, offline);
    return testsuite_run (suite);
}
