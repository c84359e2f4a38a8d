// SPDX-License-Identifier: MIT
/*  observers - the connections that said HELLO with `observe`: a view or
    an operator's tool that reads (GET, SNAPSHOT, AGENTS, STATS) without
    registering an id.

    Keyed by the connection's handshake serial (auth.h), never by routing
    id, so a new connection that presents an old routing id is nobody; and
    forgotten when the connection closes (conn_watch.h), so after a broker
    restart an observer gets NOT_HELLO and says HELLO again, as an agent
    does. Bounded: at most OBSERVERS_MAX at once.
*/
#ifndef PARLEY_OBSERVERS_H
#define PARLEY_OBSERVERS_H

#include <stdbool.h>
#include <stdint.h>

#define OBSERVERS_MAX 1024

typedef struct _observers_t observers_t;

observers_t *observers_new (void);
void observers_destroy (observers_t **self_p);

//  Marks connection `serial` (descriptor `fd`, -1 unknown) as an observer.
//  False when OBSERVERS_MAX are marked already.
bool observers_add (observers_t *self, uint64_t serial, int fd);
bool observers_has (observers_t *self, uint64_t serial);
//  Forgets the observers on descriptor `fd` (its connection closed).
void observers_drop_fd (observers_t *self, int fd);
size_t observers_size (observers_t *self);

#endif
