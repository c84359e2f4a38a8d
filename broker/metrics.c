// SPDX-License-Identifier: MIT
/*  metrics - histograms and the text format's pieces; see metrics.h.
    The page itself is written by metrics_render.c.
*/
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

//  10 us .. 2.5 s: a request is handled in tens of microseconds, an
//  fdatasync takes from a fraction of a millisecond (SSD) to seconds (a
//  disk that is struggling); one set of bounds serves both.
const uint64_t metrics_bucket_us [METRICS_BUCKETS] = {
    10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 100000, 500000, 2500000
};

void
metrics_histogram_observe (metrics_histogram_t *self, uint64_t us)
{
    size_t i = 0;
    while (i < METRICS_BUCKETS && us > metrics_bucket_us [i])
        i++;
    self->buckets [i]++;
    self->count++;
    self->sum_us += us;
}

void
metrics_text_reset (metrics_text_t *self)
{
    assert (self);
    self->size = 0;
    self->failed = false;
    if (self->data)
        self->data [0] = 0;
}

void
metrics_text_printf (metrics_text_t *self, const char *format, ...)
{
    assert (self);
    if (self->failed)
        return;
    for (int attempt = 0; attempt < 2; attempt++) {
        size_t room = self->capacity - self->size;
        va_list args;
        va_start (args, format);
        int n = vsnprintf (self->data ? self->data + self->size : NULL, room, format, args);
        va_end (args);
        if (n < 0) {
            self->failed = true;
            return;
        }
        if ((size_t) n < room) {
            self->size += (size_t) n;
            return;
        }
        size_t capacity = self->capacity ? self->capacity : 16384;
        while (capacity < self->size + (size_t) n + 1)
            capacity *= 2;
        char *data = realloc (self->data, capacity);
        if (!data) {
            self->failed = true;
            return;
        }
        self->data = data;
        self->capacity = capacity;
    }
}

void
metrics_text_free (metrics_text_t *self)
{
    assert (self);
    free (self->data);
    memset (self, 0, sizeof *self);
}

void
metrics_text_family (metrics_text_t *self, const char *name, const char *type,
                     const char *help)
{
    metrics_text_printf (self, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void
metrics_text_label (metrics_text_t *self, const char *value)
{
    //  Runs of plain characters in one call; agent ids are short.
    const char *run = value;
    for (const char *p = value; ; p++) {
        if (*p && *p != '\\' && *p != '"' && *p != '\n')
            continue;
        metrics_text_printf (self, "%.*s", (int) (p - run), run);
        if (!*p)
            break;
        metrics_text_printf (self, "%s", *p == '\n' ? "\\n" : *p == '"' ? "\\\"" : "\\\\");
        run = p + 1;
    }
}

void
metrics_text_histogram (metrics_text_t *self, const char *name, const char *labels,
                        const metrics_histogram_t *histogram)
{
    uint64_t cumulative = 0;
    for (size_t i = 0; i < METRICS_BUCKETS; i++) {
        cumulative += histogram->buckets [i];
        metrics_text_printf (self, "%s_bucket{%sle=\"%g\"} %llu\n", name, labels,
                             (double) metrics_bucket_us [i] / 1e6,
                             (unsigned long long) cumulative);
    }
    cumulative += histogram->buckets [METRICS_BUCKETS];
    metrics_text_printf (self, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels,
                         (unsigned long long) cumulative);
    //  Labels without the trailing comma for _sum and _count.
    int len = (int) strlen (labels);
    if (len)
        len--;
    metrics_text_printf (self, "%s_sum%s%.*s%s %.6f\n", name, len ? "{" : "", len, labels,
                         len ? "}" : "", (double) histogram->sum_us / 1e6);
    metrics_text_printf (self, "%s_count%s%.*s%s %llu\n", name, len ? "{" : "", len, labels,
                         len ? "}" : "", (unsigned long long) histogram->count);
}
