// SPDX-License-Identifier: MIT
/*  fdreader - a loop reader on a socket's ZMQ_FD, for the broker's sockets
    that are seldom readable: the ZAP handler, the three connection
    monitors, and the subscriptions coming up the event and tap XPUBs.

    Why: zloop polls a socket reader through zmq_poll, which reads the
    socket's ZMQ_EVENTS before it waits and again after, at every wake-up
    of the loop; on a socket whose command mailbox is idle each read is a
    getpid() and a poll() system call. With seven sockets that is some
    thirty system calls per wake-up, nearly all for sockets with nothing to
    say, and most of the broker's own kernel time on an agent-to-agent
    round trip. A descriptor poller costs nothing per socket: zmq_poll puts
    ZMQ_FD in its one poll(), and ZMQ_EVENTS is read only when it fired.
    The ROUTER, readable at almost every wake-up, stays a socket reader.

    ZMQ_FD is edge-triggered: it signals that commands came, and any
    operation on the socket (a send too) may take the signal while
    leaving messages to read. So the reader drains: it calls the handler
    while ZMQ_EVENTS says POLLIN. A socket the broker also sends on (the
    XPUBs) is drained again by fdreader_drain after the turn that sent on
    it, and every reader once a second (the stats tick) and before the
    loop starts, so nothing waits on a lost edge.
*/
#ifndef PARLEY_BROKER_FDREADER_H
#define PARLEY_BROKER_FDREADER_H

#include <czmq.h>

typedef struct _fdreader_t fdreader_t;

//  Polls `sock`'s ZMQ_FD in `loop`; `handler` reads from the socket (at
//  least one message each call while there is one). NULL when the loop
//  refuses the poller.
fdreader_t *fdreader_new (zloop_t *loop, zsock_t *sock, zloop_reader_fn *handler, void *arg);
//  Ends the poller (before the loop is destroyed).
void fdreader_destroy (fdreader_t **self_p);
//  Calls the handler while the socket has a message to read: 0, or -1
//  when the handler asked the loop to stop.
int fdreader_drain (fdreader_t *self);

#endif
