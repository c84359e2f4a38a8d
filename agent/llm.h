/*  llm - OpenAI-compatible /v1/chat/completions client.

    Works with OpenAI, Ollama, llama.cpp server, vLLM. The request is
    {model, messages, temperature, max_tokens}; the reply must have
    choices[0].message.content as a string no larger than max_content_bytes,
    anything else is an error with a clear sentence. Transport, timeouts and
    retries (429, 5xx, timeouts) come from http.c.

    For the "retry with the error told to the model" loop, call llm_chat
    with the whole conversation: system, user, the assistant's bad answer,
    and a user message saying what was wrong.
*/
#ifndef PARLEY_LLM_H
#define PARLEY_LLM_H

#include <stddef.h>
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
    const char *role;           //  "system", "user" or "assistant"
    const char *content;
} llm_message_t;

void llm_options_default (llm_options_t *opts);

//  NULL with `err` filled if the url or model is missing or invalid.
llm_t *llm_new (const llm_options_t *opts, char *err, size_t err_size);
void llm_destroy (llm_t **self_p);

//  Sends the conversation; returns the answer text (caller frees) or NULL
//  with `err` filled. Never returns an empty-but-successful answer silently:
//  empty content is returned as "" (the parser will reject it).
char *llm_chat (llm_t *self, const llm_message_t *messages, size_t count,
                char *err, size_t err_size);

//  Shorthand for a system + user conversation.
char *llm_complete (llm_t *self, const char *system, const char *user,
                    char *err, size_t err_size);

const char *llm_model (llm_t *self);
void llm_stats (llm_t *self, http_stats_t *stats);

#endif
