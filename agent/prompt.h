// SPDX-License-Identifier: MIT
/*  prompt - the text a model sees, built for a small model with a small
    context window.

    System message: the role, the goal, the answer format with an example
    that uses a directive, the directives, and what "end" means. Every word
    comes from a prompt_template_t (prompt_template.h), so a role file can
    replace any section.

    User message, in this order:
        You are Agent1. This is step 5 of at most 20.
        Map: a line of 10 positions (0 to 9). forward: +1, backward: -1, stay: no move.
        You are at position 3 and see: lamp, desk.
        Visited by the team: 0-3, 5. Not yet visited: 4, 6-9.
        Team coverage: 40% (4 of 10 objects explored).

        Your recent steps:
        1. start at 0, saw phone
        2. forward 0 -> 1, saw desk
        3. backward at 0: blocked (edge of the map)

        Communication information:
        From Agent2:
            I found a lamp at position 3.
        From explorers:
            From Agent3: heading backward

        Memories that may help:
        - At position 2, I saw [desk]. I decided to forward. Reason: ...

        Message targets: teammates Agent2, Agent3; channels explorers.
        Available actions: forward, backward, stay, end (end is final).
        <reminder>

    One line per past step (steplog.h); mail only in the communication block
    (rendered as in the domain-communication design: continuation lines
    indented, the agent's own posts left out), not in the history and not
    in the memories (their "Messages received" part is cut here).

    Budget: with a context of N tokens, the prompt may use
    (N - PROMPT_ANSWER_TOKENS) * PROMPT_CHARS_PER_TOKEN characters, system
    and user together. When it would not fit, the oldest history goes
    first (past the newest PROMPT_HISTORY_KEEP steps), then the weakest
    memories, then the rest of the history, then the oldest mail; the
    instructions, the map, the targets, the actions and the reminder are
    never cut. Each cut is counted in prompt_cut_t, and a line says how many
    steps were left out.
*/
#ifndef PARLEY_PROMPT_H
#define PARLEY_PROMPT_H

#include "llm_mode.h"
#include "policy.h"
#include "prompt_template.h"

//  Tokens per character, as a conservative estimate: English text is
//  about 4 characters per token with the BPE tokenizers of GPT, Llama,
//  Mistral and Qwen; 3 leaves room for names, numbers and punctuation,
//  which tokenise worse. So a budget in characters is tokens * 3.
#define PROMPT_CHARS_PER_TOKEN 3
//  Tokens kept free for the answer (llm.h's default max_tokens).
#define PROMPT_ANSWER_TOKENS 512
//  Newest steps kept before any memory is cut.
#define PROMPT_HISTORY_KEEP 3
//  An image is left out when it would leave the text less than this.
#define PROMPT_IMAGE_MIN_TEXT 1500

typedef struct {
    size_t history_dropped;     //  oldest steps left out
    size_t memories_dropped;    //  weakest memories left out
    size_t mail_dropped;        //  oldest messages left out
    bool over_budget;           //  even the parts never cut do not fit
    size_t chars;               //  system + user
} prompt_cut_t;

//  Characters a prompt may use for a context of `context_tokens` (0: no limit).
size_t prompt_budget_chars (size_t context_tokens);
//  What of that is left for the user message after a system message of
//  `system_chars` (0: no limit; at least 1 when there is a limit).
size_t prompt_user_budget (size_t context_tokens, size_t system_chars);

//  Each returns a new string (caller frees). `tpl` NULL: the defaults.
char *prompt_system (const prompt_template_t *tpl);
//  `budget_chars` is what the user message may use (0: no limit);
//  `cut` (may be NULL) says what was left out.
char *prompt_user (const prompt_template_t *tpl, const policy_input_t *input,
                   size_t budget_chars, prompt_cut_t *cut);
char *prompt_retry (const prompt_template_t *tpl, const char *error);

//  The same three for an answer mode (llm_mode.h): text (and auto) as
//  above; tools and json-schema use their format, reminder and retry
//  sections and leave out the yaml example and the directives, which
//  the schema replaces.
char *prompt_system_for (const prompt_template_t *tpl, llm_mode_t mode);
char *prompt_user_for (const prompt_template_t *tpl, const policy_input_t *input,
                       size_t budget_chars, prompt_cut_t *cut, llm_mode_t mode);
char *prompt_retry_for (const prompt_template_t *tpl, const char *error, llm_mode_t mode);

#endif
