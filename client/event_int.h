// SPDX-License-Identifier: MIT
/*  event_int - parley_event_t (parley/broker.h) as the event queue makes it.
*/
#ifndef PARLEY_CLIENT_EVENT_INT_H
#define PARLEY_CLIENT_EVENT_INT_H

#include "parley/client.h"

//  A copy of one event (its topic and body), stamped `received_us`; NULL
//  when memory ran out.
parley_event_t *client_event_new (const char *topic, const void *body, size_t body_size,
                                  uint64_t received_us);
//  Names the event's type from its envelope; false when the body does not
//  decode (the caller counts and drops it).
bool client_event_typed (parley_event_t *self);

#endif
