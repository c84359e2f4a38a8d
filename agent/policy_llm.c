// SPDX-License-Identifier: MIT
/*  policy_llm - decisions by an OpenAI-compatible chat model.

    One call per decision: system + user (prompt.c). On a retry after an
    unusable ANSWER the conversation also carries that answer and a user
    message saying what was wrong with it, so the model can correct itself.
    A call that never got an answer (the server was down, refused the
    request, sent something that is not a chat completion) is not the
    model's fault: the Decision node resends the original request when the
    reply was garbled, and does not resend at all when http's own retries
    are spent or the request was refused (policy_llm_retry_useful).

    A circuit breaker keeps a failing server from costing every step its
    full retry budget: after POLICY_LLM_BREAKER_FAILURES failed calls in a
    row (unreachable, refused, or past the decision's deadline), the
    server is not called for the cool-down (--llm-breaker-ms), then tried
    once; each failed try doubles the cool-down, up to
    POLICY_LLM_BREAKER_MAX_MS. Opening is logged once, as a warning; later
    re-openings only at debug level; the first answer after an opening is
    logged at info. Validation and the fallback to the heuristic happen in
    the Decision node, so this file only talks to the model.
*/
#include <assert.h>
#include <czmq.h>
#include "pclock.h"
#include "plog.h"
#include "policy.h"
#include "answer_schema.h"
#include "conn_world.h"
#include "prompt.h"

typedef struct {
    llm_t *llm;
    prompt_template_t *tpl;     //  the prompt's words
    bool warned_budget;         //  the over-budget warning was logged
    int64_t breaker_ms;         //  first cool-down
    int64_t cooldown_ms;        //  current cool-down
    int64_t open_until_ms;      //  0: closed
    uint64_t failures_in_row;
    bool warned;                //  the opening was logged once
    llm_mode_t mode;            //  the answer mode (auto until the probe decides)
    json_t *last_calls;         //  this decision's last tool calls, for a correction
    policy_llm_report_t report;
} llm_policy_t;

static void
s_open (llm_policy_t *self, const char *why)
{
    self->open_until_ms = pclock_mono_ms () + self->cooldown_ms;
    self->report.breaker_openings++;
    if (!self->warned)
        plog_warn ("model server not called for %lld s (%s); the heuristic decides meanwhile",
                   (long long) (self->cooldown_ms / 1000), why);
    else
        plog_debug ("model server still failing (%s); next try in %lld s",
                    why, (long long) (self->cooldown_ms / 1000));
    self->warned = true;
    self->cooldown_ms *= 2;
    if (self->cooldown_ms > POLICY_LLM_BREAKER_MAX_MS)
        self->cooldown_ms = POLICY_LLM_BREAKER_MAX_MS;
}

//  auto: the probe, once the server can be reached (llm_mode.h). Its
//  result; a server it could not reach is not asked again this decision.
static llm_result_t
s_resolve (llm_policy_t *self, char *err, size_t err_size)
{
    if (self->mode != LLM_MODE_AUTO)
        return LLM_RESULT_OK;
    char note [600];
    llm_mode_t mode;
    llm_result_t result = llm_mode_probe (self->llm, &mode, note, sizeof note);
    if (result != LLM_RESULT_OK) {
        snprintf (err, err_size, "%s (probing the answer mode)", note);
        return result;
    }
    self->mode = mode;
    self->report.mode = mode;
    plog_info ("answer mode %s (--llm-mode auto: %s)", llm_mode_name (mode), note);
    return LLM_RESULT_OK;
}

//  The correction of a retry: after the refused answer, a user message
//  (text, json-schema) or the result of each of its tool calls (tools).
static size_t
s_correction (llm_policy_t *self, const policy_input_t *in, llm_message_t *messages,
              size_t count, const char *retry)
{
    size_t calls = json_array_size (self->last_calls);
    messages [count++] = (llm_message_t) {
        .role = "assistant", .content = calls? NULL: (in->previous_answer? in->previous_answer: ""),
        .tool_calls = calls? self->last_calls: NULL };
    if (!calls) {
        messages [count++] = (llm_message_t) { .role = "user", .content = retry };
        return count;
    }
    for (size_t i = 0; i < calls && i < LLM_MAX_TOOL_CALLS; i++) {
        const char *id = json_string_value (json_object_get (json_array_get (self->last_calls, i),
                                                             "id"));
        messages [count++] = (llm_message_t) {
            .role = "tool", .tool_call_id = id? id: "",
            .content = i + 1 < calls? "Not applied: the answer was refused as a whole.": retry };
    }
    return count;
}

//  The reply as the answer's text (caller frees): the text mode's as it
//  came, a structured one in the canonical format (answer_schema.h).
static char *
s_text_of (llm_mode_t mode, const llm_reply_t *reply)
{
    if (reply->calls)
        return answer_schema_text_of_calls (reply->calls);
    char *text = mode == LLM_MODE_JSON_SCHEMA? answer_schema_text_of_json (reply->content): NULL;
    return text? text: strdup (reply->content? reply->content: "");
}

static char *
s_decide (void *impl, const policy_input_t *in, char *err, size_t err_size)
{
    llm_policy_t *self = (llm_policy_t *) impl;
    policy_llm_report_t *r = &self->report;
    if (!in->previous_error) {
        json_decref (self->last_calls);
        self->last_calls = NULL;
    }
    if (self->open_until_ms && pclock_mono_ms () < self->open_until_ms) {
        r->skipped++;
        r->last_result = LLM_RESULT_UNREACHABLE;
        r->breaker_open = true;
        snprintf (err, err_size, "model server not called (circuit open after %" PRIu64
                  " failures in a row)", self->failures_in_row);
        return NULL;
    }
    r->breaker_open = false;
    llm_set_deadline (self->llm, in->deadline_ms);
    llm_result_t probed = s_resolve (self, err, err_size);
    llm_mode_t mode = self->mode == LLM_MODE_AUTO? LLM_MODE_TEXT: self->mode;
    char *system = prompt_system_for (self->tpl, mode);
    size_t budget = prompt_budget_chars (in->context_tokens);
    size_t system_len = system? strlen (system): 0;
    //  The view's image, when the model can see (--llm-vision) and the
    //  budget has room for it: it costs LLM_IMAGE_TOKENS of the context.
    const world_image_view_t *image = in->vision && in->world? conn_world_image (in->world): NULL;
    size_t image_chars = (size_t) LLM_IMAGE_TOKENS * PROMPT_CHARS_PER_TOKEN;
    size_t user_budget = prompt_user_budget (in->context_tokens, system_len);
    if (image && user_budget && user_budget <= image_chars + PROMPT_IMAGE_MIN_TEXT) {
        r->images_left_out++;
        image = NULL;
    }
    if (image && user_budget)
        user_budget -= image_chars;
    prompt_cut_t cut;
    char *user = prompt_user_for (self->tpl, in, user_budget, &cut, mode);
    char *image_url = image? llm_image_data_url (image->data, image->size, image->type): NULL;
    if (image_url)
        r->images_sent++;
    if (cut.history_dropped || cut.memories_dropped || cut.mail_dropped)
        r->prompts_cut++;
    if (cut.over_budget && !self->warned_budget) {
        plog_warn ("the prompt needs %zu characters without history, memories or mail; "
                   "--context-tokens %zu allows %zu", cut.chars + system_len,
                   in->context_tokens, budget);
        self->warned_budget = true;
    }
    char *retry = in->previous_error? prompt_retry_for (self->tpl, in->previous_error, mode): NULL;
    llm_message_t messages[3 + LLM_MAX_TOOL_CALLS] = {
        { .role = "system", .content = system },
        { .role = "user", .content = user },
    };
    size_t count = 2;
    if (retry)
        count = s_correction (self, in, messages, count, retry);
    const char *images[3 + LLM_MAX_TOOL_CALLS] = { NULL, image_url };
    json_t *tools = mode == LLM_MODE_TOOLS? answer_schema_tools (in): NULL;
    json_t *format = mode == LLM_MODE_JSON_SCHEMA
                   ? llm_mode_response_format ("answer", answer_schema_object (in)): NULL;
    llm_shape_t shape = { .tools = tools, .tool_choice = tools? "required": NULL,
                          .response_format = format };
    llm_reply_t reply;
    char *answer = NULL;
    if (probed != LLM_RESULT_OK)
        ;               //  the server was not reached a moment ago: no second try
    else
    if (llm_ask (self->llm, messages, count, images, &shape, &reply, err, err_size) == 0) {
        answer = s_text_of (mode, &reply);
        json_decref (self->last_calls);
        self->last_calls = json_incref (reply.calls? reply.tool_calls: NULL);
        llm_reply_free (&reply);
    }
    json_decref (tools);
    json_decref (format);
    free (image_url);
    r->last_result = probed != LLM_RESULT_OK? probed: llm_last_call (self->llm)->result;
    if (answer) {
        r->answered++;
        if (self->open_until_ms)
            plog_info ("model server answers again");
        self->open_until_ms = 0;
        self->failures_in_row = 0;
        self->cooldown_ms = self->breaker_ms;
    }
    else {
        bool quiet = self->warned && self->open_until_ms;
        if (quiet)
            plog_debug ("model call failed: %s", err);
        else
            plog_warn ("model call failed: %s", err);
        snprintf (r->last_error, sizeof (r->last_error), "%s", err);
        r->unanswered++;
        //  A server that answers, however badly, is reachable: only calls
        //  that got nothing usable from the server count towards the breaker.
        if (r->last_result != LLM_RESULT_BAD_RESPONSE
        &&  r->last_result != LLM_RESULT_LOCAL
        &&  !(in->stop && *in->stop))
            self->failures_in_row++;
        if (self->failures_in_row >= POLICY_LLM_BREAKER_FAILURES && self->breaker_ms > 0)
            s_open (self, err);
    }
    llm_totals (self->llm, &r->totals);
    free (system);
    free (user);
    free (retry);
    return answer;
}

static void
s_destroy (void *impl)
{
    llm_policy_t *self = (llm_policy_t *) impl;
    llm_destroy (&self->llm);
    prompt_template_destroy (&self->tpl);
    json_decref (self->last_calls);
    free (self);
}

//  Its prompt is built from the parts (prompt.h); the AgentMemory context
//  is still given with every decision, as part of what the model was told.
static const policy_ops_t s_ops = { .decide = s_decide, .destroy = s_destroy,
                                    .reads_context = true };

policy_t *
policy_llm_new (llm_t *llm, int64_t breaker_ms)
{
    assert (llm);
    llm_policy_t *self = (llm_policy_t *) zmalloc (sizeof (llm_policy_t));
    self->llm = llm;
    self->tpl = prompt_template_new ();
    self->breaker_ms = breaker_ms > 0? breaker_ms: 0;
    self->cooldown_ms = self->breaker_ms;
    self->mode = self->report.mode = LLM_MODE_TEXT;
    return policy_new ("llm", &s_ops, self);
}

void
policy_llm_set_mode (policy_t *self, llm_mode_t mode)
{
    assert (self);
    llm_policy_t *impl = (llm_policy_t *) policy_impl (self);
    impl->mode = mode;
    impl->report.mode = mode;
}

void
policy_llm_report (policy_t *self, policy_llm_report_t *report)
{
    assert (self && report);
    llm_policy_t *impl = (llm_policy_t *) policy_impl (self);
    llm_totals (impl->llm, &impl->report.totals);
    llm_totals_t probe;
    llm_probe_totals (impl->llm, &probe);
    impl->report.probe_calls = probe.calls;
    *report = impl->report;
}

bool
policy_llm_retry_useful (policy_t *self)
{
    assert (self);
    llm_policy_t *impl = (llm_policy_t *) policy_impl (self);
    //  http has already retried what a retry can fix (timeouts, 429, 5xx);
    //  a refused request or a passed deadline stays so. Only a garbled
    //  reply (not JSON, no choices) may come out right a second time.
    if (impl->open_until_ms && pclock_mono_ms () < impl->open_until_ms)
        return false;
    return impl->report.last_result == LLM_RESULT_BAD_RESPONSE;
}

void
policy_llm_set_template (policy_t *self, prompt_template_t *tpl)
{
    assert (self && tpl);
    llm_policy_t *impl = (llm_policy_t *) policy_impl (self);
    prompt_template_destroy (&impl->tpl);
    impl->tpl = tpl;
}

void
policy_llm_probe (policy_t *self, long timeout_ms)
{
    assert (self);
    llm_policy_t *impl = (llm_policy_t *) policy_impl (self);
    char note[512];
    llm_result_t result = llm_probe (impl->llm, timeout_ms, note, sizeof (note));
    if (result == LLM_RESULT_OK) {
        if (*note)
            plog_warn ("model server lists no model '%s' (it has: %s); calls may fail",
                       llm_model (impl->llm), note);
        else
            plog_info ("model server answers; model '%s'", llm_model (impl->llm));
    }
    else
    if (result == LLM_RESULT_UNREACHABLE) {
        plog_error ("model server not reachable at start (%s): check --llm-url and that "
                    "the server runs", note);
        impl->failures_in_row = POLICY_LLM_BREAKER_FAILURES;
        if (impl->breaker_ms > 0)
            s_open (impl, "not reachable at start");
    }
    else        //  a server without GET /models (refused) still may chat
        plog_info ("model server has no model list (%s)", note);
}
