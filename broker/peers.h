// SPDX-License-Identifier: MIT
/*  peers - the connections of one socket and the CURVE key each uses.

    libzmq hides connections; the broker learns each one's descriptor and
    key from what it receives on it (a request on the ROUTER, a
    subscription on the event or tap XPUB: zmq_msg_get ZMQ_SRCFD and the
    ZAP User-Id), and forgets it when the socket's monitor reports it
    closed (conn_watch.h). With that it can:
      - cut every connection of a key the allowlist no longer has, or
        whose rights no longer cover the socket, at once (auth.h reads the
        allowlist again when it changes): a revoked key is not left
        watching events or the tap until it happens to reconnect;
      - bound how many connections a socket serves (--max-subscribers for
        the event socket): the one past the bound is cut as it subscribes.
    Cutting is shutdown(2) on the descriptor: libzmq sees the connection
    end and closes it, and the broker's usual close handling follows.
*/
#ifndef PARLEY_BROKER_PEERS_H
#define PARLEY_BROKER_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _peers_t peers_t;

//  At most `max` connections (0: no bound).
peers_t *peers_new (size_t max);
void peers_destroy (peers_t **self_p);

//  A frame came on descriptor `fd` with key `key` ("" in plain mode).
//  False when it is a new connection past the bound: it has been cut.
bool peers_note (peers_t *self, int fd, const char *key);
//  The descriptor closed.
void peers_forget (peers_t *self, int fd);
size_t peers_size (peers_t *self);
//  Connections cut so far, for a bound or a key.
uint64_t peers_cut_count (peers_t *self);

//  Cuts every connection whose key `keep` refuses; returns how many.
typedef bool (peers_keep_fn) (const char *key, void *arg);
size_t peers_cut (peers_t *self, peers_keep_fn *keep, void *arg);

#endif
