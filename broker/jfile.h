// SPDX-License-Identifier: MIT
/*  jfile - one append-only file of checksummed records (the broker's
    journal logs and snapshots are both made of them).

    Layout: an 8-byte magic, then records, each
        u32 length (little-endian)   payload bytes
        u32 checksum of the payload
        u32 checksum of the 8 bytes above
        payload
    The magic says which checksum: "PARLEYJ2" CRC-32C (crc32c.h: one CPU
    instruction per 8 bytes), "PARLEYJ1" zlib's CRC-32 (files written
    before; still read, and appended to in their own format until
    compaction replaces them). New files are "PARLEYJ2".
    The header has its own checksum so a flipped bit in a length is told
    apart from a write that was cut short: a crash can only leave a prefix
    of the last write behind (a header shorter than 12 bytes, or a payload
    shorter than its length), never a complete header with wrong bytes.

    Reading (jfile_scan) calls back once per valid record and classifies
    what stops it:
      - the end of the file: clean;
      - a tail with no valid record anywhere in it: cut back to the last
        good record, and the kind and the number of bytes dropped are
        reported. That is an incomplete last record, or a last record
        whose payload checksum fails (a write cut short), zeros (blocks
        a power cut allocated but never wrote; some file systems leave
        them), or other bytes that hold no record (a torn write, or
        unsynced blocks holding old data after a power cut);
      - anything else (a bad header or payload with a valid record after
        it): corruption in the middle. Without `repair` the scan stops
        with an error naming the file and offset; with it, a record whose
        header is sound is skipped and the scan goes on, and at a bad
        header the rest of the file is cut off; what was lost is reported.

    Syncing: once an fdatasync of a file failed, the kernel may have
    dropped the pages it could not write and still report a later sync as
    successful ("fsyncgate"), so jfile_sync never tries that file again:
    every later sync fails (EIO). The journal then writes the whole state
    into a new file instead (journal.h).
*/
#ifndef PARLEY_BROKER_JFILE_H
#define PARLEY_BROKER_JFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  The magic of new files, and of the files before CRC-32C.
#define JFILE_MAGIC "PARLEYJ2"
#define JFILE_MAGIC_V1 "PARLEYJ1"
#define JFILE_MAGIC_SIZE 8
#define JFILE_HEADER 12
//  No record is larger: a request frame (1 MiB) plus its envelope, or one
//  state value or message in a snapshot.
#define JFILE_MAX_RECORD (2u * 1024 * 1024)

typedef struct _jfile_t jfile_t;

//  Opens `path` for appending, creating it (with the magic, synced by the
//  first jfile_sync) when missing or empty. An existing file keeps its format (its magic's
//  checksum). The caller scanned it first (a torn tail is already cut).
//  NULL with why (also for a file with another magic).
jfile_t *jfile_open (const char *path, char *why, size_t why_size);
void jfile_destroy (jfile_t **self_p);
const char *jfile_path (jfile_t *self);
//  Bytes written and gathered.
uint64_t jfile_size (jfile_t *self);
//  The descriptor (for a syncing thread's own dup).
int jfile_fd (jfile_t *self);
//  The format: 2 (CRC-32C) or 1 (zlib's CRC-32, files written before).
int jfile_version (jfile_t *self);
//  True once a sync or a write of this file failed: its synced bytes can
//  no longer be trusted, and jfile_sync fails from then on.
bool jfile_failed (jfile_t *self);

//  Appends one record: its disk space is reserved (fallocate) and it is
//  gathered in memory until jfile_flush. -1 with errno (ENOSPC on a full
//  disk) when it cannot be appended; nothing was then appended.
int jfile_append (jfile_t *self, const void *payload, size_t size);
//  The same for a record given in parts, which it holds end to end (the
//  journal's record is a head, the request's frame and the operations:
//  no copy of them is made to put them together first).
typedef struct {
    const void *data;
    size_t size;
} jfile_part_t;
int jfile_append_parts (jfile_t *self, const jfile_part_t *parts, size_t count);
//  Makes sure the disk has room for `more` bytes of records after what
//  is written and gathered (fallocate), so appends within them cannot meet
//  a full disk. -1 with errno (ENOSPC) when it has not.
int jfile_reserve (jfile_t *self, size_t more);
//  Writes what was gathered with one write(2) (to the page cache; see
//  sync). On failure (EIO...) the file is cut back to its size before, so
//  no partial record stays, the gathered records are dropped, the file is
//  marked failed (jfile_failed), and -1 is returned with errno set.
int jfile_flush (jfile_t *self);
//  Something appended and not yet flushed.
bool jfile_pending (jfile_t *self);
//  Flushes, then fdatasync when something was written since the last
//  sync. 0 or -1 with errno; -1 (EIO) without trying once the file has
//  failed (see above).
int jfile_sync (jfile_t *self);
bool jfile_dirty (jfile_t *self);

typedef enum {
    JFILE_OK = 0,               //  read to the end (after any cut)
    JFILE_CORRUPT,              //  corruption in the middle, not repaired
    JFILE_IO                    //  cannot open, read or cut the file
} jfile_status_t;

//  What the tail cut from a file held.
typedef enum {
    JFILE_TAIL_NONE = 0,        //  nothing was cut
    JFILE_TAIL_TORN,            //  an incomplete last record, or its payload's checksum fails
    JFILE_TAIL_ZEROS,           //  only zero bytes
    JFILE_TAIL_GARBAGE          //  other bytes, with no valid record among them
} jfile_tail_t;

typedef struct {
    uint64_t records;           //  valid records passed to the callback
    uint64_t torn_bytes;        //  cut from the tail (any kind)
    jfile_tail_t tail;          //  what those bytes were
    uint64_t lost_records;      //  skipped by repair
    uint64_t lost_bytes;        //  skipped or cut by repair
    uint64_t bad_offset;        //  JFILE_CORRUPT: where
} jfile_report_t;

//  Returns 0 to go on, -1 to stop the scan (reported as JFILE_IO with the
//  callback's own why).
typedef int (jfile_record_fn) (const void *payload, size_t size, void *arg);

//  Scans `path` (a missing file is an empty one: JFILE_OK, nothing read).
//  Cuts a torn tail (and with `repair`, corruption) in place.
jfile_status_t jfile_scan (const char *path, bool repair, jfile_record_fn *fn, void *arg,
                           jfile_report_t *report, char *why, size_t why_size);

#endif
