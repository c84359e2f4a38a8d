// SPDX-License-Identifier: MIT
/*  fdreader - a loop reader on a socket's ZMQ_FD. See fdreader.h.

    What is slow: nothing per loop wake-up; a drain reads ZMQ_EVENTS once
    more than it calls the handler (a getpid() and a poll() when the
    socket's mailbox is idle).
*/
#include <assert.h>
#include <stdlib.h>

#include "fdreader.h"

//  A drain that goes on this long is a handler that does not read: stop
//  and let the next drain continue, rather than spin.
#define S_MAX_CALLS 100000

struct _fdreader_t {
    zloop_t *loop;
    zsock_t *sock;
    zloop_reader_fn *handler;
    void *arg;
    zmq_pollitem_t item;
};

static int
s_on_fd (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    return fdreader_drain ((fdreader_t *) arg);
}

fdreader_t *
fdreader_new (zloop_t *loop, zsock_t *sock, zloop_reader_fn *handler, void *arg)
{
    assert (loop && sock && handler);
    fdreader_t *self = calloc (1, sizeof (fdreader_t));
    if (!self)
        return NULL;
    self->loop = loop;
    self->sock = sock;
    self->handler = handler;
    self->arg = arg;
    self->item = (zmq_pollitem_t) { NULL, zsock_fd (sock), ZMQ_POLLIN, 0 };
    if (zloop_poller (loop, &self->item, s_on_fd, self) != 0) {
        free (self);
        return NULL;
    }
    return self;
}

void
fdreader_destroy (fdreader_t **self_p)
{
    assert (self_p);
    fdreader_t *self = *self_p;
    if (self) {
        zloop_poller_end (self->loop, &self->item);
        free (self);
        *self_p = NULL;
    }
}

int
fdreader_drain (fdreader_t *self)
{
    assert (self);
    for (int calls = 0; calls < S_MAX_CALLS && (zsock_events (self->sock) & ZMQ_POLLIN); calls++)
        if (self->handler (self->loop, self->sock, self->arg) == -1)
            return -1;
    return 0;
}
