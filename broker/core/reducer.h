// SPDX-License-Identifier: MIT
/*  reducer - one stored state value (sval_t) and the five reducers on it.

    Internal to state.c; split out so each file keeps one concern.

    A value is kept ENCODED (canonical msgpack, re-packed by msgpack-c) in a
    buffer with SVAL_HEAD spare bytes in front:

        data: [ spare ... | header ][ body .................. ]  cap
                          ^head     ^SVAL_HEAD                ^size

    For append and union the body is the concatenated encoded elements and
    the array header (1, 3 or 5 bytes, from `count`) is rewritten right-
    aligned in front of it after each change. So appending k elements to a
    list of n costs O(k) amortized (realloc doubles), not O(n): no decode of
    the old list, no re-encode, and the value stays one contiguous msgpack
    array that snapshots and publishes copy verbatim. Measured (one-off,
    -O2, this 2-core box, state_apply_raw of a 1-element append): ~240 ns
    per write whether the list holds 0, 100k or 300k elements. The spare capacity
    (up to 2x on a growing list) is the price; it is not counted against
    the byte limit, which counts encoded sizes.

    Union keeps a zhashx set of its element encodings for O(1) membership;
    that duplicates the element bytes in memory (honest cost: ~2x + ~64 B
    per element for union keys only). sval_footprint counts that copy and
    SVAL_MEMBER_COST per member against the state's byte limit: without
    it a union of tiny elements held ~20x the memory the limit allowed.

    Merge and add decode the old value (msgpack_unpack in a zone) and build
    a new one: O(size of the old map) per merge. Fine for agent_positions
    style maps of tens to thousands of keys; a big map with frequent small
    merges would want a per-key index like union's (left for later).
*/
#ifndef PARLEY_REDUCER_H
#define PARLEY_REDUCER_H

#include <czmq.h>
#include <msgpack.h>
#include "perr.h"
#include "state_reducer.h"

#define SVAL_HEAD 5             //  room for the largest array header (array32)

typedef struct {
    char *data;
    size_t cap;
    size_t head;                //  value starts at data + head
    size_t size;                //  value ends at data + size
    uint32_t count;             //  elements (append, union)
    zhashx_t *members;          //  union only: set of element encodings
} sval_t;

//  Estimated bytes per union member beyond its encoding: the set's copy
//  header and hash item, with malloc's overhead for both.
#define SVAL_MEMBER_COST 96

void sval_init (sval_t *self);
//  What the value counts against the state's byte limit: its encoding,
//  plus for union the set's copies (element bytes + SVAL_MEMBER_COST each).
size_t sval_footprint (const sval_t *self);
void sval_free (sval_t *self);
const void *sval_bytes (const sval_t *self);
size_t sval_size (const sval_t *self);

//  Does `value` have the shape the reducer stores (array for append and
//  union, str-keyed map for merge, number for add, anything for replace)?
perr_t reducer_check (state_reducer_t reducer, const msgpack_object *value,
                      char *why, size_t why_size);

//  Builds a fresh value into `out` (initialised, empty): the reducer's empty
//  value if `value` is NULL, else `value` (checked; union drops duplicates).
perr_t sval_build (sval_t *out, state_reducer_t reducer, const msgpack_object *value,
                   char *why, size_t why_size);

//  Append / union: adds the elements of the array `value` in place. On
//  error the value is unchanged. The caller can undo with sval_truncate
//  to the size and count it saved before.
perr_t sval_extend (sval_t *self, state_reducer_t reducer, const msgpack_object *value,
                    char *why, size_t why_size);
void sval_truncate (sval_t *self, size_t size, uint32_t count);

//  Merge / add: builds `out` (initialised, empty) from the old value and
//  the update.
perr_t sval_merge (const sval_t *old, const msgpack_object *value, sval_t *out,
                   char *why, size_t why_size);
perr_t sval_add (const sval_t *old, const msgpack_object *value, sval_t *out,
                 char *why, size_t why_size);

#endif
