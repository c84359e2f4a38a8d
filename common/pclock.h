// SPDX-License-Identifier: MIT
/*  pclock - time, in one place.

    Monotonic time for every timeout, interval and duration (it never jumps
    when NTP or an operator sets the wall clock); wall time only for what a
    person or another machine reads: log stamps and message timestamps.
*/
#ifndef PARLEY_PCLOCK_H
#define PARLEY_PCLOCK_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

int64_t pclock_mono_us (void);
int64_t pclock_mono_ms (void);
//  Microseconds since the Unix epoch (UTC).
int64_t pclock_wall_us (void);
//  "2026-11-21T08:40:01.123Z" into buf (at least 32 bytes); returns buf.
char *pclock_iso8601 (int64_t wall_us, char *buf, size_t size);
void pclock_sleep_ms (int64_t ms);
//  Sleeps up to `ms` in slices of 100 ms, returning early once *stop is
//  raised (stop may be NULL).
void pclock_nap_ms (int64_t ms, volatile sig_atomic_t *stop);

#endif
