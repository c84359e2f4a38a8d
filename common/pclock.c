// SPDX-License-Identifier: MIT
/*  pclock - time, in one place.

    Monotonic clock (CLOCK_MONOTONIC) for timeouts and durations, wall clock
    (CLOCK_REALTIME) only for stamps people and other machines read. The
    ISO-8601 formatter is here so every log line and message timestamp in
    Parley looks the same: UTC, milliseconds, a trailing 'Z'.
*/
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "pclock.h"

static int64_t
s_clock_us (clockid_t id)
{
    struct timespec ts;
    //  clock_gettime cannot fail for these two clocks on Linux.
    clock_gettime (id, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
pclock_mono_us (void)
{
    return s_clock_us (CLOCK_MONOTONIC);
}

int64_t
pclock_mono_ms (void)
{
    return s_clock_us (CLOCK_MONOTONIC) / 1000;
}

int64_t
pclock_wall_us (void)
{
    return s_clock_us (CLOCK_REALTIME);
}

char *
pclock_iso8601 (int64_t wall_us, char *buf, size_t size)
{
    assert (buf);
    assert (size >= 32);
    //  Floor division, so instants before 1970 still format correctly.
    int64_t secs = wall_us / 1000000;
    int64_t rem = wall_us % 1000000;
    if (rem < 0) {
        secs -= 1;
        rem += 1000000;
    }
    time_t t = (time_t) secs;
    struct tm tm;
    if (!gmtime_r (&t, &tm)) {
        //  Out of the range gmtime can express: say so instead of lying.
        snprintf (buf, size, "invalid-time");
        return buf;
    }
    snprintf (buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
              tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
              tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (rem / 1000));
    return buf;
}

void
pclock_sleep_ms (int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
    //  Resume after signals so callers get the full sleep they asked for.
    while (nanosleep (&ts, &ts) == -1 && errno == EINTR)
        ;
}

void
pclock_nap_ms (int64_t ms, volatile sig_atomic_t *stop)
{
    int64_t until = pclock_mono_ms () + ms;
    while (!(stop && *stop)) {
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0)
            break;
        pclock_sleep_ms (left < 100 ? left : 100);
    }
}
