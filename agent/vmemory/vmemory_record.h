// SPDX-License-Identifier: MIT
/*  vmemory_record - the byte layout of memory.log (described in
    vmemory_log.h): encoding and checking its header and its records.

    Used by vmemory_log.c only, which owns the file, its buffering and its
    recovery; this pair knows only bytes, so a format change stays here.
    Every check takes the file size and checks lengths against it before
    reading past them.
*/
#ifndef PARLEY_VMEMORY_RECORD_H
#define PARLEY_VMEMORY_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  magic 8, version 4, dim 4, log id 8, factory length 4, factory 64, fnv 8
#define VMEMORY_RECORD_HEADER_SIZE 100
//  A record: length 4, seq 8, batch 8 | text | vector | fnv 8
#define VMEMORY_RECORD_TEXT_AT 20

//  Bytes of a record with a text of `len` bytes.
uint64_t vmemory_record_size (int dim, uint32_t len);

//  Writes the VMEMORY_RECORD_HEADER_SIZE bytes of the header.
void vmemory_record_encode_header (unsigned char *p, int dim, uint64_t log_id,
                                   const char *factory);
//  Checks a header against the embedder's dim: 0 with the log id and the
//  factory string (VMEMORY_FILE_FACTORY_MAX + 1 bytes), or -1 with `why`.
int vmemory_record_decode_header (const unsigned char *p, int dim, uint64_t *log_id,
                                  char *factory, char *why, size_t why_size);

//  Writes record `seq` of save `batch` at p (vmemory_record_size bytes);
//  returns its checksum.
uint64_t vmemory_record_encode (unsigned char *p, int dim, uint64_t seq, uint64_t batch,
                                const char *text, size_t len, const float *vec);
//  Checks the record at `off`: 0 with its text length and checksum, or -1
//  with `why`. Lengths are checked against the file size first.
int vmemory_record_check (int dim, const unsigned char *base, uint64_t size, uint64_t off,
                          uint64_t seq, uint32_t *len_p, uint64_t *fnv_p, const char **why);
//  True if a valid record of a LATER save than record `bad` starts
//  anywhere after `off` (see vmemory_log.h: corruption, not a torn tail).
bool vmemory_record_follows (int dim, const unsigned char *base, uint64_t size, uint64_t off,
                             uint64_t bad);
//  Decodes the vector of the (checked) record at `record` into out.
void vmemory_record_vector (const unsigned char *record, int dim, float *out);

#endif
