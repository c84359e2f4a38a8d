// SPDX-License-Identifier: MIT
/*  steplog - recent steps for the prompt; see steplog.h. */
#include <assert.h>
#include <czmq.h>
#include "steplog.h"

struct _steplog_t {
    steplog_entry_t ring[STEPLOG_MAX];
    uint64_t added;
};

steplog_t *
steplog_new (void)
{
    return (steplog_t *) zmalloc (sizeof (steplog_t));
}

void
steplog_destroy (steplog_t **self_p)
{
    assert (self_p);
    free (*self_p);
    *self_p = NULL;
}

void
steplog_add (steplog_t *self, const steplog_entry_t *entry)
{
    assert (self && entry);
    self->ring[self->added++ % STEPLOG_MAX] = *entry;
}

size_t
steplog_count (const steplog_t *self)
{
    assert (self);
    return self->added < STEPLOG_MAX? (size_t) self->added: STEPLOG_MAX;
}

const steplog_entry_t *
steplog_at (const steplog_t *self, size_t index)
{
    assert (self);
    size_t count = steplog_count (self);
    if (index >= count)
        return NULL;
    uint64_t first = self->added - count;
    return &self->ring[(first + index) % STEPLOG_MAX];
}

static char *
s_move (const steplog_entry_t *e)
{
    const char *seen = *e->seen? e->seen: "nothing";
    if (streq (e->outcome, "edge"))
        return zsys_sprintf ("%" PRIu64 ". %s at %" PRIu64 ": blocked (edge of the map)",
                             e->step, e->action, e->from);
    if (streq (e->action, "stay") || e->from == e->to)
        return zsys_sprintf ("%" PRIu64 ". %s at %" PRIu64 ", saw %s",
                             e->step, e->action, e->to, seen);
    return zsys_sprintf ("%" PRIu64 ". %s %" PRIu64 " -> %" PRIu64 ", saw %s",
                         e->step, e->action, e->from, e->to, seen);
}

char *
steplog_line (const steplog_entry_t *e)
{
    assert (e);
    char *line = s_move (e);
    if (!line || !*e->note)
        return line;
    char *more = zsys_sprintf ("%s; %s", line, e->note);
    free (line);
    return more;
}
