// SPDX-License-Identifier: MIT
/*  mem - libparley's allocations, and the failure hook its tests use.
    See mem.h.
*/
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "mem.h"

static atomic_uint_fast64_t s_count;        //  allocations since armed
static atomic_uint_fast64_t s_failed;
static atomic_uint_fast64_t s_fail_at;      //  0: never
static atomic_int s_sticky;

static bool
s_fails (void)
{
    uint64_t nth = atomic_fetch_add_explicit (&s_count, 1, memory_order_relaxed) + 1;
    uint64_t at = atomic_load_explicit (&s_fail_at, memory_order_relaxed);
    bool fail = at && (nth == at || (nth > at && atomic_load_explicit (&s_sticky,
                                                                       memory_order_relaxed)));
    if (fail)
        atomic_fetch_add_explicit (&s_failed, 1, memory_order_relaxed);
    return fail;
}

void *
client_mem_alloc (size_t size)
{
    return s_fails () ? NULL : malloc (size ? size : 1);
}

void *
client_mem_zalloc (size_t size)
{
    return s_fails () ? NULL : calloc (1, size ? size : 1);
}

void *
client_mem_realloc (void *ptr, size_t size)
{
    return s_fails () ? NULL : realloc (ptr, size ? size : 1);
}

void
client_mem_free (void *ptr)
{
    free (ptr);
}

char *
client_mem_strndup (const char *text, size_t len)
{
    char *copy = (char *) client_mem_alloc (len + 1);
    if (copy) {
        memcpy (copy, text, len);
        copy [len] = 0;
    }
    return copy;
}

char *
client_mem_strdup (const char *text)
{
    return client_mem_strndup (text, strlen (text));
}

void *
client_mem_array (void *ptr, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return client_mem_realloc (ptr, count * size);
}

void
client_mem_fail_at (uint64_t nth, int sticky)
{
    atomic_store (&s_fail_at, 0);
    atomic_store (&s_count, 0);
    atomic_store (&s_failed, 0);
    atomic_store (&s_sticky, sticky);
    atomic_store (&s_fail_at, nth);
}

uint64_t
client_mem_count (void)
{
    return atomic_load (&s_count);
}

uint64_t
client_mem_failed (void)
{
    return atomic_load (&s_failed);
}
