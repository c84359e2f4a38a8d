// SPDX-License-Identifier: MIT
/*  bench_common - helpers for the baseline clients (nats, redis).

    These clients are built by scripts/bench.sh, not by the Makefile, after
    it has installed libnats-dev and libhiredis-dev: they are baselines, not
    part of Parley, and the project builds without those packages. Output
    follows bench/bench_util.h: "RESULT <key> <value> <unit>" lines.
*/
#ifndef PARLEY_BENCH_COMMON_H
#define PARLEY_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline int64_t
bench_now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline void
bench_result (const char *key, double value, const char *unit)
{
    printf ("RESULT %s %.6g %s\n", key, value, unit);
    fflush (stdout);
}

static inline int
bench_cmp_i64 (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

#endif
