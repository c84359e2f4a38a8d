// SPDX-License-Identifier: MIT
/*  pwire - the bounded structural walk over raw msgpack bytes (internal).

    pmsg_decode unpacks with pwire_unpack: the walk that checks the bytes
    builds the tree as it goes. Public callers use pwire_check() from pmsg.h.
*/
#ifndef PARLEY_PWIRE_H
#define PARLEY_PWIRE_H

#include "pmsg.h"

typedef struct {
    size_t objects;         //  every value, map keys included, root included
    size_t containers;      //  arrays and maps
} pwire_stats_t;

perr_t pwire_scan (const void *data, size_t size, const pwire_limits_t *limits,
                   pwire_stats_t *stats, char *why, size_t why_size);

//  pwire_scan's walk that also builds the msgpack_object tree in `zone`,
//  in the same pass: the whole decode reads the frame once. Strings, bins
//  and exts point into `data`, which must outlive the tree. Accepts and
//  rejects exactly what pwire_scan does, with the same sentences.
perr_t pwire_unpack (const void *data, size_t size, const pwire_limits_t *limits,
                     msgpack_zone *zone, msgpack_object *root, char *why, size_t why_size);

//  printf into why (if not NULL); returns code, so callers can `return`.
perr_t pwire_fail (char *why, size_t why_size, perr_t code, const char *format, ...)
    __attribute__ ((format (printf, 4, 5)));

#endif
