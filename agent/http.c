// SPDX-License-Identifier: MIT
/*  http - one JSON-over-HTTP POST client; see http.h for the contract.

    Retry policy, in one place: an attempt is retried when it timed out,
    could not connect, lost the connection, or got 408 / 429 / 5xx other
    than 501 and 505. The wait before retry n (0-based) is "equal jitter":
    half of min(max, base * 2^n) fixed plus a random part up to the other
    half, so a fleet of agents hit by the same 429 does not come back in
    lockstep. A Retry-After header (seconds or an HTTP-date, parsed by
    libcurl) raises the wait to at least that, still capped at
    backoff_max_ms. A deadline cuts both the attempt and the wait.
*/
#include "http.h"

#include <curl/curl.h>
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <assert.h>

#include "pclock.h"
#include "plog.h"

struct _http_t {
    CURL *curl;
    char *url;
    struct curl_slist *headers;
    http_options_t opts;
    http_stats_t stats;
    uint64_t rng;               //  xorshift64 state for jitter
    //  Per-attempt response state.
    char *body;
    size_t body_len, body_cap;
    bool body_overflow;
    int64_t retry_after_s;      //  0: none (CURLINFO_RETRY_AFTER)
    int64_t deadline_ms;        //  0: none
    bool cancelled;             //  the cancel function said so this request
    http_result_t result;       //  of the last request
};

static pthread_once_t s_curl_once = PTHREAD_ONCE_INIT;
static CURLcode s_curl_init_rc = CURLE_OK;

static void
s_curl_global_init (void)
{
    s_curl_init_rc = curl_global_init (CURL_GLOBAL_DEFAULT);
}

void
http_options_default (http_options_t *opts)
{
    assert (opts);
    opts->connect_timeout_ms = 5000;
    opts->timeout_ms = 60000;
    opts->max_retries = 3;
    opts->backoff_base_ms = 500;
    opts->backoff_max_ms = 20000;
    opts->max_response_bytes = 8 * 1024 * 1024;
    opts->tick = NULL;
    opts->tick_arg = NULL;
    opts->cancel = NULL;
}

//  Runs the tick; true when the request must end now (cancelled, or the
//  deadline passed).
static bool
s_tick (http_t *self)
{
    if (self->opts.tick) {
        self->stats.ticks++;
        self->opts.tick (self->opts.tick_arg);
    }
    if (self->opts.cancel && self->opts.cancel (self->opts.tick_arg))
        self->cancelled = true;
    return self->cancelled;
}

//  libcurl's progress callback: called about once a second even when no
//  byte moves (a model still thinking), and more often during transfers.
//  The tick itself decides whether anything is due, so this stays cheap.
static int
s_on_progress (void *arg, curl_off_t dltotal, curl_off_t dlnow,
               curl_off_t ultotal, curl_off_t ulnow)
{
    (void) dltotal; (void) dlnow; (void) ultotal; (void) ulnow;
    return s_tick ((http_t *) arg)? 1: 0;      //  1 aborts the transfer
}

//  Backoff wait in HTTP_TICK_MS slices, ticking between them.
static void
s_backoff_sleep (http_t *self, int64_t ms)
{
    int64_t until = pclock_mono_ms () + ms;
    for (;;) {
        if (s_tick (self))
            break;
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0)
            break;
        pclock_sleep_ms (left < HTTP_TICK_MS? left: HTTP_TICK_MS);
    }
}

static size_t
s_on_body (char *data, size_t size, size_t nmemb, void *arg)
{
    http_t *self = (http_t *) arg;
    size_t bytes = size * nmemb;
    if (bytes > self->opts.max_response_bytes - self->body_len) {
        self->body_overflow = true;
        return 0;               //  aborts the transfer with CURLE_WRITE_ERROR
    }
    if (self->body_len + bytes + 1 > self->body_cap) {
        size_t cap = self->body_cap ? self->body_cap : 4096;
        while (cap < self->body_len + bytes + 1)
            cap *= 2;
        if (cap > self->opts.max_response_bytes + 1)
            cap = self->opts.max_response_bytes + 1;
        char *grown = realloc (self->body, cap);
        if (!grown)
            return 0;
        self->body = grown;
        self->body_cap = cap;
    }
    memcpy (self->body + self->body_len, data, bytes);
    self->body_len += bytes;
    self->body [self->body_len] = 0;
    return bytes;
}

http_t *
http_new (const char *url, const char *api_key, const http_options_t *opts)
{
    assert (url);
    pthread_once (&s_curl_once, s_curl_global_init);
    if (s_curl_init_rc != CURLE_OK)
        return NULL;
    http_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    if (opts)
        self->opts = *opts;
    else
        http_options_default (&self->opts);
    if (self->opts.max_retries < 0)
        self->opts.max_retries = 0;
    if (self->opts.max_response_bytes == 0)
        self->opts.max_response_bytes = 1;
    self->url = strdup (url);
    self->curl = curl_easy_init ();
    self->rng = (uint64_t) pclock_mono_us () ^ ((uint64_t) getpid () << 32) ^ (uintptr_t) self;
    if (!self->rng)
        self->rng = 0x9E3779B97F4A7C15ull;
    self->headers = curl_slist_append (NULL, "Content-Type: application/json");
    if (self->headers)
        self->headers = curl_slist_append (self->headers, "Accept: application/json");
    if (self->headers && api_key && *api_key) {
        char *auth;
        if (asprintf (&auth, "Authorization: Bearer %s", api_key) < 0)
            goto err;
        self->headers = curl_slist_append (self->headers, auth);
        //  The key should not linger in freed heap memory.
        explicit_bzero (auth, strlen (auth));
        free (auth);
    }
    if (!self->url || !self->curl || !self->headers)
        goto err;
    return self;
err:
    http_destroy (&self);
    return NULL;
}

void
http_destroy (http_t **self_p)
{
    assert (self_p);
    http_t *self = *self_p;
    if (!self)
        return;
    if (self->curl)
        curl_easy_cleanup (self->curl);
    curl_slist_free_all (self->headers);
    free (self->url);
    free (self->body);
    free (self);
    *self_p = NULL;
}

static uint64_t
s_random (http_t *self)
{
    uint64_t x = self->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    self->rng = x;
    return x;
}

//  Backoff before retry number `retry` (0-based), see the top of the file.
static int64_t
s_backoff_ms (http_t *self, int retry)
{
    int64_t cap = self->opts.backoff_max_ms > 0 ? self->opts.backoff_max_ms : 0;
    int64_t wait = self->opts.backoff_base_ms > 0 ? self->opts.backoff_base_ms : 0;
    for (int i = 0; i < retry && wait < cap; i++)
        wait *= 2;
    if (wait > cap)
        wait = cap;
    int64_t half = wait / 2;
    wait = half + (half > 0 ? (int64_t) (s_random (self) % (uint64_t) (half + 1)) : 0);
    if (self->retry_after_s > 0) {
        int64_t ra_ms = self->retry_after_s > cap / 1000 ? cap : self->retry_after_s * 1000;
        if (ra_ms > wait)
            wait = ra_ms;
    }
    return wait;
}

//  Copies a short, printable excerpt of an error body into `out`: the
//  OpenAI-style error.message when there is one, else the first bytes.
static void
s_error_excerpt (http_t *self, char *out, size_t size)
{
    out [0] = 0;
    if (!self->body_len)
        return;
    const char *src = self->body;
    json_t *doc = json_loadb (self->body, self->body_len, 0, NULL);
    if (doc) {
        json_t *error = json_object_get (doc, "error");
        json_t *message = json_is_object (error) ? json_object_get (error, "message")
                        : error;
        if (json_is_string (message))
            src = json_string_value (message);
    }
    size_t n = 0;
    for (; src [n] && n + 1 < size && n < 200; n++)
        out [n] = isprint ((unsigned char) src [n]) ? src [n] : ' ';
    out [n] = 0;
    json_decref (doc);
}

typedef enum { S_DONE, S_RETRY, S_FAIL } s_outcome_t;

//  True for statuses a later attempt may get past: a timeout, a rate
//  limit, a server error. 501 (not implemented) and 505 (HTTP version not
//  supported) are server errors that will never go away.
static bool
s_status_transient (long status)
{
    if (status == 408 || status == 429)
        return true;
    return status >= 500 && status != 501 && status != 505;
}

//  Milliseconds left before the deadline (LONG_MAX-ish when none).
static int64_t
s_left_ms (http_t *self)
{
    return self->deadline_ms ? self->deadline_ms - pclock_mono_ms () : INT64_MAX;
}

//  One attempt: a POST of `payload`, or a GET of `url` when payload is
//  NULL. On S_DONE *response_p is set; otherwise `err` says why and
//  self->result the kind of failure.
static s_outcome_t
s_attempt (http_t *self, const char *url, const char *payload, long timeout_ms,
           json_t **response_p, char *err, size_t err_size)
{
    CURL *curl = self->curl;
    self->body_len = 0;
    self->body_overflow = false;
    self->retry_after_s = 0;
    int64_t left = s_left_ms (self);
    if (left <= 0 || self->cancelled) {
        snprintf (err, err_size, "%s: %s", url, self->cancelled ? "cancelled"
                  : "the decision's deadline passed before the request");
        self->result = HTTP_RESULT_CANCELLED;
        return S_FAIL;
    }
    if (left < timeout_ms)
        timeout_ms = (long) left;
    char curl_err [CURL_ERROR_SIZE] = "";
    curl_easy_reset (curl);
    curl_easy_setopt (curl, CURLOPT_URL, url);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_HTTPHEADER, self->headers);
    if (payload) {
        curl_easy_setopt (curl, CURLOPT_POSTFIELDS, payload);
        curl_easy_setopt (curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) strlen (payload));
    }
    else
        curl_easy_setopt (curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT_MS, self->opts.connect_timeout_ms);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_on_body);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, self);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt (curl, CURLOPT_USERAGENT, "parley-agent");
    if (self->opts.tick || self->opts.cancel) {
        curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, s_on_progress);
        curl_easy_setopt (curl, CURLOPT_XFERINFODATA, self);
        curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
    }

    self->stats.attempts++;
    CURLcode rc = curl_easy_perform (curl);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, NULL);
    if (self->body_overflow) {
        snprintf (err, err_size, "response from %s exceeds the %zu-byte limit",
                  url, self->opts.max_response_bytes);
        self->result = HTTP_RESULT_BAD_BODY;
        return S_FAIL;
    }
    if (rc != CURLE_OK) {
        if (rc == CURLE_OPERATION_TIMEDOUT)
            self->stats.timeouts++;
        snprintf (err, err_size, "%s: %s", url, *curl_err ? curl_err : curl_easy_strerror (rc));
        self->result = HTTP_RESULT_UNREACHABLE;
        if (rc == CURLE_ABORTED_BY_CALLBACK) {
            self->result = HTTP_RESULT_CANCELLED;
            return S_FAIL;
        }
        switch (rc) {
            case CURLE_OPERATION_TIMEDOUT:
            case CURLE_COULDNT_CONNECT:
            case CURLE_COULDNT_RESOLVE_HOST:
            case CURLE_RECV_ERROR:
            case CURLE_SEND_ERROR:
            case CURLE_GOT_NOTHING:
            case CURLE_PARTIAL_FILE:
                return S_RETRY;
            default:
                self->result = HTTP_RESULT_LOCAL;
                return S_FAIL;
        }
    }
    long status = 0;
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status > 299) {
        char excerpt [256];
        s_error_excerpt (self, excerpt, sizeof excerpt);
        snprintf (err, err_size, "%s answered HTTP %ld%s%s", url, status,
                  *excerpt ? ": " : "", excerpt);
        curl_off_t retry_after = 0;
        if (curl_easy_getinfo (curl, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK
        &&  retry_after > 0)
            self->retry_after_s = (int64_t) retry_after;
        bool transient = s_status_transient (status);
        self->result = transient ? HTTP_RESULT_UNREACHABLE : HTTP_RESULT_REFUSED;
        return transient ? S_RETRY : S_FAIL;
    }
    self->result = HTTP_RESULT_BAD_BODY;
    json_error_t jerr;
    json_t *doc = json_loadb (self->body ? self->body : "", self->body_len, 0, &jerr);
    if (!doc) {
        snprintf (err, err_size, "%s answered invalid JSON (line %d: %s)",
                  url, jerr.line, jerr.text);
        return S_FAIL;
    }
    if (!json_is_object (doc)) {
        json_decref (doc);
        snprintf (err, err_size, "%s answered JSON that is not an object", url);
        return S_FAIL;
    }
    self->result = HTTP_RESULT_OK;
    *response_p = doc;
    return S_DONE;
}

int
http_post_json (http_t *self, json_t *body, json_t **response_p,
                char *err, size_t err_size)
{
    assert (self);
    assert (body);
    assert (response_p);
    assert (err && err_size > 0);
    *response_p = NULL;
    err [0] = 0;
    self->stats.requests++;
    self->cancelled = false;
    char *payload = json_dumps (body, JSON_COMPACT);
    if (!payload) {
        snprintf (err, err_size, "cannot encode the request as JSON");
        self->stats.failures++;
        self->result = HTTP_RESULT_LOCAL;
        return -1;
    }
    int attempts = 0;
    for (int retry = 0; ; retry++) {
        attempts++;
        s_outcome_t outcome = s_attempt (self, self->url, payload, self->opts.timeout_ms,
                                         response_p, err, err_size);
        if (outcome == S_DONE)
            break;
        //  No retry whose wait would end past the deadline.
        int64_t wait = outcome == S_RETRY ? s_backoff_ms (self, retry) : 0;
        if (outcome == S_RETRY && retry < self->opts.max_retries && wait >= s_left_ms (self)) {
            size_t used = strlen (err);
            snprintf (err + used, err_size - used, " (deadline reached after %d attempts)", attempts);
            self->stats.failures++;
            free (payload);
            return -1;
        }
        if (outcome == S_FAIL || retry >= self->opts.max_retries) {
            size_t used = strlen (err);
            if (outcome == S_RETRY && used + 1 < err_size)
                snprintf (err + used, err_size - used, " (gave up after %d attempts)", attempts);
            self->stats.failures++;
            free (payload);
            return -1;
        }
        self->stats.retries++;
        self->stats.last_backoff_ms = wait;
        plog_warn ("http: %s; retry %d/%d in %lld ms", err, retry + 1,
                   self->opts.max_retries, (long long) wait);
        s_backoff_sleep (self, wait);
    }
    free (payload);
    err [0] = 0;
    return 0;
}

void
http_stats (http_t *self, http_stats_t *stats)
{
    assert (self);
    assert (stats);
    *stats = self->stats;
}

http_result_t
http_last_result (http_t *self)
{
    assert (self);
    return self->result;
}

const char *
http_result_name (http_result_t result)
{
    switch (result) {
        case HTTP_RESULT_OK:          return "ok";
        case HTTP_RESULT_UNREACHABLE: return "unreachable";
        case HTTP_RESULT_REFUSED:     return "refused";
        case HTTP_RESULT_BAD_BODY:    return "bad_body";
        case HTTP_RESULT_CANCELLED:   return "cancelled";
        case HTTP_RESULT_LOCAL:       return "local_error";
    }
    return "?";
}

void
http_set_deadline (http_t *self, int64_t deadline_ms)
{
    assert (self);
    self->deadline_ms = deadline_ms;
}

int
http_get_json (http_t *self, const char *url, long timeout_ms, json_t **response_p,
               char *err, size_t err_size)
{
    assert (self);
    assert (url);
    assert (response_p);
    assert (err && err_size > 0);
    *response_p = NULL;
    err [0] = 0;
    self->cancelled = false;
    s_outcome_t outcome = s_attempt (self, url, NULL,
                                     timeout_ms > 0 ? timeout_ms : self->opts.timeout_ms,
                                     response_p, err, err_size);
    return outcome == S_DONE ? 0 : -1;
}

static bool
s_ends_with (const char *text, size_t len, const char *suffix)
{
    size_t n = strlen (suffix);
    return len >= n && memcmp (text + len - n, suffix, n) == 0;
}

char *
http_endpoint (const char *base, const char *suffix)
{
    assert (suffix);
    if (!base || (strncmp (base, "http://", 7) != 0 && strncmp (base, "https://", 8) != 0))
        return NULL;
    size_t len = strlen (base);
    while (len > 8 && base [len - 1] == '/')
        len--;
    char *url = NULL;
    char tail [128];
    snprintf (tail, sizeof tail, "/%s", suffix);
    int rc;
    if (s_ends_with (base, len, tail))
        rc = asprintf (&url, "%.*s", (int) len, base);
    else
    if (s_ends_with (base, len, "/v1"))
        rc = asprintf (&url, "%.*s/%s", (int) len, base, suffix);
    else
        rc = asprintf (&url, "%.*s/v1/%s", (int) len, base, suffix);
    return rc < 0 ? NULL : url;
}

const char *
http_env_key (const char *const *names)
{
    assert (names);
    for (size_t i = 0; names [i]; i++) {
        const char *value = getenv (names [i]);
        if (value && *value)
            return value;
    }
    return NULL;
}
