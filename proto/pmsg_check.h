// SPDX-License-Identifier: MIT
/*  pcheck - validates a decoded msgpack map against a schema (internal).

    Used by pmsg_decode. Keeps the path of the field being checked (at most
    PCHECK_PATH levels: message, record array, record) so that error
    sentences name it, e.g. "SEND.messages[3].to: ...", without formatting
    anything unless there is an error.
*/
#ifndef PARLEY_PMSG_CHECK_H
#define PARLEY_PMSG_CHECK_H

#include "pmsg.h"

#define PCHECK_PATH 4

typedef struct {
    msgpack_zone *zone;         //  scratch for duplicate-key sorting
    bool request;               //  required arrays of requests must not be empty
    const char *type_name;
    char *why;
    size_t why_size;
    unsigned depth;
    const char *field [PCHECK_PATH];
    long index [PCHECK_PATH];   //  -1: not an array element
} pcheck_t;

void pcheck_init (pcheck_t *self, msgpack_zone *zone, char *why, size_t why_size);
//  Formats "<path>: <sentence>" into why; returns code.
perr_t pcheck_fail (pcheck_t *self, perr_t code, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));
//  Checks `map` against `schema`. `envelope`: skip v, t and id (top level).
perr_t pcheck_map (pcheck_t *self, const msgpack_object *map, const pschema_t *schema,
                   bool envelope);

#endif
