// SPDX-License-Identifier: MIT
/*  testweb - parley-web's suites: HTTP requests with libcurl, an event
    stream read byte for byte from a raw HTTP/1.0 connection (no chunking,
    so what is read is exactly what the browser's EventSource parses), and
    the URL a parley-web writes to its --ready-file. See testweb.h.
*/
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <czmq.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "pclock.h"
#include "testweb.h"

#define DEADLINE_MS 60000

static size_t
s_collect (char *data, size_t size, size_t count, void *arg)
{
    testweb_reply_t *reply = (testweb_reply_t *) arg;
    reply->body = (char *) realloc (reply->body, reply->size + size * count + 1);
    memcpy (reply->body + reply->size, data, size * count);
    reply->size += size * count;
    reply->body [reply->size] = 0;
    return size * count;
}

static size_t
s_header (char *data, size_t size, size_t count, void *arg)
{
    testweb_reply_t *reply = (testweb_reply_t *) arg;
    size_t len = size * count;
    if (len > 7 && strncasecmp (data, "Allow: ", 7) == 0)
        snprintf (reply->allow, sizeof reply->allow, "%.*s", (int) (len - 9), data + 7);
    if (len > 14 && strncasecmp (data, "Content-Type: ", 14) == 0)
        snprintf (reply->type, sizeof reply->type, "%.*s", (int) (len - 16), data + 14);
    return len;
}

testweb_reply_t
testweb_http (uint16_t port, const char *method, const char *path, const char *type,
              const char *body, size_t body_size)
{
    testweb_reply_t reply = { 0 };
    char url [256];
    snprintf (url, sizeof url, "http://127.0.0.1:%u%s", (unsigned) port, path);
    CURL *curl = curl_easy_init ();
    curl_easy_setopt (curl, CURLOPT_URL, url);
    if (streq (method, "HEAD"))
        curl_easy_setopt (curl, CURLOPT_NOBODY, 1L);
    else
        curl_easy_setopt (curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_collect);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, &reply);
    curl_easy_setopt (curl, CURLOPT_HEADERFUNCTION, s_header);
    curl_easy_setopt (curl, CURLOPT_HEADERDATA, &reply);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, 10000L);
    struct curl_slist *headers = NULL;
    if (type) {
        char line [128];
        snprintf (line, sizeof line, "Content-Type: %s", type);
        headers = curl_slist_append (headers, line);
        curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
    }
    if (body) {
        curl_easy_setopt (curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt (curl, CURLOPT_POSTFIELDSIZE, (long) body_size);
    }
    CURLcode rc = curl_easy_perform (curl);
    ck_assert_msg (rc == CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror (rc));
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &reply.status);
    curl_slist_free_all (headers);
    curl_easy_cleanup (curl);
    if (!reply.body)
        reply.body = strdup ("");
    return reply;
}

void
testweb_expect (uint16_t port, const char *method, const char *path, long status, const char *allow)
{
    testweb_reply_t reply = testweb_http (port, method, path, NULL, NULL, 0);
    ck_assert_msg (reply.status == status, "%s %s: %ld, not %ld (%s)", method, path,
                   reply.status, status, reply.body);
    if (allow)
        ck_assert_str_eq (reply.allow, allow);
    if (status >= 400 && !streq (method, "HEAD"))
        ck_assert_msg (strstr (reply.body, "\"error\""), "%s %s: no JSON error: %s",
                       method, path, reply.body);
    free (reply.body);
}

testweb_stream_t *
testweb_stream_open (uint16_t port, const char *path)
{
    testweb_stream_t *stream = (testweb_stream_t *) zmalloc (sizeof *stream);
    stream->fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port) };
    inet_pton (AF_INET, "127.0.0.1", &addr.sin_addr);
    ck_assert_int_eq (connect (stream->fd, (struct sockaddr *) &addr, sizeof addr), 0);
    char request [256];
    int len = snprintf (request, sizeof request, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    ck_assert_int_eq (write (stream->fd, request, (size_t) len), len);
    return stream;
}

//  Reads until `needle` is in what was received; false at the deadline.
bool
testweb_stream_wait (testweb_stream_t *stream, const char *needle, int timeout_ms)
{
    int64_t deadline = pclock_mono_ms () + timeout_ms;
    while (!strstr (stream->buf, needle)) {
        int64_t left = deadline - pclock_mono_ms ();
        if (left <= 0 || stream->size + 1 >= sizeof stream->buf)
            return false;
        struct pollfd pfd = { .fd = stream->fd, .events = POLLIN };
        if (poll (&pfd, 1, (int) left) <= 0)
            continue;
        ssize_t got = read (stream->fd, stream->buf + stream->size, sizeof stream->buf - stream->size - 1);
        if (got <= 0)
            return strstr (stream->buf, needle) != NULL;
        stream->size += (size_t) got;
        stream->buf [stream->size] = 0;
    }
    return true;
}

void
testweb_stream_close (testweb_stream_t **stream_p)
{
    close ((*stream_p)->fd);
    free (*stream_p);
    *stream_p = NULL;
}

//  The URL from parley-web's --ready-file.
char *
testweb_wait_url (const char *ready, tproc_t *web)
{
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    while (pclock_mono_ms () < deadline) {
        ck_assert_msg (!tproc_exited (web), "parley-web exited: %s", tproc_err (web));
        FILE *file = fopen (ready, "r");
        char line [256] = "";
        if (file) {
            bool got = fgets (line, sizeof line, file) != NULL;
            fclose (file);
            if (got && strncmp (line, "url=", 4) == 0) {
                line [strcspn (line, "\n")] = 0;
                return strdup (line + 4);
            }
        }
        tproc_read (web, 50);
    }
    ck_abort_msg ("parley-web wrote no ready file: %s", tproc_err (web));
    return NULL;
}

uint16_t
testweb_port (const char *url)
{
    return (uint16_t) atoi (strrchr (url, ':') + 1);
}


void
testweb_browser (const char *shot_name, char *script, char *shot, size_t size)
{
    const char *tests = getenv ("PARLEY_TEST_DIR");
    const char *bins = getenv ("PARLEY_BIN_DIR");
    ck_assert_msg (tests && bins, "PARLEY_TEST_DIR and PARLEY_BIN_DIR are needed");
    char modules [1024];
    snprintf (script, size, "%s/web/view.test.js", tests);
    snprintf (modules, sizeof modules, "%s/web/node_modules/puppeteer-core/package.json", tests);
    snprintf (shot, size, "%s/../%s", bins, shot_name);
    ck_assert_msg (access (modules, R_OK) == 0,
                   "%s is missing: run scripts/deps.sh (npm ci in tests/web)", modules);
}
