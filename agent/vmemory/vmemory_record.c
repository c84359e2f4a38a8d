// SPDX-License-Identifier: MIT
/*  vmemory_record - the byte layout of memory.log. See vmemory_record.h. */
#include "vmemory_record.h"
#include "vmemory_file.h"
#include "vmemory.h"             //  limits

#include <stdio.h>
#include <string.h>

#define S_MAGIC "PMEMLOG"       //  8 bytes with its NUL
#define S_VERSION 1
#define S_RECORD_FIXED 28       //  a record's bytes besides text and vector

uint64_t
vmemory_record_size (int dim, uint32_t len)
{
    return S_RECORD_FIXED + (uint64_t) len + 4 * (uint64_t) dim;
}

void
vmemory_record_encode_header (unsigned char *p, int dim, uint64_t log_id, const char *factory)
{
    memset (p, 0, VMEMORY_RECORD_HEADER_SIZE);
    memcpy (p, S_MAGIC, 8);
    vmemory_file_put32 (p + 8, S_VERSION);
    vmemory_file_put32 (p + 12, (uint32_t) dim);
    vmemory_file_put64 (p + 16, log_id);
    size_t flen = strlen (factory);
    vmemory_file_put32 (p + 24, (uint32_t) flen);
    memcpy (p + 28, factory, flen);
    vmemory_file_put64 (p + 92, vmemory_file_fnv (VMEMORY_FILE_FNV_INIT, p, 92));
}

int
vmemory_record_decode_header (const unsigned char *p, int dim, uint64_t *log_id,
                              char *factory, char *why, size_t why_size)
{
    if (memcmp (p, S_MAGIC, 8) != 0) {
        snprintf (why, why_size, "not a Parley memory log (bad magic)");
        return -1;
    }
    if (vmemory_file_get64 (p + 92) != vmemory_file_fnv (VMEMORY_FILE_FNV_INIT, p, 92)) {
        snprintf (why, why_size, "header checksum mismatch (corrupt file)");
        return -1;
    }
    uint32_t version = vmemory_file_get32 (p + 8);
    uint32_t file_dim = vmemory_file_get32 (p + 12);
    uint32_t flen = vmemory_file_get32 (p + 24);
    if (version != S_VERSION) {
        snprintf (why, why_size, "unsupported memory log version %u", version);
        return -1;
    }
    if (file_dim != (uint32_t) dim) {
        snprintf (why, why_size, "holds vectors of dimension %u but the embedder gives %d",
                  file_dim, dim);
        return -1;
    }
    if (flen == 0 || flen > VMEMORY_FILE_FACTORY_MAX) {
        snprintf (why, why_size, "invalid factory string length %u", flen);
        return -1;
    }
    *log_id = vmemory_file_get64 (p + 16);
    memcpy (factory, p + 28, flen);
    factory [flen] = 0;
    return 0;
}

uint64_t
vmemory_record_encode (unsigned char *p, int dim, uint64_t seq, uint64_t batch,
                       const char *text, size_t len, const float *vec)
{
    uint64_t record = vmemory_record_size (dim, (uint32_t) len);
    vmemory_file_put32 (p, (uint32_t) len);
    vmemory_file_put64 (p + 4, seq);
    vmemory_file_put64 (p + 12, batch);
    memcpy (p + VMEMORY_RECORD_TEXT_AT, text, len);
    for (int i = 0; i < dim; i++) {
        uint32_t bits;
        memcpy (&bits, vec + i, 4);
        vmemory_file_put32 (p + VMEMORY_RECORD_TEXT_AT + len + 4 * i, bits);
    }
    uint64_t fnv = vmemory_file_fnv (VMEMORY_FILE_FNV_INIT, p, record - 8);
    vmemory_file_put64 (p + record - 8, fnv);
    return fnv;
}

int
vmemory_record_check (int dim, const unsigned char *base, uint64_t size, uint64_t off,
                      uint64_t seq, uint32_t *len_p, uint64_t *fnv_p, const char **why)
{
    if (size - off < S_RECORD_FIXED) {
        *why = "the file ends inside its header";
        return -1;
    }
    uint32_t len = vmemory_file_get32 (base + off);
    if (len > VMEMORY_MAX_TEXT_LIMIT) {
        *why = "its length is over the text limit";
        return -1;
    }
    uint64_t record = vmemory_record_size (dim, len);
    if (record > size - off) {
        *why = "the file ends before the record does";
        return -1;
    }
    uint64_t fnv = vmemory_file_get64 (base + off + record - 8);
    if (vmemory_file_fnv (VMEMORY_FILE_FNV_INIT, base + off, record - 8) != fnv) {
        *why = "checksum mismatch";
        return -1;
    }
    if (vmemory_file_get64 (base + off + 4) != seq) {
        *why = "out of sequence (records reordered or duplicated)";
        return -1;
    }
    *len_p = len;
    *fnv_p = fnv;
    return 0;
}

//  A valid record of a later save than `bad` after `off` means that save
//  came after the bad record's save was fdatasynced, so the bad record is
//  not a torn tail. Valid records of the
//  bad record's own save may follow it (the kernel writes the pages of an
//  unfinished append in any order): still a torn tail. Byte by byte, but
//  a candidate must have a plausible length, sequence and batch number
//  before its checksum is computed, so this is cheap.
bool
vmemory_record_follows (int dim, const unsigned char *base, uint64_t size, uint64_t off,
                        uint64_t bad)
{
    uint64_t min_record = vmemory_record_size (dim, 0);
    uint64_t max_seq = bad + (size - off) / min_record;
    for (uint64_t p = off + 1; p + min_record <= size; p++) {
        uint32_t len = vmemory_file_get32 (base + p);
        uint64_t seq = vmemory_file_get64 (base + p + 4);
        uint64_t batch = vmemory_file_get64 (base + p + 12);
        if (len > VMEMORY_MAX_TEXT_LIMIT || seq <= bad || seq > max_seq
        ||  batch <= bad || batch > seq
        ||  vmemory_record_size (dim, len) > size - p)
            continue;
        uint32_t len2;
        uint64_t fnv;
        const char *why;
        if (vmemory_record_check (dim, base, size, p, seq, &len2, &fnv, &why) == 0)
            return true;
    }
    return false;
}

void
vmemory_record_vector (const unsigned char *record, int dim, float *out)
{
    const unsigned char *p = record + VMEMORY_RECORD_TEXT_AT + vmemory_file_get32 (record);
    for (int i = 0; i < dim; i++) {
        uint32_t bits = vmemory_file_get32 (p + 4 * i);
        memcpy (out + i, &bits, 4);
    }
}
