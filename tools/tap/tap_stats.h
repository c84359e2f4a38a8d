// SPDX-License-Identifier: MIT
/*  tap_stats - counts for parley-tap: frames, drops, rates per type and peer.

    Drops: the broker's tap PUB never blocks; when a subscriber is slow the
    socket drops frames at its high-water mark, and so may our own SUB
    receive queue. Every TAP frame carries `tseq`, one broker-wide counter,
    so a jump from 11 to 15 means 3 frames were lost on the way;
    tap_stats_sequence() finds it. A tseq that goes backwards means the broker
    restarted (its counter starts again); that is counted, not a drop.

    Rates are the counts of the last whole second (tap_stats_tick() closes a
    window). Peers are kept in a zhashx up to TAP_STATS_MAX_PEERS; beyond
    that they are counted under "(other)" so a flood of connection ids
    cannot grow memory without bound.
*/
#ifndef PARLEY_TAP_STATS_H
#define PARLEY_TAP_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tap_frame.h"

#define TAP_STATS_MAX_PEERS 1024

typedef struct _tap_stats_t tap_stats_t;

tap_stats_t *tap_stats_new (void);
void tap_stats_destroy (tap_stats_t **self_p);

//  Feeds one tseq. Returns the number of frames missing before it (0 when
//  contiguous, for the first frame, or after a restart); *after gets the
//  last tseq seen before the gap.
uint64_t tap_stats_sequence (tap_stats_t *self, uint64_t tseq, uint64_t *after);
//  Counts a frame (received, before filters) and whether it was shown.
void tap_stats_count (tap_stats_t *self, const tap_frame_t *frame, bool shown);
//  Closes the current one-second window; call once a second.
void tap_stats_tick (tap_stats_t *self);

uint64_t tap_stats_received (const tap_stats_t *self);
uint64_t tap_stats_shown (const tap_stats_t *self);
uint64_t tap_stats_dropped (const tap_stats_t *self);
uint64_t tap_stats_gaps (const tap_stats_t *self);
uint64_t tap_stats_undecodable (const tap_stats_t *self);
uint64_t tap_stats_restarts (const tap_stats_t *self);

//  The table (--stats). `clear` prefixes an ANSI clear-screen; `rates`
//  adds the MSG/S column (live only: a replay has no clock to rate by).
void tap_stats_print_table (tap_stats_t *self, FILE *out, bool clear, bool rates);
//  One line of totals, e.g. at exit.
void tap_stats_print_totals (tap_stats_t *self, FILE *out, double seconds);

#endif
