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
#define S_XSTR(x) #x
#define S_STR(x) S_XSTR (x)

struct _llm_t {
    http_t *http;
    char *models_url;           //  GET <base>/models, for the probe
    char *model;
    llm_call_t last;
    llm_totals_t totals;
    llm_totals_t probe_totals;  //  the answer mode's probe (llm_mode.h), counted apart
    bool probing;
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

//  One message of the request: role, content (a string, content parts
//  with an image, or null beside tool calls) and the tool fields.
static json_t *
s_message (const llm_message_t *message, const char *image, size_t index, char *err,
           size_t err_size)
{
    const char *role = message->role;
    if (!role || (strcmp (role, "system") && strcmp (role, "user") && strcmp (role, "assistant")
              &&  strcmp (role, "tool"))) {
        snprintf (err, err_size, "message %zu has an invalid role", index);
        return NULL;
    }
    if (strcmp (role, "tool") == 0 && !message->tool_call_id) {
        snprintf (err, err_size, "message %zu answers no tool call", index);
        return NULL;
    }
    //  json_string refuses invalid UTF-8 (a model or a peer may send it).
    json_t *content = message->content || !message->tool_calls
                    ? json_string (message->content ? message->content : "") : json_null ();
    if (!content) {
        snprintf (err, err_size, "message %zu is not valid UTF-8", index);
        return NULL;
    }
    if (image) {
        json_t *url = json_string (image);
        json_t *parts = url ? json_pack ("[{s:s, s:o}, {s:s, s:{s:o, s:s}}]",
                                         "type", "text", "text", content,
                                         "type", "image_url", "image_url",
                                         "url", url, "detail", "low") : NULL;
        if (!parts) {
            if (!url)
                json_decref (content);
            snprintf (err, err_size, "message %zu: cannot build its image part", index);
            return NULL;
        }
        content = parts;
    }
    json_t *out = json_pack ("{s:s, s:o}", "role", role, "content", content);
    if (out && message->tool_calls)
        json_object_set (out, "tool_calls", (json_t *) message->tool_calls);
    if (out && message->tool_call_id)
        json_object_set_new (out, "tool_call_id", json_string (message->tool_call_id));
    if (!out)
        snprintf (err, err_size, "message %zu: out of memory", index);
    return out;
}

static json_t *
s_request (llm_t *self, const llm_message_t *messages, size_t count, const char *const *images,
           const llm_shape_t *shape, char *err, size_t err_size)
{
    json_t *list = json_array ();
    json_t *body = json_pack ("{s:s, s:o, s:f}", "model", self->model, "messages", list,
                              "temperature", self->temperature);
    if (!body) {
        snprintf (err, err_size, "cannot build the chat request");
        return NULL;
    }
    int max_tokens = shape && shape->max_tokens > 0 ? shape->max_tokens : self->max_tokens;
    if (max_tokens > 0)
        json_object_set_new (body, "max_tokens", json_integer (max_tokens));
    if (shape && shape->tools) {
        json_object_set (body, "tools", (json_t *) shape->tools);
        if (shape->tool_choice)
            json_object_set_new (body, "tool_choice", json_string (shape->tool_choice));
    }
    if (shape && shape->response_format)
        json_object_set (body, "response_format", (json_t *) shape->response_format);
    for (size_t i = 0; i < count; i++) {
        json_t *message = s_message (&messages [i], images ? images [i] : NULL, i, err, err_size);
        if (!message) {
            json_decref (body);
            return NULL;
        }
        json_array_append_new (list, message);
    }
    return body;
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

//  A string no larger than the cap and without NUL, copied.
static char *
s_text (llm_t *self, const json_t *value, const char *what, char *err, size_t err_size)
{
    size_t len = json_string_length (value);
    if (len > self->max_content_bytes) {
        snprintf (err, err_size, "chat answer's %s has %zu bytes, over the %zu-byte limit",
                  what, len, self->max_content_bytes);
        return NULL;
    }
    const char *text = json_string_value (value);
    if (memchr (text, 0, len)) {
        snprintf (err, err_size, "chat answer's %s contains a NUL character", what);
        return NULL;
    }
    char *copy = strndup (text, len);
    if (!copy)
        snprintf (err, err_size, "out of memory");
    return copy;
}

//  choices[0].message.tool_calls into reply->calls: each one's function
//  name and its arguments as a JSON object (OpenAI sends them as a JSON
//  string, some servers as the object itself).
static int
s_tool_calls (llm_t *self, json_t *message, llm_reply_t *reply, char *err, size_t err_size)
{
    json_t *calls = json_object_get (message, "tool_calls");
    if (!calls || json_is_null (calls) || (json_is_array (calls) && !json_array_size (calls)))
        return 0;
    if (!json_is_array (calls) || json_array_size (calls) > LLM_MAX_TOOL_CALLS) {
        snprintf (err, err_size, "chat response tool_calls is %s", json_is_array (calls)
                  ? "longer than " S_STR (LLM_MAX_TOOL_CALLS) " calls" : "not a list");
        return -1;
    }
    reply->calls = json_array ();
    size_t i;
    json_t *call;
    json_array_foreach (calls, i, call) {
        json_t *function = json_object_get (call, "function");
        const char *name = json_string_value (json_object_get (function, "name"));
        json_t *arguments = json_object_get (function, "arguments");
        const char *id = json_string_value (json_object_get (call, "id"));
        json_t *parsed = NULL;
        if (json_is_string (arguments)) {
            char *text = s_text (self, arguments, "tool arguments", err, err_size);
            if (!text)
                return -1;
            parsed = json_loads (text, JSON_REJECT_DUPLICATES, NULL);
            free (text);
        }
        else
        if (json_is_object (arguments))
            parsed = json_incref (arguments);
        if (!name || !json_is_object (parsed)) {
            //  The model's own mistake (arguments that are not an object):
            //  kept as a call the caller can tell the model about.
            json_decref (parsed);
            parsed = json_null ();
        }
        char fallback_id [32];
        snprintf (fallback_id, sizeof fallback_id, "call_%zu", i);
        json_array_append_new (reply->calls, json_pack ("{s:s, s:s, s:o}", "id", id ? id : fallback_id,
                                                        "name", name ? name : "", "arguments",
                                                        parsed));
    }
    reply->tool_calls = json_incref (calls);
    return 0;
}

//  choices[0].message: its content (a string; null allowed beside tool
//  calls when the request asked for a shape) and its tool calls.
static int
s_reply (llm_t *self, json_t *response, bool shaped, llm_reply_t *reply, char *err,
         size_t err_size)
{
    json_t *choices = json_object_get (response, "choices");
    if (!json_is_array (choices) || json_array_size (choices) == 0) {
        json_t *error = json_object_get (response, "error");
        json_t *message = json_is_object (error) ? json_object_get (error, "message") : NULL;
        if (json_is_string (message))
            snprintf (err, err_size, "chat response is an error: %.200s", json_string_value (message));
        else
            snprintf (err, err_size, "chat response has no choices");
        return -1;
    }
    json_t *message = json_object_get (json_array_get (choices, 0), "message");
    if (!json_is_object (message)) {
        snprintf (err, err_size, "chat response choices[0] has no message object");
        return -1;
    }
    if (shaped && s_tool_calls (self, message, reply, err, err_size))
        return -1;
    json_t *content = json_object_get (message, "content");
    if (json_is_string (content))
        reply->content = s_text (self, content, "content", err, err_size);
    else
    if (!reply->calls) {
        snprintf (err, err_size, "chat response choices[0].message.content is %s, not a string",
                  content ? (json_is_null (content) ? "null" : "not text") : "missing");
        return -1;
    }
    return json_is_string (content) && !reply->content ? -1 : 0;
}

void
llm_reply_free (llm_reply_t *reply)
{
    if (!reply)
        return;
    free (reply->content);
    json_decref (reply->tool_calls);
    json_decref (reply->calls);
    memset (reply, 0, sizeof *reply);
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
    llm_reply_t reply;
    if (llm_ask (self, messages, count, images, NULL, &reply, err, err_size))
        return NULL;
    char *content = reply.content;
    reply.content = NULL;
    llm_reply_free (&reply);
    return content;
}

//  The call's figures into the last call and the totals.
static void
s_count (llm_t *self, bool answered)
{
    llm_totals_t *t = self->probing ? &self->probe_totals : &self->totals;
    t->calls++;
    if (answered)
        t->ok++;
    else {
        t->failed++;
        t->unreachable += self->last.result == LLM_RESULT_UNREACHABLE;
        t->refused += self->last.result == LLM_RESULT_REFUSED;
        t->bad_response += self->last.result == LLM_RESULT_BAD_RESPONSE;
    }
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
}

int
llm_ask (llm_t *self, const llm_message_t *messages, size_t count, const char *const *images,
         const llm_shape_t *shape, llm_reply_t *reply, char *err, size_t err_size)
{
    assert (self);
    assert (messages || count == 0);
    assert (reply);
    assert (err && err_size);
    err [0] = 0;
    memset (reply, 0, sizeof *reply);
    if (count == 0 || count > S_MAX_MESSAGES) {
        snprintf (err, err_size, "a chat needs 1 to %d messages, not %zu", S_MAX_MESSAGES, count);
        return -1;
    }
    json_t *body = s_request (self, messages, count, images, shape, err, err_size);
    if (!body)
        return -1;
    bool shaped = shape && (shape->tools || shape->response_format);
    int64_t start = pclock_mono_us ();
    http_stats_t before, after;
    http_stats (self->http, &before);
    self->last = (llm_call_t) { .prompt_tokens = -1, .completion_tokens = -1 };
    json_t *response = NULL;
    int rc = -1;
    if (http_post_json (self->http, body, &response, err, err_size) == 0) {
        s_usage (self, response);
        rc = s_reply (self, response, shaped, reply, err, err_size);
        self->last.result = rc == 0 ? LLM_RESULT_OK : LLM_RESULT_BAD_RESPONSE;
        if (rc)
            llm_reply_free (reply);
    }
    else
        self->last.result = s_from_http (http_last_result (self->http));
    json_decref (body);
    json_decref (response);
    http_stats (self->http, &after);
    self->last.latency_us = pclock_mono_us () - start;
    self->last.retries = after.retries - before.retries;
    s_count (self, rc == 0);
    return rc;
}

char *
llm_complete (llm_t *self, const char *system, const char *user, char *err, size_t err_size)
{
    llm_message_t messages [2] = {
        { .role = "system", .content = system ? system : "" },
        { .role = "user", .content = user ? user : "" }
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

void
llm_probe_totals (llm_t *self, llm_totals_t *totals)
{
    assert (self && totals);
    *totals = self->probe_totals;
}

void
llm_set_probing (llm_t *self, bool probing)
{
    assert (self);
    self->probing = probing;
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
