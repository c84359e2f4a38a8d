// SPDX-License-Identifier: MIT
/*  tap_discover - asks a broker where its tap socket is.

    The tap learns the tap endpoint from the `tap` field of WELCOME: it
    says HELLO with `observe` true (name "tap-<host>-<pid>"), which the
    broker answers with WELCOME without registering anything, so the tap
    never shows in AGENTS, has no inbox and publishes no AGENT_EVENT. With
    CURVE keys (--curve-key, --curve-server-key) the request socket and
    the tap socket are CURVE clients; the broker wants the tap right.

    Also: a bind endpoint (tcp with host "*", "0.0.0.0" or "[::]") is
    not something to connect to; tap_discover_fix_wildcard turns its host
    into the broker's host (or 127.0.0.1), so PARLEY_TAP from a broker's
    environment file still works.
*/
#ifndef PARLEY_TAP_DISCOVER_H
#define PARLEY_TAP_DISCOVER_H

#include <stddef.h>
#include <stdint.h>

//  Fills `tap` (NUL-terminated) from the broker's WELCOME. Returns
//  PARLEY_EXIT_OK, PARLEY_EXIT_NETWORK (no reply within timeout_ms, bad
//  endpoint) or PARLEY_EXIT_FAILURE (the broker answered ERROR), with a
//  sentence in `why`.
int tap_discover (const char *broker, const char *curve_key, const char *curve_server_key,
                  int64_t timeout_ms, char *tap, size_t tap_size, char *why, size_t why_size);

//  Rewrites a wildcard host in `endpoint` (in place, within `size`) to the
//  host of `reference` (an endpoint, may be NULL), else 127.0.0.1.
void tap_discover_fix_wildcard (char *endpoint, size_t size, const char *reference);

#endif
