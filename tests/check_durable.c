// SPDX-License-Identifier: MIT
/*  check_durable - the broker's journal against the real binary: a restart
    (SIGTERM or SIGKILL) keeps registrations, inboxes with their seqs,
    acknowledged positions, listens, the shared state with its seqs, the
    world and the counters; compaction keeps all of it while the files
    shrink; a torn last record (cut at every byte) is dropped with a log
    line; a flipped byte in a middle record stops the broker naming file
    and offset unless --repair; a second broker cannot use the same
    directory; a full disk refuses writes with STORAGE, keeps reads, and
    recovers when space returns.
*/
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

static testbroker_t *
s_start2 (const char *dir, const char *fsync, const char *extra, const char *value)
{
    const char *args [] = { "--data-dir", dir, "--fsync", fsync, extra, value, NULL };
    return testcheck_start (args);
}

static testbroker_t *
s_start (const char *dir, const char *fsync, const char *extra)
{
    return s_start2 (dir, fsync, extra, NULL);
}

//  BYE, then close: the id is free at once for the next HELLO.
//  One WRITE of `count` ops; returns the reply type (WRITTEN or ERROR code
//  as negative).
static int
s_write (testclient_t *client, const char *op, const char *key, const char *reducer,
         const char *value_json_str, int64_t number, bool use_number)
{
    penc_t *enc = testclient_begin (client, PMSG_WRITE, 1);
    penc_key (enc, "ops");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), reducer ? 3 : 3);
    penc_kv_cstr (enc, "op", op);
    penc_kv_cstr (enc, "key", key);
    if (reducer)
        penc_kv_cstr (enc, "reducer", reducer);
    else {
        penc_key (enc, "value");
        if (use_number)
            msgpack_pack_int64 (penc_packer (enc), number);
        else
        if (strcmp (op, "update") == 0 && value_json_str [0] == '[') {
            msgpack_pack_array (penc_packer (enc), 1);
            penc_cstr (enc, value_json_str + 1);
        }
        else
            penc_cstr (enc, value_json_str);
    }
    pmsg_t *reply = testclient_call (client);
    int rc = reply && pmsg_type (reply) == PMSG_WRITTEN ? 0 : -testclient_error_code (reply);
    pmsg_destroy (&reply);
    return rc;
}

//  The whole state as bytes (SNAPSHOT's entries and seq, re-encoded).
static char *
s_state (testclient_t *client, size_t *size)
{
    pmsg_t *reply = testclient_call0 (client, PMSG_SNAPSHOT);
    EXPECT (reply, PMSG_STATE);
    penc_t enc;
    penc_init (&enc);
    penc_object (&enc, pmsg_field (reply, "entries"));
    msgpack_pack_uint64 (penc_packer (&enc), pmsg_uint (reply, "seq", 0));
    *size = penc_size (&enc);
    char *copy = malloc (*size);
    memcpy (copy, penc_data (&enc), *size);
    penc_fini (&enc);
    pmsg_destroy (&reply);
    return copy;
}

//  Everything a client can see of the broker, as one string.
static char *
s_view (testbroker_t *broker)
{
    testclient_t *probe = testcheck_agent (broker, "Probe");
    size_t state_size;
    char *state = s_state (probe, &state_size);
    char *view = malloc (state_size * 2 + 4096);
    size_t at = 0;
    for (size_t i = 0; i < state_size; i++)
        at += (size_t) sprintf (view + at, "%02x", (unsigned char) state [i]);
    free (state);
    const char *names [] = { "agents", "queued", "queued_bytes", "mail_seq", "state_keys",
                             "channels", NULL };
    for (int i = 0; names [i]; i++)
        at += (size_t) sprintf (view + at, " %s=%llu", names [i],
                                (unsigned long long) testmail_stat (probe, names [i]));
    testcheck_leave (&probe);
    return view;
}

//  Like ck_assert_str_eq, but shows only where long strings differ.
static void
s_same (const char *got, const char *want, const char *what)
{
    if (strcmp (got, want) == 0)
        return;
    size_t at = 0;
    while (got [at] && got [at] == want [at])
        at++;
    size_t from = at > 40 ? at - 40 : 0;
    ck_abort_msg ("%s differs at %zu: got ...%.120s, want ...%.120s", what, at,
                  got + from, want + from);
}

//  B's mail (without acknowledging), as "seq:body,..."
static char *
s_mail_of (testbroker_t *broker, const char *id, uint64_t *acked)
{
    testclient_t *client = testclient_new (testbroker_router (broker));
    pmsg_t *welcome = testclient_hello (client, id);
    EXPECT (welcome, PMSG_WELCOME);
    if (acked)
        *acked = pmsg_uint (welcome, "acked", 0);
    pmsg_destroy (&welcome);
    pmsg_t *reply = testclient_fetch (client, 0, 0);
    EXPECT (reply, PMSG_MAIL);
    char *out = testmail_listing (reply);
    pmsg_destroy (&reply);
    testcheck_leave (&client);
    return out;
}

//  A little of everything: registrations, direct, "all" and channel mail,
//  an acknowledgement, listens, state of several reducers, world moves.
static void
s_populate (testbroker_t *broker, int round)
{
    testclient_t *a = testcheck_agent (broker, "A");
    testclient_t *b = testcheck_agent (broker, "B");
    testclient_t *c = testcheck_agent (broker, "C");
    testmail_listen (c, "news");
    char body [64];
    for (int i = 0; i < 3; i++) {
        snprintf (body, sizeof body, "r%d-direct-%d", round, i);
        ck_assert_uint_gt (testmail_send (a, "B", false, body), 0);
    }
    snprintf (body, sizeof body, "r%d-news", round);
    ck_assert_uint_gt (testmail_send (a, "news", true, body), 0);
    snprintf (body, sizeof body, "r%d-all", round);
    ck_assert_uint_gt (testmail_send (a, "all", false, body), 0);
    //  B takes its first message.
    uint64_t last = 0;
    char out [1024];
    ck_assert_uint_gt (testmail_fetch (b, 0, 1, out, sizeof out, &last), 0);
    pmsg_t *reply = testclient_fetch (b, last, 1);
    EXPECT (reply, PMSG_MAIL);
    pmsg_destroy (&reply);
    char key [32];
    snprintf (key, sizeof key, "plain.%d", round);
    ck_assert_int_eq (s_write (a, "set", key, NULL, "value", 0, false), 0);
    if (round == 1)
        ck_assert_int_eq (s_write (a, "declare", "log", "append", NULL, 0, false), 0);
    ck_assert_int_eq (s_write (b, "update", "log", NULL, "[entry", 0, false), 0);
    ck_assert_int_eq (s_write (c, "update", "count", NULL, NULL, 5, true), 0);
    reply = testclient_call0 (a, PMSG_PERCEIVE);
    EXPECT (reply, PMSG_OBSERVATION);
    pmsg_destroy (&reply);
    penc_t *enc = testclient_begin (a, PMSG_ACT, 1);
    penc_kv_cstr (enc, "action", "forward");
    reply = testclient_call (a);
    EXPECT (reply, PMSG_OBSERVATION);
    pmsg_destroy (&reply);
    testcheck_leave (&a);
    testcheck_leave (&b);
    testcheck_leave (&c);
}

static void
s_restart_keeps_everything (int signum, const char *fsync)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    testbroker_t *broker = s_start (dir, fsync, NULL);
    s_populate (broker, 1);
    char *before = s_view (broker);
    uint64_t acked_before;
    char *mail_before = s_mail_of (broker, "B", &acked_before);
    char *news_before = s_mail_of (broker, "C", NULL);
    testbroker_signal (broker, signum);
    int rc = testbroker_wait (broker, 10000);
    ck_assert_int_eq (rc, signum == SIGKILL ? 128 + SIGKILL : 0);
    testbroker_stop (&broker);

    broker = s_start (dir, fsync, NULL);
    ck_assert (testbroker_log_contains (broker, "recovered"));
    char *after = s_view (broker);
    s_same (after, before, "view");
    uint64_t acked_after;
    char *mail_after = s_mail_of (broker, "B", &acked_after);
    s_same (mail_after, mail_before, "mail");
    ck_assert_uint_eq (acked_after, acked_before);
    char *news_after = s_mail_of (broker, "C", NULL);
    s_same (news_after, news_before, "news");
    //  C still listens to news: a new post reaches it.
    testclient_t *a = testcheck_agent (broker, "A");
    ck_assert_uint_gt (testmail_send (a, "news", true, "after"), 0);
    testcheck_leave (&a);
    char *news_more = s_mail_of (broker, "C", NULL);
    ck_assert_ptr_nonnull (strstr (news_more, ":after,"));
    testcheck_stop (&broker);
    free (before);
    free (after);
    free (mail_before);
    free (mail_after);
    free (news_before);
    free (news_after);
    free (news_more);
    free (dir);
    tproc_dir_destroy (&tmp);
}

START_TEST (test_restart_sigterm)
{
    s_restart_keeps_everything (SIGTERM, "everysec");
}
END_TEST

START_TEST (test_restart_sigkill_always)
{
    s_restart_keeps_everything (SIGKILL, "always");
}
END_TEST

//  ---------------------------------------------------------------------
//  Files

//  Offsets of the records of a journal file (magic 8 bytes, then
//  12-byte headers with a little-endian length first).
static size_t
s_records (const char *data, size_t size, size_t *offsets, size_t max)
{
    size_t count = 0, pos = 8;
    while (pos + 12 <= size && count < max) {
        const unsigned char *p = (const unsigned char *) data + pos;
        size_t len = p [0] | p [1] << 8 | p [2] << 16 | (size_t) p [3] << 24;
        offsets [count++] = pos;
        pos += 12 + len;
    }
    return count;
}

//  Read as an observer: registering a reader is a change, which a full
//  disk refuses; reading is not.
static bool
s_has_key (testbroker_t *broker, const char *key)
{
    testclient_t *probe = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (probe, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "Reader");
    penc_kv_bool (enc, "observe", true);
    pmsg_t *reply = testclient_call (probe);
    EXPECT (reply, PMSG_WELCOME);
    pmsg_destroy (&reply);
    enc = testclient_begin (probe, PMSG_SNAPSHOT, 1);
    penc_kv_cstr (enc, "prefix", key);
    reply = testclient_call (probe);
    EXPECT (reply, PMSG_STATE);
    bool found = testclient_array_size (reply, "entries") > 0;
    pmsg_destroy (&reply);
    testclient_destroy (&probe);
    return found;
}

//  A broker that must fail to start: its exit code and stderr.
static int
s_fail_start (const char *dir, const char *extra, char **err)
{
    tproc_t *proc = tproc_start ((const char *[]) { "parley-broker", "--router",
        "tcp://127.0.0.1:*", "--pub", "tcp://127.0.0.1:*", "--tap", "off",
        "--data-dir", dir, extra, NULL }, true, NULL);
    ck_assert_ptr_nonnull (proc);
    int rc = tproc_wait (proc, 20000);
    *err = strdup (tproc_err (proc));
    tproc_destroy (&proc);
    return rc;
}

//  The journal is cut at every byte of its last record (a WRITE of key
//  "last"): the broker starts each time, says how many bytes it dropped,
//  and has everything but that write; uncut, it has the write too.
START_TEST (test_torn_last_record)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    testbroker_t *broker = s_start (dir, "always", NULL);
    s_populate (broker, 1);
    testclient_t *a = testcheck_agent (broker, "A");
    ck_assert_int_eq (s_write (a, "set", "last", NULL, "torn?", 0, false), 0);
    testbroker_kill (&broker);
    testclient_destroy (&a);

    char path [4096];
    snprintf (path, sizeof path, "%s/log.1", dir);
    size_t size;
    char *log = testsuite_read_file (path, &size);
    size_t offsets [1024];
    size_t count = s_records (log, size, offsets, 1024);
    ck_assert_uint_gt (count, 10);
    //  A's HELLO came before the WRITE: the WRITE is the last record.
    size_t last = offsets [count - 1];
    for (size_t cut = last; cut <= size; cut++) {
        testsuite_write_file (path, log, cut);
        broker = s_start (dir, "always", NULL);
        ck_assert_msg (broker, "no start with the log cut at %zu", cut);
        bool dropped = testbroker_log_contains (broker, "torn last record");
        ck_assert_msg (dropped == (cut > last && cut < size), "cut at %zu of %zu: torn line %d",
                       cut, size, dropped);
        if (dropped) {
            char line [128];
            snprintf (line, sizeof line, "torn last record: %zu bytes dropped", cut - last);
            ck_assert_msg (testbroker_log_contains (broker, line), "no \"%s\"", line);
        }
        ck_assert_int_eq (s_has_key (broker, "last"), cut == size);
        ck_assert (s_has_key (broker, "plain.1"));
        testcheck_stop (&broker);
    }
    free (log);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  A flipped byte inside a middle record's payload, then inside a middle
//  record's header: the broker refuses to start and names file and
//  offset; --repair starts, skipping (payload) or cutting (header), and
//  says what was lost.
START_TEST (test_corrupt_middle_record)
{
    for (int in_header = 0; in_header < 2; in_header++) {
        tproc_dir_t *tmp = tproc_dir_new ();
        char *dir = tproc_dir_path (tmp, "data");
        testbroker_t *broker = s_start (dir, "always", NULL);
        s_populate (broker, 1);
        testcheck_stop (&broker);
        char path [4096];
        snprintf (path, sizeof path, "%s/log.1", dir);
        size_t size;
        char *log = testsuite_read_file (path, &size);
        size_t offsets [1024];
        size_t count = s_records (log, size, offsets, 1024);
        size_t victim = offsets [count / 2];
        log [victim + (in_header ? 1 : 14)] ^= 0x20;
        testsuite_write_file (path, log, size);
        char *err;
        int rc = s_fail_start (dir, NULL, &err);
        ck_assert_int_ne (rc, 0);
        char expect [4200];
        snprintf (expect, sizeof expect, "%s: corrupt record%s at offset %zu", path,
                  in_header ? " header" : "", victim);
        ck_assert_msg (strstr (err, expect), "no \"%s\" in: %s", expect, err);
        ck_assert_ptr_nonnull (strstr (err, "--repair"));
        free (err);
        broker = s_start2 (dir, "always", "--repair", NULL);
        ck_assert_ptr_nonnull (broker);
        ck_assert (testbroker_log_contains (broker, "--repair skipped 1 corrupt records"));
        testcheck_stop (&broker);
        //  Repaired for good: a plain start works now.
        broker = s_start (dir, "always", NULL);
        ck_assert_ptr_nonnull (broker);
        testcheck_stop (&broker);
        free (log);
        free (dir);
        tproc_dir_destroy (&tmp);
    }
}
END_TEST

START_TEST (test_second_broker_refused)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    testbroker_t *broker = s_start (dir, "everysec", NULL);
    char *err;
    int rc = s_fail_start (dir, NULL, &err);
    ck_assert_int_ne (rc, 0);
    ck_assert_msg (strstr (err, "is in use by another broker (pid"), "%s", err);
    free (err);
    testcheck_stop (&broker);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  Compaction: with a tiny threshold the log is folded into a snapshot
//  while traffic goes on; a restart from snapshot + log has everything.
START_TEST (test_compaction)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    testbroker_t *broker = s_start2 (dir, "everysec", "--compact-min-bytes", "4096");
    char *big = malloc (6001);
    memset (big, 'b', 6000);
    big [6000] = 0;
    for (int round = 1; round <= 3; round++) {
        s_populate (broker, round);
        //  Past --compact-min-bytes and the size of the last snapshot.
        testclient_t *w = testcheck_agent (broker, "W");
        ck_assert_int_eq (s_write (w, "set", "big", NULL, big, 0, false), 0);
        testcheck_leave (&w);
        //  The snapshot is written (and synced) by a child: on a busy disk
        //  that takes a while.
        int64_t deadline = pclock_mono_ms () + 30000;
        char line [64];
        snprintf (line, sizeof line, "snapshot.%d (", round + 1);
        while (!testbroker_log_contains (broker, line) && pclock_mono_ms () < deadline)
            pclock_sleep_ms (50);
        ck_assert_msg (testbroker_log_contains (broker, line), "no compaction %d", round);
    }
    //  Some more after the last snapshot, then a crash.
    s_populate (broker, 4);
    char *before = s_view (broker);
    char *mail_before = s_mail_of (broker, "B", NULL);
    testbroker_kill (&broker);
    //  Only the newest snapshot and its log are left.
    char path [4096];
    struct stat st;
    snprintf (path, sizeof path, "%s/snapshot.4", dir);
    ck_assert_int_eq (stat (path, &st), 0);
    snprintf (path, sizeof path, "%s/snapshot.3", dir);
    ck_assert_int_ne (stat (path, &st), 0);
    snprintf (path, sizeof path, "%s/log.3", dir);
    ck_assert_int_ne (stat (path, &st), 0);
    broker = s_start (dir, "everysec", NULL);
    char *after = s_view (broker);
    s_same (after, before, "view");
    char *mail_after = s_mail_of (broker, "B", NULL);
    s_same (mail_after, mail_before, "mail");
    testcheck_stop (&broker);
    free (before);
    free (after);
    free (mail_before);
    free (mail_after);
    free (big);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  A full disk: writes get STORAGE and change nothing, reads go on; once
//  space returns writes work again, and a restart has exactly the writes
//  that were acknowledged. Root fills a real 1 MiB tmpfs; otherwise the
//  broker's test hook (PARLEY_TEST_JOURNAL_FULL: appends fail with ENOSPC
//  while that file exists) stands in for it.
static void
s_disk_full (bool real)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *mnt = tproc_dir_path (tmp, "small");
    mkdir (mnt, 0700);
    char flag [4200];
    snprintf (flag, sizeof flag, "%s/full", tproc_dir_name (tmp));
    if (real) {
        //  In a mount namespace of this test process (and the broker it
        //  starts): the tmpfs goes away with them even if the test fails.
        bool mounted = unshare (CLONE_NEWNS) == 0
                    //  Source and type are ignored for a propagation
                    //  change; named so valgrind sees no NULL string.
                    && mount ("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0
                    && mount ("tmpfs", mnt, "tmpfs", 0, "size=1m") == 0;
        if (!mounted) {
            fprintf (stderr, "test_disk_full: cannot mount a tmpfs here (%s); "
                     "the injected failures below stand in\n", strerror (errno));
            real = false;
        }
    }
    if (!real)
        setenv ("PARLEY_TEST_JOURNAL_FULL", flag, 1);
    char dir [4200], filler [4200];
    snprintf (dir, sizeof dir, "%s/data", mnt);
    snprintf (filler, sizeof filler, "%s/filler", mnt);
    testbroker_t *broker = s_start (dir, "always", NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    ck_assert_int_eq (s_write (a, "set", "before", NULL, "ok", 0, false), 0);
    //  Fill the disk.
    FILE *file = fopen (real ? filler : flag, "wb");
    ck_assert_ptr_nonnull (file);
    char block [4096];
    memset (block, 'f', sizeof block);
    while (real && fwrite (block, 1, sizeof block, file) == sizeof block && fflush (file) == 0)
        ;
    fclose (file);
    //  The log's last page may still take a few small records.
    int written = 0, rc = 0;
    char key [32];
    while (written < 10000 && (rc = s_write (a, "set", (snprintf (key, sizeof key, "during.%d",
                                             written), key), NULL, "x", 0, false)) == 0)
        written++;
    ck_assert_int_eq (rc, -PERR_STORAGE);
    ck_assert_uint_ge (testmail_stat (a, "storage_errors"), 1);
    //  Nothing half applied; reads work.
    ck_assert (!s_has_key (broker, key));
    ck_assert (s_has_key (broker, "before"));
    pmsg_t *reply = testclient_fetch (a, 0, 0);
    EXPECT (reply, PMSG_MAIL);
    pmsg_destroy (&reply);
    //  Space returns: writes work again.
    unlink (real ? filler : flag);
    ck_assert_int_eq (s_write (a, "set", "after", NULL, "ok", 0, false), 0);
    testcheck_leave (&a);
    testbroker_kill (&broker);
    broker = s_start (dir, "always", NULL);
    ck_assert (s_has_key (broker, "before"));
    ck_assert (!s_has_key (broker, key));
    ck_assert (s_has_key (broker, "after"));
    if (written > 0) {
        char ok [32];
        snprintf (ok, sizeof ok, "during.%d", written - 1);
        ck_assert (s_has_key (broker, ok));
    }
    testcheck_stop (&broker);
    if (real)
        umount2 (mnt, MNT_DETACH);
    unsetenv ("PARLEY_TEST_JOURNAL_FULL");
    free (mnt);
    tproc_dir_destroy (&tmp);
}

START_TEST (test_disk_full)
{
    s_disk_full (true);
}
END_TEST

START_TEST (test_write_failures_injected)
{
    s_disk_full (false);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("durable");
    TCase *tc = tcase_create ("durable");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_restart_sigterm);
    tcase_add_test (tc, test_restart_sigkill_always);
    tcase_add_test (tc, test_torn_last_record);
    tcase_add_test (tc, test_corrupt_middle_record);
    tcase_add_test (tc, test_second_broker_refused);
    tcase_add_test (tc, test_compaction);
    tcase_add_test (tc, test_disk_full);
    tcase_add_test (tc, test_write_failures_injected);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
