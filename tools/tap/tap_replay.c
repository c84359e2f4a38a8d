// SPDX-License-Identifier: MIT
/*  tap_replay - reads parley-tap record files; see tap_replay.h.

    One buffer is reused for every record and grows only to the largest
    record seen, which is at most TAP_RECORD_MAX, so a hostile file cannot
    make us allocate more than that (the length is checked against the limit
    and against the file size first).
*/
#include <czmq.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "tap_record.h"
#include "tap_replay.h"

struct _tap_replay_t {
    FILE *file;
    char *path;
    uint64_t offset;        //  bytes consumed so far
    int64_t file_size;      //  -1 when not a regular file (a pipe)
    uint8_t *buffer;
    size_t buffer_size;
    uint64_t count;
};

static uint32_t
s_get32 (const uint8_t *in)
{
    return ((uint32_t) in [0] << 24) | ((uint32_t) in [1] << 16)
         | ((uint32_t) in [2] << 8) | (uint32_t) in [3];
}

tap_replay_t *
tap_replay_new (const char *path, char *why, size_t why_size)
{
    assert (path);
    tap_replay_t *self = (tap_replay_t *) zmalloc (sizeof (tap_replay_t));
    self->path = strdup (path);
    self->file_size = -1;
    self->file = fopen (path, "rb");
    if (!self->file) {
        snprintf (why, why_size, "cannot open %s: %s", path, strerror (errno));
        goto err;
    }
    struct stat st;
    if (fstat (fileno (self->file), &st) == 0 && S_ISREG (st.st_mode))
        self->file_size = (int64_t) st.st_size;

    char magic [TAP_RECORD_MAGIC_SIZE];
    size_t got = fread (magic, 1, sizeof magic, self->file);
    if (got != sizeof magic || memcmp (magic, TAP_RECORD_MAGIC, sizeof magic) != 0) {
        snprintf (why, why_size, "%s is not a parley-tap record file "
                  "(it does not start with \"%s\")", path, TAP_RECORD_MAGIC);
        goto err;
    }
    self->offset = sizeof magic;
    return self;
err:
    tap_replay_destroy (&self);
    return NULL;
}

void
tap_replay_destroy (tap_replay_t **self_p)
{
    assert (self_p);
    tap_replay_t *self = *self_p;
    if (!self)
        return;
    if (self->file)
        fclose (self->file);
    free (self->buffer);
    free (self->path);
    free (self);
    *self_p = NULL;
}

int
tap_replay_next (tap_replay_t *self, const void **data, size_t *size,
                 char *why, size_t why_size)
{
    assert (self);
    uint8_t header [TAP_RECORD_HEADER];
    size_t got = fread (header, 1, sizeof header, self->file);
    if (got == 0 && feof (self->file))
        return 0;
    if (got != sizeof header) {
        snprintf (why, why_size, "%s: truncated record header at offset %" PRIu64
                  " (%zu of %d bytes)", self->path, self->offset, got, TAP_RECORD_HEADER);
        return -1;
    }
    uint32_t length = s_get32 (header);
    uint32_t crc = s_get32 (header + 4);
    if (length == 0 || length > TAP_RECORD_MAX) {
        snprintf (why, why_size, "%s: corrupt record at offset %" PRIu64
                  ": length %" PRIu32 " is outside 1..%d", self->path, self->offset,
                  length, TAP_RECORD_MAX);
        return -1;
    }
    uint64_t body_at = self->offset + TAP_RECORD_HEADER;
    if (self->file_size >= 0 && body_at + length > (uint64_t) self->file_size) {
        snprintf (why, why_size, "%s: truncated record at offset %" PRIu64
                  ": it claims %" PRIu32 " bytes, only %" PRIu64 " remain",
                  self->path, self->offset, length, (uint64_t) self->file_size - body_at);
        return -1;
    }
    if (length > self->buffer_size) {
        uint8_t *bigger = (uint8_t *) realloc (self->buffer, length);
        if (!bigger) {
            snprintf (why, why_size, "out of memory for a record of %" PRIu32 " bytes", length);
            return -1;
        }
        self->buffer = bigger;
        self->buffer_size = length;
    }
    got = fread (self->buffer, 1, length, self->file);
    if (got != length) {
        snprintf (why, why_size, "%s: truncated record at offset %" PRIu64
                  ": %zu of %" PRIu32 " bytes", self->path, self->offset, got, length);
        return -1;
    }
    if (tap_record_crc32 (self->buffer, length) != crc) {
        snprintf (why, why_size, "%s: corrupt record at offset %" PRIu64
                  ": checksum mismatch", self->path, self->offset);
        return -1;
    }
    self->offset = body_at + length;
    self->count++;
    *data = self->buffer;
    *size = length;
    return 1;
}

