// SPDX-License-Identifier: MIT
/*  check_proto_unpack - proto/'s own unpacker and encoder against msgpack-c.

    pmsg_decode builds the msgpack_object tree in the same walk that checks
    the bytes (pwire_unpack) instead of handing checked bytes to msgpack-c's
    unpacker; penc writes str/bin/uint headers itself instead of through
    msgpack-c's packer. Both must give exactly what msgpack-c gives:
      - every frame pwire_check accepts, pwire_unpack accepts, and its tree
        equals msgpack_unpack's, type by type and bit by bit (floats
        compared by their bits, so a NaN equals itself); every frame
        pwire_check rejects, pwire_unpack rejects with the same code and
        the same sentence. Frames: every msgpack type at every width
        boundary, random well-formed trees, their truncations and bit
        flips, the fuzz seeds and the malformed corpus;
      - lying counts nested in each other are rejected before any table is
        sized from them (every object still declared needs a byte of its
        own);
      - penc's writers produce msgpack-c's bytes at every length and value
        boundary.
*/
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pmsg.h"
#include "pwire.h"
#include "lib/testsuite.h"

//  Same tree: type, value bits, sizes, children.
static bool
s_same (const msgpack_object *a, const msgpack_object *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
        case MSGPACK_OBJECT_NIL:
            return true;
        case MSGPACK_OBJECT_BOOLEAN:
            return a->via.boolean == b->via.boolean;
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            return a->via.u64 == b->via.u64;
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            return a->via.i64 == b->via.i64;
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64:
            return memcmp (&a->via.f64, &b->via.f64, sizeof (double)) == 0;
        case MSGPACK_OBJECT_STR:
        case MSGPACK_OBJECT_BIN:
            return a->via.str.size == b->via.str.size
                && (a->via.str.size == 0
                    || memcmp (a->via.str.ptr, b->via.str.ptr, a->via.str.size) == 0);
        case MSGPACK_OBJECT_EXT:
            return a->via.ext.type == b->via.ext.type && a->via.ext.size == b->via.ext.size
                && (a->via.ext.size == 0
                    || memcmp (a->via.ext.ptr, b->via.ext.ptr, a->via.ext.size) == 0);
        case MSGPACK_OBJECT_ARRAY:
            if (a->via.array.size != b->via.array.size)
                return false;
            for (uint32_t i = 0; i < a->via.array.size; i++)
                if (!s_same (&a->via.array.ptr [i], &b->via.array.ptr [i]))
                    return false;
            return true;
        case MSGPACK_OBJECT_MAP:
            if (a->via.map.size != b->via.map.size)
                return false;
            for (uint32_t i = 0; i < a->via.map.size; i++)
                if (!s_same (&a->via.map.ptr [i].key, &b->via.map.ptr [i].key)
                ||  !s_same (&a->via.map.ptr [i].val, &b->via.map.ptr [i].val))
                    return false;
            return true;
        default:
            return false;
    }
}

static size_t s_accepted, s_rejected;

//  The property, for one frame.
static void
s_compare (const void *data, size_t size)
{
    char check_why [256] = "", unpack_why [256] = "";
    perr_t checked = pwire_check (data, size, NULL, check_why, sizeof check_why);
    msgpack_zone *zone = msgpack_zone_new (1024);
    ck_assert_ptr_nonnull (zone);
    msgpack_object ours;
    perr_t unpacked = pwire_unpack (data, size, NULL, zone, &ours, unpack_why,
                                    sizeof unpack_why);
    ck_assert_int_eq (unpacked, checked);
    ck_assert_str_eq (unpack_why, check_why);
    if (checked == PERR_NONE) {
        s_accepted++;
        msgpack_zone *their_zone = msgpack_zone_new (1024);
        msgpack_object theirs;
        size_t offset = 0;
        msgpack_unpack_return ret = msgpack_unpack (data, size, &offset, their_zone, &theirs);
        ck_assert_int_eq (ret, MSGPACK_UNPACK_SUCCESS);
        ck_assert_uint_eq (offset, size);
        ck_assert_msg (s_same (&ours, &theirs), "trees differ for a frame of %zu bytes", size);
        msgpack_zone_free (their_zone);
    }
    else
        s_rejected++;
    msgpack_zone_free (zone);
}

static uint64_t s_state = 0x2545f4914f6cdd1dull;

static uint64_t
s_random (void)
{
    s_state ^= s_state << 13;
    s_state ^= s_state >> 7;
    s_state ^= s_state << 17;
    return s_state;
}

//  A random well-formed value of at most `depth` levels, packed with
//  msgpack-c's packer: every type and header width shows up.
static void
s_pack_random (msgpack_packer *pk, int depth)
{
    static const uint64_t widths [] = { 0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000,
                                        0xffffffffull, 0x100000000ull, UINT64_MAX };
    static const int64_t negatives [] = { -1, -32, -33, -128, -129, -32768, -32769,
                                          INT32_MIN, (int64_t) INT32_MIN - 1, INT64_MIN };
    static const size_t lengths [] = { 0, 1, 31, 32, 255, 256, 300 };
    char bytes [300];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes [i] = (char) s_random ();
    unsigned kind = (unsigned) (s_random () % (depth > 0 ? 14 : 11));
    switch (kind) {
        case 0: msgpack_pack_nil (pk); break;
        case 1: if (s_random () % 2) msgpack_pack_true (pk); else msgpack_pack_false (pk); break;
        case 2: msgpack_pack_uint64 (pk, widths [s_random () % 11]); break;
        case 3: msgpack_pack_int64 (pk, negatives [s_random () % 10]); break;
        case 4: msgpack_pack_float (pk, (float) (s_random () % 1000) / 7.0f); break;
        case 5: msgpack_pack_double (pk, (double) s_random () / 3.0); break;
        case 6: {
            size_t len = lengths [s_random () % 7];
            msgpack_pack_str (pk, len);
            msgpack_pack_str_body (pk, bytes, len);
            break;
        }
        case 7: {
            size_t len = lengths [s_random () % 7];
            msgpack_pack_bin (pk, len);
            msgpack_pack_bin_body (pk, bytes, len);
            break;
        }
        case 8: {
            static const size_t ext_lengths [] = { 1, 2, 4, 8, 16, 0, 3, 17, 256 };
            size_t len = ext_lengths [s_random () % 9];
            msgpack_pack_ext (pk, len, (int8_t) s_random ());
            msgpack_pack_ext_body (pk, bytes, len);
            break;
        }
        case 9: {               //  signed encodings of positive values
            char raw [9] = { (char) 0xd3, 0, 0, 0, 0, 0, 0, 0, 42 };
            pk->callback (pk->data, raw, sizeof raw);
            break;
        }
        case 10: {
            //  a uint16 count of a small array: a width msgpack-c's packer
            //  never chooses but a peer may
            char raw [5] = { (char) 0xdc, 0, 2, 1, 2 };
            pk->callback (pk->data, raw, sizeof raw);
            break;
        }
        case 11:
        case 12: {
            size_t n = s_random () % (s_random () % 4 ? 5 : 20);
            msgpack_pack_array (pk, n);
            for (size_t i = 0; i < n; i++)
                s_pack_random (pk, depth - 1);
            break;
        }
        default: {
            size_t n = s_random () % (s_random () % 4 ? 5 : 20);
            msgpack_pack_map (pk, n);
            for (size_t i = 0; i < n; i++) {
                s_pack_random (pk, 0);
                s_pack_random (pk, depth - 1);
            }
            break;
        }
    }
}

START_TEST (test_random_trees)
{
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init (&buffer);
    for (int round = 0; round < 3000; round++) {
        msgpack_sbuffer_clear (&buffer);
        msgpack_packer pk;
        msgpack_packer_init (&pk, &buffer, msgpack_sbuffer_write);
        s_pack_random (&pk, (int) (s_random () % 6));
        s_compare (buffer.data, buffer.size);
        //  Every truncation of small frames, a few of big ones.
        size_t step = buffer.size < 64 ? 1 : buffer.size / 16;
        for (size_t cut = 0; cut < buffer.size; cut += step)
            s_compare (buffer.data, cut);
        //  Bit flips: headers become other headers, counts lie.
        for (int flip = 0; flip < 8 && buffer.size > 0; flip++) {
            size_t at = (size_t) (s_random () % buffer.size);
            unsigned char saved = (unsigned char) buffer.data [at];
            buffer.data [at] = (char) (saved ^ (1u << (s_random () % 8)));
            s_compare (buffer.data, buffer.size);
            buffer.data [at] = (char) saved;
        }
    }
    msgpack_sbuffer_destroy (&buffer);
    ck_assert_uint_gt (s_accepted, 3000);
    ck_assert_uint_gt (s_rejected, 3000);
}
END_TEST

static void
s_each_file (const char *folder)
{
    char *path = testsuite_test_path (folder);
    DIR *dir = opendir (path);
    ck_assert_msg (dir != NULL, "cannot open %s", path);
    size_t files = 0;
    struct dirent *entry;
    while ((entry = readdir (dir))) {
        size_t len = strlen (entry->d_name);
        if (len < 4 || strcmp (entry->d_name + len - 4, ".bin") != 0)
            continue;
        char name [512];
        snprintf (name, sizeof name, "%s/%s", folder, entry->d_name);
        size_t size;
        char *data = testsuite_read_test_file (name, &size);
        s_compare (data, size);
        for (size_t cut = 0; cut < size && cut < 256; cut++)
            s_compare (data, cut);
        free (data);
        files++;
    }
    closedir (dir);
    free (path);
    ck_assert_uint_gt (files, 10);
}

START_TEST (test_seeds_and_corpus)
{
    s_each_file ("fuzz/seeds");
    s_each_file ("corpus");
}
END_TEST

//  Counts that each fit the bytes left but not together: every open level
//  claims the rest of the frame. Rejected at the second header, before a
//  table is sized from it; and nothing beyond the bytes is ever owed.
START_TEST (test_nested_lies)
{
    unsigned char frame [4096];
    memset (frame, 0xc0, sizeof frame);
    size_t pos = 0;
    for (int level = 0; level < 8; level++) {
        frame [pos++] = 0xdd;                   //  array32 of (bytes left) elements
        uint32_t n = (uint32_t) (sizeof frame - pos - 4);
        frame [pos++] = (unsigned char) (n >> 24);
        frame [pos++] = (unsigned char) (n >> 16);
        frame [pos++] = (unsigned char) (n >> 8);
        frame [pos++] = (unsigned char) n;
    }
    char why [256] = "";
    ck_assert_int_eq (pwire_check (frame, sizeof frame, NULL, why, sizeof why), PERR_MALFORMED);
    ck_assert_msg (strstr (why, "byte 5:") && strstr (why, "still declared"), "%s", why);
    s_compare (frame, sizeof frame);
    //  A full array of nils with one level is fine.
    frame [0] = 0xdd;
    uint32_t n = (uint32_t) (sizeof frame - 5);
    frame [1] = (unsigned char) (n >> 24);
    frame [2] = (unsigned char) (n >> 16);
    frame [3] = (unsigned char) (n >> 8);
    frame [4] = (unsigned char) n;
    memset (frame + 5, 0xc0, sizeof frame - 5);
    ck_assert_int_eq (pwire_check (frame, sizeof frame, NULL, why, sizeof why), PERR_NONE);
    s_compare (frame, sizeof frame);
}
END_TEST

//  penc's header writers against msgpack-c's packer, byte for byte.
START_TEST (test_encoder_bytes)
{
    static const size_t lengths [] = { 0, 1, 31, 32, 255, 256, 65535, 65536, 70000 };
    static const uint64_t values [] = { 0, 127, 128, 255, 256, 65535, 65536, 0xffffffffull,
                                        0x100000000ull, UINT64_MAX };
    char *text = malloc (70000);
    ck_assert_ptr_nonnull (text);
    for (size_t i = 0; i < 70000; i++)
        text [i] = (char) ('a' + i % 26);
    msgpack_sbuffer expected;
    msgpack_sbuffer_init (&expected);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &expected, msgpack_sbuffer_write);
    penc_t enc;
    penc_init (&enc);
    for (size_t k = 0; k < sizeof lengths / sizeof lengths [0]; k++) {
        //  keys of length 1 and 40 (a str8 key), values of every width
        const char *keys [] = { "k", "a-key-of-forty-bytes-for-the-str8-form.." };
        for (size_t key = 0; key < 2; key++) {
            size_t len = lengths [k];
            msgpack_sbuffer_clear (&expected);
            penc_reset (&enc);
            msgpack_pack_str (&pk, strlen (keys [key]));
            msgpack_pack_str_body (&pk, keys [key], strlen (keys [key]));
            msgpack_pack_str (&pk, len);
            msgpack_pack_str_body (&pk, text, len);
            msgpack_pack_str (&pk, strlen (keys [key]));
            msgpack_pack_str_body (&pk, keys [key], strlen (keys [key]));
            msgpack_pack_bin (&pk, len);
            msgpack_pack_bin_body (&pk, text, len);
            msgpack_pack_str (&pk, len);
            msgpack_pack_str_body (&pk, text, len);
            penc_kv_str (&enc, keys [key], text, len);
            penc_kv_bin (&enc, keys [key], text, len);
            penc_str (&enc, text, len);
            ck_assert_uint_eq (penc_size (&enc), expected.size);
            ck_assert_int_eq (memcmp (penc_data (&enc), expected.data, expected.size), 0);
        }
    }
    for (size_t v = 0; v < sizeof values / sizeof values [0]; v++) {
        msgpack_sbuffer_clear (&expected);
        penc_reset (&enc);
        msgpack_pack_str (&pk, 3);
        msgpack_pack_str_body (&pk, "seq", 3);
        msgpack_pack_uint64 (&pk, values [v]);
        penc_kv_uint (&enc, "seq", values [v]);
        ck_assert_uint_eq (penc_size (&enc), expected.size);
        ck_assert_int_eq (memcmp (penc_data (&enc), expected.data, expected.size), 0);
    }
    //  A whole message: penc_begin + shortcuts + the packer, mixed.
    penc_begin (&enc, PMSG_MAIL, 7, 3);
    penc_key (&enc, "messages");
    msgpack_pack_array (penc_packer (&enc), 1);
    msgpack_pack_map (penc_packer (&enc), 4);
    penc_kv_uint (&enc, "seq", 1);
    penc_kv_uint (&enc, "ts", 1700000000000000ull);
    penc_kv_cstr (&enc, "from", "a");
    penc_kv_str (&enc, "body", text, 100);
    penc_kv_uint (&enc, "pending", 0);
    penc_kv_uint (&enc, "acked", 0);
    perr_t err;
    char why [256];
    pmsg_t *msg = pmsg_decode (penc_data (&enc), penc_size (&enc), NULL, &err, NULL, why,
                               sizeof why);
    ck_assert_msg (msg == NULL, "a record without to/channel must not decode");
    ck_assert_int_eq (err, PERR_BAD_FIELD);
    penc_fini (&enc);
    msgpack_sbuffer_destroy (&expected);
    free (text);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("proto_unpack");
    TCase *tc = tcase_create ("unpack");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_random_trees);
    tcase_add_test (tc, test_seeds_and_corpus);
    tcase_add_test (tc, test_nested_lies);
    tcase_add_test (tc, test_encoder_bytes);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
