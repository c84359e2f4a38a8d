// SPDX-License-Identifier: MIT
/*  llm - OpenAI-compatible /v1/chat/completions client; see llm.h.

    Validation is strict on purpose: a reply without choices[0].message
    .content as a string is an error naming what was missing, so a log line
    tells the operator whether the server, the model or the proxy is wrong.
    Some servers (reasoning models) put text in "reasoning_content" and
    leave "content" null; that is reported as such, not parsed.
*/
#include "llm.h"
#include <czmq.h>
#include "pclock.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_MESSAGES 64

struct _llm_t {
    http_t *http;
    char *models_url;           //  GET <base>/models, for the probe
    char *model;
    llm_call_t last;
    llm_totals_t totals;
    double temperature;
    int max_tokens;
    size_t max_content_bytes;
};

void
llm_options_default (llm_options_t *opts)
{
    assert (opts);
    memset (opts, 0, sizeof *opts);
    opts->temperature = 0.2;
    opts->max_tokens = 512;
    opts->max_content_bytes = 64 * 1024;
    http_options_default (&opts->http);
}

llm_t *
llm_new (const llm_options_t *opts, char *err, size_t err_size)
{
    assert (opts);
    assert (err && err_size);
    err [0] = 0;
    if (!opts->model || !*opts->model) {
        snprintf (err, err_size, "the llm policy needs --llm-model");
        return NULL;
    }
    char *url = http_endpoint (opts->url, "chat/completions");
    if (!url) {
        snprintf (err, err_size, "--llm-url \"%s\" is not an http:// or https:// URL",
                  opts->url ? opts->url : "");
        return NULL;
    }
    llm_t *self = calloc (1, sizeof *self);
    if (!self) {
        free (url);
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    static const char *const key_vars [] = { "PARLEY_LLM_API_KEY", "OPENAI_API_KEY", NULL };
    const char *key = opts->api_key ? opts->api_key : http_env_key (key_vars);
    self->http = http_new (url, key, &opts->http);
    free (url);
    self->models_url = http_endpoint (opts->url, "models");
    self->model = strdup (opts->model);
    self->temperature = opts->temperature;
    self->max_tokens = opts->max_tokens;
    self->max_content_bytes = opts->max_content_bytes ? opts->max_content_bytes : 64 * 1024;
    if (!self->http || !self->model || !self->models_url) {
        snprintf (err, err_size, "cannot initialise the HTTP client");
        llm_destroy (&self);
    }
    return self;
}

void
llm_destroy (llm_t **self_p)
{
    assert (self_p);
    llm_t *self = *self_p;
    if (!self)
        return;
    http_destroy (&self->http);
    free (self->models_url);
    free (self->model);
    free (self);
    *self_p = NULL;
}

static json_t *
s_request (llm_t *self, const llm_message_t *messages, size_t count, const char *const *images,
           char *err, size_t err_size)
{
    json_t *list = json_array ();
    json_t *body = json_pack ("{s:s, s:o, s:f}", "model", self->model, "messages", list,
                              "temperature", self->temperature);
    if (!body) {
        snprintf (err, err_size, "cannot build the chat request");
        return NULL;
    }
    if (self->max_tokens > 0)
        json_object_set_new (body, "max_tokens", json_integer (self->max_tokens));
    for (size_t i = 0; i < count; i++) {
        const char *role = messages [i].role;
        if (!role || (strcmp (role, "system") && strcmp (role, "user") && strcmp (role, "assistant"))) {
            snprintf (err, err_size, "message %zu has an invalid role", i);
            goto err;
        }
        //  json_string refuses invalid UTF-8 (a model or a peer may send it).
        json_t *content = json_string (messages [i].content ? messages [i].content : "");
        if (!content) {
            snprintf (err, err_size, "message %zu is not valid UTF-8", i);
            goto err;
        }
        if (images && images [i]) {
            json_t *url = json_string (images [i]);
            json_t *parts = url ? json_pack ("[{s:s, s:o}, {s:s, s:{s:o, s:s}}]",
                                             "type", "text", "text", content,
                                             "type", "image_url", "image_url",
                                             "url", url, "detail", "low") : NULL;
            if (!parts) {
                if (!url)
                    json_decref (content);
                snprintf (err, err_size, "message %zu: cannot build its image part", i);
                goto err;
            }
            content = parts;
        }
        json_array_append_new (list, json_pack ("{s:s, s:o}", "role", role, "content", content));
    }
    return body;
err:
    json_decref (body);
    return NULL;
}

//  usage.prompt_tokens / completion_tokens, when the server gives them.
static void
s_usage (llm_t *self, json_t *response)
{
    json_t *usage = json_object_get (response, "usage");
    json_t *prompt = json_object_get (usage, "prompt_tokens");
    json_t *completion = json_object_get (usage, "completion_tokens");
    if (json_is_integer (prompt) && json_integer_value (prompt) >= 0)
        self->last.prompt_tokens = json_integer_value (prompt);
    if (json_is_integer (completion) && json_integer_value (completion) >= 0)
        self->last.completion_tokens = json_integer_value (completion);
}

static llm_result_t
s_from_http (http_result_t result)
{
    switch (result) {
        case HTTP_RESULT_OK:          return LLM_RESULT_OK;
        case HTTP_RESULT_UNREACHABLE: return LLM_RESULT_UNREACHABLE;
        case HTTP_RESULT_REFUSED:     return LLM_RESULT_REFUSED;
        case HTTP_RESULT_BAD_BODY:    return LLM_RESULT_BAD_RESPONSE;
        case HTTP_RESULT_CANCELLED:   return LLM_RESULT_CANCELLED;
        case HTTP_RESULT_LOCAL:       return LLM_RESULT_LOCAL;
    }
    return LLM_RESULT_LOCAL;
}

//  choices[0].message.content, strictly.
static char *
s_content (llm_t *self, json_t *response, char *err, size_t err_size)
{
    json_t *choices = json_object_get (response, "choices");
    if (!json_is_array (choices) || json_array_size (choices) == 0) {
        json_t *error = json_object_get (response, "error");
        json_t *message = json_is_object (error) ? json_object_get (error, "message") : NULL;
        if (json_is_string (message))
            snprintf (err, err_size, "chat response is an error: %.200s", json_string_value (message));
        else
            snprintf (err, err_size, "chat response has no choices");
        return NULL;
    }
    json_t *message = json_object_get (json_array_get (choices, 0), "message");
    if (!json_is_object (message)) {
        snprintf (err, err_size, "chat response choices[0] has no message object");
        return NULL;
    }
    json_t *content = json_object_get (message, "content");
    if (!json_is_string (content)) {
        snprintf (err, err_size, "chat response choices[0].message.content is %s, not a string",
                  content ? (json_is_null (content) ? "null" : "not text") : "missing");
        return NULL;
    }
    size_t len = json_string_length (content);
    if (len > self->max_content_bytes) {
        snprintf (err, err_size, "chat answer has %zu bytes, over the %zu-byte limit",
                  len, self->max_content_bytes);
        return NULL;
    }
    const char *text = json_string_value (content);
    if (memchr (text, 0, len)) {
        snprintf (err, err_size, "chat answer contains a NUL character");
        return NULL;
    }
    char *copy = strndup (text, len);
    if (!copy)
        snprintf (err, err_size, "out of memory");
    return copy;
}

char *
llm_chat (llm_t *self, const llm_message_t *messages, size_t count, char *err, size_t err_size)
{
    return llm_chat_images (self, messages, count, NULL, err, err_size);
}

char *
llm_chat_images (llm_t *self, const llm_message_t *messages, size_t count,
                 const char *const *images, char *err, size_t err_size)
{
    assert (self);
    assert (messages || count == 0);
    assert (err && err_size);
    err [0] = 0;
    if (count == 0 || count > S_MAX_MESSAGES) {
        snprintf (err, err_size, "a chat needs 1 to %d messages, not %zu", S_MAX_MESSAGES, count);
        return NULL;
    }
    json_t *body = s_request (self, messages, count, images, err, err_size);
    if (!body)
        return NULL;
    int64_t start = pclock_mono_us ();
    http_stats_t before, after;
    http_stats (self->http, &before);
    self->last = (llm_call_t) { .prompt_tokens = -1, .completion_tokens = -1 };
    json_t *response = NULL;
    char *answer = NULL;
    if (http_post_json (self->http, body, &response, err, err_size) == 0) {
        s_usage (self, response);
        answer = s_content (self, response, err, err_size);
        self->last.result = answer ? LLM_RESULT_OK : LLM_RESULT_BAD_RESPONSE;
    }
    else
        self->last.result = s_from_http (http_last_result (self->http));
    json_decref (body);
    json_decref (response);
    http_stats (self->http, &after);
    self->last.latency_us = pclock_mono_us () - start;
    self->last.retries = after.retries - before.retries;
    llm_totals_t *t = &self->totals;
    t->calls++;
    if (answer)
        t->ok++;
    else
        t->failed++;
    t->retries += self->last.retries;
    if (self->last.prompt_tokens >= 0 || self->last.completion_tokens >= 0)
        t->calls_with_usage++;
    if (self->last.prompt_tokens > 0)
        t->prompt_tokens += (uint64_t) self->last.prompt_tokens;
    if (self->last.completion_tokens > 0)
        t->completion_tokens += (uint64_t) self->last.completion_tokens;
    t->latency_us += self->last.latency_us;
    if (self->last.latency_us > t->latency_max_us)
        t->latency_max_us = self->last.latency_us;
    return answer;
}

char *
llm_complete (llm_t *self, const char *system, const char *user, char *err, size_t err_size)
{
    llm_message_t messages [2] = {
        { "system", system ? system : "" },
        { "user", user ? user : "" }
    };
    return llm_chat (self, messages, 2, err, err_size);
}

const char *
llm_model (llm_t *self)
{
    assert (self);
    return self->model;
}

void
llm_stats (llm_t *self, http_stats_t *stats)
{
    assert (self);
    http_stats (self->http, stats);
}

const llm_call_t *
llm_last_call (llm_t *self)
{
    assert (self);
    return &self->last;
}

void
llm_totals (llm_t *self, llm_totals_t *totals)
{
    assert (self);
    assert (totals);
    *totals = self->totals;
}

const char *
llm_result_name (llm_result_t result)
{
    switch (result) {
        case LLM_RESULT_OK:           return "ok";
        case LLM_RESULT_UNREACHABLE:  return "unreachable";
        case LLM_RESULT_REFUSED:      return "refused";
        case LLM_RESULT_BAD_RESPONSE: return "bad_response";
        case LLM_RESULT_CANCELLED:    return "cancelled";
        case LLM_RESULT_LOCAL:        return "local_error";
    }
    return "?";
}

void
llm_set_deadline (llm_t *self, int64_t deadline_ms)
{
    assert (self);
    http_set_deadline (self->http, deadline_ms);
}

llm_result_t
llm_probe (llm_t *self, long timeout_ms, char *note, size_t note_size)
{
    assert (self);
    assert (note && note_size);
    note [0] = 0;
    json_t *response = NULL;
    if (http_get_json (self->http, self->models_url, timeout_ms, &response,
                       note, note_size) != 0)
        return s_from_http (http_last_result (self->http));
    json_t *data = json_object_get (response, "data");
    size_t index;
    json_t *entry;
    bool found = false;
    size_t used = 0;
    json_array_foreach (data, index, entry) {
        const char *id = json_string_value (json_object_get (entry, "id"));
        if (!id)
            continue;
        if (strcmp (id, self->model) == 0)
            found = true;
        if (index < 8 && used + 1 < note_size)
            used += (size_t) snprintf (note + used, note_size - used, "%s%s",
                                       used ? ", " : "", id);
        if (used >= note_size)
            used = note_size - 1;
    }
    if (found || json_array_size (data) == 0)
        note [0] = 0;
    json_decref (response);
    return LLM_RESULT_OK;
}

char *
llm_image_data_url (const uint8_t *data, size_t size, const char *type)
{
    assert (data && type);
    zarmour_t *armour = zarmour_new ();
    if (!armour)
        return NULL;
    zarmour_set_mode (armour, ZARMOUR_MODE_BASE64_STD);
    zarmour_set_pad (armour, true);
    zarmour_set_line_breaks (armour, false);
    char *base64 = zarmour_encode (armour, data, size);
    zarmour_destroy (&armour);
    char *url = base64 ? zsys_sprintf ("data:image/%s;base64,%s", type, base64) : NULL;
    zstr_free (&base64);
    return url;
}
