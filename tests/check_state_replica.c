// SPDX-License-Identifier: MIT
/*  check_state_replica - the Clone pattern over the shared state.

    A random stream of WRITE batches (many of them failing: conflicts,
    mismatches, missing keys) runs against one state_t. A "replica"
    subscribes first: it receives every change record as an encoded
    STATE_UPDATE frame, decoded by the real proto decoder. Part-way it
    takes a SNAPSHOT (an encoded STATE frame), then applies the queued and
    later updates whose seq is above the snapshot's, checking that seqs
    arrive without gaps. At the end the replica must equal a fresh
    snapshot, key by key: reducer, seq and value.
*/
#include <check.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker/core/state.h"
#include "lib/mpjson.h"
#include "lib/testsuite.h"

#define KEYS 8

typedef struct {
    bool present;
    char reducer [16];
    uint64_t seq;
    char *value;                //  compact JSON
} rkey_t;

typedef struct {
    rkey_t keys [KEYS];
    uint64_t seq;
} replica_t;

static char s_why [512];

static uint64_t
next_rand (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int
key_index (const char *key, size_t len)
{
    ck_assert (len == 2 && key [0] == 'k');
    return key [1] - '0';
}

static void
rkey_set (rkey_t *k, const char *reducer, size_t len, uint64_t seq,
          const msgpack_object *value)
{
    free (k->value);
    k->present = true;
    snprintf (k->reducer, sizeof (k->reducer), "%.*s", (int) len, reducer);
    k->seq = seq;
    if (value)
        k->value = mpjson_dump_object (value);
    else
        k->value = strdup ("null");     //  nil reads as absent
}

static pmsg_t *
decode (penc_t *enc)
{
    perr_t err;
    uint64_t id;
    pmsg_t *msg = pmsg_decode (penc_data (enc), penc_size (enc), pwire_default_limits (),
                               &err, &id, s_why, sizeof (s_why));
    ck_assert_msg (msg, "decode: %s", s_why);
    return msg;
}

//  Replaces the replica's content by a STATE reply of the whole store.
static void
load_snapshot (replica_t *replica, state_t *state)
{
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, PMSG_STATE, 1, 2);
    penc_kv_uint (&enc, "seq", state_seq (state));
    penc_key (&enc, "entries");
    state_encode_prefix (state, &enc, NULL, 0);
    pmsg_t *msg = decode (&enc);
    for (int i = 0; i < KEYS; i++) {
        free (replica->keys [i].value);
        memset (&replica->keys [i], 0, sizeof (rkey_t));
    }
    replica->seq = pmsg_uint (msg, "seq", 0);
    const msgpack_object *entries = pmsg_field (msg, "entries");
    for (uint32_t i = 0; entries && i < entries->via.array.size; i++) {
        const msgpack_object *e = &entries->via.array.ptr [i];
        size_t klen, rlen;
        const char *key = pobj_str (e, "key", &klen);
        const char *reducer = pobj_str (e, "reducer", &rlen);
        rkey_set (&replica->keys [key_index (key, klen)], reducer, rlen,
                  pobj_uint (e, "seq", 0), pobj_get (e, "value"));
    }
    pmsg_destroy (&msg);
    penc_fini (&enc);
}

static void
apply_update (replica_t *replica, const void *frame, size_t size)
{
    perr_t err;
    uint64_t id;
    pmsg_t *msg = pmsg_decode (frame, size, pwire_default_limits (), &err, &id,
                               s_why, sizeof (s_why));
    ck_assert_msg (msg, "%s", s_why);
    uint64_t seq = pmsg_uint (msg, "seq", 0);
    if (seq > replica->seq) {
        ck_assert_msg (seq == replica->seq + 1, "gap: %llu after %llu",
                       (unsigned long long) seq, (unsigned long long) replica->seq);
        replica->seq = seq;
        size_t klen, rlen, olen;
        const char *key = pmsg_str (msg, "key", &klen);
        const char *op = pmsg_str (msg, "op", &olen);
        const char *reducer = pmsg_str (msg, "reducer", &rlen);
        rkey_t *k = &replica->keys [key_index (key, klen)];
        if (olen == 6 && memcmp (op, "delete", 6) == 0) {
            free (k->value);
            memset (k, 0, sizeof (*k));
        }
        else
            rkey_set (k, reducer, rlen, seq, pmsg_field (msg, "value"));
    }
    pmsg_destroy (&msg);
}

static const char *s_values [] = {
    "[1,2]", "[\"x\",1]", "{\"a\":1}", "{\"b\":[2]}", "3", "1.5", "-4", "\"s\"", "null", "[]"
};
static const char *s_reducers [] = { "replace", "append", "union", "merge", "add" };
static const char *s_ops [] = { "declare", "update", "update", "update", "set", "clear", "delete" };

static void
random_batch (uint64_t *rng, char *json, size_t size)
{
    int count = 1 + (int) (next_rand (rng) % 4);
    size_t used = (size_t) snprintf (json, size, "[");
    for (int i = 0; i < count; i++) {
        const char *op = s_ops [next_rand (rng) % 7];
        int key = (int) (next_rand (rng) % KEYS);
        used += (size_t) snprintf (json + used, size - used,
                                   "%s{\"op\":\"%s\",\"key\":\"k%d\"", i? ",": "", op, key);
        if (streq (op, "declare"))
            used += (size_t) snprintf (json + used, size - used, ",\"reducer\":\"%s\"",
                                       s_reducers [next_rand (rng) % 5]);
        if (streq (op, "update") || streq (op, "set"))
            used += (size_t) snprintf (json + used, size - used, ",\"value\":%s",
                                       s_values [next_rand (rng) % 10]);
        used += (size_t) snprintf (json + used, size - used, "}");
    }
    snprintf (json + used, size - used, "]");
}

//  Every change record of the last batch as a STATE_UPDATE frame.
static void
publish (state_t *state, zlistx_t *queue)
{
    for (size_t i = 0; i < state_change_count (state); i++) {
        penc_t enc;
        penc_init (&enc);
        penc_begin (&enc, PMSG_STATE_UPDATE, 0, STATE_CHANGE_FIELDS);
        state_encode_change (state_change_at (state, i), &enc);
        zlistx_add_end (queue, zframe_new (penc_data (&enc), penc_size (&enc)));
        penc_fini (&enc);
    }
}

static void
drain (replica_t *replica, zlistx_t *queue)
{
    zframe_t *frame;
    while ((frame = (zframe_t *) zlistx_detach (queue, NULL))) {
        apply_update (replica, zframe_data (frame), zframe_size (frame));
        zframe_destroy (&frame);
    }
}

static void
run_stream (uint64_t seed, int batches, int snapshot_at)
{
    state_t *state = state_new (NULL);
    replica_t replica, final;
    memset (&replica, 0, sizeof (replica));
    memset (&final, 0, sizeof (final));
    zlistx_t *queue = zlistx_new ();
    uint64_t rng = seed;
    int ok = 0;
    for (int b = 0; b < batches; b++) {
        char json [1024];
        random_batch (&rng, json, sizeof (json));
        msgpack_unpacked u;
        const msgpack_object *ops = mpjson_object (&u, json);
        ck_assert (ops);
        if (state_apply (state, ops, NULL, NULL, 0) == PERR_NONE)
            ok++;
        msgpack_unpacked_destroy (&u);
        publish (state, queue);
        if (b == snapshot_at)
            load_snapshot (&replica, state);    //  updates queued meanwhile
        if (b > snapshot_at && b % 7 == 0)
            drain (&replica, queue);
    }
    drain (&replica, queue);
    ck_assert_msg (ok > batches / 5 && ok < batches, "only %d of %d batches applied", ok, batches);
    load_snapshot (&final, state);
    ck_assert_uint_eq (replica.seq, final.seq);
    ck_assert_uint_eq (final.seq, state_seq (state));
    for (int i = 0; i < KEYS; i++) {
        rkey_t *r = &replica.keys [i], *f = &final.keys [i];
        ck_assert_msg (r->present == f->present, "k%d presence", i);
        if (f->present) {
            ck_assert_str_eq (r->reducer, f->reducer);
            ck_assert_uint_eq (r->seq, f->seq);
            ck_assert_str_eq (r->value, f->value);
        }
        free (r->value);
        free (f->value);
    }
    zlistx_destroy (&queue);
    state_destroy (&state);
}

START_TEST (test_replica)
{
    run_stream (1, 400, 150);
    run_stream (2, 400, 0);
    run_stream (3, 1000, 999);
    run_stream (4, 1000, 500);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("state_replica");
    TCase *tc = tcase_create ("clone");
    tcase_add_test (tc, test_replica);
    suite_add_tcase (s, tc);
    return testsuite_run (s);
}
