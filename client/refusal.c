// SPDX-License-Identifier: MIT
/*  refusal - a builder's first refusal and the room for its items. See
    refusal.h.
*/
#include <assert.h>
#include <stdio.h>
#include "mem.h"
#include "refusal.h"

parley_err_t
client_refusal_set (parley_err_t *error, char *why, size_t why_size, parley_err_t code,
                    const char *what, size_t index, const char *text)
{
    assert (error && why);
    if (*error == PARLEY_OK) {
        *error = code;
        snprintf (why, why_size, "%s %zu: %s", what, index, text);
    }
    return code;
}

void *
client_refusal_room (void *items, size_t *cap_p, size_t count, size_t size, size_t first)
{
    assert (cap_p);
    if (items && count < *cap_p)
        return items;
    size_t cap = *cap_p ? *cap_p * 2 : first;
    void *grown = client_mem_array (items, cap, size);
    if (grown)
        *cap_p = cap;
    return grown;
}
