// SPDX-License-Identifier: MIT
/*  prompt_template - the prompt's words, defaults and overrides; see
    prompt_template.h. The defaults are written for small models: short
    sentences, the format stated once in the system message and recalled
    in one line at the end of the user message, where a small context
    window still sees it.
*/
#include <assert.h>
#include <czmq.h>
#include <jansson.h>
#include "prompt_template.h"

static const char *s_names[PROMPT__SECTIONS] = {
    [PROMPT_ROLE] = "role",
    [PROMPT_GOAL] = "goal",
    [PROMPT_FORMAT] = "format",
    [PROMPT_DIRECTIVES] = "directives",
    [PROMPT_END] = "end",
    [PROMPT_REMINDER] = "reminder",
    [PROMPT_RETRY] = "retry",
    [PROMPT_FORMAT_TOOLS] = "format_tools",
    [PROMPT_REMINDER_TOOLS] = "reminder_tools",
    [PROMPT_RETRY_TOOLS] = "retry_tools",
    [PROMPT_FORMAT_JSON] = "format_json",
    [PROMPT_REMINDER_JSON] = "reminder_json",
    [PROMPT_RETRY_JSON] = "retry_json",
};

static const char *s_defaults[PROMPT__SECTIONS] = {
    [PROMPT_ROLE] =
        "You are an exploration agent in a team of agents that share one world.",
    [PROMPT_GOAL] =
        "Goal: explore the world with your team until every object has been seen. "
        "Go where nobody has been yet, do not repeat a teammate's work, and tell the "
        "team what you find.",
    [PROMPT_FORMAT] =
        "Answer with exactly one fenced yaml block with the keys thinking, action, reason "
        "and, if you have news for everyone, message_to_others (sent to every teammate).",
    [PROMPT_DIRECTIVES] =
        "After the block you may add directives, one per line:\n"
        "<MessageTo(Name, '''text''')> sends text to one teammate or one channel "
        "(only names from your message targets).\n"
        "<ListenTo(Channel)> subscribes you to a channel.",
    [PROMPT_END] =
        "The action end is final: you stop for good and never act again. Choose it only "
        "when the world is fully explored.",
    [PROMPT_REMINDER] =
        "Answer now: one fenced yaml block (thinking, action, reason, optional "
        "message_to_others), then any directives.",
    [PROMPT_RETRY] =
        "Your previous answer could not be used: {error}\n"
        "Answer again: one fenced yaml block with thinking, action (one of the available "
        "actions) and a non-empty reason.",
    [PROMPT_FORMAT_TOOLS] =
        "Answer by calling functions: act exactly once, with thinking, action, reason and, if "
        "you have news for everyone, message_to_others (sent to every teammate); message_to "
        "to send text to one teammate or one channel (only names from your message targets); "
        "listen_to to subscribe to a channel.",
    [PROMPT_REMINDER_TOOLS] =
        "Answer now: call act once (thinking, action, reason, optional message_to_others), "
        "and message_to or listen_to if you need them.",
    [PROMPT_RETRY_TOOLS] =
        "Your previous answer could not be used: {error}\n"
        "Call act again, with action one of the available actions and a non-empty reason.",
    [PROMPT_FORMAT_JSON] =
        "Answer with one JSON object with the keys thinking, action, reason, "
        "message_to_others (news for every teammate, or empty), message_to (a list of "
        "{\"target\", \"text\"}: text to one teammate or one channel, only names from your "
        "message targets) and listen_to (a list of channels to subscribe to).",
    [PROMPT_REMINDER_JSON] =
        "Answer now: one JSON object (thinking, action, reason, message_to_others, "
        "message_to, listen_to).",
    [PROMPT_RETRY_JSON] =
        "Your previous answer could not be used: {error}\n"
        "Answer again: one JSON object with thinking, action (one of the available actions) "
        "and a non-empty reason.",
};

struct _prompt_template_t {
    char *text[PROMPT__SECTIONS];       //  NULL: the default
};

prompt_template_t *
prompt_template_new (void)
{
    return (prompt_template_t *) zmalloc (sizeof (prompt_template_t));
}

void
prompt_template_destroy (prompt_template_t **self_p)
{
    assert (self_p);
    prompt_template_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < PROMPT__SECTIONS; i++)
        free (self->text[i]);
    free (self);
    *self_p = NULL;
}

int
prompt_template_set (prompt_template_t *self, prompt_section_t section, const char *text,
                     char *err, size_t err_size)
{
    assert (self && section < PROMPT__SECTIONS && err);
    size_t len = text? strlen (text): 0;
    if (len == 0 || len > PROMPT_SECTION_MAX) {
        snprintf (err, err_size, "prompt section %s must have 1 to %d bytes, not %zu",
                  s_names[section], PROMPT_SECTION_MAX, len);
        return -1;
    }
    json_t *check = json_stringn (text, len);      //  NULL for invalid UTF-8
    if (!check) {
        snprintf (err, err_size, "prompt section %s is not valid UTF-8", s_names[section]);
        return -1;
    }
    json_decref (check);
    char *copy = strdup (text);
    if (!copy) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    free (self->text[section]);
    self->text[section] = copy;
    return 0;
}

const char *
prompt_template_text (const prompt_template_t *self, prompt_section_t section)
{
    assert (section < PROMPT__SECTIONS);
    if (self && self->text[section])
        return self->text[section];
    return s_defaults[section];
}

bool
prompt_template_is_default (const prompt_template_t *self, prompt_section_t section)
{
    assert (section < PROMPT__SECTIONS);
    return !self || !self->text[section];
}

const char *
prompt_section_name (prompt_section_t section)
{
    return section < PROMPT__SECTIONS? s_names[section]: "?";
}

bool
prompt_section_from_name (const char *name, prompt_section_t *section)
{
    assert (section);
    for (size_t i = 0; name && i < PROMPT__SECTIONS; i++)
        if (streq (name, s_names[i])) {
            *section = (prompt_section_t) i;
            return true;
        }
    return false;
}
