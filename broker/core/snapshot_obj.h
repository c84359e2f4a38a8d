// SPDX-License-Identifier: MIT
/*  snapshot_obj - reading a snapshot record's msgpack items, as the
    restores of the core (core_snapshot.c) and of the workflow
    (workflow_resume.c) both do.

    The restores check every item's type and bounds first; these helpers
    then only take the values out.
*/
#ifndef PARLEY_SNAPSHOT_OBJ_H
#define PARLEY_SNAPSHOT_OBJ_H

#include <msgpack.h>
#include <string.h>

//  The str `o` into `buf` with a NUL, cut to `size` - 1 bytes.
static inline void
snapshot_obj_copy (const msgpack_object *o, char *buf, size_t size)
{
    size_t len = o->via.str.size < size - 1 ? o->via.str.size : size - 1;
    if (len)
        memcpy (buf, o->via.str.ptr, len);
    buf [len] = 0;
}

#endif
