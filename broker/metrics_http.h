// SPDX-License-Identifier: MIT
/*  metrics_http - the Prometheus endpoint (GET /metrics) on libmicrohttpd.

    Why a thread and a hand-off, not MHD driven from the zloop: the broker's
    state has no locks because only the loop thread touches it. MHD runs in
    its own thread (MHD_USE_INTERNAL_POLLING_THREAD) and never reads that
    state. When a scrape arrives it asks the loop for a page through an
    eventfd the loop polls, and waits (at most METRICS_HTTP_WAIT_MS) on a
    condition variable. The loop renders the page from its live objects on
    its own thread (metrics_render.c), then swaps it in under the one mutex
    this file owns and wakes the scraper, which copies the text into its
    response. So a scrape costs the loop one render, an idle endpoint costs
    nothing, and every scrape sees figures taken after it arrived (a
    counter read right after a request has moved). Driving MHD from zloop
    instead (MHD_USE_NO_THREAD_SAFETY with its epoll descriptor) would
    avoid the thread but put MHD's edge-triggered bookkeeping and timeouts
    into the broker's loop; a slow or stuck scraper must never be the
    loop's problem.

    Bounds: 16 connections at once, 10 s idle timeout, only GET and HEAD of
    /metrics (404 for other paths, 405 for other methods); a loop that does
    not answer in time gets 503.
*/
#ifndef PARLEY_BROKER_METRICS_HTTP_H
#define PARLEY_BROKER_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include "metrics.h"

#define METRICS_HTTP_WAIT_MS 2000

typedef struct _metrics_http_t metrics_http_t;

//  True if `bind` is "off" (nothing to serve) or a HOST:PORT this file can
//  bind: an IPv4 address, "localhost", or [IPv6]; PORT 0 picks a free one.
//  *off tells which. False with a sentence in `why` otherwise.
bool metrics_http_parse (const char *bind, bool *off, char *why, size_t why_size);
//  True when HOST:PORT names a loopback address (127.0.0.0/8, ::1, localhost).
bool metrics_http_loopback (const char *bind);

//  Binds and starts serving. NULL with a sentence in `why`.
metrics_http_t *metrics_http_new (const char *bind, char *why, size_t why_size);
void metrics_http_destroy (metrics_http_t **self_p);
//  "http://HOST:PORT/metrics" as bound (the port resolved).
const char *metrics_http_url (metrics_http_t *self);
//  Readable when a scraper waits for a page (poll it in the loop).
int metrics_http_fd (metrics_http_t *self);
//  Clears the descriptor and returns the request generation to answer:
//  give it back to metrics_http_publish with the page rendered after.
unsigned long metrics_http_wanted (metrics_http_t *self);
//  Swaps `page` (rendered by the loop) in; `page` gets the old buffer.
void metrics_http_publish (metrics_http_t *self, unsigned long generation,
                           metrics_text_t *page);

#endif
