// SPDX-License-Identifier: MIT
/*  state_int - parley_state_t, parley_entry_t and parley_written_t
    (parley/state.h) as the rest of libparley makes and fills them.
*/
#ifndef PARLEY_CLIENT_STATE_INT_H
#define PARLEY_CLIENT_STATE_INT_H

#include "parley/client.h"
#include "arena.h"
#include "pmsg.h"

parley_state_t *client_state_new (void);
//  STATE. Everything is copied. PARLEY_OK, or _NOMEM with it empty.
parley_err_t client_state_decode (parley_state_t *self, const pmsg_t *reply);

//  An array of entries (STATE's, or a checkpoint's) into *entries_p,
//  grown as needed (*cap_p records), their strings and values in `arena`.
//  PARLEY_OK, or _NOMEM.
parley_err_t client_entries_decode (client_arena_t *arena, const msgpack_object *array,
                                    parley_entry_t **entries_p, size_t *cap_p, size_t *count_p);
const parley_entry_t *client_entries_at (const parley_entry_t *entries, size_t count,
                                         size_t index);

parley_written_t *client_written_new (void);
void client_written_decode (parley_written_t *self, const msgpack_object *map);

#endif
