// SPDX-License-Identifier: MIT
/*  check_proto_wire - byte-level rejections of proto/: pwire_check's
    bounds (huge declared lengths, counts that exceed the bytes left, depth,
    object count, frame size, trailing bytes, 0xc1), every msgpack type
    accepted when well formed, random bytes, bit flips of every valid seed
    frame, and the malformed corpus in tests/corpus/ (file names say the
    expected error: see tests/corpus/README.md).

    Whenever random or flipped input does decode, it is re-encoded with
    penc_object and must decode again: the fuzzer's property, checked here
    deterministically.
*/
#include <check.h>
#include <dirent.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pmsg.h"
#include "lib/testsuite.h"

static perr_t
s_check (const void *data, size_t size)
{
    char why [256] = "";
    perr_t rc = pwire_check (data, size, NULL, why, sizeof (why));
    ck_assert_int_eq (rc == PERR_NONE, why [0] == 0);
    return rc;
}

//  Decodes; when it succeeds, re-encodes and decodes again.
static perr_t
s_decode (const void *data, size_t size)
{
    perr_t err = 99;
    char why [256] = "";
    pmsg_t *msg = pmsg_decode (data, size, NULL, &err, NULL, why, sizeof (why));
    ck_assert_int_eq (msg == NULL, err != PERR_NONE);
    if (msg) {
        penc_t enc;
        penc_init (&enc);
        penc_object (&enc, pmsg_root (msg));
        perr_t again = 99;
        pmsg_t *copy = pmsg_decode (penc_data (&enc), penc_size (&enc), NULL, &again, NULL,
                                    why, sizeof (why));
        ck_assert_msg (copy != NULL, "re-encoded frame rejected: %s", why);
        ck_assert_int_eq (pmsg_type (copy), pmsg_type (msg));
        pmsg_destroy (&copy);
        penc_fini (&enc);
        pmsg_destroy (&msg);
    }
    else
        ck_assert_msg (why [0] != 0, "error %s without a sentence", perr_name (err));
    return err;
}

START_TEST (test_huge_lengths)
{
    static const struct { const char *bytes; size_t len; } cases [] = {
        { "\xdd\xff\xff\xff\xff", 5 }, { "\xdf\xff\xff\xff\xff", 5 },
        { "\xdb\xff\xff\xff\xff", 5 }, { "\xc6\xff\xff\xff\xff", 5 },
        { "\xc9\xff\xff\xff\xff\x01", 6 }, { "\xdc\xff\xff", 3 }, { "\xde\xff\xff", 3 },
        { "\xda\xff\xff", 3 }, { "\xd9\xff", 2 }, { "\xc4\xff", 2 }, { "\xc7\xff\x01", 3 },
        { "\xd8\x01", 2 }, { "\xcf\x00", 2 }, { "\x92\xc0", 2 }, { "\x82\xc0\xc0\xc0", 4 },
        { "\x81\xa1v\xdd\x00\x00\x00\x05\xc0\xc0\xc0\xc0", 12 },
        { "\xdc\x00\x03\xc0\xc0", 5 },
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases [0]); i++) {
        ck_assert_msg (s_check (cases [i].bytes, cases [i].len) == PERR_MALFORMED, "case %zu", i);
        ck_assert_int_eq (s_decode (cases [i].bytes, cases [i].len), PERR_MALFORMED);
    }
}
END_TEST

//  `levels` nested one-element arrays around an empty one.
static perr_t
s_nested (size_t levels, bool maps)
{
    size_t size = levels * 3 + 1;
    char *data = malloc (size), *at = data;
    for (size_t i = 0; i < levels; i++) {
        if (maps) {
            memcpy (at, "\x81\xa1k", 3);
            at += 3;
        }
        else
            *at++ = '\x91';
    }
    *at++ = maps ? '\x80' : '\x90';
    perr_t rc = s_check (data, (size_t) (at - data));
    free (data);
    return rc;
}

START_TEST (test_depth)
{
    ck_assert_int_eq (s_nested (PROTO_MAX_DEPTH - 1, false), PERR_NONE);   //  16 levels
    ck_assert_int_eq (s_nested (PROTO_MAX_DEPTH, false), PERR_TOO_LARGE);
    ck_assert_int_eq (s_nested (PROTO_MAX_DEPTH - 1, true), PERR_NONE);
    ck_assert_int_eq (s_nested (PROTO_MAX_DEPTH, true), PERR_TOO_LARGE);
    ck_assert_int_eq (s_nested (100000, false), PERR_TOO_LARGE);
    ck_assert_int_eq (s_nested (100000, true), PERR_TOO_LARGE);
    //  A deeper limit than msgpack-c can unpack is clamped, not trusted.
    pwire_limits_t deep = *pwire_default_limits ();
    deep.max_depth = 1000;
    char data [64];
    memset (data, '\x91', 40);
    data [40] = '\x90';
    ck_assert_int_eq (pwire_check (data, 41, &deep, NULL, 0), PERR_TOO_LARGE);
}
END_TEST

START_TEST (test_objects)
{
    size_t n = PROTO_MAX_OBJECTS - 1;           //  + the array itself = the cap
    char *data = malloc (n + 2 + 5);
    data [0] = '\xdd';
    data [1] = (char) (n >> 24); data [2] = (char) (n >> 16);
    data [3] = (char) (n >> 8); data [4] = (char) n;
    memset (data + 5, '\xc0', n + 1);
    ck_assert_int_eq (s_check (data, n + 5), PERR_NONE);
    n++;
    data [2] = (char) (n >> 16); data [3] = (char) (n >> 8); data [4] = (char) n;
    ck_assert_int_eq (s_check (data, n + 5), PERR_TOO_LARGE);
    ck_assert_int_eq (s_decode (data, n + 5), PERR_TOO_LARGE);
    free (data);
}
END_TEST

START_TEST (test_frame_size)
{
    size_t payload = PROTO_MAX_FRAME - 5;
    char *data = calloc (1, PROTO_MAX_FRAME + 1);
    data [0] = '\xc6';
    data [1] = (char) (payload >> 24); data [2] = (char) (payload >> 16);
    data [3] = (char) (payload >> 8); data [4] = (char) payload;
    ck_assert_int_eq (s_check (data, PROTO_MAX_FRAME), PERR_NONE);
    payload++;
    data [3] = (char) (payload >> 8); data [4] = (char) payload;
    ck_assert_int_eq (s_check (data, PROTO_MAX_FRAME + 1), PERR_TOO_LARGE);
    ck_assert_int_eq (s_decode (data, PROTO_MAX_FRAME + 1), PERR_TOO_LARGE);
    ck_assert_int_eq (s_check (NULL, 0), PERR_MALFORMED);
    free (data);
}
END_TEST

START_TEST (test_every_type)
{
    //  One of each msgpack encoding, as a WRITE value: all are accepted,
    //  and survive a re-encode.
    static const unsigned char value [] = {
        0xdc, 0x00, 0x22,       //  34 elements:
        0x00, 0x7f, 0xe0, 0xff, 0xc0, 0xc2, 0xc3,
        0xcc, 0xff, 0xcd, 0xff, 0xff, 0xce, 0, 0, 0, 1, 0xcf, 0, 0, 0, 0, 0, 0, 0, 1,
        0xd0, 0x80, 0xd1, 0x80, 0, 0xd2, 0x80, 0, 0, 0, 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0,
        0xca, 0x3f, 0x80, 0, 0, 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,
        0xa1, 'a', 0xd9, 1, 'b', 0xda, 0, 1, 'c', 0xdb, 0, 0, 0, 1, 'd',
        0xc4, 1, 0, 0xc5, 0, 1, 0, 0xc6, 0, 0, 0, 1, 0,
        0xd4, 1, 0, 0xd5, 1, 0, 0, 0xd6, 1, 0, 0, 0, 0,
        0xd7, 1, 0, 0, 0, 0, 0, 0, 0, 0,
        0xd8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0xc7, 1, 5, 0, 0xc8, 0, 1, 5, 0, 0xc9, 0, 0, 0, 1, 5, 0,
        0xde, 0, 1, 0xa1, 'k', 0x90, 0xdf, 0, 0, 0, 1, 0xa1, 'k', 0xdd, 0, 0, 0, 0,
    };
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_WRITE, 1, 1);
    penc_key (&enc, "ops");
    msgpack_pack_array (penc_packer (&enc), 1);
    msgpack_pack_map (penc_packer (&enc), 3);
    penc_kv_cstr (&enc, "op", "set");
    penc_kv_cstr (&enc, "key", "k");
    penc_kv_raw (&enc, "value", value, sizeof (value));
    ck_assert_int_eq (s_check (penc_data (&enc), penc_size (&enc)), PERR_NONE);
    ck_assert_int_eq (s_decode (penc_data (&enc), penc_size (&enc)), PERR_NONE);
    penc_fini (&enc);
}
END_TEST

static uint64_t s_rng = 0x9e3779b97f4a7c15ull;

static uint32_t
s_random (void)
{
    s_rng ^= s_rng << 13;
    s_rng ^= s_rng >> 7;
    s_rng ^= s_rng << 17;
    return (uint32_t) (s_rng >> 16);
}

START_TEST (test_random_bytes)
{
    //  Pure noise, then noise behind a valid envelope so that the schema
    //  code, not only the walker, sees it.
    static const char head [] = "\x84\xa1v\x01\xa1t\xa4SEND\xa2id\x07\xa8messages";
    unsigned char buffer [512];
    for (int round = 0; round < 40000; round++) {
        size_t len = s_random () % sizeof (buffer);
        size_t start = 0;
        if (round % 2) {
            memcpy (buffer, head, sizeof (head) - 1);
            start = sizeof (head) - 1;
            len += start;
            if (len > sizeof (buffer))
                len = sizeof (buffer);
        }
        for (size_t i = start; i < len; i++)
            buffer [i] = (unsigned char) s_random ();
        s_decode (buffer, len);
    }
}
END_TEST

//  Calls `visit` for every *.bin file in $PARLEY_TEST_DIR/<sub>; returns
//  how many.
static size_t
s_each_bin (const char *sub, void (*visit) (const char *name, const char *data, size_t size))
{
    char *dir = testsuite_test_path (sub);
    DIR *handle = opendir (dir);
    ck_assert_msg (handle != NULL, "cannot open %s", dir);
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir (handle))) {
        size_t len = strlen (entry->d_name);
        if (len < 5 || strcmp (entry->d_name + len - 4, ".bin") != 0)
            continue;
        char path [2048];
        snprintf (path, sizeof (path), "%s/%s", dir, entry->d_name);
        size_t size;
        char *data = testsuite_read_file (path, &size);
        visit (entry->d_name, data, size);
        free (data);
        count++;
    }
    closedir (handle);
    free (dir);
    return count;
}

//  The expected error is the file name up to the first '-', upper-cased;
//  "any" means only "must not crash".
static void
s_visit_corpus (const char *name, const char *data, size_t size)
{
    char expect [32] = "";
    size_t i;
    for (i = 0; name [i] && name [i] != '-' && i < sizeof (expect) - 1; i++)
        expect [i] = (char) toupper ((unsigned char) name [i]);
    expect [i] = 0;
    perr_t err = s_decode (data, size);
    if (strcmp (expect, "ANY") == 0)
        return;
    ck_assert_msg (strcmp (perr_name (err), expect) == 0, "%s: got %s, expected %s",
                   name, perr_name (err), expect);
}

START_TEST (test_corpus)
{
    size_t count = s_each_bin ("corpus", s_visit_corpus);
    ck_assert_uint_ge (count, 60);
}
END_TEST

//  Every valid seed decodes; flipping any one bit never crashes and,
//  when the result still decodes, it re-encodes (s_decode checks that).
static size_t s_valid_seeds;

static void
s_visit_seed (const char *name, const char *data, size_t size)
{
    if (strncmp (name, "valid-", 6) != 0) {
        s_decode (data, size);
        return;
    }
    ck_assert_msg (s_decode (data, size) == PERR_NONE, "seed %s does not decode", name);
    s_valid_seeds++;
    char *copy = malloc (size);
    for (size_t bit = 0; bit < size * 8; bit++) {
        memcpy (copy, data, size);
        copy [bit / 8] ^= (char) (1 << (bit % 8));
        s_decode (copy, size);
    }
    free (copy);
}

START_TEST (test_seed_bit_flips)
{
    s_each_bin ("fuzz/seeds", s_visit_seed);
    ck_assert_uint_ge (s_valid_seeds, PMSG__COUNT);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("proto_wire");
    TCase *tc = tcase_create ("wire");
    tcase_add_test (tc, test_huge_lengths);
    tcase_add_test (tc, test_depth);
    tcase_add_test (tc, test_objects);
    tcase_add_test (tc, test_frame_size);
    tcase_add_test (tc, test_every_type);
    tcase_add_test (tc, test_random_bytes);
    tcase_add_test (tc, test_corpus);
    tcase_add_test (tc, test_seed_bit_flips);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
