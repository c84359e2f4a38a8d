// SPDX-License-Identifier: MIT
/*  http - one JSON-over-HTTP POST client for every OpenAI-compatible call.

    Both the chat client (llm.c) and the embeddings client (embedder.c) talk
    to their server through this class, so timeouts, retries and size caps
    are written once:

    - a connect timeout and a total timeout per attempt;
    - retry with exponential backoff and full jitter on 408, 429, 5xx
      (except 501 and 505, which say the server will never do it),
      timeouts and connection errors; never on other 4xx: the request
      itself is bad, and sending it again gets the same answer;
    - a Retry-After header, in seconds or as an HTTP-date (libcurl's
      CURLINFO_RETRY_AFTER reads both), is honoured, capped at
      backoff_max_ms so a hostile server cannot park us for an hour;
    - an optional deadline (http_set_deadline) bounds a whole request,
      attempts and backoffs together: no attempt starts after it and none
      runs past it;
    - an optional `cancel` function abandons a request at once (the agent
      stops on SIGTERM within a second, even in the middle of a model call);
    - every failure has a typed result (http_last_result), so callers tell
      "the server was not reached" from "the server refused the request"
      from "the server answered something that is not JSON";
    - the response body is capped (max_response_bytes): a larger body
      aborts the transfer with a clear error instead of growing a buffer;
    - "Authorization: Bearer KEY" is sent only when a key is given;
    - an optional `tick` function runs while we wait (from libcurl's
      progress callback during a transfer, and between slices of a retry
      backoff), so a single-threaded caller can keep other connections
      alive during a slow model call (the agent sends broker HEARTBEATs).

    One http_t is one libcurl easy handle (connection reuse); it is not
    thread-safe: one per thread. curl_global_init is done once, lazily.
*/
#ifndef PARLEY_HTTP_H
#define PARLEY_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

typedef struct _http_t http_t;

//  Runs while a request waits: at least about once a second during a
//  transfer (libcurl's progress callback) and every HTTP_TICK_MS during a
//  backoff. Must not block for long and must not use this http_t.
typedef void (http_tick_fn) (void *arg);
#define HTTP_TICK_MS 200

//  Asked at the same moments as the tick (with tick_arg): true abandons
//  the request (result HTTP_RESULT_CANCELLED).
typedef bool (http_cancel_fn) (void *arg);

//  How the last request ended.
typedef enum {
    HTTP_RESULT_OK = 0,         //  2xx with a JSON object
    HTTP_RESULT_UNREACHABLE,    //  timeouts, connection errors, 408/429/5xx: retries spent
    HTTP_RESULT_REFUSED,        //  another 4xx, 501, 505: the request will never work
    HTTP_RESULT_BAD_BODY,       //  2xx that is not a JSON object, or over the size cap
    HTTP_RESULT_CANCELLED,      //  the cancel function said so, or the deadline passed
    HTTP_RESULT_LOCAL           //  the request could not be built or sent (local error)
} http_result_t;

typedef struct {
    long connect_timeout_ms;    //  default 5000
    long timeout_ms;            //  whole attempt, default 60000
    int max_retries;            //  retries after the first attempt, default 3
    long backoff_base_ms;       //  first backoff, doubled each retry; default 500
    long backoff_max_ms;        //  cap on one wait (incl. Retry-After); default 20000
    size_t max_response_bytes;  //  default 8 MiB
    http_tick_fn *tick;         //  default NULL: nothing runs while waiting
    void *tick_arg;
    http_cancel_fn *cancel;     //  default NULL: never cancelled (gets tick_arg)
} http_options_t;

typedef struct {
    uint64_t requests;          //  http_post_json calls
    uint64_t attempts;          //  HTTP attempts (>= requests)
    uint64_t retries;           //  attempts that were retries
    uint64_t timeouts;          //  attempts that timed out
    uint64_t failures;          //  requests that ended in an error
    uint64_t ticks;             //  tick calls made while waiting
    int64_t last_backoff_ms;    //  the last wait before a retry (for tests/logs)
} http_stats_t;

//  Fills `opts` with the defaults above.
void http_options_default (http_options_t *opts);

//  `url` is the full endpoint (see http_endpoint). `api_key` may be NULL or
//  "" (no Authorization header). `opts` NULL means defaults. Copies all.
//  Returns NULL only if libcurl cannot be initialised.
http_t *http_new (const char *url, const char *api_key, const http_options_t *opts);
void http_destroy (http_t **self_p);

//  POSTs `body` as JSON. On success returns 0 and *response_p is a new
//  reference the caller must json_decref. On failure returns -1, fills `err`
//  with one sentence (status, curl error or JSON error, and the attempt
//  count) and leaves *response_p NULL. A 2xx body that is not a JSON object
//  is an error and is not retried (a server bug, not a transient one).
int http_post_json (http_t *self, json_t *body, json_t **response_p,
                    char *err, size_t err_size);

void http_stats (http_t *self, http_stats_t *stats);

//  The result of the last http_post_json / http_get_json.
http_result_t http_last_result (http_t *self);

//  Name of a result ("ok", "unreachable", "refused", "bad_body", ...).
const char *http_result_name (http_result_t result);

//  Every later request ends by `deadline_ms` (pclock_mono_ms clock); 0
//  removes the deadline. A request that starts after it fails at once
//  with HTTP_RESULT_CANCELLED.
void http_set_deadline (http_t *self, int64_t deadline_ms);

//  One GET of `url` (no retry: for a probe at start), same caps and result
//  as http_post_json; `timeout_ms` bounds it (0: the options' timeout).
int http_get_json (http_t *self, const char *url, long timeout_ms, json_t **response_p,
                   char *err, size_t err_size);

//  Builds the endpoint URL for `suffix` ("chat/completions", "embeddings")
//  from what a user typed: "http://h:8080" -> "http://h:8080/v1/SUFFIX",
//  "http://h:8080/v1" or ".../v1/" -> ".../v1/SUFFIX", and a URL already
//  ending in "/SUFFIX" is kept. Returns a new string (free it), or NULL if
//  `base` is not http:// or https://.
char *http_endpoint (const char *base, const char *suffix);

//  First non-empty environment variable among `names` (NULL-terminated),
//  or NULL. Used for PARLEY_LLM_API_KEY / PARLEY_EMBED_API_KEY / OPENAI_API_KEY.
const char *http_env_key (const char *const *names);

#endif
