// SPDX-License-Identifier: MIT
/*  check_proto - every message type of proto/, generically from the schema
    table: each round-trips (encode, decode, compare every field, re-encode
    to the same bytes), each schema rule rejects with the right code, every
    truncation of every valid frame is MALFORMED, and PROTOCOL.md names
    every type, record, field and error code.

    Frames are built generically from the schema table (s_pack_*), so a
    type or field added to pmsg_schema.c is covered here without new code.
    A "mutation" changes one field of one schema (a message or a record)
    wherever it is packed: omitted, nil, wrong kind, over its limit, a bad
    name, duplicated, or an empty array; each has a known expected code.
    Hand-written cases (getters, envelope, any-values, names, tables) are
    in check_proto_api.c; byte-level rejections (huge lengths, depth,
    random bytes, the malformed corpus) in check_proto_wire.c.

    With PARLEY_SEED_DIR set, the round-trip test also writes each type's
    sample frame there (how tests/fuzz/seeds/ was made: see its README).
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pmsg.h"
#include "lib/testproto.h"
#include "lib/testsuite.h"

//  --------------------------------------------------------------------------
//  Frames built from the schema table

typedef enum { M_NONE, M_OMIT, M_NIL, M_WRONG, M_LONG, M_BADNAME, M_DUP, M_EMPTY, M__COUNT } mut_t;

typedef struct {
    const pschema_t *schema;    //  the schema whose field is mutated
    size_t field;
    mut_t mut;
} target_t;

static const target_t s_plain = { NULL, 0, M_NONE };

static void s_pack_value (penc_t *enc, const pfield_t *f, mut_t mut, const target_t *t);

static bool
s_has_field (const pschema_t *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp (s->fields [i].name, name) == 0)
            return true;
    return false;
}

//  Records with both `to` and `channel` get only one: `to`, unless the
//  mutation targets `channel`.
static bool
s_skipped (const pschema_t *s, size_t i, const target_t *t)
{
    if (!s_has_field (s, "to") || !s_has_field (s, "channel"))
        return false;
    bool channel_wanted = t->schema == s && strcmp (s->fields [t->field].name, "channel") == 0;
    return strcmp (s->fields [i].name, channel_wanted ? "to" : "channel") == 0;
}

static size_t
s_emitted (const pschema_t *s, const target_t *t)
{
    size_t n = 0;
    for (size_t i = 0; i < s->count; i++)
        n += !s_skipped (s, i, t);
    if (t->schema == s && t->mut == M_OMIT)
        n--;
    if (t->schema == s && t->mut == M_DUP)
        n++;
    return n;
}

static void
s_pack_fields (penc_t *enc, const pschema_t *s, const target_t *t)
{
    msgpack_packer *pk = penc_packer (enc);
    for (size_t i = 0; i < s->count; i++) {
        if (s_skipped (s, i, t))
            continue;
        mut_t mut = (t->schema == s && t->field == i) ? t->mut : M_NONE;
        if (mut == M_OMIT)
            continue;
        penc_key (enc, s->fields [i].name);
        if (mut == M_NIL)
            msgpack_pack_nil (pk);
        else
            s_pack_value (enc, &s->fields [i], mut, t);
        if (mut == M_DUP) {
            penc_key (enc, s->fields [i].name);
            s_pack_value (enc, &s->fields [i], M_NONE, t);
        }
    }
}

static void
s_pack_record (penc_t *enc, const pschema_t *s, const target_t *t)
{
    msgpack_pack_map (penc_packer (enc), s_emitted (s, t));
    s_pack_fields (enc, s, t);
}

static size_t
s_limit (const pfield_t *f)
{
    if (f->max)
        return f->max;
    switch (f->kind) {
        case PF_NAME: return PROTO_MAX_NAME;
        case PF_BODY: return PROTO_MAX_BODY;
        case PF_STR: return PROTO_MAX_TEXT;
        default: return PROTO_MAX_BATCH;
    }
}

static void
s_pack_filler (penc_t *enc, size_t len, bool bin)
{
    char *text = malloc (len + 1);
    ck_assert_ptr_nonnull (text);
    memset (text, 'a', len);
    if (bin) {
        msgpack_pack_bin (penc_packer (enc), len);
        msgpack_pack_bin_body (penc_packer (enc), text, len);
    }
    else
        penc_str (enc, text, len);
    free (text);
}

static void
s_pack_any (penc_t *enc)
{
    msgpack_packer *pk = penc_packer (enc);
    msgpack_pack_map (pk, 2);
    penc_key (enc, "n");
    msgpack_pack_array (pk, 6);
    msgpack_pack_uint64 (pk, 1);
    msgpack_pack_int64 (pk, -2);
    msgpack_pack_double (pk, 0.5);
    penc_cstr (enc, "s");
    msgpack_pack_nil (pk);
    msgpack_pack_true (pk);
    penc_key (enc, "m");
    msgpack_pack_map (pk, 1);
    penc_kv_bin (enc, "k", "\0\1", 2);
}

static void
s_pack_array (penc_t *enc, const pfield_t *f, mut_t mut, const target_t *t)
{
    msgpack_packer *pk = penc_packer (enc);
    if (mut == M_WRONG) {           //  an element of the wrong kind
        msgpack_pack_array (pk, 1);
        if (f->kind == PF_STR_ARRAY)
            msgpack_pack_uint64 (pk, 1);
        else
            penc_cstr (enc, "x");
        return;
    }
    size_t n = mut == M_LONG ? s_limit (f) + 1 : mut == M_EMPTY ? 0
             : f->kind == PF_UINT_ARRAY ? 3 : 2;
    msgpack_pack_array (pk, n);
    for (size_t i = 0; i < n; i++) {
        if (f->kind == PF_STR_ARRAY)
            penc_cstr (enc, i % 2 ? "y" : "x");
        else
        if (f->kind == PF_UINT_ARRAY)
            msgpack_pack_uint64 (pk, i + 1);
        else
            s_pack_record (enc, f->rec, t);
    }
}

static void
s_pack_value (penc_t *enc, const pfield_t *f, mut_t mut, const target_t *t)
{
    msgpack_packer *pk = penc_packer (enc);
    bool wrong = mut == M_WRONG;
    switch (f->kind) {
        case PF_UINT: wrong ? penc_cstr (enc, "x") : (void) msgpack_pack_uint64 (pk, 42); break;
        case PF_INT: wrong ? penc_cstr (enc, "x") : (void) msgpack_pack_int64 (pk, -42); break;
        case PF_NUM: wrong ? penc_cstr (enc, "x") : (void) msgpack_pack_double (pk, 0.25); break;
        case PF_BOOL: wrong ? (void) msgpack_pack_uint64 (pk, 1) : (void) msgpack_pack_true (pk); break;
        case PF_STR:
        case PF_NAME:
        case PF_BODY:
            if (wrong)
                msgpack_pack_uint64 (pk, 5);
            else
            if (mut == M_LONG)
                s_pack_filler (enc, s_limit (f) + 1, f->kind == PF_BODY);
            else
            if (mut == M_BADNAME)
                penc_cstr (enc, "bad name!");
            else
            if (f->kind == PF_BODY) {
                msgpack_pack_bin (pk, 6);
                msgpack_pack_bin_body (pk, "\0body\xff", 6);
            }
            else
                penc_cstr (enc, f->kind == PF_NAME ? "Agent_1" : "some text");
            break;
        case PF_ANY: s_pack_any (enc); break;
        case PF_MAP:
            if (wrong)
                msgpack_pack_array (pk, 0);
            else {
                msgpack_pack_map (pk, 1);
                penc_kv_uint (enc, "k", 1);
            }
            break;
        case PF_REC:
            if (wrong)
                msgpack_pack_array (pk, 0);
            else
                s_pack_record (enc, f->rec, t);
            break;
        case PF_STR_ARRAY:
        case PF_UINT_ARRAY:
        case PF_REC_ARRAY:
            s_pack_array (enc, f, mut, t);
            break;
    }
}

static uint64_t
s_id (pmsg_type_t type)
{
    return 1000 + (uint64_t) type;
}

//  One frame of `type`, every field filled in, `t` applied.
static void
s_sample (penc_t *enc, pmsg_type_t type, const target_t *t)
{
    const pschema_t *s = pmsg_schema (type);
    penc_begin (enc, type, s_id (type), s_emitted (s, t));
    s_pack_fields (enc, s, t);
}

static void
s_write_seed (const penc_t *enc, pmsg_type_t type)
{
    const char *dir = getenv ("PARLEY_SEED_DIR");
    if (!dir)
        return;
    char path [512];
    snprintf (path, sizeof (path), "%s/valid-%s.bin", dir, pmsg_type_name (type));
    FILE *file = fopen (path, "wb");
    ck_assert_ptr_nonnull (file);
    ck_assert_uint_eq (fwrite (penc_data (enc), 1, penc_size (enc), file), penc_size (enc));
    fclose (file);
}

//  The decoded field equals the value the generator packs for it.
static void
s_assert_field (const pmsg_t *msg, const pfield_t *f)
{
    penc_t one;
    penc_init (&one);
    s_pack_value (&one, f, M_NONE, &s_plain);
    msgpack_zone zone;
    msgpack_zone_init (&zone, 4096);
    msgpack_object expect;
    size_t offset = 0;
    ck_assert_int_eq (msgpack_unpack (penc_data (&one), penc_size (&one), &offset, &zone,
                                      &expect), MSGPACK_UNPACK_SUCCESS);
    const msgpack_object *got = pmsg_field (msg, f->name);
    ck_assert_msg (got != NULL, "field %s missing after decode", f->name);
    ck_assert_msg (msgpack_object_equal (*got, expect), "field %s differs", f->name);
    msgpack_zone_destroy (&zone);
    penc_fini (&one);
}

//  --------------------------------------------------------------------------
//  Round trips

START_TEST (test_round_trip)
{
    pmsg_type_t type = (pmsg_type_t) _i;
    penc_t enc;
    penc_init (&enc);
    s_sample (&enc, type, &s_plain);
    s_write_seed (&enc, type);
    perr_t err;
    char why [256];
    pmsg_t *msg = testproto_decode (&enc, &err, why);
    ck_assert_msg (msg != NULL, "%s: %s", pmsg_type_name (type), why);
    ck_assert_int_eq (err, PERR_NONE);
    ck_assert_int_eq (pmsg_type (msg), type);
    ck_assert_uint_eq (pmsg_id (msg), s_id (type));
    const pschema_t *s = pmsg_schema (type);
    for (size_t i = 0; i < s->count; i++)
        s_assert_field (msg, &s->fields [i]);
    //  Re-encoding the decoded map gives the same bytes.
    penc_t again;
    penc_init (&again);
    penc_object (&again, pmsg_root (msg));
    ck_assert_uint_eq (penc_size (&again), penc_size (&enc));
    ck_assert_mem_eq (penc_data (&again), penc_data (&enc), penc_size (&enc));
    penc_fini (&again);
    pmsg_destroy (&msg);
    ck_assert_ptr_null (msg);
    penc_fini (&enc);
}
END_TEST

//  --------------------------------------------------------------------------
//  Schema rules, by mutation

static bool
s_applies (const pfield_t *f, mut_t mut)
{
    bool text = f->kind == PF_STR || f->kind == PF_NAME || f->kind == PF_BODY;
    bool array = f->kind == PF_STR_ARRAY || f->kind == PF_UINT_ARRAY || f->kind == PF_REC_ARRAY;
    switch (mut) {
        case M_WRONG: return f->kind != PF_ANY;
        case M_LONG: return text || array;
        case M_BADNAME: return f->kind == PF_NAME;
        case M_EMPTY: return array;
        default: return true;
    }
}

static perr_t
s_expected (const pschema_t *s, const pfield_t *f, mut_t mut, bool request)
{
    bool one_of = s_has_field (s, "to") && s_has_field (s, "channel")
               && (strcmp (f->name, "to") == 0 || strcmp (f->name, "channel") == 0);
    switch (mut) {
        case M_OMIT:
        case M_NIL: return f->required || one_of ? PERR_BAD_FIELD : PERR_NONE;
        case M_WRONG: return PERR_BAD_FIELD;
        case M_LONG: return PERR_TOO_LARGE;
        case M_BADNAME: return PERR_BAD_NAME;
        case M_DUP: return PERR_MALFORMED;
        case M_EMPTY: return f->required && request ? PERR_BAD_FIELD : PERR_NONE;
        default: return PERR_NONE;
    }
}

//  The message's schema and every record schema reachable from it.
static size_t
s_schemas (const pschema_t *s, const pschema_t **list, size_t count, size_t max)
{
    for (size_t i = 0; i < count; i++)
        if (list [i] == s)
            return count;
    ck_assert_uint_lt (count, max);
    list [count++] = s;
    for (size_t i = 0; i < s->count; i++)
        if (s->fields [i].rec)
            count = s_schemas (s->fields [i].rec, list, count, max);
    return count;
}

static void
s_try_mutation (pmsg_type_t type, const target_t *t)
{
    const pfield_t *f = &t->schema->fields [t->field];
    perr_t expect = s_expected (t->schema, f, t->mut, pmsg_type_kind (type) == PMSG_REQUEST);
    penc_t enc;
    penc_init (&enc);
    s_sample (&enc, type, t);
    perr_t err = 99;
    uint64_t id = 0;
    char why [256] = "";
    pmsg_t *msg = pmsg_decode (penc_data (&enc), penc_size (&enc), NULL, &err, &id, why,
                               sizeof (why));
    ck_assert_msg (err == expect, "%s %s.%s mutation %d: got %s (%s), expected %s",
                   pmsg_type_name (type), t->schema->name, f->name, t->mut,
                   perr_name (err), why, perr_name (expect));
    ck_assert_int_eq (msg == NULL, expect != PERR_NONE);
    if (msg == NULL && strstr (why, "frame of") == NULL) {
        //  The sentence names the field and the request id is echoed,
        //  unless the frame as a whole was over the size limit (then
        //  nothing of it was read).
        ck_assert_msg (strstr (why, f->name) != NULL, "why: %s", why);
        ck_assert_uint_eq (id, s_id (type));
    }
    pmsg_destroy (&msg);
    penc_fini (&enc);
}

START_TEST (test_mutations)
{
    pmsg_type_t type = (pmsg_type_t) _i;
    const pschema_t *list [16];
    size_t count = s_schemas (pmsg_schema (type), list, 0, 16);
    for (size_t k = 0; k < count; k++)
        for (size_t i = 0; i < list [k]->count; i++)
            for (int mut = M_OMIT; mut < M__COUNT; mut++) {
                target_t t = { list [k], i, (mut_t) mut };
                if (s_applies (&list [k]->fields [i], t.mut))
                    s_try_mutation (type, &t);
            }
}
END_TEST

//  Every proper prefix of every valid frame is MALFORMED (never crashes).
START_TEST (test_truncation)
{
    penc_t enc;
    penc_init (&enc);
    s_sample (&enc, (pmsg_type_t) _i, &s_plain);
    for (size_t len = 0; len < penc_size (&enc); len++) {
        perr_t err = 99;
        char why [256];
        pmsg_t *msg = pmsg_decode (penc_data (&enc), len, NULL, &err, NULL, why, sizeof (why));
        ck_assert_ptr_null (msg);
        ck_assert_msg (err == PERR_MALFORMED, "prefix %zu: %s", len, why);
    }
    penc_fini (&enc);
}
END_TEST

//  --------------------------------------------------------------------------
//  PROTOCOL.md names every type, record, field and error code

static char *
s_read_protocol (void)
{
    size_t len;
    char *text = testsuite_read_test_file ("../proto/PROTOCOL.md", &len);
    ck_assert_uint_gt (len, 0);
    return text;
}

static bool
s_word_char (char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

//  `word` appears as a whole word (not as part of a longer identifier).
static bool
s_names_word (const char *text, const char *word)
{
    size_t len = strlen (word);
    for (const char *at = strstr (text, word); at; at = strstr (at + 1, word))
        if ((at == text || !s_word_char (at [-1])) && !s_word_char (at [len]))
            return true;
    return false;
}

static void
s_assert_fields_named (const char *text, const pschema_t *s)
{
    for (size_t i = 0; i < s->count; i++) {
        char quoted [80];
        snprintf (quoted, sizeof (quoted), "`%s`", s->fields [i].name);
        ck_assert_msg (strstr (text, quoted), "PROTOCOL.md lacks field %s of %s",
                       quoted, s->name);
    }
}

START_TEST (test_protocol_doc)
{
    char *text = s_read_protocol ();
    for (int i = 0; i < PMSG__COUNT; i++) {
        const pschema_t *s = pmsg_schema ((pmsg_type_t) i);
        ck_assert_msg (s_names_word (text, s->name), "PROTOCOL.md lacks type %s", s->name);
        s_assert_fields_named (text, s);
    }
    for (size_t i = 0; i < pmsg_record_schema_count (); i++) {
        const pschema_t *s = pmsg_record_schema_at (i);
        char quoted [80];
        snprintf (quoted, sizeof (quoted), "`%s`", s->name);
        ck_assert_msg (strstr (text, quoted), "PROTOCOL.md lacks record %s", quoted);
        s_assert_fields_named (text, s);
    }
    for (int code = 1; code < PERR__COUNT; code++)
        if (strcmp (perr_name (code), "UNKNOWN") != 0)
            ck_assert_msg (s_names_word (text, perr_name (code)),
                           "PROTOCOL.md lacks error %s", perr_name (code));
    free (text);
}
END_TEST

//  --------------------------------------------------------------------------

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("proto");
    TCase *tc = tcase_create ("schema");
    tcase_add_loop_test (tc, test_round_trip, 0, PMSG__COUNT);
    tcase_add_loop_test (tc, test_mutations, 0, PMSG__COUNT);
    tcase_add_loop_test (tc, test_truncation, 0, PMSG__COUNT);
    tcase_add_test (tc, test_protocol_doc);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}
