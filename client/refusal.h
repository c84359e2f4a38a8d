// SPDX-License-Identifier: MIT
/*  refusal - what the builders the caller fills item by item
    (parley_outbox_t, parley_ops_t) share: the first refusal, kept until
    the builder is reset so the request that sends it can refuse it with
    that sentence, and room for one more item.
*/
#ifndef PARLEY_CLIENT_REFUSAL_H
#define PARLEY_CLIENT_REFUSAL_H
#include <stddef.h>
#include "parley/base.h"

//  Records `code` in *error and "<what> <index>: <text>" in `why` unless
//  *error holds a refusal already; returns `code`.
parley_err_t client_refusal_set (parley_err_t *error, char *why, size_t why_size,
                                 parley_err_t code, const char *what, size_t index,
                                 const char *text);
//  Room for item `count` in `items` (`*cap_p` items of `size` bytes),
//  doubled from `first` as needed: the items, moved or not; NULL (they
//  and *cap_p unchanged) when memory ran out.
void *client_refusal_room (void *items, size_t *cap_p, size_t count, size_t size, size_t first);

#endif
