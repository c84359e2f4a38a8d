// SPDX-License-Identifier: MIT
/*  jfile - one append-only file of checksummed records (the broker's
    journal logs and snapshots are both made of them).

    Layout: an 8-byte magic "PARLEYJ1", then records, each
        u32 length (little-endian)   payload bytes
        u32 crc32 of the payload     (zlib)
        u32 crc32 of the 8 bytes above
        payload
    The header has its own checksum so a flipped bit in a length is told
    apart from a write that was cut short: a crash can only leave a prefix
    of the last write behind (a header shorter than 12 bytes, or a payload
    shorter than its length), never a complete header with wrong bytes.

    Reading (jfile_scan) calls back once per valid record and classifies
    what stops it:
      - the end of the file: clean;
      - an incomplete last record, or a last record whose payload checksum
        fails (a torn write): the file is cut back to the last good record
        and the number of bytes dropped is reported;
      - anything else (a bad header, or a bad payload with more records
        after it): corruption in the middle. Without `repair` the scan
        stops with an error naming the file and offset; with it, a record
        whose header is sound is skipped and the scan goes on, and at a bad
        header the rest of the file is cut off; what was lost is reported.
*/
#ifndef PARLEY_BROKER_JFILE_H
#define PARLEY_BROKER_JFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JFILE_MAGIC "PARLEYJ1"
#define JFILE_MAGIC_SIZE 8
#define JFILE_HEADER 12
//  No record is larger: a request frame (1 MiB) plus its envelope, or one
//  state value or message in a snapshot.
#define JFILE_MAX_RECORD (2u * 1024 * 1024)

typedef struct _jfile_t jfile_t;

//  Opens `path` for appending, creating it (with the magic) when missing.
//  The caller scanned it first (a torn tail is already cut). NULL with why.
jfile_t *jfile_open (const char *path, char *why, size_t why_size);
void jfile_destroy (jfile_t **self_p);
const char *jfile_path (jfile_t *self);
//  Bytes written and gathered.
uint64_t jfile_size (jfile_t *self);
//  The descriptor (for a syncing thread's own dup).
int jfile_fd (jfile_t *self);

//  Appends one record: its disk space is reserved (fallocate) and it is
//  gathered in memory until jfile_flush. -1 with errno (ENOSPC on a full
//  disk) when it cannot be appended; nothing was then appended.
int jfile_append (jfile_t *self, const void *payload, size_t size);
//  Makes sure the disk has room for `more` bytes of records after what
//  is written and gathered (fallocate), so appends within them cannot meet
//  a full disk. -1 with errno (ENOSPC) when it has not.
int jfile_reserve (jfile_t *self, size_t more);
//  Writes what was gathered with one write(2) (to the page cache; see
//  sync). On failure (EIO...) the file is cut back to its size before, so
//  no partial record stays, the gathered records are dropped, and -1 is
//  returned with errno set.
int jfile_flush (jfile_t *self);
//  Something appended and not yet flushed.
bool jfile_pending (jfile_t *self);
//  Flushes, then fdatasync when something was written since the last
//  sync. 0 or -1.
int jfile_sync (jfile_t *self);
bool jfile_dirty (jfile_t *self);

typedef enum {
    JFILE_OK = 0,               //  read to the end (after any cut)
    JFILE_CORRUPT,              //  corruption in the middle, not repaired
    JFILE_IO                    //  cannot open, read or cut the file
} jfile_status_t;

typedef struct {
    uint64_t records;           //  valid records passed to the callback
    uint64_t torn_bytes;        //  cut from a torn tail
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
