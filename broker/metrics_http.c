// SPDX-License-Identifier: MIT
/*  metrics_http - GET /metrics through libmicrohttpd; see metrics_http.h
    for the threading. The only shared data is the page, the two request
    generations and the stopping flag, all under `mutex`.
*/
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "metrics_http.h"

struct _metrics_http_t {
    struct MHD_Daemon *daemon;
    int wake_fd;                //  eventfd: a scraper waits for a page
    char url [128];
    pthread_mutex_t mutex;
    pthread_cond_t rendered;
    unsigned long asked;        //  scrapes that asked for a page
    unsigned long answered;     //  the newest of them the page answers
    bool stopping;
    metrics_text_t page;
};

typedef struct {
    struct sockaddr_storage addr;
    socklen_t len;
    bool v6;
} s_address_t;

static bool
s_parse (const char *bind, s_address_t *out, char *why, size_t why_size)
{
    const char *colon = strrchr (bind, ':');
    char host [128];
    if (!colon || (size_t) (colon - bind) >= sizeof host) {
        snprintf (why, why_size, "--metrics-bind wants HOST:PORT or off, not \"%s\"", bind);
        return false;
    }
    memcpy (host, bind, (size_t) (colon - bind));
    host [colon - bind] = 0;
    char *end = NULL;
    errno = 0;
    unsigned long port = strtoul (colon + 1, &end, 10);
    if (!colon [1] || *end || errno || port > 65535 || colon [1] == '-' || colon [1] == '+') {
        snprintf (why, why_size, "--metrics-bind: \"%s\" is not a port (0-65535)", colon + 1);
        return false;
    }
    memset (out, 0, sizeof *out);
    size_t len = strlen (host);
    if (len > 2 && host [0] == '[' && host [len - 1] == ']') {
        host [len - 1] = 0;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &out->addr;
        if (inet_pton (AF_INET6, host + 1, &in6->sin6_addr) != 1) {
            snprintf (why, why_size, "--metrics-bind: \"%s\" is not an IPv6 address", host + 1);
            return false;
        }
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons ((uint16_t) port);
        out->len = sizeof *in6;
        out->v6 = true;
        return true;
    }
    struct sockaddr_in *in4 = (struct sockaddr_in *) &out->addr;
    if (strcmp (host, "localhost") == 0)
        snprintf (host, sizeof host, "127.0.0.1");
    if (inet_pton (AF_INET, host, &in4->sin_addr) != 1) {
        snprintf (why, why_size, "--metrics-bind: \"%s\" is not an IPv4 address, localhost "
                  "or [IPv6]", host);
        return false;
    }
    in4->sin_family = AF_INET;
    in4->sin_port = htons ((uint16_t) port);
    out->len = sizeof *in4;
    return true;
}

bool
metrics_http_loopback (const char *bind)
{
    s_address_t address;
    char why [256];
    if (!bind || !s_parse (bind, &address, why, sizeof why))
        return false;
    if (address.v6)
        return IN6_IS_ADDR_LOOPBACK (&((struct sockaddr_in6 *) &address.addr)->sin6_addr);
    uint32_t ip = ntohl (((struct sockaddr_in *) &address.addr)->sin_addr.s_addr);
    return (ip >> 24) == 127;
}

bool
metrics_http_parse (const char *bind, bool *off, char *why, size_t why_size)
{
    *off = !bind || !*bind || strcmp (bind, "off") == 0;
    if (*off)
        return true;
    s_address_t address;
    return s_parse (bind, &address, why, why_size);
}

static enum MHD_Result
s_reply (struct MHD_Connection *connection, unsigned status, const char *text)
{
    struct MHD_Response *response = MHD_create_response_from_buffer (
        strlen (text), (void *) text, MHD_RESPMEM_PERSISTENT);
    if (!response)
        return MHD_NO;
    MHD_add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header (response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result rc = MHD_queue_response (connection, status, response);
    MHD_destroy_response (response);
    return rc;
}

//  Waits for the loop to render a page asked for after this scrape
//  arrived; the response copies it. NULL on timeout or shutdown.
static struct MHD_Response *
s_page (metrics_http_t *self)
{
    //  The condition variable waits on the monotonic clock (metrics_http_new):
    //  a step of the wall clock neither cuts the wait short nor makes it
    //  last until the clock catches up.
    struct timespec until;
    clock_gettime (CLOCK_MONOTONIC, &until);
    until.tv_sec += METRICS_HTTP_WAIT_MS / 1000;
    until.tv_nsec += (long) (METRICS_HTTP_WAIT_MS % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    struct MHD_Response *response = NULL;
    pthread_mutex_lock (&self->mutex);
    unsigned long generation = ++self->asked;
    uint64_t one = 1;
    if (write (self->wake_fd, &one, sizeof one) != sizeof one) {
        //  Only EAGAIN at a counter near overflow: the loop is woken anyway.
    }
    while (!self->stopping && self->answered < generation)
        if (pthread_cond_timedwait (&self->rendered, &self->mutex, &until) == ETIMEDOUT)
            break;
    if (!self->stopping && self->answered >= generation && !self->page.failed)
        response = MHD_create_response_from_buffer (self->page.size, self->page.data,
                                                    MHD_RESPMEM_MUST_COPY);
    pthread_mutex_unlock (&self->mutex);
    return response;
}

static enum MHD_Result
s_answer (void *cls, struct MHD_Connection *connection, const char *url, const char *method,
          const char *version, const char *upload_data, size_t *upload_data_size,
          void **request)
{
    metrics_http_t *self = cls;
    bool head = strcmp (method, MHD_HTTP_METHOD_HEAD) == 0;
    if (!head && strcmp (method, MHD_HTTP_METHOD_GET) != 0)
        return s_reply (connection, MHD_HTTP_METHOD_NOT_ALLOWED,
                        "only GET and HEAD are served here\n");
    if (strcmp (url, "/metrics") != 0)
        return s_reply (connection, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n");
    struct MHD_Response *response = s_page (self);
    if (!response)
        return s_reply (connection, MHD_HTTP_SERVICE_UNAVAILABLE,
                        "the broker's loop did not render the metrics in time\n");
    MHD_add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE,
                             "text/plain; version=0.0.4; charset=utf-8");
    enum MHD_Result rc = MHD_queue_response (connection, MHD_HTTP_OK, response);
    MHD_destroy_response (response);
    return rc;
}

metrics_http_t *
metrics_http_new (const char *bind, char *why, size_t why_size)
{
    s_address_t address;
    if (!s_parse (bind, &address, why, why_size))
        return NULL;
    metrics_http_t *self = calloc (1, sizeof (metrics_http_t));
    if (!self) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    pthread_mutex_init (&self->mutex, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->rendered, &attr);
    pthread_condattr_destroy (&attr);
    self->wake_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (self->wake_fd < 0) {
        snprintf (why, why_size, "cannot create an eventfd: %s", strerror (errno));
        metrics_http_destroy (&self);
        return NULL;
    }
    //  MHD's thread inherits this mask: signals (SIGTERM) go to the loop's
    //  thread, whose poll they interrupt.
    sigset_t all, old;
    sigfillset (&all);
    pthread_sigmask (SIG_BLOCK, &all, &old);
    errno = 0;
    self->daemon = MHD_start_daemon (
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | (address.v6 ? MHD_USE_IPv6 : 0),
        0, NULL, NULL, s_answer, self,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &address.addr,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned) 16,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 10,
        MHD_OPTION_END);
    int error = errno;
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    if (!self->daemon) {
        snprintf (why, why_size, "cannot serve metrics on %s: %s", bind,
                  error ? strerror (error) : "libmicrohttpd refused");
        metrics_http_destroy (&self);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon,
                                                            MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : ntohs (((struct sockaddr_in *) &address.addr)->sin_port);
    char host [INET6_ADDRSTRLEN] = "";
    if (address.v6)
        inet_ntop (AF_INET6, &((struct sockaddr_in6 *) &address.addr)->sin6_addr,
                   host, sizeof host);
    else
        inet_ntop (AF_INET, &((struct sockaddr_in *) &address.addr)->sin_addr, host, sizeof host);
    snprintf (self->url, sizeof self->url, address.v6 ? "http://[%s]:%u/metrics"
              : "http://%s:%u/metrics", host, port);
    return self;
}

void
metrics_http_destroy (metrics_http_t **self_p)
{
    metrics_http_t *self = *self_p;
    if (!self)
        return;
    if (self->daemon) {
        //  A scraper waiting for a page gets 503 now instead of at its deadline.
        pthread_mutex_lock (&self->mutex);
        self->stopping = true;
        pthread_cond_broadcast (&self->rendered);
        pthread_mutex_unlock (&self->mutex);
        MHD_stop_daemon (self->daemon);
    }
    if (self->wake_fd >= 0)
        close (self->wake_fd);
    pthread_mutex_destroy (&self->mutex);
    pthread_cond_destroy (&self->rendered);
    metrics_text_free (&self->page);
    free (self);
    *self_p = NULL;
}

const char *
metrics_http_url (metrics_http_t *self)
{
    return self->url;
}

int
metrics_http_fd (metrics_http_t *self)
{
    return self->wake_fd;
}

unsigned long
metrics_http_wanted (metrics_http_t *self)
{
    uint64_t count;
    if (read (self->wake_fd, &count, sizeof count) != sizeof count) {
        //  EAGAIN: already cleared by an earlier turn; answer all the same.
    }
    pthread_mutex_lock (&self->mutex);
    unsigned long generation = self->asked;
    pthread_mutex_unlock (&self->mutex);
    return generation;
}

void
metrics_http_publish (metrics_http_t *self, unsigned long generation, metrics_text_t *page)
{
    pthread_mutex_lock (&self->mutex);
    metrics_text_t old = self->page;
    self->page = *page;
    *page = old;
    self->answered = generation;
    pthread_cond_broadcast (&self->rendered);
    pthread_mutex_unlock (&self->mutex);
}
