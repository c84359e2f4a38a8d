// SPDX-License-Identifier: MIT
/*  tap_record - the record file of parley-tap: writing it.

    `parley-tap --record FILE` saves every TAP frame it receives, before any
    filter, so a later `--replay FILE` can apply other filters. The format is
    small and documented here and in docs/TAP.md, so other tools can read it:

        file    = magic record*
        magic   = the 8 bytes "PARLTAP1"
        record  = length crc payload
        length  = uint32, big-endian: payload bytes, 1..TAP_RECORD_MAX
        crc     = uint32, big-endian: CRC-32 of the payload (IEEE 802.3, the
                  same as zlib's crc32() and Python's zlib.crc32())
        payload = one TAP frame (a msgpack map) exactly as received from the
                  broker's tap socket; the topic frame is not stored, since it
                  is always "tap." + the map's `dir`.

    The reader (tap_replay) rejects any deviation with an error that names the
    byte offset, and never allocates more than TAP_RECORD_MAX for one record.
*/
#ifndef PARLEY_TAP_RECORD_H
#define PARLEY_TAP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pmsg.h"

#define TAP_RECORD_MAGIC      "PARLTAP1"
#define TAP_RECORD_MAGIC_SIZE 8
#define TAP_RECORD_HEADER     8        //  length + crc
//  A TAP frame wraps a body of up to PROTO_MAX_FRAME plus a small envelope
//  (tseq, ts, dir, peer); 64 KiB of headroom covers the longest peer/topic.
#define TAP_RECORD_MAX        (PROTO_MAX_FRAME + 64 * 1024)

typedef struct _tap_record_t tap_record_t;

//  Creates (truncates) the file and writes the magic. NULL with a sentence
//  in `why` when the file cannot be created.
tap_record_t *tap_record_new (const char *path, char *why, size_t why_size);
//  Closes the file; errors at close are logged (use tap_record_close to see them).
void tap_record_destroy (tap_record_t **self_p);
//  Appends one record. false (with `why`) on a write error or a size outside
//  1..TAP_RECORD_MAX; the file is then unusable.
bool tap_record_write (tap_record_t *self, const void *data, size_t size,
                       char *why, size_t why_size);
//  Flushes to the kernel; false on error.
bool tap_record_flush (tap_record_t *self, char *why, size_t why_size);

//  CRC-32 (IEEE) of at most TAP_RECORD_MAX bytes: zlib's crc32().
uint32_t tap_record_crc32 (const void *data, size_t size);

#endif
