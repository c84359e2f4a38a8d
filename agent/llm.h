// SPDX-License-Identifier: MIT
/*  llm - OpenAI-compatible /v1/chat/completions client.

    Works with OpenAI, Ollama, llama.cpp server, vLLM. The request is
    {model, messages, temperature, max_tokens}; the reply must have
    choices[0].message.content as a string no larger than max_content_bytes,
    anything else is an error with a clear sentence. Transport, timeouts and
    retries (429, 5xx, timeouts) come from http.c.

    For the "retry with the error told to the model" loop, call llm_chat
    with the whole conversation: system, user, the assistant's bad answer,
    and a user message saying what was wrong. Only a model's answer is told
    back that way: llm_last_call says whether a failed call reached the
    model at all (see llm_result_t).

    Structured answers (llm_ask): the request may carry OpenAI `tools`
    (function calling, with `tool_choice`) or a `response_format` (a JSON
    schema); the reply's choices[0].message then has `tool_calls` instead
    of (or beside) its content. A conversation may hold the assistant's
    tool calls and `tool` messages answering them, so a refusal goes back
    to the model as the result of the call it made.

    Every call is measured (llm_last_call, llm_totals): latency, the
    server's `usage` token counts when it gives them, HTTP retries and the
    typed outcome.
*/
#ifndef PARLEY_LLM_H
#define PARLEY_LLM_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "http.h"

typedef struct _llm_t llm_t;

typedef struct {
    const char *url;            //  --llm-url, e.g. http://127.0.0.1:11434/v1
    const char *model;          //  --llm-model; required
    const char *api_key;        //  NULL: $PARLEY_LLM_API_KEY, then $OPENAI_API_KEY
    double temperature;         //  default 0.2
    int max_tokens;             //  default 512; <= 0 means "not sent"
    size_t max_content_bytes;   //  cap on the answer text, default 64 KiB
    http_options_t http;        //  timeouts, retries, caps
} llm_options_t;

typedef struct {
    const char *role;           //  "system", "user", "assistant" or "tool"
    const char *content;        //  NULL: "" (or null for an assistant's tool calls)
    const json_t *tool_calls;   //  assistant: the calls it made, as the server sent them
    const char *tool_call_id;   //  tool: the call this message answers
} llm_message_t;

//  What the request asks of the answer's shape (llm_ask); any part NULL.
typedef struct {
    const json_t *tools;            //  OpenAI "tools": [{"type":"function","function":{...}}]
    const char *tool_choice;        //  "required" or "auto"; NULL: not sent
    const json_t *response_format;  //  {"type":"json_schema","json_schema":{...}}
    int max_tokens;                 //  > 0: overrides the options' max_tokens for this call
} llm_shape_t;

//  One reply: its text and its tool calls (each {"id", "name",
//  "arguments"}, arguments a JSON object), either may be absent.
typedef struct {
    char *content;              //  NULL: none (a tool call answer)
    json_t *tool_calls;         //  the calls as the server sent them (for the conversation)
    json_t *calls;              //  [{"id": ID, "name": NAME, "arguments": {...}}], or NULL
} llm_reply_t;

#define LLM_MAX_TOOL_CALLS 32   //  tool calls read from one reply

//  Tokens an image costs a model at "detail": "low" (OpenAI's figure; other
//  servers differ, but it is what the prompt budget counts).
#define LLM_IMAGE_TOKENS 85

//  "data:image/png;base64,..." for `size` bytes of a PNG or JPEG (`type`
//  "png" or "jpeg"). A new string (caller frees), NULL out of memory.
char *llm_image_data_url (const uint8_t *data, size_t size, const char *type);

//  How a call ended. Only LLM_RESULT_OK gives text; every other result
//  means the model's answer never arrived, so there is nothing to tell
//  the model about: a caller retries with the same request (or not at all).
typedef enum {
    LLM_RESULT_OK = 0,          //  an answer (possibly unusable: the parser judges)
    LLM_RESULT_UNREACHABLE,     //  timeouts, connection errors, 408/429/5xx: retries spent
    LLM_RESULT_REFUSED,         //  4xx, 501, 505: this request will never work
    LLM_RESULT_BAD_RESPONSE,    //  not JSON, no choices, content not a string, too big
    LLM_RESULT_CANCELLED,       //  stopped, or the deadline passed
    LLM_RESULT_LOCAL            //  the request could not be built
} llm_result_t;

typedef struct {
    llm_result_t result;
    int64_t latency_us;         //  the whole call, retries and backoffs included
    int64_t prompt_tokens;      //  from the server's usage; -1 when not given
    int64_t completion_tokens;  //  idem
    uint64_t retries;           //  HTTP attempts beyond the first
} llm_call_t;

typedef struct {
    uint64_t calls, ok, failed;         //  failed = calls - ok
    uint64_t unreachable, refused;      //  failed calls by result (llm_result_t)
    uint64_t bad_response;
    uint64_t retries;                   //  HTTP retries over every call
    uint64_t prompt_tokens, completion_tokens;  //  sums of what servers reported
    uint64_t calls_with_usage;          //  calls whose answer carried usage
    int64_t latency_us, latency_max_us; //  sum and maximum
} llm_totals_t;

void llm_options_default (llm_options_t *opts);

//  NULL with `err` filled if the url or model is missing or invalid.
llm_t *llm_new (const llm_options_t *opts, char *err, size_t err_size);
void llm_destroy (llm_t **self_p);

//  Sends the conversation; returns the answer text (caller frees) or NULL
//  with `err` filled. Never returns an empty-but-successful answer silently:
//  empty content is returned as "" (the parser will reject it).
char *llm_chat (llm_t *self, const llm_message_t *messages, size_t count,
                char *err, size_t err_size);

//  llm_chat for a multimodal model: `images` has one entry per message, an
//  image URL (llm_image_data_url) or NULL. A message with an image is sent
//  as OpenAI's content parts:
//      [{"type":"text","text":CONTENT},
//       {"type":"image_url","image_url":{"url":URL,"detail":"low"}}]
char *llm_chat_images (llm_t *self, const llm_message_t *messages, size_t count,
                       const char *const *images, char *err, size_t err_size);

//  The general call: `images` as llm_chat_images (may be NULL), `shape`
//  what the answer should look like (may be NULL: text). 0 with `reply`
//  filled (llm_reply_free it), or -1 with `err`. Without a shape the
//  content must be a string; with one, tool calls alone are an answer.
int llm_ask (llm_t *self, const llm_message_t *messages, size_t count,
             const char *const *images, const llm_shape_t *shape, llm_reply_t *reply,
             char *err, size_t err_size);
void llm_reply_free (llm_reply_t *reply);

//  Shorthand for a system + user conversation.
char *llm_complete (llm_t *self, const char *system, const char *user,
                    char *err, size_t err_size);

const char *llm_model (llm_t *self);
void llm_stats (llm_t *self, http_stats_t *stats);

//  The last call, and the sums over every call.
const llm_call_t *llm_last_call (llm_t *self);
void llm_totals (llm_t *self, llm_totals_t *totals);
const char *llm_result_name (llm_result_t result);

//  While `probing`, calls are counted in the probe's totals, not the
//  decisions' (the answer mode's probe, llm_mode.h).
void llm_set_probing (llm_t *self, bool probing);
void llm_probe_totals (llm_t *self, llm_totals_t *totals);

//  Later calls end by `deadline_ms` (pclock_mono_ms clock; 0: none).
void llm_set_deadline (llm_t *self, int64_t deadline_ms);

//  Asks GET <url>/models once, within timeout_ms. LLM_RESULT_OK if the
//  server answered a model list; `note` then says whether the model is in
//  it ("" when it is, or the list is empty). Any other result: `note` is
//  the error. Not counted in the totals.
llm_result_t llm_probe (llm_t *self, long timeout_ms, char *note, size_t note_size);

#endif
