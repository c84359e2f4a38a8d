// SPDX-License-Identifier: MIT
/*  prompt_template - every sentence of the model's prompt that is not data,
    in one place, as named sections with defaults that can be overridden
    (a role file sets, say, `goal` and `role`; the rest stays default).

    Sections (prompt_section_name gives the name a role file uses):
      role        who the agent is, first line of the system message
      goal        what the team is after
      format      the answer format, before the example
      directives  MessageTo / ListenTo, after the format
      end         what the action "end" means (it is final)
      reminder    the last line of every user message
      retry       the correction after an unusable answer; "{error}" is
                  replaced by what was wrong
      format_tools, reminder_tools, retry_tools
                  the same three for --llm-mode tools (the model calls act,
                  message_to and listen_to instead of writing a yaml block)
      format_json, reminder_json, retry_json
                  and for --llm-mode json-schema (one JSON object)

    Texts are plain (no printf formats: an override cannot inject one); a
    section is at most PROMPT_SECTION_MAX bytes of valid UTF-8 text.
*/
#ifndef PARLEY_PROMPT_TEMPLATE_H
#define PARLEY_PROMPT_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    PROMPT_ROLE,
    PROMPT_GOAL,
    PROMPT_FORMAT,
    PROMPT_DIRECTIVES,
    PROMPT_END,
    PROMPT_REMINDER,
    PROMPT_RETRY,
    PROMPT_FORMAT_TOOLS,
    PROMPT_REMINDER_TOOLS,
    PROMPT_RETRY_TOOLS,
    PROMPT_FORMAT_JSON,
    PROMPT_REMINDER_JSON,
    PROMPT_RETRY_JSON,
    PROMPT__SECTIONS
} prompt_section_t;

#define PROMPT_SECTION_MAX 4096

typedef struct _prompt_template_t prompt_template_t;

//  Every section at its default.
prompt_template_t *prompt_template_new (void);
void prompt_template_destroy (prompt_template_t **self_p);

//  Replaces one section (copied). -1 with `err` filled if the text is
//  empty, too long or not UTF-8; the section keeps its old text then.
int prompt_template_set (prompt_template_t *self, prompt_section_t section, const char *text,
                         char *err, size_t err_size);
const char *prompt_template_text (const prompt_template_t *self, prompt_section_t section);
bool prompt_template_is_default (const prompt_template_t *self, prompt_section_t section);

//  "role", "goal", ... and back (false for an unknown name).
const char *prompt_section_name (prompt_section_t section);
bool prompt_section_from_name (const char *name, prompt_section_t *section);

#endif
