// SPDX-License-Identifier: MIT
/*  fuzz_journal - libFuzzer target for what recovery reads from a data
    directory: snapshot records (core_restore_record) and operation
    records (op_decode, then core_apply), in any order, with any bytes.

    An input is one mode byte, then records, each a 4-byte little-endian
    length and that many bytes: one journal record's payload, as
    jfile_scan hands it to the broker (a length past the input's end
    takes what is left).
    Records of kinds 10..17 go to the snapshot reader while it is open
    (as at recovery, the snapshot comes first: the first other record
    ends it), records of kind 5 are replayed as the broker replays them
    (durable.c s_replay_txn: the frame decoded with the wire's limits,
    each op decoded and applied); anything else is skipped. The mode byte
    picks the core: with or without a world, reject or drop-oldest.

    Properties (abort() = a finding), on top of the sanitizers':
      - no crash, leak, hang or over-allocation, whatever the records say;
      - the core a hostile journal leaves behind can still be dumped,
        snapshotted, and its snapshot restored into a fresh core whose
        canonical dump (core_dump) is the same bytes: a compaction never
        changes the state it writes;
      - and the restored core behaves as the original: the input's
        operations applied again to both leave them dumping the same
        bytes (nothing that decides an outcome is missing from the
        snapshot, or from the dump).
    FUZZ_JOURNAL_TRACE=1 prints each operation applied and its outcome;
    FUZZ_JOURNAL_DUMPS=DIR keeps the two dumps that differed.

    Needs a scenario on disk (a workflow with roles): written once into a
    temporary directory. Built and run by scripts/fuzz.sh (target
    `journal`), seeds in tests/fuzz/journal-seeds/.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "core/core.h"
#include "pwire.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

static scenario_t *s_scenario;

static void
s_write (const char *dir, const char *name, const char *text)
{
    char path [512];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen (path, "w");
    if (!file || fputs (text, file) < 0 || fclose (file) != 0)
        abort ();
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    char dir [] = "/tmp/fuzz_journal.XXXXXX";
    if (!mkdtemp (dir))
        abort ();
    char roles [600];
    snprintf (roles, sizeof roles, "%s/roles", dir);
    if (mkdir (roles, 0700) != 0)
        abort ();
    s_write (dir, "scenario.yaml",
             "name: fuzz\n"
             "world: { kind: line, size: 12 }\n"
             "state:\n"
             "  work: { reducer: append, value: [] }\n"
             "  issues: { reducer: append, value: [] }\n"
             "  report: { reducer: replace }\n"
             "workflow:\n"
             "  entry: worker\n"
             "  max_revisions: 2\n"
             "  max_turns: 40\n"
             "  clear_on_revision: [issues]\n");
    s_write (dir, "roles/worker.yaml", "role: worker\ngoal: work\nactions:\n  writes:\n"
             "    - { key: work, reducer: append }\n  handover: [checker]\n");
    s_write (dir, "roles/checker.yaml", "role: checker\ngoal: check\nactions:\n  writes:\n"
             "    - { key: issues, reducer: append }\n    - { key: report }\n"
             "  handover: [worker]\n");
    char why [256];
    s_scenario = scenario_load (dir, why, sizeof why);
    if (!s_scenario) {
        fprintf (stderr, "fuzz_journal: scenario: %s\n", why);
        abort ();
    }
    return 0;
}

static core_t *
s_core (uint8_t mode)
{
    core_config_t config = {
        .limits = {
            .max_agents = 16,
            .mail = { .max_inbox = 6, .max_inbox_bytes = 4096, .max_channel = 5,
                      .max_channel_bytes = 4096, .max_channels = 6, .max_body = 1024,
                      .max_queued_bytes = 1u << 20,
                      .overflow = mode & 1 ? OVERFLOW_DROP_OLDEST : OVERFLOW_REJECT },
            .state = { .max_keys = 64, .max_bytes = 1u << 16 },
            .max_turns = 40, .max_revisions = 2, .checkpoints = 4
        },
        .no_world = (mode & 2) != 0,
        .world = { .kind = WORLD_LINE, .width = 12, .seed = 7 },
        .scenario = s_scenario
    };
    char why [256];
    core_t *core = core_new (&config, why, sizeof why);
    if (!core) {
        fprintf (stderr, "fuzz_journal: core: %s\n", why);
        abort ();
    }
    return core;
}

//  durable.c's s_replay_txn, against a bare core.
static void
s_replay_txn (core_t *core, const msgpack_object *items, uint32_t count)
{
    if (count != 5
    ||  (items [1].type != MSGPACK_OBJECT_POSITIVE_INTEGER
         && items [1].type != MSGPACK_OBJECT_NEGATIVE_INTEGER)
    ||  items [2].type != MSGPACK_OBJECT_STR || items [2].via.str.size > PROTO_MAX_NAME
    ||  (items [3].type != MSGPACK_OBJECT_NIL && items [3].type != MSGPACK_OBJECT_BIN)
    ||  items [4].type != MSGPACK_OBJECT_ARRAY)
        return;
    char agent [PROTO_MAX_NAME + 1];
    snprintf (agent, sizeof agent, "%.*s", (int) items [2].via.str.size,
              items [2].via.str.size ? items [2].via.str.ptr : "");
    pmsg_t *msg = NULL;
    if (items [3].type == MSGPACK_OBJECT_BIN) {
        perr_t err;
        char why [256];
        msg = pmsg_decode (items [3].via.bin.ptr, items [3].via.bin.size,
                           pwire_default_limits (), &err, NULL, why, sizeof why);
        if (!msg)
            return;
    }
    const msgpack_object_array *ops = &items [4].via.array;
    uint64_t seqs [64];
    for (uint32_t i = 0; i < ops->size; i++) {
        core_limits_t limits;
        char why [256];
        op_t op = { .ts = items [1].via.i64, .agent = agent, .frame = msg };
        if (!op_decode (&ops->ptr [i], &op, &limits, why, sizeof why))
            continue;
        core_outcome_t out = { .seqs = seqs, .seq_room = 64 };
        perr_t err = core_apply (core, &op, &out);
        if (getenv ("FUZZ_JOURNAL_TRACE"))
            fprintf (stderr, "%s %s u=%llu: %d %s; state seq %llu\n", op_kind_name (op.kind),
                     agent, (unsigned long long) op.u, (int) err, out.why,
                     (unsigned long long) state_seq (core_state (core)));
    }
    pmsg_destroy (&msg);
}

static void
s_dump (core_t *core, msgpack_sbuffer *buf)
{
    msgpack_sbuffer_init (buf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, buf, msgpack_sbuffer_write);
    core_dump (core, &pk);
}

typedef struct {
    char **records;
    size_t *sizes;
    size_t count, cap;
} s_records_t;

static int
s_collect (const void *payload, size_t size, void *arg)
{
    s_records_t *r = arg;
    if (r->count == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->records = realloc (r->records, r->cap * sizeof (char *));
        r->sizes = realloc (r->sizes, r->cap * sizeof (size_t));
        if (!r->records || !r->sizes)
            abort ();
    }
    r->records [r->count] = malloc (size ? size : 1);
    if (!r->records [r->count])
        abort ();
    memcpy (r->records [r->count], payload, size);
    r->sizes [r->count++] = size;
    return 0;
}

//  Two cores dump the same bytes, or the finding is reported.
static void
s_same_dumps (core_t *core, core_t *copy, const char *what)
{
    msgpack_sbuffer a, b;
    s_dump (core, &a);
    s_dump (copy, &b);
    if (a.size != b.size || memcmp (a.data, b.data, a.size) != 0) {
        size_t at = 0;
        while (at < a.size && at < b.size && a.data [at] == b.data [at])
            at++;
        fprintf (stderr, "fuzz_journal: %s (dumps of %zu and %zu bytes differ at %zu)\n",
                 what, a.size, b.size, at);
        //  For a reader: FUZZ_JOURNAL_DUMPS=DIR keeps both dumps.
        const char *dir = getenv ("FUZZ_JOURNAL_DUMPS");
        if (dir) {
            char path [512];
            snprintf (path, sizeof path, "%s/live.mp", dir);
            FILE *file = fopen (path, "wb");
            if (file) { fwrite (a.data, 1, a.size, file); fclose (file); }
            snprintf (path, sizeof path, "%s/restored.mp", dir);
            file = fopen (path, "wb");
            if (file) { fwrite (b.data, 1, b.size, file); fclose (file); }
        }
        abort ();
    }
    msgpack_sbuffer_destroy (&a);
    msgpack_sbuffer_destroy (&b);
}

//  A compaction of `core` restored into a fresh core, which must dump the
//  same bytes; NULL when the snapshot is too big to be written.
static core_t *
s_snapshot_round_trip (core_t *core, uint8_t mode)
{
    s_records_t records = { 0 };
    if (core_snapshot_write (core, s_collect, &records) != 0) {
        //  Too big for a record: the compaction is refused, nothing to compare.
        for (size_t i = 0; i < records.count; i++)
            free (records.records [i]);
        free (records.records);
        free (records.sizes);
        return NULL;
    }
    core_t *copy = s_core (mode);
    core_restore_t *restore = core_restore_new (copy);
    if (!restore)
        abort ();
    for (size_t i = 0; i < records.count; i++)
        if (core_restore_record (restore, records.records [i], records.sizes [i]) != 0) {
            fprintf (stderr, "fuzz_journal: own snapshot record %zu refused: %s\n", i,
                     core_restore_why (restore));
            abort ();
        }
    core_restore_report_t report;
    char why [256];
    if (core_restore_end (&restore, &report, why, sizeof why) != 0 || report.failed) {
        fprintf (stderr, "fuzz_journal: own snapshot did not restore: %s %s\n", why, report.why);
        abort ();
    }
    s_same_dumps (core, copy, "the snapshot restores another core");
    for (size_t i = 0; i < records.count; i++)
        free (records.records [i]);
    free (records.records);
    free (records.sizes);
    return copy;
}

//  Every record of kind 5 in the input (after the mode byte), applied.
static void
s_replay_all (core_t *core, const uint8_t *data, size_t size)
{
    size_t offset = 0;
    while (offset + 4 <= size) {
        size_t length = (size_t) data [offset] | (size_t) data [offset + 1] << 8
                      | (size_t) data [offset + 2] << 16 | (size_t) data [offset + 3] << 24;
        offset += 4;
        if (length > size - offset)
            length = size - offset;
        const uint8_t *payload = data + offset;
        offset += length;
        msgpack_unpacked unpacked;
        msgpack_unpacked_init (&unpacked);
        size_t at = 0;
        if (core_record_check (payload, length, NULL, 0)
        &&  msgpack_unpack_next (&unpacked, (const char *) payload, length, &at)
            == MSGPACK_UNPACK_SUCCESS
        &&  unpacked.data.type == MSGPACK_OBJECT_ARRAY && unpacked.data.via.array.size >= 2
        &&  unpacked.data.via.array.ptr [0].type == MSGPACK_OBJECT_POSITIVE_INTEGER
        &&  unpacked.data.via.array.ptr [0].via.u64 == OP_RECORD_TXN)
            s_replay_txn (core, unpacked.data.via.array.ptr, unpacked.data.via.array.size);
        msgpack_unpacked_destroy (&unpacked);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data [0];
    data++;
    size--;
    core_t *core = s_core (mode);
    core_restore_t *restore = core_restore_new (core);
    if (!restore)
        abort ();
    size_t offset = 0;
    bool refused = false;       //  recovery stops: the broker does not start
    while (offset + 4 <= size) {
        size_t length = (size_t) data [offset] | (size_t) data [offset + 1] << 8
                      | (size_t) data [offset + 2] << 16 | (size_t) data [offset + 3] << 24;
        offset += 4;
        if (length > size - offset)
            length = size - offset;
        const uint8_t *payload = data + offset;
        offset += length;
        //  The kind, as the broker reads it (durable.c): from the sound
        //  records only.
        msgpack_unpacked unpacked;
        msgpack_unpacked_init (&unpacked);
        size_t at = 0;
        uint64_t kind = 0;
        if (core_record_check (payload, length, NULL, 0)
        &&  msgpack_unpack_next (&unpacked, (const char *) payload, length, &at)
            == MSGPACK_UNPACK_SUCCESS
        &&  unpacked.data.type == MSGPACK_OBJECT_ARRAY && unpacked.data.via.array.size >= 2
        &&  unpacked.data.via.array.ptr [0].type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            kind = unpacked.data.via.array.ptr [0].via.u64;
        if (restore && kind >= 10 && kind <= 17) {
            msgpack_unpacked_destroy (&unpacked);
            //  Any bytes: the snapshot reader checks them itself.
            if (core_restore_record (restore, payload, length) != 0) {
                //  Recovery stops at a snapshot record it cannot read.
                core_restore_end (&restore, NULL, NULL, 0);
                refused = true;
                break;
            }
            continue;
        }
        if (restore) {
            char why [256];
            core_restore_report_t report;
            if (core_restore_end (&restore, &report, why, sizeof why) != 0) {
                msgpack_unpacked_destroy (&unpacked);
                refused = true;
                break;
            }
        }
        if (kind == OP_RECORD_TXN)
            s_replay_txn (core, unpacked.data.via.array.ptr, unpacked.data.via.array.size);
        msgpack_unpacked_destroy (&unpacked);
    }
    char why [256];
    if (restore && core_restore_end (&restore, NULL, why, sizeof why) != 0)
        refused = true;
    //  A core the broker would not start from is not compacted either.
    core_t *copy = refused ? NULL : s_snapshot_round_trip (core, mode);
    if (copy) {
        //  The copy behaves as the original from here on: the input's
        //  operations again, to both, leave them the same.
        s_replay_all (core, data, size);
        s_replay_all (copy, data, size);
        s_same_dumps (core, copy, "a restored core behaves otherwise than the original");
        core_destroy (&copy);
    }
    core_destroy (&core);
    return 0;
}
