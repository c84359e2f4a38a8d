// SPDX-License-Identifier: MIT
/*  transport - libparley's sockets. See transport.h. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "curve.h"
#include "mem.h"
#include "pkeys.h"
#include "plog.h"
#include "transport.h"

//  ---------------------------------------------------------------------
//  The shared context: made for the first socket of any client, ended
//  with the last client (every socket is closed by then, with linger 0,
//  so zmq_ctx_term returns at once).

static pthread_mutex_t s_context_lock = PTHREAD_MUTEX_INITIALIZER;
static void *s_context;
static size_t s_context_users;

//  libzmq allows 1,023 sockets per context unless told otherwise, and a
//  client takes four (its DEALER, the two ends of the DEALER's monitor,
//  the events SUB): a process would fail to make a socket past about 255
//  clients. Descriptors are the real bound, so the context allows as many
//  sockets as the process may open descriptors, within libzmq's own limit
//  (it keeps a slot, a pointer, per socket allowed).
static void
s_context_size (void *context)
{
    long wanted = 1023;
    struct rlimit limit;
    if (getrlimit (RLIMIT_NOFILE, &limit) == 0)
        wanted = limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > INT_MAX
               ? INT_MAX : (long) limit.rlim_cur;
    int most = zmq_ctx_get (context, ZMQ_SOCKET_LIMIT);
    if (most > 0 && wanted > most)
        wanted = most;
    if (wanted > 1023)
        zmq_ctx_set (context, ZMQ_MAX_SOCKETS, (int) wanted);
}

static void *
s_context_acquire (void)
{
    pthread_mutex_lock (&s_context_lock);
    if (!s_context) {
        s_context = zmq_ctx_new ();
        if (s_context)
            s_context_size (s_context);
    }
    if (s_context)
        s_context_users++;
    void *context = s_context;
    pthread_mutex_unlock (&s_context_lock);
    return context;
}

static void
s_context_release (void)
{
    pthread_mutex_lock (&s_context_lock);
    if (s_context_users && --s_context_users == 0) {
        zmq_ctx_term (s_context);
        s_context = NULL;
    }
    pthread_mutex_unlock (&s_context_lock);
}

//  ---------------------------------------------------------------------

//  What keeps a received frame alive under the message decoded from it.
typedef struct {
    zmq_msg_t msg;
} s_holder_t;

struct _client_transport_t {
    void *context;              //  acquired with the first socket
    bool raw;
    int rcvhwm;
    char *curve_key, *curve_server_key;
    void *dealer, *sub, *watch;
    char sub_endpoint [256];
    int epoll_fd, epoll_dealer, epoll_sub;
    int alarm_fd;               //  a timer in the epoll set, made on first use
    s_holder_t *spare;          //  for the next reply read
    uint64_t bad_frames;
};

client_transport_t *
client_transport_new (void)
{
    client_transport_t *self = (client_transport_t *) client_mem_zalloc (sizeof (client_transport_t));
    if (self)
        self->epoll_fd = self->epoll_dealer = self->epoll_sub = self->alarm_fd = -1;
    return self;
}

void
client_transport_destroy (client_transport_t **self_p)
{
    assert (self_p);
    client_transport_t *self = *self_p;
    if (!self)
        return;
    client_transport_close (self);
    client_transport_sub_close (self);
    if (self->epoll_fd >= 0)
        close (self->epoll_fd);
    if (self->alarm_fd >= 0)
        close (self->alarm_fd);
    client_mem_free (self->spare);
    client_mem_free (self->curve_key);
    client_mem_free (self->curve_server_key);
    if (self->context)
        s_context_release ();
    client_mem_free (self);
    *self_p = NULL;
}

void
client_transport_set_raw (client_transport_t *self, int rcvhwm)
{
    assert (self);
    self->raw = true;
    self->rcvhwm = rcvhwm;
}

parley_err_t
client_transport_set_curve (client_transport_t *self, const char *own_cert,
                            const char *server_cert, char *why, size_t why_size)
{
    assert (self);
    if (client_curve_check (own_cert, server_cert, why, why_size) != 0)
        return PARLEY_ERR_INVALID;
    char *key = own_cert && *own_cert ? client_mem_strdup (own_cert) : NULL;
    char *server = server_cert && *server_cert ? client_mem_strdup (server_cert) : NULL;
    if ((own_cert && *own_cert && !key) || (server_cert && *server_cert && !server)) {
        client_mem_free (key);
        client_mem_free (server);
        snprintf (why, why_size, "out of memory");
        return PARLEY_ERR_NOMEM;
    }
    client_mem_free (self->curve_key);
    client_mem_free (self->curve_server_key);
    self->curve_key = key;
    self->curve_server_key = server;
    return PARLEY_OK;
}

bool
client_transport_curve (const client_transport_t *self)
{
    assert (self);
    return self->curve_key != NULL;
}

//  ---------------------------------------------------------------------
//  The caller's descriptor follows the sockets: after one is made, and
//  before one is closed.

static void
s_watch_fd (client_transport_t *self, int *watched, void *sock)
{
    int fd = -1;
    size_t size = sizeof fd;
    if (sock && zmq_getsockopt (sock, ZMQ_FD, &fd, &size) != 0)
        fd = -1;
    if (fd == *watched)
        return;
    if (*watched >= 0)
        epoll_ctl (self->epoll_fd, EPOLL_CTL_DEL, *watched, NULL);
    *watched = -1;
    struct epoll_event event = { .events = EPOLLIN };
    event.data.fd = fd;
    if (fd >= 0 && epoll_ctl (self->epoll_fd, EPOLL_CTL_ADD, fd, &event) == 0)
        *watched = fd;
}

static void
s_fd_sync (client_transport_t *self)
{
    if (self->epoll_fd < 0)
        return;
    s_watch_fd (self, &self->epoll_dealer, self->dealer);
    s_watch_fd (self, &self->epoll_sub, self->sub);
}

static void
s_fd_forget (client_transport_t *self, int *watched)
{
    if (self->epoll_fd >= 0 && *watched >= 0)
        epoll_ctl (self->epoll_fd, EPOLL_CTL_DEL, *watched, NULL);
    *watched = -1;
}

int
client_transport_fd (client_transport_t *self)
{
    assert (self);
    if (!self->dealer && !self->sub)
        return -1;
    if (self->epoll_fd < 0) {
        self->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
        if (self->epoll_fd < 0)
            return -1;
    }
    s_fd_sync (self);
    return self->epoll_fd;
}

void
client_transport_set_alarm (client_transport_t *self, int64_t at_us)
{
    assert (self);
    //  Nobody polls the descriptor: the waits keep their own time.
    if (self->epoll_fd < 0)
        return;
    if (self->alarm_fd < 0) {
        int fd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        struct epoll_event event = { .events = EPOLLIN };
        event.data.fd = fd;
        if (fd < 0 || epoll_ctl (self->epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) {
            if (fd >= 0)
                close (fd);
            plog_warn ("no timer for the client's descriptor: %s", strerror (errno));
            return;
        }
        self->alarm_fd = fd;
    }
    //  A time already past fires at once (0 would disarm it).
    if (at_us < 1)
        at_us = 1;
    struct itimerspec when = { .it_value = { .tv_sec = at_us / 1000000,
                                             .tv_nsec = (at_us % 1000000) * 1000 } };
    timerfd_settime (self->alarm_fd, TFD_TIMER_ABSTIME, &when, NULL);
}

void
client_transport_take_alarm (client_transport_t *self)
{
    assert (self);
    uint64_t expirations;
    if (self->alarm_fd >= 0 && read (self->alarm_fd, &expirations, sizeof expirations) < 0)
        return;                 //  not expired: nothing to clear
}

//  ---------------------------------------------------------------------
//  Sockets

//  A socket of `type` connected to `endpoint`, with the client's options
//  and keys; NULL with `why` and *code.
static void *
s_socket (client_transport_t *self, int type, const char *endpoint, parley_err_t *code,
          char *why, size_t why_size)
{
    if (!self->context && !(self->context = s_context_acquire ())) {
        snprintf (why, why_size, "cannot make a ZeroMQ context: %s", zmq_strerror (zmq_errno ()));
        *code = PARLEY_ERR_SOCKET;
        return NULL;
    }
    void *sock = zmq_socket (self->context, type);
    if (!sock) {
        snprintf (why, why_size, "cannot make a socket: %s", zmq_strerror (zmq_errno ()));
        *code = PARLEY_ERR_SOCKET;
        return NULL;
    }
    int zero = 0, one = 1;
    zmq_setsockopt (sock, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt (sock, ZMQ_IPV6, &one, sizeof one);
    if (self->raw)
        zmq_setsockopt (sock, ZMQ_RCVHWM, &self->rcvhwm, sizeof self->rcvhwm);
    else {
        int64_t most = PROTO_MAX_FRAME;
        zmq_setsockopt (sock, ZMQ_MAXMSGSIZE, &most, sizeof most);
    }
    if (client_curve_apply (sock, self->curve_key, self->curve_server_key, why, why_size) != 0) {
        zmq_close (sock);
        *code = PARLEY_ERR_INVALID;
        return NULL;
    }
    //  CURVE handshake failures are silent; the monitor says why later.
    if (type == ZMQ_DEALER && !self->raw)
        self->watch = pkeys_watch (self->context, sock);
    if (zmq_connect (sock, endpoint) != 0) {
        snprintf (why, why_size, "cannot connect to %s: %s", endpoint, zmq_strerror (zmq_errno ()));
        if (type == ZMQ_DEALER && self->watch) {
            zmq_close (self->watch);
            self->watch = NULL;
        }
        zmq_close (sock);
        *code = PARLEY_ERR_SOCKET;
        return NULL;
    }
    return sock;
}

parley_err_t
client_transport_open (client_transport_t *self, const char *endpoint, char *why, size_t why_size)
{
    assert (self && endpoint);
    client_transport_close (self);
    parley_err_t code = PARLEY_OK;
    self->dealer = s_socket (self, ZMQ_DEALER, endpoint, &code, why, why_size);
    s_fd_sync (self);
    return self->dealer ? PARLEY_OK : code;
}

void
client_transport_linger (client_transport_t *self, int64_t ms)
{
    assert (self);
    int linger = ms < 0 ? 0 : ms > CLIENT_TRANSPORT_LINGER_MS ? CLIENT_TRANSPORT_LINGER_MS
                                                              : (int) ms;
    if (self->dealer)
        zmq_setsockopt (self->dealer, ZMQ_LINGER, &linger, sizeof linger);
}

void
client_transport_close (client_transport_t *self)
{
    assert (self);
    if (self->watch) {
        zmq_close (self->watch);        //  the monitor before its socket
        self->watch = NULL;
    }
    if (self->dealer) {
        s_fd_forget (self, &self->epoll_dealer);
        zmq_close (self->dealer);
        self->dealer = NULL;
    }
}

bool
client_transport_is_open (const client_transport_t *self)
{
    assert (self);
    return self->dealer != NULL;
}

int
client_transport_send (client_transport_t *self, const void *data, size_t size, bool dontwait)
{
    assert (self);
    if (!self->dealer) {
        errno = ENOTSOCK;
        return -1;
    }
    return zmq_send (self->dealer, data, size, dontwait ? ZMQ_DONTWAIT : 0) < 0 ? -1 : 0;
}

static void
s_release (void *arg)
{
    s_holder_t *holder = (s_holder_t *) arg;
    zmq_msg_close (&holder->msg);
    client_mem_free (holder);
}

pmsg_t *
client_transport_recv (client_transport_t *self, bool nowait, bool *nomem)
{
    assert (self);
    if (!self->dealer)
        return NULL;
    if (!self->spare && !(self->spare = (s_holder_t *) client_mem_alloc (sizeof (s_holder_t)))) {
        if (nomem)
            *nomem = true;
        return NULL;
    }
    s_holder_t *holder = self->spare;
    zmq_msg_init (&holder->msg);
    if (zmq_msg_recv (&holder->msg, self->dealer, nowait ? ZMQ_DONTWAIT : 0) < 0) {
        zmq_msg_close (&holder->msg);
        return NULL;
    }
    self->spare = NULL;
    perr_t code;
    uint64_t id;
    char why [256];
    pmsg_t *msg = pmsg_decode_adopt (zmq_msg_data (&holder->msg), zmq_msg_size (&holder->msg),
                                     pwire_default_limits (), s_release, holder,
                                     &code, &id, why, sizeof why);
    if (!msg) {
        self->bad_frames++;
        plog_warn ("bad reply from broker: %s", why);
    }
    return msg;
}

static bool
s_readable (void *sock)
{
    int events = 0;
    size_t size = sizeof events;
    return sock && zmq_getsockopt (sock, ZMQ_EVENTS, &events, &size) == 0
        && (events & ZMQ_POLLIN);
}

bool
client_transport_readable (client_transport_t *self)
{
    assert (self);
    return s_readable (self->dealer);
}

int
client_transport_poll (client_transport_t *self, bool dealer, bool writable, bool sub,
                       int64_t ms)
{
    assert (self);
    zmq_pollitem_t items [2];
    int count = 0;
    if (self->dealer && (dealer || writable))
        items [count++] = (zmq_pollitem_t) {
            self->dealer, 0, (short) ((dealer ? ZMQ_POLLIN : 0) | (writable ? ZMQ_POLLOUT : 0)), 0
        };
    if (self->sub && sub)
        items [count++] = (zmq_pollitem_t) { self->sub, 0, ZMQ_POLLIN, 0 };
    if (count == 0) {
        struct timespec pause = { (time_t) (ms / 1000), (long) (ms % 1000) * 1000000L };
        nanosleep (&pause, NULL);
        return 0;
    }
    return zmq_poll (items, count, (long) ms);
}

bool
client_transport_handshake_failed (client_transport_t *self, char *why, size_t why_size)
{
    assert (self);
    return pkeys_watch_failed (self->watch, why, why_size);
}

//  ---------------------------------------------------------------------
//  Events

parley_err_t
client_transport_sub_open (client_transport_t *self, const char *endpoint, bool *fresh,
                           char *why, size_t why_size)
{
    assert (self && endpoint && fresh);
    *fresh = false;
    if (self->sub && strcmp (self->sub_endpoint, endpoint) == 0)
        return PARLEY_OK;
    client_transport_sub_close (self);
    parley_err_t code = PARLEY_OK;
    self->sub = s_socket (self, ZMQ_SUB, endpoint, &code, why, why_size);
    if (!self->sub)
        return code;
    snprintf (self->sub_endpoint, sizeof self->sub_endpoint, "%s", endpoint);
    s_fd_sync (self);
    *fresh = true;
    return PARLEY_OK;
}

void
client_transport_sub_close (client_transport_t *self)
{
    assert (self);
    if (self->sub) {
        s_fd_forget (self, &self->epoll_sub);
        zmq_close (self->sub);
        self->sub = NULL;
    }
    self->sub_endpoint [0] = 0;
}

bool
client_transport_sub_is_open (const client_transport_t *self)
{
    assert (self);
    return self->sub != NULL;
}

void
client_transport_subscribe (client_transport_t *self, const char *prefix)
{
    assert (self && prefix);
    if (self->sub)
        zmq_setsockopt (self->sub, ZMQ_SUBSCRIBE, prefix, strlen (prefix));
}

void
client_transport_unsubscribe (client_transport_t *self, const char *prefix)
{
    assert (self && prefix);
    if (self->sub)
        zmq_setsockopt (self->sub, ZMQ_UNSUBSCRIBE, prefix, strlen (prefix));
}

bool
client_transport_sub_readable (client_transport_t *self)
{
    assert (self);
    return s_readable (self->sub);
}

int
client_transport_sub_recv (client_transport_t *self, char *topic, size_t topic_size,
                           zmq_msg_t *body)
{
    assert (self && topic && topic_size && body);
    if (!self->sub)
        return -1;
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    if (zmq_msg_recv (&frame, self->sub, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close (&frame);
        return -1;
    }
    size_t len = zmq_msg_size (&frame) < topic_size ? zmq_msg_size (&frame) : topic_size - 1;
    memcpy (topic, zmq_msg_data (&frame), len);
    topic [len] = 0;
    bool more = zmq_msg_more (&frame);
    zmq_msg_close (&frame);
    if (!more) {
        self->bad_frames++;
        return -1;
    }
    zmq_msg_init (body);
    if (zmq_msg_recv (body, self->sub, 0) < 0) {
        zmq_msg_close (body);
        return -1;
    }
    //  Anything after the body would be a broker bug: dropped.
    bool extra_parts = zmq_msg_more (body);
    while (extra_parts) {
        zmq_msg_t extra;
        zmq_msg_init (&extra);
        extra_parts = zmq_msg_recv (&extra, self->sub, 0) >= 0 && zmq_msg_more (&extra);
        zmq_msg_close (&extra);
    }
    return 0;
}

uint64_t
client_transport_bad_frames (const client_transport_t *self)
{
    assert (self);
    return self->bad_frames;
}

void *
client_transport_dealer (client_transport_t *self)
{
    assert (self);
    return self->dealer;
}

void *
client_transport_sub (client_transport_t *self)
{
    assert (self);
    return self->sub;
}
