// SPDX-License-Identifier: MIT
/*  metrics - the broker's Prometheus figures: what the loop counts on the
    hot path, and the text format it renders when scraped.

    Counting is plain arithmetic on fixed arrays indexed by request type and
    error code (no allocation, no lock: only the loop thread touches a
    metrics_t). Latency goes into a histogram with fixed bucket bounds in
    microseconds; finding the bucket is a short loop over 14 integers.

    Rendering (metrics_render) walks the broker's live objects on the loop
    thread, so the figures are exact at the moment of the scrape; the HTTP
    side (metrics_http.h) only ever sees the finished text. docs/METRICS.md
    lists every metric.
*/
#ifndef PARLEY_BROKER_METRICS_H
#define PARLEY_BROKER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pmsg.h"
#include "perr.h"

//  Bucket upper bounds, microseconds (the last bucket, +Inf, is implied).
#define METRICS_BUCKETS 14
extern const uint64_t metrics_bucket_us [METRICS_BUCKETS];

//  Per-agent series are written for at most this many agents (in
//  registration order); the rest are counted in parley_agents_unlisted.
#define METRICS_MAX_AGENTS 256

typedef struct {
    uint64_t buckets [METRICS_BUCKETS + 1];     //  not cumulative; last: +Inf
    uint64_t count;
    uint64_t sum_us;
} metrics_histogram_t;

void metrics_histogram_observe (metrics_histogram_t *self, uint64_t us);

//  Index PMSG__COUNT collects frames that never decoded into a type.
#define METRICS_TYPE_INVALID PMSG__COUNT

typedef struct {
    uint64_t requests [PMSG__COUNT + 1];
    uint64_t errors [PMSG__COUNT + 1][PERR__COUNT];
    metrics_histogram_t latency [PMSG__COUNT + 1];
} metrics_t;

//  One request handled: its type (METRICS_TYPE_INVALID if it did not
//  decode), the ERROR code it got (PERR_NONE: no ERROR) and how long it took.
static inline void
metrics_request (metrics_t *self, unsigned type, perr_t error, uint64_t us)
{
    if (type > PMSG__COUNT)
        type = PMSG__COUNT;
    self->requests [type]++;
    if (error > PERR_NONE && error < PERR__COUNT)
        self->errors [type][error]++;
    metrics_histogram_observe (&self->latency [type], us);
}

//  A growing text buffer for the rendered page (kept between scrapes).
typedef struct {
    char *data;
    size_t size;
    size_t capacity;
    bool failed;                //  out of memory: the page is incomplete
} metrics_text_t;

void metrics_text_reset (metrics_text_t *self);
void metrics_text_printf (metrics_text_t *self, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
void metrics_text_free (metrics_text_t *self);

//  HELP and TYPE lines of a metric family.
void metrics_text_family (metrics_text_t *self, const char *name, const char *type,
                          const char *help);
//  A label value with \, " and newline escaped as the text format wants.
void metrics_text_label (metrics_text_t *self, const char *value);
//  The _bucket/_sum/_count lines of one histogram; `labels` is "" or
//  `key="value",` pairs ending in a comma, written before le.
void metrics_text_histogram (metrics_text_t *self, const char *name, const char *labels,
                             const metrics_histogram_t *histogram);

#endif
