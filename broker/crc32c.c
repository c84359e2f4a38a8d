// SPDX-License-Identifier: MIT
/*  crc32c - CRC-32C with the CPU's instruction, or a table; see crc32c.h.

    What is slow: nothing on x86-64 since 2008 (Nehalem) or on ARMv8.1 and
    later (the instruction is mandatory there). The instruction takes three
    cycles but a new one can start every cycle, so one stream of it runs at
    a third of its speed: a buffer of at least three blocks is checksummed
    as three independent streams, interleaved, and the three values are
    joined by "shifting" the first ones over the bytes that follow them (a
    linear map on the 32-bit value, four table lookups; the tables are
    made once). About 8 GB/s on one stream, 20 GB/s on three. The table
    path does eight lookups per 8 bytes, about 1.5 GB/s.

    The register convention: the streams run on the raw register (no
    inversion), which is linear: run(r, data) = run(r, zeros) ^ run(0,
    data). So a block B after a value A gives shift(A) ^ run(0, B), where
    shift runs A over as many zero bytes as B has.
*/
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "crc32c.h"

#if defined(__x86_64__)
#   include <nmmintrin.h>
#elif defined(__aarch64__)
#   include <arm_acle.h>
#   include <sys/auxv.h>
#   ifndef HWCAP_CRC32
#       define HWCAP_CRC32 (1 << 7)
#   endif
#endif

//  The reflected Castagnoli polynomial.
#define CRC32C_POLY 0x82F63B78u

//  Interleaved streams: blocks of LONG bytes for buffers of at least
//  three of them, of SHORT bytes down to three of those; less runs as one
//  stream. Multiples of 8 (the instruction's word).
#define CRC32C_LONG  8192
#define CRC32C_SHORT 256

typedef uint32_t (crc_fn) (uint32_t crc, const void *data, size_t size);

static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static uint32_t s_table [8][256];
//  shift over LONG (0) or SHORT (1) zero bytes, by byte of the value.
static uint32_t s_shift [2][4][256];
static crc_fn *s_impl;
static const char *s_impl_name = "table";

static uint32_t
s_by_table (uint32_t crc, const void *data, size_t size)
{
    const uint8_t *p = data;
    crc = ~crc;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (size >= 8) {
        uint64_t word;
        memcpy (&word, p, 8);
        word ^= crc;
        crc = s_table [7][word & 0xff] ^ s_table [6][(word >> 8) & 0xff]
            ^ s_table [5][(word >> 16) & 0xff] ^ s_table [4][(word >> 24) & 0xff]
            ^ s_table [3][(word >> 32) & 0xff] ^ s_table [2][(word >> 40) & 0xff]
            ^ s_table [1][(word >> 48) & 0xff] ^ s_table [0][word >> 56];
        p += 8;
        size -= 8;
    }
#endif
    while (size--)
        crc = s_table [0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static inline uint32_t
s_shifted (int which, uint32_t value)
{
    return s_shift [which][0][value & 0xff] ^ s_shift [which][1][(value >> 8) & 0xff]
         ^ s_shift [which][2][(value >> 16) & 0xff] ^ s_shift [which][3][value >> 24];
}

//  Three streams of the instruction `STEP64` over 8-byte words of
//  blocks of `block` bytes, joined with shift table `which`; then the
//  rest as one stream. One body for x86-64 and aarch64, whose
//  instructions differ only in name.
#define CRC32C_STREAMS(STEP64, STEP8)                                           \
    const uint8_t *p = data;                                                    \
    uint32_t value = ~crc;                                                      \
    for (int which = 0; which < 2; which++) {                                   \
        size_t block = which == 0 ? CRC32C_LONG : CRC32C_SHORT;                 \
        while (size >= 3 * block) {                                             \
            uint32_t a = value, b = 0, c = 0;                                   \
            for (size_t at = 0; at < block; at += 8) {                          \
                uint64_t wa, wb, wc;                                            \
                memcpy (&wa, p + at, 8);                                        \
                memcpy (&wb, p + block + at, 8);                                \
                memcpy (&wc, p + 2 * block + at, 8);                            \
                a = (uint32_t) STEP64 (a, wa);                                  \
                b = (uint32_t) STEP64 (b, wb);                                  \
                c = (uint32_t) STEP64 (c, wc);                                  \
            }                                                                   \
            value = s_shifted (which, s_shifted (which, a) ^ b) ^ c;            \
            p += 3 * block;                                                     \
            size -= 3 * block;                                                  \
        }                                                                       \
    }                                                                           \
    while (size >= 8) {                                                         \
        uint64_t word;                                                          \
        memcpy (&word, p, 8);                                                   \
        value = (uint32_t) STEP64 (value, word);                                \
        p += 8;                                                                 \
        size -= 8;                                                              \
    }                                                                           \
    while (size--)                                                              \
        value = STEP8 (value, *p++);                                            \
    return ~value;

#if defined(__x86_64__)
__attribute__ ((target ("sse4.2")))
static uint32_t
s_by_sse42 (uint32_t crc, const void *data, size_t size)
{
    CRC32C_STREAMS (_mm_crc32_u64, _mm_crc32_u8)
}
#endif

#if defined(__aarch64__)
__attribute__ ((target ("+crc")))
static uint32_t
s_by_armv8 (uint32_t crc, const void *data, size_t size)
{
    CRC32C_STREAMS (__crc32cd, __crc32cb)
}
#endif

//  The raw register run over `zeros` zero bytes.
static uint32_t
s_over_zeros (uint32_t value, size_t zeros)
{
    while (zeros--)
        value = s_table [0][value & 0xff] ^ (value >> 8);
    return value;
}

static void
s_init (void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t crc = i;
        for (int bit = 0; bit < 8; bit++)
            crc = crc & 1 ? (crc >> 1) ^ CRC32C_POLY : crc >> 1;
        s_table [0][i] = crc;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            s_table [k][i] = (s_table [k - 1][i] >> 8) ^ s_table [0][s_table [k - 1][i] & 0xff];
    //  The shift is linear: the image of each of the 32 bits, then every
    //  byte value of each of the four bytes as the sum of its bits'.
    for (int which = 0; which < 2; which++) {
        uint32_t bit_image [32];
        for (int bit = 0; bit < 32; bit++)
            bit_image [bit] = s_over_zeros (1u << bit, which == 0 ? CRC32C_LONG : CRC32C_SHORT);
        for (int byte = 0; byte < 4; byte++)
            for (uint32_t v = 0; v < 256; v++) {
                uint32_t image = 0;
                for (int bit = 0; bit < 8; bit++)
                    if (v & (1u << bit))
                        image ^= bit_image [byte * 8 + bit];
                s_shift [which][byte][v] = image;
            }
    }
    s_impl = s_by_table;
#if defined(__x86_64__)
    __builtin_cpu_init ();
    if (__builtin_cpu_supports ("sse4.2")) {
        s_impl = s_by_sse42;
        s_impl_name = "sse4.2";
    }
#elif defined(__aarch64__)
    if (getauxval (AT_HWCAP) & HWCAP_CRC32) {
        s_impl = s_by_armv8;
        s_impl_name = "armv8";
    }
#endif
}

uint32_t
crc32c (uint32_t crc, const void *data, size_t size)
{
    pthread_once (&s_once, s_init);
    return s_impl (crc, data, size);
}

uint32_t
crc32c_table (uint32_t crc, const void *data, size_t size)
{
    pthread_once (&s_once, s_init);
    return s_by_table (crc, data, size);
}

const char *
crc32c_impl (void)
{
    pthread_once (&s_once, s_init);
    return s_impl_name;
}
