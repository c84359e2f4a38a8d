// SPDX-License-Identifier: MIT
/*  answer_schema - the exploring answer as tools and as a JSON Schema.
    See answer_schema.h. */
#include "answer_schema.h"

#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "llm_mode.h"

static json_t *
s_strings (const char *const *items, size_t count)
{
    json_t *list = json_array ();
    for (size_t i = 0; i < count; i++)
        json_array_append_new (list, json_string (items [i]));
    return list;
}

static json_t *
s_text (const char *description)
{
    return json_pack ("{s:s, s:s}", "type", "string", "description", description);
}

//  Teammates and listened channels as an enum (any name when none is known).
static json_t *
s_target (const policy_input_t *in)
{
    json_t *schema = s_text ("a teammate or a channel from your message targets");
    json_t *names = s_strings (in->teammates, in->teammate_count);
    json_t *channels = s_strings (in->channels, in->channel_count);
    json_array_extend (names, channels);
    json_decref (channels);
    if (json_array_size (names))
        json_object_set (schema, "enum", names);
    json_decref (names);
    return schema;
}

static json_t *
s_act_properties (const policy_input_t *in)
{
    return json_pack ("{s:o, s:{s:s, s:o, s:s}, s:o, s:o}",
        "thinking", s_text ("what you see and think, in a sentence or two"),
        "action", "type", "string", "enum", s_strings (in->actions, in->action_count),
        "description", "your move (end is final: you stop for good)",
        "reason", s_text ("why, in one sentence"),
        "message_to_others", s_text ("news for every teammate, or empty"));
}

static json_t *
s_message_item (const policy_input_t *in)
{
    return json_pack ("{s:s, s:{s:o, s:o}, s:[s, s]}", "type", "object", "properties",
                      "target", s_target (in), "text", s_text ("the message"),
                      "required", "target", "text");
}

json_t *
answer_schema_tools (const policy_input_t *in)
{
    json_t *act = json_pack ("{s:s, s:o, s:[s, s, s]}", "type", "object",
                             "properties", s_act_properties (in),
                             "required", "thinking", "action", "reason");
    json_t *listen = json_pack ("{s:s, s:{s:o}, s:[s]}", "type", "object", "properties",
                                "channel", s_text ("the channel to listen to"),
                                "required", "channel");
    return json_pack ("[o, o, o]",
        llm_mode_tool ("act", "Your decision this step: call it exactly once.", act),
        llm_mode_tool ("message_to", "Send a message to one teammate or one channel "
                       "(only names from your message targets).", s_message_item (in)),
        llm_mode_tool ("listen_to", "Subscribe to a channel.", listen));
}

json_t *
answer_schema_object (const policy_input_t *in)
{
    json_t *properties = s_act_properties (in);
    json_object_set_new (properties, "message_to", json_pack ("{s:s, s:o}", "type", "array",
                                                              "items", s_message_item (in)));
    json_object_set_new (properties, "listen_to", json_pack ("{s:s, s:{s:s}}", "type", "array",
                                                             "items", "type", "string"));
    return json_pack ("{s:s, s:o, s:[s, s, s]}", "type", "object", "properties", properties,
                      "required", "thinking", "action", "reason");
}

//  Adds one directive when `target` (and, for a message, `text`) is a string.
static void
s_directive (answer_directive_t *list, size_t *count, answer_directive_kind_t kind,
             const json_t *target, const json_t *text)
{
    if (*count == ANSWER_MAX_DIRECTIVES || !json_is_string (target)
    ||  (kind == ANSWER_MESSAGE_TO && !json_is_string (text)))
        return;
    list [(*count)++] = (answer_directive_t) { kind, json_string_value (target),
                                               kind == ANSWER_MESSAGE_TO
                                               ? json_string_value (text) : NULL };
}

static char *
s_format (const json_t *act, const answer_directive_t *directives, size_t count)
{
    const char *thinking = json_string_value (json_object_get (act, "thinking"));
    const char *action = json_string_value (json_object_get (act, "action"));
    const char *reason = json_string_value (json_object_get (act, "reason"));
    const char *message = json_string_value (json_object_get (act, "message_to_others"));
    return answer_format (thinking, action ? action : "", reason ? reason : "", message,
                          directives, count);
}

char *
answer_schema_text_of_calls (const json_t *calls)
{
    answer_directive_t directives [ANSWER_MAX_DIRECTIVES];
    size_t count = 0, i;
    const json_t *act = NULL;
    json_t *call;
    json_array_foreach (calls, i, call) {
        const char *name = json_string_value (json_object_get (call, "name"));
        json_t *arguments = json_object_get (call, "arguments");
        if (!name || !json_is_object (arguments))
            continue;
        if (strcmp (name, "act") == 0 && !act)
            act = arguments;
        else
        if (strcmp (name, "message_to") == 0)
            s_directive (directives, &count, ANSWER_MESSAGE_TO,
                         json_object_get (arguments, "target"), json_object_get (arguments, "text"));
        else
        if (strcmp (name, "listen_to") == 0)
            s_directive (directives, &count, ANSWER_LISTEN_TO,
                         json_object_get (arguments, "channel"), NULL);
    }
    return s_format (act, directives, count);
}

char *
answer_schema_text_of_json (const char *content)
{
    const char *open = content ? strchr (content, '{') : NULL;
    const char *close = content ? strrchr (content, '}') : NULL;
    json_t *root = open && close > open ? json_loadb (open, (size_t) (close - open + 1), 0, NULL)
                                        : NULL;
    if (!json_is_object (root)) {
        json_decref (root);
        return NULL;
    }
    answer_directive_t directives [ANSWER_MAX_DIRECTIVES];
    size_t count = 0, i;
    json_t *item;
    json_array_foreach (json_object_get (root, "message_to"), i, item)
        s_directive (directives, &count, ANSWER_MESSAGE_TO, json_object_get (item, "target"),
                     json_object_get (item, "text"));
    json_array_foreach (json_object_get (root, "listen_to"), i, item)
        s_directive (directives, &count, ANSWER_LISTEN_TO, item, NULL);
    char *text = s_format (root, directives, count);
    json_decref (root);
    return text;
}
