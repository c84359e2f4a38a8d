// SPDX-License-Identifier: MIT
/*  jfile - checksummed record files; see jfile.h.

    The scan reads the whole file into memory with one read: recovery is
    one pass and the records are consumed as they are parsed. A file is at
    most a snapshot plus what was written since (compaction keeps it near
    the live data), so this is bounded by what the broker holds in memory
    anyway. What is slow: telling a damaged tail from damage in the middle
    looks for a valid record at every later offset (a header checksum of
    8 bytes each); that runs only on a damaged file, once.
*/
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "crc32c.h"
#include "jfile.h"

//  Tests without a small filesystem to fill (not root): while the file
//  named by PARLEY_TEST_JOURNAL_FULL exists, appends fail with ENOSPC as
//  on a full disk. Unset (always, outside tests) it costs one getenv per
//  file opened.
#define JFILE_TEST_FULL_ENV "PARLEY_TEST_JOURNAL_FULL"

//  Appends are gathered in memory and written with one write(2) per
//  flush (the broker flushes before any reply or event leaves, and at the
//  end of each loop turn), so a turn of pipelined requests costs one
//  system call instead of one each. The disk space they will take is
//  reserved first with fallocate (FALLOC_FL_KEEP_SIZE: blocks allocated,
//  the file's size unchanged), JFILE_RESERVE at a time, so a full disk
//  still refuses the append that does not fit, before its request is
//  applied, and a flush into reserved blocks cannot meet ENOSPC. On a
//  filesystem without fallocate every append is written at once, as
//  before.
#define JFILE_RESERVE  (4u * 1024 * 1024)
#define JFILE_PEND_MAX (1u * 1024 * 1024)

typedef uint32_t (checksum_fn) (const void *data, size_t size);

struct _jfile_t {
    char *test_full;            //  the test hook's path, NULL normally
    int fd;
    int version;                //  1 or 2: which checksum (jfile.h)
    checksum_fn *checksum;
    bool failed;                //  a sync or a write failed: never trust a sync again
    char *path;
    uint64_t size;              //  written to the file
    uint64_t reserved;          //  blocks allocated up to here
    bool direct;                //  no fallocate here: write each append at once
    bool dirty;
    uint8_t *buf;               //  records not written yet
    size_t buf_used, buf_size;
};

static void
s_put32 (uint8_t *p, uint32_t v)
{
    p [0] = (uint8_t) v;
    p [1] = (uint8_t) (v >> 8);
    p [2] = (uint8_t) (v >> 16);
    p [3] = (uint8_t) (v >> 24);
}

static uint32_t
s_get32 (const uint8_t *p)
{
    return (uint32_t) p [0] | (uint32_t) p [1] << 8 | (uint32_t) p [2] << 16
         | (uint32_t) p [3] << 24;
}

static uint32_t
s_crc_v1 (const void *data, size_t size)
{
    return (uint32_t) crc32 (crc32 (0L, Z_NULL, 0), data, (uInt) size);
}

static uint32_t
s_crc_v2 (const void *data, size_t size)
{
    return crc32c (0, data, size);
}

//  The version a magic names (0: not a journal file).
static int
s_version (const uint8_t *magic)
{
    if (memcmp (magic, JFILE_MAGIC, JFILE_MAGIC_SIZE) == 0)
        return 2;
    if (memcmp (magic, JFILE_MAGIC_V1, JFILE_MAGIC_SIZE) == 0)
        return 1;
    return 0;
}

//  Writes all of buf at the end, retrying short writes and EINTR.
static int
s_write_all (int fd, const uint8_t *buf, size_t size)
{
    while (size > 0) {
        ssize_t n = write (fd, buf, size);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += n;
        size -= (size_t) n;
    }
    return 0;
}

jfile_t *
jfile_open (const char *path, char *why, size_t why_size)
{
    assert (path);
    jfile_t *self = calloc (1, sizeof (jfile_t));
    if (!self || !(self->path = strdup (path))) {
        free (self);
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    self->fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    struct stat st;
    if (self->fd < 0 || fstat (self->fd, &st) != 0) {
        snprintf (why, why_size, "cannot open %s: %s", path, strerror (errno));
        jfile_destroy (&self);
        return NULL;
    }
    self->size = (uint64_t) st.st_size;
    self->reserved = self->size;
    self->version = 2;
    if (self->size >= JFILE_MAGIC_SIZE) {
        uint8_t magic [JFILE_MAGIC_SIZE];
        int fd = open (path, O_RDONLY | O_CLOEXEC);
        bool read_ok = fd >= 0 && pread (fd, magic, sizeof magic, 0) == (ssize_t) sizeof magic;
        if (fd >= 0)
            close (fd);
        self->version = read_ok ? s_version (magic) : 0;
        if (!self->version) {
            snprintf (why, why_size, "%s is not a Parley journal file (bad magic at offset 0)",
                      path);
            jfile_destroy (&self);
            errno = EINVAL;
            return NULL;
        }
    }
    self->checksum = self->version == 1 ? s_crc_v1 : s_crc_v2;
    const char *test_full = getenv (JFILE_TEST_FULL_ENV);
    if (test_full && *test_full)
        self->test_full = strdup (test_full);
    if (self->size < JFILE_MAGIC_SIZE) {
        //  New, or its magic cut short by a crash: start it again. Not
        //  synced here (the caller's first sync covers it, and a file whose
        //  magic did not reach the disk reads as empty).
        if (ftruncate (self->fd, 0) != 0
        ||  s_write_all (self->fd, (const uint8_t *) JFILE_MAGIC, JFILE_MAGIC_SIZE) != 0) {
            snprintf (why, why_size, "cannot write %s: %s", path, strerror (errno));
            int error = errno;
            (void) ftruncate (self->fd, 0);
            jfile_destroy (&self);
            errno = error;
            return NULL;
        }
        self->size = JFILE_MAGIC_SIZE;
        self->reserved = self->size;
        self->dirty = true;
    }
    return self;
}

void
jfile_destroy (jfile_t **self_p)
{
    assert (self_p);
    jfile_t *self = *self_p;
    if (self) {
        if (self->fd >= 0) {
            (void) jfile_flush (self);
            close (self->fd);
        }
        free (self->path);
        free (self->buf);
        free (self->test_full);
        free (self);
        *self_p = NULL;
    }
}

const char *
jfile_path (jfile_t *self)
{
    assert (self);
    return self->path;
}

uint64_t
jfile_size (jfile_t *self)
{
    assert (self);
    return self->size + self->buf_used;
}

int
jfile_fd (jfile_t *self)
{
    assert (self);
    return self->fd;
}

int
jfile_version (jfile_t *self)
{
    assert (self);
    return self->version;
}

bool
jfile_failed (jfile_t *self)
{
    assert (self);
    return self->failed;
}

bool
jfile_dirty (jfile_t *self)
{
    assert (self);
    return self->dirty;
}

//  Room for `more` bytes after what is written and gathered: 0, or -1
//  with errno (ENOSPC: the disk is full; nothing was appended).
static int
s_reserve (jfile_t *self, size_t more)
{
    uint64_t end = self->size + self->buf_used;
    if (self->direct || end + more <= self->reserved)
        return 0;
    //  A chunk ahead; near a full disk, just what this record needs.
    off_t length = more > JFILE_RESERVE ? (off_t) more : (off_t) JFILE_RESERVE;
    int rc = fallocate (self->fd, FALLOC_FL_KEEP_SIZE, (off_t) end, length);
    if (rc != 0 && errno == ENOSPC && length > (off_t) more) {
        length = (off_t) more;
        rc = fallocate (self->fd, FALLOC_FL_KEEP_SIZE, (off_t) end, length);
    }
    if (rc == 0) {
        self->reserved = end + (uint64_t) length;
        return 0;
    }
    if (errno == EOPNOTSUPP || errno == ENOSYS) {
        self->direct = true;
        return 0;
    }
    return -1;
}

int
jfile_reserve (jfile_t *self, size_t more)
{
    assert (self);
    if (self->test_full && access (self->test_full, F_OK) == 0) {
        errno = ENOSPC;
        return -1;
    }
    return s_reserve (self, more);
}

static int
s_grow (jfile_t *self, size_t want)
{
    if (want <= self->buf_size)
        return 0;
    size_t cap = self->buf_size ? self->buf_size : 64 * 1024;
    while (cap < want)
        cap *= 2;
    uint8_t *grown = realloc (self->buf, cap);
    if (!grown) {
        errno = ENOMEM;
        return -1;
    }
    self->buf = grown;
    self->buf_size = cap;
    return 0;
}

int
jfile_append (jfile_t *self, const void *payload, size_t size)
{
    jfile_part_t part = { payload, size };
    return jfile_append_parts (self, &part, 1);
}

int
jfile_append_parts (jfile_t *self, const jfile_part_t *parts, size_t count)
{
    assert (self);
    size_t size = 0;
    for (size_t i = 0; i < count; i++)
        size += parts [i].size;
    assert (size <= JFILE_MAX_RECORD);
    if (self->test_full && access (self->test_full, F_OK) == 0) {
        errno = ENOSPC;
        return -1;
    }
    size_t total = JFILE_HEADER + size;
    //  Over the gathering bound: what is gathered goes first.
    if (self->buf_used && self->buf_used + total > JFILE_PEND_MAX && jfile_flush (self) != 0)
        return -1;
    if (s_reserve (self, total) != 0 || s_grow (self, self->buf_used + total) != 0)
        return -1;
    //  The parts are copied first and checksummed where they landed, as
    //  one payload: the same bytes as one part of their concatenation.
    uint8_t *record = self->buf + self->buf_used;
    size_t at = JFILE_HEADER;
    for (size_t i = 0; i < count; i++)
        if (parts [i].size) {
            memcpy (record + at, parts [i].data, parts [i].size);
            at += parts [i].size;
        }
    s_put32 (record, (uint32_t) size);
    s_put32 (record + 4, self->checksum (record + JFILE_HEADER, size));
    s_put32 (record + 8, self->checksum (record, 8));
    self->buf_used += total;
    self->dirty = true;
    return self->direct ? jfile_flush (self) : 0;
}

int
jfile_flush (jfile_t *self)
{
    assert (self);
    if (self->buf_used == 0)
        return 0;
    size_t used = self->buf_used;
    self->buf_used = 0;
    if (s_write_all (self->fd, self->buf, used) != 0) {
        int error = errno;
        //  A partial record must not stay: the next append would follow it
        //  and a restart would read it as corruption in the middle. What
        //  was gathered is lost to the journal (the caller counts it), and
        //  the file is behind the caller's state for good.
        self->failed = true;
        if (ftruncate (self->fd, (off_t) self->size) != 0)
            error = errno;
        errno = error;
        return -1;
    }
    self->size += used;
    return 0;
}

bool
jfile_pending (jfile_t *self)
{
    assert (self);
    return self->buf_used > 0;
}

int
jfile_sync (jfile_t *self)
{
    assert (self);
    if (jfile_flush (self) != 0)
        return -1;
    if (self->failed) {
        errno = EIO;
        return -1;
    }
    if (!self->dirty)
        return 0;
    if (fdatasync (self->fd) != 0) {
        //  The kernel may have dropped the pages it could not write and
        //  marked them clean: a retry could succeed without them.
        self->failed = true;
        return -1;
    }
    self->dirty = false;
    return 0;
}

//  ---------------------------------------------------------------------
//  Scan

static int
s_read_file (const char *path, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1;
    struct stat st;
    if (fstat (fd, &st) != 0) {
        close (fd);
        return -1;
    }
    size_t total = (size_t) st.st_size;
    uint8_t *buf = malloc (total ? total : 1);
    size_t got = 0;
    while (buf && got < total) {
        ssize_t n = read (fd, buf + got, total - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t) n;
    }
    close (fd);
    if (!buf || got != total) {
        free (buf);
        return -1;
    }
    *data = buf;
    *size = total;
    return 0;
}

static int
s_cut (const char *path, uint64_t size)
{
    int fd = open (path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = ftruncate (fd, (off_t) size) == 0 && fsync (fd) == 0 ? 0 : -1;
    close (fd);
    return rc;
}

//  A record that checks out at `pos` (header, length, payload).
static bool
s_record_at (const uint8_t *data, size_t size, size_t pos, checksum_fn *checksum)
{
    if (size - pos < JFILE_HEADER)
        return false;
    const uint8_t *head = data + pos;
    uint32_t length = s_get32 (head);
    if (length > JFILE_MAX_RECORD || size - pos - JFILE_HEADER < length
    ||  checksum (head, 8) != s_get32 (head + 8))
        return false;
    return checksum (head + JFILE_HEADER, length) == s_get32 (head + 4);
}

//  What the bytes from `pos` on are when no record is valid there: a
//  tail (no valid record at any later offset) of zeros or of garbage, or
//  JFILE_TAIL_NONE when a valid record follows (damage in the middle).
static jfile_tail_t
s_tail_kind (const uint8_t *data, size_t size, size_t pos, checksum_fn *checksum)
{
    bool zeros = true;
    for (size_t at = pos; at < size && zeros; at++)
        zeros = data [at] == 0;
    if (zeros)
        return JFILE_TAIL_ZEROS;
    for (size_t at = pos + 1; at + JFILE_HEADER <= size; at++)
        if (s_record_at (data, size, at, checksum))
            return JFILE_TAIL_NONE;
    return JFILE_TAIL_GARBAGE;
}

static void
s_tail (jfile_report_t *report, uint64_t *cut_at, size_t pos, size_t size, jfile_tail_t kind)
{
    report->torn_bytes = size - pos;
    report->tail = kind;
    *cut_at = pos;
}

jfile_status_t
jfile_scan (const char *path, bool repair, jfile_record_fn *fn, void *arg,
            jfile_report_t *report, char *why, size_t why_size)
{
    assert (path && fn && report);
    memset (report, 0, sizeof *report);
    uint8_t *data;
    size_t size;
    int read_rc = s_read_file (path, &data, &size);
    if (read_rc == 1)
        return JFILE_OK;
    if (read_rc < 0) {
        snprintf (why, why_size, "cannot read %s: %s", path, strerror (errno));
        return JFILE_IO;
    }
    jfile_status_t status = JFILE_OK;
    uint64_t cut_at = UINT64_MAX;       //  cut the file here when set
    size_t pos = 0;
    checksum_fn *checksum = s_crc_v2;
    int version = size >= JFILE_MAGIC_SIZE ? s_version (data) : 2;
    if (size < JFILE_MAGIC_SIZE) {
        //  Created but its magic never fully written: empty.
        s_tail (report, &cut_at, 0, size, JFILE_TAIL_TORN);
        pos = size;
    }
    else
    if (!version) {
        if (s_tail_kind (data, size, 0, checksum) == JFILE_TAIL_ZEROS) {
            //  Created, then a power cut before its first bytes reached
            //  the disk.
            s_tail (report, &cut_at, 0, size, JFILE_TAIL_ZEROS);
            pos = size;
        }
        else {
            snprintf (why, why_size, "%s is not a Parley journal file (bad magic at offset 0)",
                      path);
            report->bad_offset = 0;
            free (data);
            return JFILE_CORRUPT;
        }
    }
    else {
        pos = JFILE_MAGIC_SIZE;
        checksum = version == 1 ? s_crc_v1 : s_crc_v2;
    }
    //  Under repair, the good records are also copied here: when one in the
    //  middle is skipped the file is rewritten from this copy.
    uint8_t *kept = repair ? malloc (size + JFILE_MAGIC_SIZE) : NULL;
    size_t kept_size = 0;
    if (kept) {
        memcpy (kept, version == 1 ? JFILE_MAGIC_V1 : JFILE_MAGIC, JFILE_MAGIC_SIZE);
        kept_size = JFILE_MAGIC_SIZE;
    }
    while (pos < size) {
        size_t left = size - pos;
        if (left < JFILE_HEADER) {
            jfile_tail_t kind = s_tail_kind (data, size, pos, checksum);
            s_tail (report, &cut_at, pos, size, kind == JFILE_TAIL_ZEROS ? kind : JFILE_TAIL_TORN);
            break;
        }
        const uint8_t *head = data + pos;
        uint32_t length = s_get32 (head);
        bool head_ok = checksum (head, 8) == s_get32 (head + 8) && length <= JFILE_MAX_RECORD;
        if (!head_ok) {
            jfile_tail_t kind = s_tail_kind (data, size, pos, checksum);
            if (kind != JFILE_TAIL_NONE) {
                s_tail (report, &cut_at, pos, size, kind);
                break;
            }
            report->bad_offset = pos;
            if (!repair) {
                snprintf (why, why_size, "%s: corrupt record header at offset %zu "
                          "(%zu bytes from there on); start with --repair to keep the "
                          "records before it", path, pos, left);
                status = JFILE_CORRUPT;
                break;
            }
            report->lost_bytes += left;
            report->lost_records++;
            cut_at = pos;
            break;
        }
        if (left - JFILE_HEADER < length) {
            s_tail (report, &cut_at, pos, size, JFILE_TAIL_TORN);
            break;
        }
        const uint8_t *payload = head + JFILE_HEADER;
        size_t next = pos + JFILE_HEADER + length;
        if (checksum (payload, length) != s_get32 (head + 4)) {
            //  The last record, complete in length but not in content (its
            //  blocks were allocated and not all written), or followed by
            //  nothing valid: a tail.
            if (next == size || s_tail_kind (data, size, next, checksum) != JFILE_TAIL_NONE) {
                s_tail (report, &cut_at, pos, size, JFILE_TAIL_TORN);
                break;
            }
            report->bad_offset = pos;
            if (!repair) {
                snprintf (why, why_size, "%s: corrupt record at offset %zu (%u bytes; %zu "
                          "bytes follow); start with --repair to skip it", path, pos,
                          (unsigned) length, size - next);
                status = JFILE_CORRUPT;
                break;
            }
            report->lost_records++;
            report->lost_bytes += JFILE_HEADER + length;
            pos = next;
            continue;
        }
        if (fn (payload, length, arg) != 0) {
            snprintf (why, why_size, "%s: the record at offset %zu cannot be applied", path, pos);
            status = JFILE_IO;
            break;
        }
        if (kept) {
            memcpy (kept + kept_size, head, JFILE_HEADER + length);
            kept_size += JFILE_HEADER + length;
        }
        report->records++;
        pos = next;
    }
    free (data);
    if (status == JFILE_OK && kept && report->lost_records > 0) {
        //  Rewrite without the skipped records: tmp, fsync, rename.
        char tmp [4096];
        snprintf (tmp, sizeof tmp, "%s.repair", path);
        int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        bool ok = fd >= 0 && s_write_all (fd, kept, kept_size) == 0 && fsync (fd) == 0;
        if (fd >= 0)
            close (fd);
        if (!ok || rename (tmp, path) != 0) {
            snprintf (why, why_size, "cannot rewrite %s without its corrupt records: %s",
                      path, strerror (errno));
            unlink (tmp);
            free (kept);
            return JFILE_IO;
        }
        cut_at = UINT64_MAX;
    }
    free (kept);
    if (status == JFILE_OK && cut_at != UINT64_MAX && s_cut (path, cut_at) != 0) {
        snprintf (why, why_size, "cannot cut %s to %llu bytes: %s", path,
                  (unsigned long long) cut_at, strerror (errno));
        return JFILE_IO;
    }
    return status;
}
