// SPDX-License-Identifier: MIT
/*  teammap - positions visited by the team; see teammap.h. */
#include <assert.h>
#include <czmq.h>
#include "teammap.h"
#include "textbuf.h"

struct _teammap_t {
    uint64_t width, height, cells;
    uint8_t *bits;
    size_t visited;
};

teammap_t *
teammap_new (void)
{
    return (teammap_t *) zmalloc (sizeof (teammap_t));
}

void
teammap_destroy (teammap_t **self_p)
{
    assert (self_p);
    teammap_t *self = *self_p;
    if (!self)
        return;
    free (self->bits);
    free (self);
    *self_p = NULL;
}

void
teammap_set_shape (teammap_t *self, uint64_t width, uint64_t height)
{
    assert (self);
    if (height == 0)
        height = 1;
    if (width == self->width && height == self->height)
        return;
    free (self->bits);
    self->bits = NULL;
    self->visited = 0;
    self->width = width;
    self->height = height;
    self->cells = 0;
    if (width == 0 || width > TEAMMAP_MAX_CELLS || height > TEAMMAP_MAX_CELLS / width)
        return;
    self->cells = width * height;
    self->bits = (uint8_t *) zmalloc ((size_t) (self->cells + 7) / 8);
}

bool
teammap_tracked (const teammap_t *self)
{
    assert (self);
    return self->bits != NULL;
}

void
teammap_visit (teammap_t *self, uint64_t position)
{
    assert (self);
    if (!self->bits || position >= self->cells)
        return;
    uint8_t mask = (uint8_t) (1u << (position % 8));
    if (!(self->bits[position / 8] & mask)) {
        self->bits[position / 8] |= mask;
        self->visited++;
    }
}

bool
teammap_visited (const teammap_t *self, uint64_t position)
{
    assert (self);
    return self->bits && position < self->cells
        && (self->bits[position / 8] & (1u << (position % 8)));
}

size_t
teammap_visited_count (const teammap_t *self)
{
    assert (self);
    return self->visited;
}

uint64_t
teammap_cells (const teammap_t *self)
{
    assert (self);
    return self->cells;
}

char *
teammap_ranges (const teammap_t *self, bool visited, size_t max_ranges)
{
    assert (self);
    textbuf_t *buf = textbuf_new ();
    size_t ranges = 0, more = 0;
    for (uint64_t p = 0; p < self->cells; ) {
        if (teammap_visited (self, p) != visited) {
            p++;
            continue;
        }
        uint64_t end = p;
        while (end + 1 < self->cells && teammap_visited (self, end + 1) == visited)
            end++;
        if (ranges < max_ranges) {
            if (ranges)
                textbuf_add (buf, ", ");
            if (end == p)
                textbuf_addf (buf, "%" PRIu64, p);
            else
                textbuf_addf (buf, "%" PRIu64 "-%" PRIu64, p, end);
            ranges++;
        }
        else
            more++;
        p = end + 1;
    }
    if (more)
        textbuf_addf (buf, ", ... (%zu more)", more);
    if (ranges == 0)
        textbuf_add (buf, "none");
    return textbuf_detach (&buf);
}
