// SPDX-License-Identifier: MIT
/*  tap_stats - counters and the --stats table; see tap_stats.h. */
#include <czmq.h>
#include <inttypes.h>
#include <string.h>
#include "tap_stats.h"
#include "tap_text.h"

typedef struct {
    uint64_t total;
    uint64_t window;            //  in the current second
    uint64_t rate;              //  in the last whole second
} s_counter_t;

struct _tap_stats_t {
    s_counter_t types [PMSG__COUNT + 1];    //  last slot: undecodable
    zhashx_t *peers;                        //  name -> s_counter_t
    s_counter_t other_peers;
    s_counter_t all;
    uint64_t shown;
    uint64_t dropped;
    uint64_t gaps;
    uint64_t restarts;
    uint64_t last_tseq;
    bool have_tseq;
};

tap_stats_t *
tap_stats_new (void)
{
    tap_stats_t *self = (tap_stats_t *) zmalloc (sizeof (tap_stats_t));
    self->peers = zhashx_new ();
    zhashx_set_destructor (self->peers, (zhashx_destructor_fn *) zstr_free);
    return self;
}

void
tap_stats_destroy (tap_stats_t **self_p)
{
    assert (self_p);
    tap_stats_t *self = *self_p;
    if (!self)
        return;
    zhashx_destroy (&self->peers);
    free (self);
    *self_p = NULL;
}

uint64_t
tap_stats_sequence (tap_stats_t *self, uint64_t tseq, uint64_t *after)
{
    assert (self);
    uint64_t missing = 0;
    if (self->have_tseq && tseq > self->last_tseq + 1) {
        missing = tseq - self->last_tseq - 1;
        self->dropped += missing;
        self->gaps++;
    }
    else
    if (self->have_tseq && tseq <= self->last_tseq)
        self->restarts++;
    if (after)
        *after = self->last_tseq;
    self->last_tseq = tseq;
    self->have_tseq = true;
    return missing;
}

static void
s_bump (s_counter_t *counter)
{
    counter->total++;
    counter->window++;
}

void
tap_stats_count (tap_stats_t *self, const tap_frame_t *frame, bool shown)
{
    assert (self);
    assert (frame);
    s_bump (&self->all);
    if (shown)
        self->shown++;
    const pmsg_t *body = tap_frame_body (frame);
    s_bump (&self->types [body? pmsg_type (body): PMSG__COUNT]);
    //  Events are counted under their topic's first word ("mail", "state"...)
    //  so state keys do not each get a row.
    char name [80];
    const char *peer = tap_frame_peer (frame);
    if (!tap_frame_ok (frame))
        snprintf (name, sizeof name, "(bad tap frame)");
    else
    if (tap_frame_dir (frame) == TAP_DIR_PUB)
        snprintf (name, sizeof name, "(pub %.*s)", (int) strcspn (peer, "."), peer);
    else
        snprintf (name, sizeof name, "%s", peer);
    s_counter_t *counter = (s_counter_t *) zhashx_lookup (self->peers, name);
    if (!counter && zhashx_size (self->peers) < TAP_STATS_MAX_PEERS) {
        counter = (s_counter_t *) zmalloc (sizeof (s_counter_t));
        zhashx_insert (self->peers, name, counter);
    }
    s_bump (counter? counter: &self->other_peers);
}

static void
s_close_window (s_counter_t *counter)
{
    counter->rate = counter->window;
    counter->window = 0;
}

void
tap_stats_tick (tap_stats_t *self)
{
    assert (self);
    for (int i = 0; i <= PMSG__COUNT; i++)
        s_close_window (&self->types [i]);
    for (s_counter_t *c = (s_counter_t *) zhashx_first (self->peers); c;
         c = (s_counter_t *) zhashx_next (self->peers))
        s_close_window (c);
    s_close_window (&self->other_peers);
    s_close_window (&self->all);
}

uint64_t tap_stats_received (const tap_stats_t *self) { assert (self); return self->all.total; }
uint64_t tap_stats_shown (const tap_stats_t *self) { assert (self); return self->shown; }
uint64_t tap_stats_dropped (const tap_stats_t *self) { assert (self); return self->dropped; }
uint64_t tap_stats_gaps (const tap_stats_t *self) { assert (self); return self->gaps; }
uint64_t tap_stats_restarts (const tap_stats_t *self) { assert (self); return self->restarts; }

uint64_t
tap_stats_undecodable (const tap_stats_t *self)
{
    assert (self);
    return self->types [PMSG__COUNT].total;
}

static void
s_row (FILE *out, const char *name, const s_counter_t *counter, bool rates)
{
    char safe [64];
    size_t pos = 0;
    safe [0] = 0;
    tap_text_escape (safe, sizeof safe, &pos, name, strlen (name), 28);
    if (rates)
        fprintf (out, "  %-32s %10" PRIu64 " %12" PRIu64 "\n", safe, counter->rate, counter->total);
    else
        fprintf (out, "  %-32s %12" PRIu64 "\n", safe, counter->total);
}

static void
s_header (FILE *out, const char *title, bool rates)
{
    if (rates)
        fprintf (out, "  %-32s %10s %12s\n", title, "MSG/S", "TOTAL");
    else
        fprintf (out, "  %-32s %12s\n", title, "TOTAL");
}

//  Peers sorted by name, so rows do not jump around between refreshes.
static void
s_print_peers (tap_stats_t *self, FILE *out, bool rates)
{
    zlistx_t *keys = zhashx_keys (self->peers);
    zlistx_set_comparator (keys, (zlistx_comparator_fn *) strcmp);
    zlistx_sort (keys);
    for (const char *key = (const char *) zlistx_first (keys); key;
         key = (const char *) zlistx_next (keys))
        s_row (out, key, (s_counter_t *) zhashx_lookup (self->peers, key), rates);
    if (self->other_peers.total)
        s_row (out, "(other)", &self->other_peers, rates);
    zlistx_destroy (&keys);
}

void
tap_stats_print_table (tap_stats_t *self, FILE *out, bool clear, bool rates)
{
    assert (self);
    assert (out);
    if (clear)
        fprintf (out, "\033[H\033[2J");
    fprintf (out, "parley-tap: %" PRIu64 " frames", self->all.total);
    if (rates)
        fprintf (out, ", %" PRIu64 "/s", self->all.rate);
    fprintf (out, ", %" PRIu64 " dropped in %" PRIu64 " gaps, %" PRIu64 " undecodable\n\n",
             self->dropped, self->gaps, tap_stats_undecodable (self));
    s_header (out, "TYPE", rates);
    for (int i = 0; i <= PMSG__COUNT; i++)
        if (self->types [i].total)
            s_row (out, i < PMSG__COUNT? pmsg_type_name ((pmsg_type_t) i): "(undecodable)",
                   &self->types [i], rates);
    fprintf (out, "\n");
    s_header (out, "AGENT / PEER", rates);
    s_print_peers (self, out, rates);
    fprintf (out, "\n");
    fflush (out);
}

void
tap_stats_print_totals (tap_stats_t *self, FILE *out, double seconds)
{
    assert (self);
    assert (out);
    fprintf (out, "parley-tap: totals: %" PRIu64 " frames received, %" PRIu64 " shown, %"
             PRIu64 " dropped in %" PRIu64 " gaps, %" PRIu64 " undecodable",
             self->all.total, self->shown, self->dropped, self->gaps,
             tap_stats_undecodable (self));
    if (self->restarts)
        fprintf (out, ", %" PRIu64 " tap restarts", self->restarts);
    if (seconds > 0)
        fprintf (out, ", %.1f s", seconds);
    fprintf (out, "\n");
}
