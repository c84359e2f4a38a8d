// SPDX-License-Identifier: MIT
/*  answer - parse what a model (or the heuristic policy) answered.

    The reply format is a YAML block, usually fenced:

        ```yaml
        thinking: "I saw new objects, should inform other agents"
        action: forward
        reason: "Continue exploring new areas"
        message_to_others: "I found chair and table at position 3"
        ```

    plus the channel directives anywhere in the text:

        <MessageTo(Name, '''text''')>   to an agent or a channel
        <ListenTo(Channel)>

    Models are sloppy, so the parser tolerates: a missing fence, prose
    around the block, ```yml / ``` fences, keys in any case, unquoted colons
    in values ("reason: go forward: unexplored" -- libyaml rejects those; we
    then fall back to a line-based "key: rest of line" parse), block
    scalars (| and >), quotes. Directive text may be quoted with ''', ", or
    ', may contain ')' and '>' and span lines; names are trimmed.

    Parsing never fails on content: it returns an answer with whatever was
    found (fields NULL when absent). Whether it is usable is answer_validate's
    call, whose error sentence is meant to be told to the model verbatim.

    Limits (explicit and counted): input beyond ANSWER_MAX_BYTES is ignored
    (answer_input_truncated), at most ANSWER_MAX_DIRECTIVES directives are
    kept (answer_directives_dropped counts the rest), each field and each
    directive text is cut at its limit (answer_fields_truncated).
*/
#ifndef PARLEY_ANSWER_H
#define PARLEY_ANSWER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct _answer_t answer_t;

#define ANSWER_MAX_BYTES (64 * 1024)
#define ANSWER_MAX_FIELD_BYTES 4096
#define ANSWER_MAX_DIRECTIVES 16
#define ANSWER_MAX_DIRECTIVE_TEXT 2048
#define ANSWER_MAX_NAME_BYTES 64

typedef enum {
    ANSWER_MESSAGE_TO = 1,      //  target + text
    ANSWER_LISTEN_TO = 2        //  target (a channel); text is NULL
} answer_directive_kind_t;

typedef struct {
    answer_directive_kind_t kind;
    const char *target;         //  trimmed, non-empty
    const char *text;           //  MessageTo only; may be ""
} answer_directive_t;

//  Parses `len` bytes of `text` (need not be NUL-terminated). Returns NULL
//  only when out of memory.
answer_t *answer_parse (const char *text, size_t len);
void answer_destroy (answer_t **self_p);

//  Fields, trimmed; NULL when absent. action is also lowercased and
//  stripped of quotes/backticks/trailing dot ("`Forward`." -> "forward").
const char *answer_thinking (const answer_t *self);
const char *answer_action (const answer_t *self);
const char *answer_reason (const answer_t *self);
//  message_to_others; NULL when absent, empty, "none" or "null".
const char *answer_message (const answer_t *self);

size_t answer_directive_count (const answer_t *self);
//  NULL if index out of range.
const answer_directive_t *answer_directive (const answer_t *self, size_t index);

//  How the fields were found: "yaml", "lines" (fallback) or "none".
const char *answer_method (const answer_t *self);
bool answer_input_truncated (const answer_t *self);
size_t answer_directives_dropped (const answer_t *self);
size_t answer_fields_truncated (const answer_t *self);

//  true if the answer has an action among `allowed` (compared lowercase)
//  and a non-empty reason. Otherwise false and `err` gets one sentence for
//  the model, e.g. "Your answer has action \"fly\", which is not one of:
//  forward, backward, left, right, end. Reply again in the required format."
bool answer_validate (const answer_t *self, const char *const *allowed, size_t count,
                      char *err, size_t err_size);

//  Renders an answer in the canonical format (fenced yaml with quoted,
//  escaped values, then one directive per line), which answer_parse reads
//  back unchanged. Used by the heuristic policy and in prompts as the
//  example. `message`, `thinking` may be NULL; directives may be NULL/0.
//  Returns a new string (free it), NULL when out of memory.
char *answer_format (const char *thinking, const char *action, const char *reason,
                     const char *message, const answer_directive_t *directives,
                     size_t count);

#endif
