// SPDX-License-Identifier: MIT
/*  tap_record - writes parley-tap record files. See tap_record.h for the
    format. stdio buffering is enough here: records arrive one by one from a
    socket, and we flush once a second and at exit (tap_record_flush), so a
    killed tap loses at most about a second of recording.
*/
#include <czmq.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include "tap_record.h"

struct _tap_record_t {
    FILE *file;
    char *path;
    uint64_t count;
    bool failed;
};

//  zlib's crc32 is the IEEE CRC-32 the format names, table-driven and
//  faster than a byte loop; records are at most TAP_RECORD_MAX, well
//  within zlib's uInt.
uint32_t
tap_record_crc32 (const void *data, size_t size)
{
    assert (size <= TAP_RECORD_MAX);
    return (uint32_t) crc32 (crc32 (0L, Z_NULL, 0), (const Bytef *) data, (uInt) size);
}

static void
s_put32 (uint8_t *out, uint32_t value)
{
    out [0] = (uint8_t) (value >> 24);
    out [1] = (uint8_t) (value >> 16);
    out [2] = (uint8_t) (value >> 8);
    out [3] = (uint8_t) value;
}

tap_record_t *
tap_record_new (const char *path, char *why, size_t why_size)
{
    assert (path);
    tap_record_t *self = (tap_record_t *) zmalloc (sizeof (tap_record_t));
    self->path = strdup (path);
    self->file = fopen (path, "wb");
    if (!self->file) {
        snprintf (why, why_size, "cannot create %s: %s", path, strerror (errno));
        goto err;
    }
    if (fwrite (TAP_RECORD_MAGIC, 1, TAP_RECORD_MAGIC_SIZE, self->file)
        != TAP_RECORD_MAGIC_SIZE) {
        snprintf (why, why_size, "cannot write %s: %s", path, strerror (errno));
        goto err;
    }
    return self;
err:
    tap_record_destroy (&self);
    return NULL;
}

void
tap_record_destroy (tap_record_t **self_p)
{
    assert (self_p);
    tap_record_t *self = *self_p;
    if (!self)
        return;
    if (self->file && fclose (self->file) != 0)
        fprintf (stderr, "parley-tap: error closing %s: %s\n", self->path, strerror (errno));
    free (self->path);
    free (self);
    *self_p = NULL;
}

bool
tap_record_write (tap_record_t *self, const void *data, size_t size,
                  char *why, size_t why_size)
{
    assert (self);
    if (self->failed) {
        snprintf (why, why_size, "%s: an earlier write failed", self->path);
        return false;
    }
    if (size == 0 || size > TAP_RECORD_MAX) {
        snprintf (why, why_size, "frame of %zu bytes is outside 1..%d", size, TAP_RECORD_MAX);
        return false;
    }
    uint8_t header [TAP_RECORD_HEADER];
    s_put32 (header, (uint32_t) size);
    s_put32 (header + 4, tap_record_crc32 (data, size));
    if (fwrite (header, 1, sizeof header, self->file) != sizeof header
    ||  fwrite (data, 1, size, self->file) != size) {
        snprintf (why, why_size, "cannot write %s: %s", self->path, strerror (errno));
        self->failed = true;
        return false;
    }
    self->count++;
    return true;
}

bool
tap_record_flush (tap_record_t *self, char *why, size_t why_size)
{
    assert (self);
    if (fflush (self->file) != 0) {
        snprintf (why, why_size, "cannot write %s: %s", self->path, strerror (errno));
        self->failed = true;
        return false;
    }
    return true;
}

