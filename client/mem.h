// SPDX-License-Identifier: MIT
/*  mem - every allocation libparley makes itself goes through here, and
    every caller checks the result: a library returns PARLEY_ERR_NOMEM
    where an application might abort.

    The library-internal layer (rather than malloc interposition) is what
    lets a test fail exactly libparley's Nth allocation: interposing malloc
    would also fail libzmq's, which asserts by design when its I/O thread
    runs out, and msgpack-c's, which have their own error paths. The test
    hook costs one relaxed atomic add per allocation.
*/
#ifndef PARLEY_CLIENT_MEM_H
#define PARLEY_CLIENT_MEM_H

#include <stddef.h>
#include <stdint.h>

//  NULL when memory ran out (or, under the test hook, when this is the
//  allocation it fails). A size of 0 asks for 1 byte.
void *client_mem_alloc (size_t size);
void *client_mem_zalloc (size_t size);
//  As realloc: on failure `ptr` is left as it was.
void *client_mem_realloc (void *ptr, size_t size);
void client_mem_free (void *ptr);
char *client_mem_strdup (const char *text);
//  `len` bytes and a NUL.
char *client_mem_strndup (const char *text, size_t len);
//  `count` items of `size` bytes, NULL on overflow too.
void *client_mem_array (void *ptr, size_t count, size_t size);

//  Tests: the `nth` allocation from now fails (1: the next one), and
//  every one after it too when `sticky`; 0 turns failing off. Every
//  thread's allocations count.
void client_mem_fail_at (uint64_t nth, int sticky);
//  Allocations made since the last client_mem_fail_at, and how many failed.
uint64_t client_mem_count (void);
uint64_t client_mem_failed (void);

#endif
