// SPDX-License-Identifier: MIT
/*  check_durable_disk - the real broker's journal against what disks and
    crashes do to its files:
    - a power cut under --fsync always (the fault shim of tests/lib/tfault.h
      keeps only what was fdatasynced, then a zero-filled tail): every
      acknowledged write survives, across a compaction;
    - kill -9 while a compaction child writes (held back by the test hook
      PARLEY_TEST_COMPACT_DELAY_MS): the child has closed the LOCK and the
      sockets and dies with the broker, so the restart is up within a
      second, removes the temporary files left behind, and has everything;
    - a failed sync under --fsync everysec makes parley-ctl health exit 1
      until the journal healed;
    - an answer held for a failed journal, to a connection that has gone
      while its agent id came back on a new one, leaves the new session
      alone;
    - a data directory of the journal's first format (zlib CRC-32,
      tests/journal-v1) is recovered whole, appended to in its format, and
      compacted into today's;
    - an event of a change the broker made while it released a turn's
      answers (a turn holder found gone: the workflow fails) waits for
      that change's own sync under --fsync always;
    - a snapshot whose workflow runs with no role holding the turn (its
      own record, or a checkpoint RESUME goes back to) is refused, rather
      than taken in and crashing the first HANDOVER;
    - a record whose msgpack counts claim more than its bytes hold (sound
      checksums: a hostile or miswritten file) is skipped without the
      broker reserving what the counts claim; so is an operation asking
      for limits no flag allows (an agent table of 2^61 entries).
*/
#include <check.h>
#include <czmq.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/jfile.h"
#include "pclock.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testflow.h"
#include "lib/testclient.h"
#include "lib/testmail.h"
#include "lib/testsuite.h"
#include "lib/tfault.h"
#include "lib/tpid.h"
#include "lib/tproc.h"

static testbroker_t *
s_start (const char *dir, const char *fsync, const char *extra, const char *value)
{
    const char *args [] = { "--data-dir", dir, "--fsync", fsync, extra, value, NULL };
    return testcheck_start (args);
}

//  The broker started on `dir` under the fault shim, which watches that
//  directory through `fault_p` (made here).
static testbroker_t *
s_start_faulty (const char *dir, tfault_t **fault_p, const char *fsync, const char *extra,
                const char *value)
{
    *fault_p = tfault_new (dir);
    ck_assert_ptr_nonnull (*fault_p);
    tfault_setenv (*fault_p);
    testbroker_t *broker = s_start (dir, fsync, extra, value);
    tfault_unsetenv (*fault_p);
    return broker;
}

//  After a kill -9: a power cut (what was not fdatasynced replaced by a
//  zero-filled tail), then the broker started again under --fsync always.
static testbroker_t *
s_cut_and_restart (tfault_t *fault, const char *dir)
{
    char why [512];
    ck_assert_msg (tfault_cut (fault, dir, TFAULT_TAIL_ZEROS, 4096, why, sizeof why) == 0,
                   "%s", why);
    return s_start (dir, "always", NULL, NULL);
}

//  A WRITE of `key` sent, its reply not read.
static void
s_begin_set (testclient_t *client, const char *key, const char *value)
{
    penc_t *enc = testclient_begin_set (client, key);
    penc_kv_cstr (enc, "value", value);
    ck_assert_int_eq (testclient_send (client), 0);
}

//  WRITE of one `set` to a string: 0, or the ERROR code negated.
static int
s_set (testclient_t *client, const char *key, const char *value)
{
    s_begin_set (client, key, value);
    pmsg_t *reply = testclient_recv (client, TESTCLIENT_TIMEOUT_MS);
    int rc = reply && pmsg_type (reply) == PMSG_WRITTEN ? 0 : -testclient_error_code (reply);
    pmsg_destroy (&reply);
    return rc;
}

//  The string value of `key`, or NULL (caller frees).
static char *
s_value (testbroker_t *broker, const char *key)
{
    testclient_t *probe = testcheck_agent (broker, "Reader");
    penc_t *enc = testclient_begin (probe, PMSG_SNAPSHOT, 1);
    penc_kv_cstr (enc, "prefix", key);
    pmsg_t *reply = testclient_call (probe);
    EXPECT (reply, PMSG_STATE);
    char *value = NULL;
    for (size_t i = 0; i < testclient_array_size (reply, "entries"); i++) {
        const msgpack_object *entry = testclient_array_at (reply, "entries", i);
        const msgpack_object *text = pobj_get (entry, "value");
        if (pobj_streq (pobj_get (entry, "key"), key) && text && text->type == MSGPACK_OBJECT_STR)
            value = strndup (text->via.str.ptr, text->via.str.size);
    }
    pmsg_destroy (&reply);
    testcheck_leave (&probe);
    return value;
}

static void
s_expect_value (testbroker_t *broker, const char *key, const char *want)
{
    char *value = s_value (broker, key);
    ck_assert_msg (value && strcmp (value, want) == 0, "%s: got %s, want %s", key,
                   value ? value : "(none)", want);
    free (value);
}

//  `id`'s queued mail, as "seq:body,...", without acknowledging it.
static char *
s_mail_of (testbroker_t *broker, const char *id)
{
    testclient_t *client = testcheck_agent (broker, id);
    pmsg_t *reply = testclient_fetch (client, 0, 0);
    EXPECT (reply, PMSG_MAIL);
    char *out = testmail_listing (reply);
    pmsg_destroy (&reply);
    testcheck_leave (&client);
    return out;
}

//  The counters a client can see, as one line.
static char *
s_counters (testbroker_t *broker)
{
    testclient_t *probe = testcheck_agent (broker, "Probe");
    char *line = calloc (1, 1024);
    size_t at = 0;
    const char *names [] = { "agents", "queued", "queued_bytes", "mail_seq", "state_keys", NULL };
    for (int i = 0; names [i]; i++)
        at += (size_t) snprintf (line + at, 1024 - at, "%s=%llu ", names [i],
                                 (unsigned long long) testmail_stat (probe, names [i]));
    testcheck_leave (&probe);
    return line;
}

//  Waits for `text` in the broker's log (30 s).
static void
s_wait_log (testbroker_t *broker, const char *text)
{
    int64_t deadline = pclock_mono_ms () + 30000;
    while (!testbroker_log_contains (broker, text) && pclock_mono_ms () < deadline)
        pclock_sleep_ms (20);
    ck_assert_msg (testbroker_log_contains (broker, text), "no \"%s\" in the log", text);
}

//  ---------------------------------------------------------------------

START_TEST (test_power_cut_always)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    tfault_t *fault = NULL;
    testbroker_t *broker = s_start_faulty (dir, &fault, "always", "--compact-min-bytes", "16384");
    testclient_t *a = testcheck_agent (broker, "A");
    char key [32], value [64];
    int acked = 0;
    for (int i = 0; i < 400; i++) {
        snprintf (key, sizeof key, "cut.%d", i % 50);
        snprintf (value, sizeof value, "%d-%0*d", i, 40, i);
        ck_assert_int_eq (s_set (a, key, value), 0);
        acked = i;
        //  Halfway, a compaction (the log passed 16 KiB).
        if (i == 200)
            s_wait_log (broker, "compacted into");
    }
    testbroker_kill (&broker);
    testclient_destroy (&a);
    broker = s_cut_and_restart (fault, dir);
    //  The last value acknowledged for each key.
    for (int k = 0; k < 50; k++) {
        int last = acked - ((acked - k) % 50 + 50) % 50;
        snprintf (key, sizeof key, "cut.%d", k);
        snprintf (value, sizeof value, "%d-%0*d", last, 40, last);
        s_expect_value (broker, key, value);
    }
    testcheck_stop (&broker);
    tfault_destroy (&fault);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  A failed fdatasync under --fsync always: nothing is acknowledged until
//  the journal healed (a snapshot of the state in memory, synced), and
//  what was acknowledged then survives a power cut.
START_TEST (test_failed_sync_holds_answers)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    tfault_t *fault = NULL;
    testbroker_t *broker = s_start_faulty (dir, &fault, "always", NULL, NULL);
    testclient_t *a = testcheck_agent (broker, "A");
    ck_assert_int_eq (s_set (a, "before", "1"), 0);
    //  Every sync fails from now on: the WRITE is applied but not on disk.
    tfault_fail_sync (fault, -1);
    s_begin_set (a, "during", "2");
    pmsg_t *reply = testclient_recv (a, 2000);
    ck_assert_msg (!reply, "answered after a failed sync: %s", testclient_describe (reply));
    s_wait_log (broker, "nothing more is answered until");
    //  The disk works again: the healing snapshot, then the held answer.
    tfault_fail_sync (fault, 0);
    reply = testclient_recv (a, 20000);
    EXPECT (reply, PMSG_WRITTEN);
    pmsg_destroy (&reply);
    s_wait_log (broker, "sound again");
    ck_assert_int_eq (s_set (a, "after", "3"), 0);
    ck_assert_int_ge (tfault_failed_syncs (fault), 1);
    //  A power cut now: everything acknowledged is there.
    testbroker_kill (&broker);
    testclient_destroy (&a);
    broker = s_cut_and_restart (fault, dir);
    s_expect_value (broker, "before", "1");
    s_expect_value (broker, "during", "2");
    s_expect_value (broker, "after", "3");
    testcheck_stop (&broker);
    tfault_destroy (&fault);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  An answer held for a failed journal belongs to the connection that
//  asked, not to the agent id: when that connection has gone and the id
//  came back on a new one meanwhile, the held answer is unroutable and
//  the new session is left alone (not ended as "expired", not sent the
//  old connection's answer).
START_TEST (test_held_answer_after_reconnect)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    tfault_t *fault = NULL;
    testbroker_t *broker = s_start_faulty (dir, &fault, "always", NULL, NULL);
    char token [TESTFLOW_TOKEN] = "";
    testclient_t *first = testflow_hello (testclient_new (testbroker_router (broker)), "A",
                                          NULL, token);
    ck_assert_str_ne (token, "");
    tfault_fail_sync (fault, -1);
    s_begin_set (first, "held", "1");
    s_wait_log (broker, "nothing more is answered until");
    testclient_destroy (&first);
    //  The same id on a new connection, with its resume token; its answer
    //  is held too, behind the first connection's.
    testclient_t *second = testclient_new (testbroker_router (broker));
    penc_t *enc = testclient_begin (second, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "A");
    penc_kv_cstr (enc, "token", token);
    ck_assert_int_eq (testclient_send (second), 0);
    pclock_sleep_ms (300);
    tfault_fail_sync (fault, 0);
    pmsg_t *reply = testclient_recv (second, 20000);
    ck_assert_ptr_nonnull (reply);
    bool welcomed = pmsg_type (reply) == PMSG_WELCOME;
    pmsg_destroy (&reply);
    s_wait_log (broker, "sound again");
    if (!welcomed)
        testflow_hello (second, "A", NULL, token);
    //  The session on the new connection works and nothing ended it.
    ck_assert_int_eq (s_set (second, "after", "2"), 0);
    reply = testclient_call0 (second, PMSG_HEARTBEAT);
    ck_assert_msg (reply && pmsg_type (reply) != PMSG_ERROR, "%s", testclient_describe (reply));
    pmsg_destroy (&reply);
    ck_assert_msg (!testbroker_log_contains (broker, "expired"), "the new session was ended");
    testcheck_leave (&second);
    testcheck_stop (&broker);
    tfault_destroy (&fault);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  parley-ctl health against `broker`: its exit status, its line in `out`.
static int
s_health (testbroker_t *broker, char *out, size_t size)
{
    tproc_t *ctl = tproc_run ((const char *[]) { "parley-ctl", "--broker",
                                                 testbroker_router (broker), "--timeout-ms",
                                                 "5000", "health", NULL }, true);
    ck_assert_ptr_nonnull (ctl);
    int status = tproc_status (ctl);
    snprintf (out, size, "%s%s", tproc_out (ctl), tproc_err (ctl));
    tproc_destroy (&ctl);
    return status;
}

//  A failed background sync under --fsync everysec: the broker still
//  answers (what it acknowledged was never promised synced yet), refuses
//  changes, and says so; parley-ctl health reports it unhealthy until the
//  healing snapshot is down, then healthy again, and changes go through.
START_TEST (test_failed_sync_makes_health_fail)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    tfault_t *fault = NULL;
    testbroker_t *broker = s_start_faulty (dir, &fault, "everysec", NULL, NULL);
    char out [1024];
    ck_assert_msg (s_health (broker, out, sizeof out) == 0, "%s", out);
    ck_assert_msg (strstr (out, "healthy"), "%s", out);
    testclient_t *a = testcheck_agent (broker, "A");
    tfault_fail_sync (fault, -1);
    ck_assert_int_eq (s_set (a, "before", "1"), 0);
    s_wait_log (broker, "the journal is unhealthy");
    int status = s_health (broker, out, sizeof out);
    ck_assert_msg (status == 1, "exit %d: %s", status, out);
    ck_assert_msg (strstr (out, "unhealthy: the journal failed a write or sync"), "%s", out);
    ck_assert_msg (s_set (a, "during", "2") != 0, "a change accepted by an unhealthy journal");
    tfault_fail_sync (fault, 0);
    s_wait_log (broker, "the journal is healthy again");
    status = s_health (broker, out, sizeof out);
    ck_assert_msg (status == 0, "exit %d: %s", status, out);
    ck_assert_int_eq (s_set (a, "after", "3"), 0);
    testcheck_leave (&a);
    testcheck_stop (&broker);
    tfault_destroy (&fault);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

START_TEST (test_kill_during_compaction)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    setenv ("PARLEY_TEST_COMPACT_DELAY_MS", "60000", 1);
    testbroker_t *broker = s_start (dir, "always", "--compact-min-bytes", "4096");
    unsetenv ("PARLEY_TEST_COMPACT_DELAY_MS");
    testclient_t *b = testcheck_agent (broker, "B");
    testcheck_leave (&b);
    testclient_t *a = testcheck_agent (broker, "A");
    char key [32], body [32];
    for (int i = 0; i < 10; i++) {
        snprintf (key, sizeof key, "k.%d", i);
        ck_assert_int_eq (s_set (a, key, key), 0);
        snprintf (body, sizeof body, "mail %d", i);
        ck_assert_uint_gt (testmail_send (a, "B", false, body), 0);
    }
    char *big = malloc (6001);
    memset (big, 'b', 6000);
    big [6000] = 0;
    ck_assert_int_eq (s_set (a, "big", big), 0);
    //  "compaction started: snapshot.2 written by pid N"
    const char *line = "snapshot.2 written by pid ";
    s_wait_log (broker, line);
    char logpath [4200];
    snprintf (logpath, sizeof logpath, "%s/broker.log", testbroker_dir (broker));
    char *log = testsuite_read_file (logpath, NULL);
    pid_t child = (pid_t) atoi (strstr (log, line) + strlen (line));
    free (log);
    ck_assert_int_gt (child, 0);
    //  After the fork, in the new log.
    ck_assert_int_eq (s_set (a, "after", "the fork"), 0);
    testcheck_leave (&a);
    int count = 0;
    int64_t deadline = pclock_mono_ms () + 5000;
    while ((count = tpid_fds (child, NULL, 0)) != 3 && pclock_mono_ms () < deadline)
        pclock_sleep_ms (10);
    ck_assert_msg (count == 3, "the compaction child holds %d descriptors", count);
    char *counters = s_counters (broker);
    char *mail = s_mail_of (broker, "B");
    //  A leftover of an earlier compaction.
    char stale [4200];
    snprintf (stale, sizeof stale, "%s/snapshot.7.tmp", dir);
    ck_assert (tproc_write_file (stale, "half a snapshot"));
    int64_t killed = pclock_mono_ms ();
    testbroker_kill (&broker);
    broker = s_start (dir, "always", NULL, NULL);
    int64_t took = pclock_mono_ms () - killed;
    ck_assert_msg (took < 1000, "the restart took %lld ms", (long long) took);
    ck_assert (testbroker_log_contains (broker, "snapshot.7.tmp (left by a compaction"));
    struct stat st;
    ck_assert_int_ne (stat (stale, &st), 0);
    deadline = pclock_mono_ms () + 5000;
    while (!tpid_dead (child) && pclock_mono_ms () < deadline)
        pclock_sleep_ms (10);
    ck_assert_msg (tpid_dead (child), "the compaction child %d outlived the broker", (int) child);
    //  Everything is there (the probes' own HELLO and BYE included).
    char *counters_after = s_counters (broker);
    ck_assert_str_eq (counters_after, counters);
    char *mail_after = s_mail_of (broker, "B");
    ck_assert_str_eq (mail_after, mail);
    for (int i = 0; i < 10; i++) {
        snprintf (key, sizeof key, "k.%d", i);
        s_expect_value (broker, key, key);
    }
    s_expect_value (broker, "big", big);
    s_expect_value (broker, "after", "the fork");
    testcheck_stop (&broker);
    free (counters);
    free (counters_after);
    free (mail);
    free (mail_after);
    free (big);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

static void
s_magic (const char *path, const char *want)
{
    size_t size;
    char *data = testsuite_read_file (path, &size);
    ck_assert_uint_ge (size, 8);
    ck_assert_msg (memcmp (data, want, 8) == 0, "%s: magic %.8s, want %s", path, data, want);
    free (data);
}

static void
s_expect_v1 (testbroker_t *broker)
{
    char key [32], value [32];
    for (int i = 0; i < 10; i++) {
        snprintf (key, sizeof key, "v1.key.%d", i);
        snprintf (value, sizeof value, "value %d", i);
        s_expect_value (broker, key, value);
    }
    s_expect_value (broker, "v1.after", "after the snapshot");
    char *big = s_value (broker, "v1.big");
    ck_assert (big && strlen (big) == 6000);
    free (big);
    char *mail = s_mail_of (broker, "B");
    ck_assert_str_eq (mail, "1:v1 mail 0,2:v1 mail 1,3:v1 mail 2,4:v1 mail 3,5:v1 mail 4,"
                            "6:v1 mail after,");
    free (mail);
}

START_TEST (test_old_format_recovered)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    ck_assert_int_eq (mkdir (dir, 0700), 0);
    const char *files [] = { "snapshot.2", "log.2" };
    char path [4200];
    for (int i = 0; i < 2; i++) {
        char name [64];
        snprintf (name, sizeof name, "journal-v1/%s", files [i]);
        size_t size;
        char *data = testsuite_read_test_file (name, &size);
        snprintf (path, sizeof path, "%s/%s", dir, files [i]);
        testsuite_write_file (path, data, size);
        free (data);
    }
    testbroker_t *broker = s_start (dir, "always", NULL, NULL);
    s_expect_v1 (broker);
    //  A new write lands in the old log, in its format.
    testclient_t *a = testcheck_agent (broker, "A");
    ck_assert_int_eq (s_set (a, "v2.key", "new"), 0);
    testcheck_leave (&a);
    testbroker_kill (&broker);
    snprintf (path, sizeof path, "%s/log.2", dir);
    s_magic (path, JFILE_MAGIC_V1);
    broker = s_start (dir, "always", "--compact-min-bytes", "4096");
    s_expect_v1 (broker);
    s_expect_value (broker, "v2.key", "new");
    //  The log outgrows the snapshot: compaction, today's format after.
    char *big = malloc (8001);
    memset (big, 'c', 8000);
    big [8000] = 0;
    a = testcheck_agent (broker, "A");
    ck_assert_int_eq (s_set (a, "v2.big", big), 0);
    testcheck_leave (&a);
    free (big);
    s_wait_log (broker, "snapshot.3 (");
    testcheck_stop (&broker);
    snprintf (path, sizeof path, "%s/snapshot.3", dir);
    s_magic (path, JFILE_MAGIC);
    snprintf (path, sizeof path, "%s/log.3", dir);
    s_magic (path, JFILE_MAGIC);
    broker = s_start (dir, "always", NULL, NULL);
    s_expect_v1 (broker);
    s_expect_value (broker, "v2.key", "new");
    testcheck_stop (&broker);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  A scenario whose workflow has one role, `worker` (caller frees).
static char *
s_worker_scenario (tproc_dir_t *tmp)
{
    const char *files [][2] = {
        { "scenario.yaml", "name: holder\nworld: none\nstate:\n"
                           "  work: { reducer: append, value: [] }\n"
                           "workflow:\n  entry: worker\n" },
        { "roles/worker.yaml", "role: worker\ngoal: work\nactions:\n  handover: [worker]\n" },
    };
    testflow_write (tmp, "scenario", files, 2);
    return tproc_dir_path (tmp, "scenario");
}

//  One request on a raw DEALER (its reply is not read).
static void
s_raw_request (zsock_t *dealer, pmsg_type_t type, const char *agent)
{
    penc_t enc;
    penc_init (&enc);
    penc_begin (&enc, type, 1, agent ? 2 : 0);
    if (agent) {
        penc_kv_cstr (&enc, "agent", agent);
        penc_key (&enc, "caps");
        msgpack_pack_array (penc_packer (&enc), 1);
        penc_cstr (&enc, "role:worker");
    }
    ck_assert_int_ge (zmq_send (zsock_resolve (dealer), penc_data (&enc), penc_size (&enc), 0),
                      0);
    penc_fini (&enc);
}

//  The next event of `topic` within `timeout_ms` (the others dropped).
static bool
s_event (testsub_t *sub, const char *topic, int timeout_ms)
{
    int64_t deadline = pclock_mono_ms () + timeout_ms;
    char got [64];
    while (pclock_mono_ms () < deadline) {
        pmsg_t *event = testsub_recv (sub, got, sizeof got, 100);
        bool match = event && streq (got, topic);
        pmsg_destroy (&event);
        if (match)
            return true;
    }
    return false;
}

//  The turn holder's connection is gone when the replies to its last
//  requests are released (the broker was stopped while the client sent
//  them and closed): the broker finds them unroutable there and ends the
//  session, which fails the workflow (no other worker). That failure's
//  event must not leave before its record is synced: with every sync
//  failing, it waits (the journal heals once syncs work again). Whether
//  libzmq has seen the connection end by the time the replies go is up
//  to its I/O thread: the test tries again (another holder, the
//  workflow resumed) until the broker's log shows a reply was unroutable.
START_TEST (test_event_of_a_release_waits_for_its_sync)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    char *scenario = s_worker_scenario (tmp);
    tfault_t *fault = NULL;
    testbroker_t *broker = s_start_faulty (dir, &fault, "always", "--scenario", scenario);
    ck_assert_ptr_nonnull (broker);
    testsub_t *sub = testcheck_sub (broker, "workflow.");
    testclient_t *admin = testcheck_agent (broker, "Admin");
    bool unroutable = false;
    for (int attempt = 0; attempt < 20 && !unroutable; attempt++) {
        char id [16], text [128];
        snprintf (id, sizeof id, "W%d", attempt);
        if (attempt > 0) {
            penc_t *enc = testclient_begin (admin, PMSG_RESUME, 1);
            penc_kv_uint (enc, "number", 0);
            pmsg_t *reply = testclient_call (admin);
            EXPECT (reply, PMSG_WORKFLOW_INFO);
            pmsg_destroy (&reply);
        }
        zsock_t *holder = zsock_new_dealer (testbroker_router (broker));
        ck_assert_ptr_nonnull (holder);
        s_raw_request (holder, PMSG_HELLO, id);
        zmsg_t *welcome = zmsg_recv (holder);
        ck_assert_ptr_nonnull (welcome);
        zmsg_destroy (&welcome);
        ck_assert_msg (s_event (sub, "workflow.turn", 10000), "no turn event for %s", id);

        //  While the broker is stopped: requests, and the connection
        //  closed once they are in the kernel's hands.
        testbroker_signal (broker, SIGSTOP);
        tfault_fail_sync (fault, -1);
        for (int i = 0; i < 200; i++)
            s_raw_request (holder, PMSG_HEARTBEAT, NULL);
        zsock_set_linger (holder, 5000);
        zsock_destroy (&holder);
        testbroker_signal (broker, SIGCONT);
        snprintf (text, sizeof text, "the turn holder %s (role worker)", id);
        s_wait_log (broker, text);
        snprintf (text, sizeof text, "reply to %s not sent", id);
        unroutable = testbroker_log_contains (broker, text);
        if (unroutable) {
            char topic [64];
            pmsg_t *event = testsub_recv (sub, topic, sizeof topic, 1000);
            ck_assert_msg (!event, "%s published while its record cannot be synced", topic);
        }
        //  Syncs work again: the journal heals, the event leaves.
        tfault_fail_sync (fault, 0);
        ck_assert_msg (s_event (sub, "workflow.failed", 20000), "no failed event after healing");
    }
    ck_assert_msg (unroutable, "no reply to a gone holder was ever unroutable");
    testcheck_leave (&admin);
    testsub_destroy (&sub);
    testcheck_stop (&broker);
    tfault_destroy (&fault);
    free (scenario);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  The snapshot file of a data directory (caller frees).
static char *
s_snapshot_path (const char *dir)
{
    DIR *d = opendir (dir);
    ck_assert_ptr_nonnull (d);
    char *found = NULL;
    struct dirent *entry;
    while ((entry = readdir (d)))
        if (strncmp (entry->d_name, "snapshot.", 9) == 0 && !strstr (entry->d_name, "tmp")) {
            free (found);
            size_t size = strlen (dir) + strlen (entry->d_name) + 2;
            found = malloc (size);
            snprintf (found, size, "%s/%s", dir, entry->d_name);
        }
    closedir (d);
    ck_assert_msg (found, "no snapshot in %s", dir);
    return found;
}

typedef struct {
    jfile_t *out;
    int kind;                   //  records of this kind get item `index`
    uint64_t number;            //  replaced when item 2 is this (kind 17) or always
    uint32_t index;
    const char *text;           //  by this str
} s_rewrite_t;

static int
s_rewrite_record (const void *payload, size_t size, void *arg)
{
    s_rewrite_t *rw = arg;
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    ck_assert (msgpack_unpack_next (&unpacked, payload, size, NULL) == MSGPACK_UNPACK_SUCCESS);
    const msgpack_object *root = &unpacked.data;
    const msgpack_object *items = root->via.array.ptr;
    uint32_t count = root->via.array.size;
    bool match = items [0].via.u64 == (uint64_t) rw->kind && rw->index < count
              && (rw->kind != 17 || (count == 8 && items [2].via.u64 == rw->number));
    msgpack_sbuffer buf;
    msgpack_sbuffer_init (&buf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buf, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, count);
    for (uint32_t i = 0; i < count; i++)
        if (match && i == rw->index)
            msgpack_pack_str_with_body (&pk, rw->text, strlen (rw->text));
        else
            msgpack_pack_object (&pk, items [i]);
    int rc = jfile_append (rw->out, buf.data, buf.size);
    msgpack_sbuffer_destroy (&buf);
    msgpack_unpacked_destroy (&unpacked);
    return rc;
}

//  Copies the data directory `from` into `to` with one field of the
//  snapshot's records of `kind` replaced by `text`.
static void
s_copy_rewritten (const char *from, const char *to, int kind, uint64_t number, uint32_t index,
                  const char *text)
{
    ck_assert_int_eq (mkdir (to, 0700), 0);
    DIR *d = opendir (from);
    ck_assert_ptr_nonnull (d);
    struct dirent *entry;
    char src [4200], dst [4200], why [256];
    while ((entry = readdir (d))) {
        if (strncmp (entry->d_name, "log.", 4) != 0)
            continue;
        snprintf (src, sizeof src, "%s/%s", from, entry->d_name);
        snprintf (dst, sizeof dst, "%s/%s", to, entry->d_name);
        size_t size;
        char *data = testsuite_read_file (src, &size);
        testsuite_write_file (dst, data, size);
        free (data);
    }
    closedir (d);
    char *snapshot = s_snapshot_path (from);
    snprintf (dst, sizeof dst, "%s/%s", to, strrchr (snapshot, '/') + 1);
    s_rewrite_t rw = { .kind = kind, .number = number, .index = index, .text = text };
    rw.out = jfile_open (dst, why, sizeof why);
    ck_assert_msg (rw.out, "%s", why);
    jfile_report_t report;
    ck_assert_int_eq (jfile_scan (snapshot, false, s_rewrite_record, &rw, &report, why,
                                  sizeof why), JFILE_OK);
    ck_assert_int_eq (jfile_sync (rw.out), 0);
    jfile_destroy (&rw.out);
    free (snapshot);
}

//  A workflow in progress always has a role holding the turn: a snapshot
//  whose workflow record names none is damaged (refused at recovery), and
//  a checkpoint whose holder is not a role of the scenario (one changed
//  since) is not gone back to. Either, taken in, made the next HANDOVER
//  read the holder's name through NULL.
START_TEST (test_workflow_without_holder_refused)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    char *scenario = s_worker_scenario (tmp);
    const char *args [] = { "--data-dir", dir, "--fsync", "always", "--scenario", scenario,
                            "--compact-min-bytes", "4096", NULL };
    testbroker_t *broker = testcheck_start (args);
    //  The workflow begins (checkpoint 1: in progress, worker holds).
    testclient_t *worker = testflow_agent (broker, "W", "worker");
    char *big = malloc (5001);
    memset (big, 'b', 5000);
    big [5000] = 0;
    ck_assert_int_eq (s_set (worker, "big", big), 0);
    free (big);
    s_wait_log (broker, "compacted into");
    testcheck_leave (&worker);
    testcheck_stop (&broker);

    //  The workflow's own record with no holder: recovery refuses it.
    char *damaged = tproc_dir_path (tmp, "no-holder");
    s_copy_rewritten (dir, damaged, 16, 0, 2, "");
    const char *inspect [] = { "parley-broker", "--data-dir", damaged, "--scenario", scenario,
                               "--dump-state", "-", NULL };
    tproc_t *proc = tproc_run (inspect, true);
    ck_assert_msg (tproc_status (proc) != 0, "a workflow in progress without a holder was "
                   "recovered");
    ck_assert_msg (strstr (tproc_err (proc), "names no holder"), "%s", tproc_err (proc));
    tproc_destroy (&proc);
    free (damaged);

    //  Checkpoint 1's holder not a role of the scenario: RESUME refuses it,
    //  and the workflow goes on (a HANDOVER is answered).
    char *renamed = tproc_dir_path (tmp, "renamed");
    s_copy_rewritten (dir, renamed, 17, 1, 6, "retired");
    const char *again [] = { "--data-dir", renamed, "--fsync", "always", "--scenario", scenario,
                             NULL };
    broker = testcheck_start (again);
    worker = testflow_agent (broker, "W", "worker");
    penc_t *enc = testclient_begin (worker, PMSG_RESUME, 1);
    penc_kv_uint (enc, "number", 1);
    pmsg_t *reply = testclient_call (worker);
    ck_assert_int_eq (testclient_error_code (reply), PERR_BAD_FIELD);
    pmsg_destroy (&reply);
    enc = testclient_begin (worker, PMSG_HANDOVER, 1);
    penc_kv_cstr (enc, "next", "worker");
    reply = testclient_call (worker);
    ck_assert_msg (reply, "no answer to HANDOVER");
    pmsg_destroy (&reply);
    testcheck_leave (&worker);
    testcheck_stop (&broker);
    free (renamed);
    free (scenario);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

//  A data directory `dir` (made here) whose log.1 holds one record.
static void
s_write_log (const char *dir, const void *record, size_t size)
{
    ck_assert_int_eq (mkdir (dir, 0700), 0);
    char path [4200], why [256];
    snprintf (path, sizeof path, "%s/log.1", dir);
    jfile_t *log = jfile_open (path, why, sizeof why);
    ck_assert_msg (log, "%s", why);
    ck_assert_int_eq (jfile_append (log, record, size), 0);
    ck_assert_int_eq (jfile_sync (log), 0);
    jfile_destroy (&log);
}

//  The broker's peak of virtual memory, in KiB.
static uint64_t
s_vm_peak_kib (pid_t pid)
{
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
    FILE *file = fopen (path, "r");
    ck_assert_ptr_nonnull (file);
    char line [256];
    uint64_t peak = 0;
    while (fgets (line, sizeof line, file))
        if (sscanf (line, "VmPeak: %llu", (unsigned long long *) &peak) == 1)
            break;
    fclose (file);
    ck_assert_uint_gt (peak, 0);
    return peak;
}

START_TEST (test_record_counts_not_trusted)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    //  [5, 0, "A", nil, ops] where ops is an array32 of 2^27 operations:
    //  msgpack-c would reserve 3 GiB for its table before reading one.
    const unsigned char record [] = { 0x95, 0x05, 0x00, 0xa1, 'A', 0xc0,
                                      0xdd, 0x08, 0x00, 0x00, 0x00 };
    s_write_log (dir, record, sizeof record);
    //  What a broker reserves anyway (a sanitizer build: terabytes of
    //  shadow), from one on an empty directory.
    char *empty = tproc_dir_path (tmp, "empty");
    ck_assert_int_eq (mkdir (empty, 0700), 0);
    testbroker_t *broker = s_start (empty, "always", NULL, NULL);
    ck_assert_ptr_nonnull (broker);
    uint64_t base = s_vm_peak_kib (testbroker_pid (broker));
    testcheck_stop (&broker);
    free (empty);
    broker = s_start (dir, "always", NULL, NULL);
    ck_assert_ptr_nonnull (broker);
    uint64_t peak = s_vm_peak_kib (testbroker_pid (broker));
    ck_assert_msg (peak < base + 1024 * 1024, "the broker reserved %llu KiB more recovering a "
                   "record of %zu bytes", (unsigned long long) (peak - base), sizeof record);
    ck_assert (testbroker_log_contains (broker, "1 skipped"));
    testcheck_stop (&broker);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

START_TEST (test_record_limits_out_of_range)
{
    tproc_dir_t *tmp = tproc_dir_new ();
    char *dir = tproc_dir_path (tmp, "data");
    //  [5, 0, "", nil, [[1 (LIMITS), {...}]]], the agent table's size
    //  overflowing its bytes (2^61 + 1 entries of 8 bytes).
    msgpack_sbuffer buf;
    msgpack_sbuffer_init (&buf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buf, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 5);
    msgpack_pack_int (&pk, 5);
    msgpack_pack_int (&pk, 0);
    msgpack_pack_str_with_body (&pk, "", 0);
    msgpack_pack_nil (&pk);
    msgpack_pack_array (&pk, 1);
    msgpack_pack_array (&pk, 2);
    msgpack_pack_int (&pk, 1);
    const char *names [] = { "agents", "inbox", "inbox_bytes", "channel", "channel_bytes",
                             "channels", "body", "queued_bytes", "overflow", "state_keys",
                             "state_bytes", "turns", "revisions", "checkpoints" };
    msgpack_pack_map (&pk, 14);
    for (int i = 0; i < 14; i++) {
        msgpack_pack_str_with_body (&pk, names [i], strlen (names [i]));
        msgpack_pack_uint64 (&pk, i == 0 ? (1ULL << 61) + 1 : i == 8 ? 0 : 1000);
    }
    s_write_log (dir, buf.data, buf.size);
    msgpack_sbuffer_destroy (&buf);
    testbroker_t *broker = s_start (dir, "always", NULL, NULL);
    ck_assert_ptr_nonnull (broker);
    ck_assert (testbroker_log_contains (broker, "LIMITS has agents, channels or checkpoints"));
    //  The table is the flags' size: agents register as usual.
    testclient_t *agents [20];
    for (int i = 0; i < 20; i++) {
        char id [16];
        snprintf (id, sizeof id, "A%d", i);
        agents [i] = testcheck_agent (broker, id);
    }
    for (int i = 0; i < 20; i++)
        testcheck_leave (&agents [i]);
    testcheck_stop (&broker);
    free (dir);
    tproc_dir_destroy (&tmp);
}
END_TEST

int
main (void)
{
    Suite *suite = suite_create ("durable_disk");
    TCase *tc = tcase_create ("durable_disk");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_power_cut_always);
    tcase_add_test (tc, test_failed_sync_holds_answers);
    tcase_add_test (tc, test_failed_sync_makes_health_fail);
    tcase_add_test (tc, test_held_answer_after_reconnect);
    tcase_add_test (tc, test_kill_during_compaction);
    tcase_add_test (tc, test_old_format_recovered);
    tcase_add_test (tc, test_event_of_a_release_waits_for_its_sync);
    tcase_add_test (tc, test_workflow_without_holder_refused);
    tcase_add_test (tc, test_record_counts_not_trusted);
    tcase_add_test (tc, test_record_limits_out_of_range);
    suite_add_tcase (suite, tc);
    return testsuite_run (suite);
}
