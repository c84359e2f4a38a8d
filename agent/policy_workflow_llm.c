// SPDX-License-Identifier: MIT
/*  policy_workflow_llm - a workflow turn from a chat model. See
    policy_workflow_llm.h.

    The conversation of one turn is at most: system, user (the prompt),
    then the last refused answer and what was wrong with it. Older refused
    answers are not kept: the correction count in the message already
    makes every request of the turn different, and a bounded conversation
    keeps a small model's context for the state itself.
*/
#include "policy_workflow_llm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plog.h"
#include "textbuf.h"

#define S_MAX_MESSAGES (3 + LLM_MAX_TOOL_CALLS + 1)

struct _wfllm_t {
    llm_t *llm;
    llm_mode_t wanted, mode;        //  mode: what is used (auto until probed)
    const role_t *role;
    turn_schema_t *schema;
    unsigned corrections;           //  the bound, for "correction N of M"
    char *prompt;                   //  this turn's user message
    unsigned refusals;              //  in this turn
    //  The last answer, kept until the broker accepts it or a correction
    //  is asked: its text or its tool calls.
    char *answer;
    json_t *answer_calls;
    char refusal [1024];            //  pending: told in the next ask
    char tool_texts [LLM_MAX_TOOL_CALLS][64];   //  the other calls' results
};

static const char s_system [] =
    "You are one member of a team that takes turns on a shared blackboard. You read "
    "the state, change the keys your role writes, and hand the turn to the next role.";

char *
wfllm_system (llm_mode_t mode)
{
    const char *how = mode == LLM_MODE_TOOLS ? " Answer by calling the functions you are given."
                    : " Answer only with the JSON object asked for.";
    char *text = NULL;
    return asprintf (&text, "%s%s", s_system, how) < 0 ? NULL : text;
}

//  The answer format, by mode, with an example from the role's own keys.
static void
s_format (textbuf_t *buf, const turn_schema_t *schema, llm_mode_t mode)
{
    const char *key = turn_schema_example_key (schema);
    const char *next = turn_schema_example_role (schema);
    if (mode == LLM_MODE_TOOLS) {
        textbuf_add (buf, "Call write_<key> once for each key you change, with its value as "
                     "described above, then call hand_over once with next (the role that "
                     "takes the turn), status and summary.\n");
        return;
    }
    textbuf_addf (buf, "Answer with ONE JSON object%s: {\"ops\": [{\"op\": \"update\", \"key\": "
                  "KEY, \"value\": VALUE}], \"next\": ROLE, \"status\": \"in_progress\" | "
                  "\"revision\" | \"done\" | \"failed\", \"summary\": TEXT}. Leave \"next\" out "
                  "only with status done or failed.\n", mode == LLM_MODE_TEXT
                  ? " and nothing else" : " (the server checks it against its schema)");
    if (key || next)
        textbuf_addf (buf, "Example: {\"ops\": [%s%s%s%s%s], \"next\": \"%s\", \"status\": "
                      "\"in_progress\", \"summary\": \"what I did\"}\n",
                      key ? "{\"op\": \"update\", \"key\": \"" : "", key ? key : "",
                      key ? "\", \"value\": " : "",
                      key ? turn_schema_example_value (schema) : "", key ? "}" : "",
                      next ? next : "ROLE");
}

char *
wfllm_prompt (const role_t *role, const turn_schema_t *schema, llm_mode_t mode,
              const json_t *state)
{
    textbuf_t *buf = textbuf_new ();
    char *json = json_dumps (state, JSON_INDENT (1) | JSON_SORT_KEYS);
    textbuf_addf (buf, "Your role: %s. Goal: %s\n\n", role->name, role->goal);
    if (role->instructions)
        textbuf_addf (buf, "Instructions:\n%s\n", role->instructions);
    textbuf_addf (buf, "The shared state you read:\n%s\n\n", json ? json : "{}");
    textbuf_addf (buf, "You may write:\n%s", turn_schema_writes_text (schema));
    textbuf_addf (buf, "You may hand the turn to: %s.\n", turn_schema_roles_text (schema));
    textbuf_add (buf, "Statuses: in_progress (the work goes on), revision (send the work "
                 "back for another round; it counts one revision), done (the work is "
                 "finished), failed (it cannot be finished).\n\n");
    s_format (buf, schema, mode);
    free (json);
    return textbuf_detach (&buf);
}

//  The turn object's checks, the same for every mode. 0 and `turn`
//  filled, or -1 with a sentence for the model.
static int
s_check (const role_t *role, json_t *root, scene_turn_t *turn, char *err, size_t err_size)
{
    memset (turn, 0, sizeof *turn);
    if (!json_is_object (root)) {
        snprintf (err, err_size, "the answer is not one JSON object");
        return -1;
    }
    json_t *ops = json_object_get (root, "ops");
    json_t *next = json_object_get (root, "next");
    json_t *status = json_object_get (root, "status");
    const char *summary = json_string_value (json_object_get (root, "summary"));
    const char *how = json_string_value (status);
    if (json_is_null (next))
        next = NULL;
    if (ops && !json_is_array (ops)) {
        snprintf (err, err_size, "\"ops\" must be a list");
        return -1;
    }
    if (status && (!how || (strcmp (how, "in_progress") && strcmp (how, "revision")
                        &&  strcmp (how, "done") && strcmp (how, "failed")))) {
        snprintf (err, err_size, "\"status\" must be one of " TURN_SCHEMA_STATUSES);
        return -1;
    }
    bool ending = how && (strcmp (how, "done") == 0 || strcmp (how, "failed") == 0);
    if (next && !json_is_string (next)) {
        snprintf (err, err_size, "\"next\" must be a role's name");
        return -1;
    }
    if (!next && !ending) {
        snprintf (err, err_size, "\"next\" (the role that takes the turn) is missing");
        return -1;
    }
    size_t i;
    json_t *op;
    json_array_foreach (ops, i, op) {
        const char *key = json_string_value (json_object_get (op, "key"));
        if (!json_is_object (op) || !json_string_value (json_object_get (op, "op")) || !key) {
            snprintf (err, err_size, "ops[%zu] needs \"op\" and \"key\"", i);
            return -1;
        }
        if (role->write_count && !role_write_of (role, key)) {
            snprintf (err, err_size, "ops[%zu]: you may not write \"%.100s\"", i, key);
            return -1;
        }
    }
    turn->ops = ops ? json_incref (ops) : json_array ();
    snprintf (turn->next, sizeof turn->next, "%s", next ? json_string_value (next) : "");
    snprintf (turn->status, sizeof turn->status, "%s", how ? how : "in_progress");
    snprintf (turn->summary, sizeof turn->summary, "%s", summary ? summary : "(model)");
    return 0;
}

//  The first {...} to the last } of `answer`, parsed; NULL if none.
static json_t *
s_find_object (const char *answer)
{
    const char *open = answer ? strchr (answer, '{') : NULL;
    const char *close = answer ? strrchr (answer, '}') : NULL;
    return open && close > open ? json_loadb (open, (size_t) (close - open + 1), 0, NULL) : NULL;
}

int
wfllm_parse (const role_t *role, const char *answer, scene_turn_t *turn, char *err,
             size_t err_size)
{
    json_t *root = s_find_object (answer);
    int rc = s_check (role, root, turn, err, err_size);
    json_decref (root);
    return rc;
}

wfllm_t *
wfllm_new (llm_t *llm, llm_mode_t mode, const role_t *role, const scenario_t *scenario,
           unsigned corrections)
{
    wfllm_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->llm = llm;
    self->wanted = self->mode = mode;
    self->role = role;
    self->corrections = corrections;
    self->schema = turn_schema_new (role, scenario);
    if (!self->schema)
        wfllm_destroy (&self);
    return self;
}

static void
s_forget_answer (wfllm_t *self)
{
    free (self->answer);
    self->answer = NULL;
    json_decref (self->answer_calls);
    self->answer_calls = NULL;
}

void
wfllm_destroy (wfllm_t **self_p)
{
    wfllm_t *self = *self_p;
    if (!self)
        return;
    turn_schema_destroy (&self->schema);
    free (self->prompt);
    s_forget_answer (self);
    free (self);
    *self_p = NULL;
}

static void s_resolve (wfllm_t *self);

void
wfllm_begin (wfllm_t *self, const json_t *state)
{
    s_resolve (self);
    free (self->prompt);
    self->prompt = wfllm_prompt (self->role, self->schema,
                                 self->mode == LLM_MODE_AUTO ? LLM_MODE_TEXT : self->mode, state);
    self->refusals = 0;
    self->refusal [0] = 0;
    s_forget_answer (self);
}

void
wfllm_refused (wfllm_t *self, const char *sentence)
{
    snprintf (self->refusal, sizeof self->refusal, "%s", sentence);
    self->refusals++;
}

unsigned wfllm_refusals (const wfllm_t *self) { return self->refusals; }
llm_mode_t wfllm_mode (const wfllm_t *self) { return self->mode; }

//  auto: the probe, once it reaches the server (llm_mode.h).
static void
s_resolve (wfllm_t *self)
{
    if (self->mode != LLM_MODE_AUTO)
        return;
    char note [600];
    llm_mode_t mode;
    if (llm_mode_probe (self->llm, &mode, note, sizeof note) != LLM_RESULT_OK) {
        plog_debug ("answer mode not probed yet (%s); this turn is asked as text", note);
        return;
    }
    self->mode = mode;
    plog_info ("answer mode %s (--llm-mode auto: %s)", llm_mode_name (mode), note);
}

//  The correction after the refused answer, in the conversation.
static size_t
s_correction (wfllm_t *self, llm_message_t *messages, size_t count, char *told, size_t told_size)
{
    snprintf (told, told_size, "Your answer was refused: %s (correction %u of %u). %s",
              self->refusal, self->refusals, self->corrections,
              self->answer_calls ? "Call the functions again with a corrected turn."
                                 : "Answer again with the corrected JSON object only.");
    size_t calls = json_array_size (self->answer_calls);
    messages [count++] = (llm_message_t) { .role = "assistant", .content = self->answer,
                                           .tool_calls = self->answer_calls };
    if (!calls) {
        messages [count++] = (llm_message_t) { .role = "user", .content = told };
        return count;
    }
    //  Every call gets its result: the turn was refused whole.
    for (size_t i = 0; i < calls && i < LLM_MAX_TOOL_CALLS; i++) {
        json_t *call = json_array_get (self->answer_calls, i);
        const char *id = json_string_value (json_object_get (call, "id"));
        snprintf (self->tool_texts [i], sizeof self->tool_texts [i],
                  "Not applied: the turn was refused as a whole.");
        messages [count++] = (llm_message_t) { .role = "tool", .tool_call_id = id ? id : "",
                                               .content = i + 1 < calls ? self->tool_texts [i]
                                                                        : told };
    }
    return count;
}

//  The reply as the turn object (new reference), or NULL with `err`.
static json_t *
s_turn_of (wfllm_t *self, const llm_reply_t *reply, char *err, size_t err_size)
{
    if (self->mode == LLM_MODE_TOOLS && reply->calls)
        return turn_schema_from_calls (self->schema, reply->calls, err, err_size);
    json_t *root = s_find_object (reply->content);
    if (!root)
        snprintf (err, err_size, "the answer is not one JSON object%s",
                  self->mode == LLM_MODE_TOOLS ? " and calls no function" : "");
    return root;
}

wfllm_outcome_t
wfllm_ask (wfllm_t *self, scene_turn_t *turn, char *err, size_t err_size)
{
    memset (turn, 0, sizeof *turn);
    llm_mode_t mode = self->mode == LLM_MODE_AUTO ? LLM_MODE_TEXT : self->mode;
    char *system = wfllm_system (mode);
    llm_message_t messages [S_MAX_MESSAGES];
    char told [1400];
    size_t count = 0;
    messages [count++] = (llm_message_t) { .role = "system", .content = system };
    messages [count++] = (llm_message_t) { .role = "user", .content = self->prompt };
    if (self->refusal [0] && (self->answer || self->answer_calls))
        count = s_correction (self, messages, count, told, sizeof told);
    json_t *format = mode == LLM_MODE_JSON_SCHEMA
                   ? llm_mode_response_format ("turn", json_deep_copy (turn_schema_object (self->schema)))
                   : NULL;
    llm_shape_t shape = {
        .tools = mode == LLM_MODE_TOOLS ? turn_schema_tools (self->schema) : NULL,
        .tool_choice = mode == LLM_MODE_TOOLS ? "required" : NULL,
        .response_format = format,
    };
    llm_reply_t reply;
    int rc = llm_ask (self->llm, messages, count, NULL, &shape, &reply, err, err_size);
    json_decref (format);
    free (system);
    if (rc)
        return WFLLM_NO_ANSWER;
    s_forget_answer (self);
    self->answer = reply.content ? strdup (reply.content) : NULL;
    self->answer_calls = json_incref (reply.tool_calls);
    json_t *root = s_turn_of (self, &reply, err, err_size);
    llm_reply_free (&reply);
    if (!root || s_check (self->role, root, turn, err, err_size)) {
        json_decref (root);
        if (!self->answer && !self->answer_calls)
            self->answer = strdup ("");
        wfllm_refused (self, err);
        return WFLLM_REFUSED;
    }
    json_decref (root);
    self->refusal [0] = 0;
    return WFLLM_TURN;
}
