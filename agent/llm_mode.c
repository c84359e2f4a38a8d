// SPDX-License-Identifier: MIT
/*  llm_mode - the answer modes and their probe. See llm_mode.h. */
#include "llm_mode.h"

#include <stdio.h>
#include <string.h>

static const char *s_names [] = {
    [LLM_MODE_AUTO] = "auto", [LLM_MODE_TOOLS] = "tools",
    [LLM_MODE_JSON_SCHEMA] = "json-schema", [LLM_MODE_TEXT] = "text",
};

const char *
llm_mode_name (llm_mode_t mode)
{
    return (unsigned) mode <= LLM_MODE_TEXT ? s_names [mode] : "?";
}

bool
llm_mode_parse (const char *name, llm_mode_t *mode)
{
    for (int i = 0; name && i <= LLM_MODE_TEXT; i++)
        if (strcmp (name, s_names [i]) == 0) {
            *mode = (llm_mode_t) i;
            return true;
        }
    return false;
}

json_t *
llm_mode_response_format (const char *name, json_t *schema)
{
    return json_pack ("{s:s, s:{s:s, s:o, s:b}}", "type", "json_schema", "json_schema",
                      "name", name, "schema", schema, "strict", 1);
}

json_t *
llm_mode_tool (const char *name, const char *description, json_t *parameters)
{
    return json_pack ("{s:s, s:{s:s, s:s, s:o}}", "type", "function", "function",
                      "name", name, "description", description, "parameters", parameters);
}

static json_t *
s_ok_schema (void)
{
    return json_pack ("{s:s, s:{s:{s:s}}, s:[s], s:b}", "type", "object", "properties",
                      "value", "type", "boolean", "required", "value",
                      "additionalProperties", 0);
}

//  true when the content is the probe's JSON object.
static bool
s_is_ok_object (const char *content)
{
    const char *open = content ? strchr (content, '{') : NULL;
    const char *close = content ? strrchr (content, '}') : NULL;
    if (!open || close < open)
        return false;
    json_t *object = json_loadb (open, (size_t) (close - open + 1), 0, NULL);
    bool ok = json_is_boolean (json_object_get (object, "value"));
    json_decref (object);
    return ok;
}

static llm_result_t s_probe (llm_t *llm, llm_mode_t *mode, char *note, size_t note_size);

llm_result_t
llm_mode_probe (llm_t *llm, llm_mode_t *mode, char *note, size_t note_size)
{
    llm_set_probing (llm, true);
    llm_result_t result = s_probe (llm, mode, note, note_size);
    llm_set_probing (llm, false);
    return result;
}

static llm_result_t
s_probe (llm_t *llm, llm_mode_t *mode, char *note, size_t note_size)
{
    llm_message_t ask [] = {
        { .role = "system", .content = "You are checking that function calling works." },
        { .role = "user", .content = "Call the function ok with value true." },
    };
    json_t *tools = json_pack ("[o]", llm_mode_tool ("ok", "Says that the call works.",
                                                     s_ok_schema ()));
    llm_shape_t shape = { .tools = tools, .tool_choice = "required", .max_tokens = 64 };
    llm_reply_t reply;
    char err [512];
    int rc = llm_ask (llm, ask, 2, NULL, &shape, &reply, err, sizeof err);
    json_decref (tools);
    llm_result_t result = llm_last_call (llm)->result;
    if (rc == 0 && reply.calls && json_array_size (reply.calls)) {
        llm_reply_free (&reply);
        *mode = LLM_MODE_TOOLS;
        snprintf (note, note_size, "the server answered with a tool call");
        return LLM_RESULT_OK;
    }
    llm_reply_free (&reply);
    if (result != LLM_RESULT_OK && result != LLM_RESULT_REFUSED
    &&  result != LLM_RESULT_BAD_RESPONSE) {
        snprintf (note, note_size, "%s", err);
        return result;
    }
    char why_not_tools [300];
    snprintf (why_not_tools, sizeof why_not_tools, "%.250s", rc == 0 ? "no tool call in its answer"
              : err);
    ask [1].content = "Answer with a JSON object whose field value is true.";
    json_t *format = llm_mode_response_format ("ok", s_ok_schema ());
    llm_shape_t schema = { .response_format = format, .max_tokens = 64 };
    rc = llm_ask (llm, ask, 2, NULL, &schema, &reply, err, sizeof err);
    json_decref (format);
    result = llm_last_call (llm)->result;
    if (rc == 0 && s_is_ok_object (reply.content)) {
        *mode = LLM_MODE_JSON_SCHEMA;
        snprintf (note, note_size, "no tools (%.200s); the server answered the JSON schema",
                  why_not_tools);
    }
    else
    if (rc == 0 || result == LLM_RESULT_REFUSED || result == LLM_RESULT_BAD_RESPONSE) {
        *mode = LLM_MODE_TEXT;
        snprintf (note, note_size, "no tools (%.200s), no JSON schema (%.200s)", why_not_tools,
                  rc == 0 ? "its answer was not the JSON object" : err);
        result = LLM_RESULT_OK;
    }
    else
        snprintf (note, note_size, "%s", err);
    llm_reply_free (&reply);
    return rc == 0 ? LLM_RESULT_OK : result;
}
