// SPDX-License-Identifier: MIT
/*  crc32c - CRC-32C (Castagnoli), the checksum of the journal's records.

    The CPU's own instruction where it has one, chosen once at the first
    call: SSE4.2's crc32 on x86-64 (__builtin_cpu_supports), the ARMv8 CRC32
    extension's crc32c on aarch64 (getauxval's HWCAP_CRC32); elsewhere a
    slicing-by-8 table, eight bytes per step. Every path gives the same
    value (the table is the reference the tests hold the hardware to).
    Why not zlib's crc32: no CPU computes that polynomial in one
    instruction, and on the journal's hot path (a checksum per record of
    every request) the table walk cost several per cent of the broker's
    time; the instruction makes it a rounding error.

    Like zlib's crc32, the value chains: crc32c (crc32c (0, a, n), b, m)
    is the checksum of a followed by b. crc32c (0, "123456789", 9) is
    0xE3069283.
*/
#ifndef PARLEY_BROKER_CRC32C_H
#define PARLEY_BROKER_CRC32C_H

#include <stddef.h>
#include <stdint.h>

//  The checksum of `size` bytes following `crc` (0 to start).
uint32_t crc32c (uint32_t crc, const void *data, size_t size);
//  The same, always through the table (tests and the bench compare it
//  with the hardware path).
uint32_t crc32c_table (uint32_t crc, const void *data, size_t size);
//  Which implementation crc32c uses here: "sse4.2", "armv8" or "table".
const char *crc32c_impl (void);

#endif
