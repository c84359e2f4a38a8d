// SPDX-License-Identifier: MIT
/*  turn_schema - a role's possible turn as tools and as a JSON Schema.
    See turn_schema.h. */
#include "turn_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm_mode.h"
#include "mpjs.h"
#include "textbuf.h"

#define S_MAX_KEYS 64           //  keys offered (a role lists at most ROLE_MAX_LIST)

typedef struct {
    char tool [65];             //  write_<key>, made a tool name
    const char *key;            //  borrowed from the role or the scenario
    const char *reducer;
    json_t *value;              //  the value's schema
    const char *type_text;      //  "a list of items to add", ...
} s_key_t;

struct _turn_schema_t {
    s_key_t keys [S_MAX_KEYS];
    size_t key_count;
    bool any_key;               //  neither role nor scenario lists the keys
    json_t *roles;              //  the roles it may hand to (array of strings)
    json_t *tools;
    json_t *object;
    char *writes_text;
    char *roles_text;
};

//  The schema of one key's value, from its reducer and initial value.
static json_t *
s_value_schema (const char *reducer, const scenario_key_t *declared, const char **text)
{
    if (strcmp (reducer, "append") == 0 || strcmp (reducer, "union") == 0) {
        *text = strcmp (reducer, "append") == 0 ? "a list: its items are added to the end"
                                                : "a list: its items are added once each";
        return json_pack ("{s:s}", "type", "array");
    }
    if (strcmp (reducer, "merge") == 0) {
        *text = "an object: its fields are set, the others kept";
        return json_pack ("{s:s}", "type", "object");
    }
    if (strcmp (reducer, "add") == 0) {
        *text = "a number: it is added to the total";
        return json_pack ("{s:s}", "type", "number");
    }
    json_t *initial = declared && declared->value ? mpjs_decode (declared->value, declared->size)
                                                  : NULL;
    const char *type = json_is_string (initial) ? "string"
                     : json_is_integer (initial) ? "integer"
                     : json_is_real (initial) ? "number"
                     : json_is_boolean (initial) ? "boolean"
                     : json_is_array (initial) ? "array"
                     : json_is_object (initial) ? "object" : NULL;
    json_decref (initial);
    static const struct { const char *type, *text; } texts [] = {
        { "string", "a string: it replaces the old value" },
        { "integer", "an integer: it replaces the old value" },
        { "number", "a number: it replaces the old value" },
        { "boolean", "true or false: it replaces the old value" },
        { "array", "a list: it replaces the old one" },
        { "object", "an object: it replaces the old one" },
    };
    *text = "any JSON value: it replaces the old one";
    for (size_t i = 0; type && i < sizeof texts / sizeof texts [0]; i++)
        if (strcmp (texts [i].type, type) == 0)
            *text = texts [i].text;
    return type ? json_pack ("{s:s}", "type", type) : json_object ();
}

//  "write_" + the key with every character a tool name cannot hold as '_'.
static void
s_tool_name (turn_schema_t *self, const char *key, char *name, size_t size)
{
    snprintf (name, size, "write_%.50s", key);
    for (char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')
           ||  *c == '_' || *c == '-'))
            *c = '_';
    for (size_t i = 0, n = 2; i < self->key_count; i++)
        if (strcmp (self->keys [i].tool, name) == 0) {
            char base [56];
            snprintf (base, sizeof base, "%.54s", name);
            snprintf (name, size, "%s_%zu", base, n++);
            i = (size_t) -1;                //  check the new name from the start
        }
}

static void
s_add_key (turn_schema_t *self, const char *key, const char *reducer,
           const scenario_t *scenario)
{
    if (self->key_count == S_MAX_KEYS)
        return;
    s_key_t *entry = &self->keys [self->key_count];
    const scenario_key_t *declared = scenario ? scenario_key (scenario, key) : NULL;
    entry->key = key;
    entry->reducer = declared ? declared->reducer : reducer;
    entry->value = s_value_schema (entry->reducer, declared, &entry->type_text);
    s_tool_name (self, key, entry->tool, sizeof entry->tool);
    self->key_count++;
}

static void
s_keys (turn_schema_t *self, const role_t *role, const scenario_t *scenario)
{
    for (size_t i = 0; i < role->write_count; i++)
        s_add_key (self, role->writes [i].key, role->writes [i].reducer, scenario);
    if (role->write_count)
        return;
    //  No list in the role file: every key of the scenario's state.
    for (size_t i = 0; scenario && i < scenario->key_count; i++)
        s_add_key (self, scenario->keys [i].key, scenario->keys [i].reducer, scenario);
    self->any_key = !scenario;
}

static void
s_roles (turn_schema_t *self, const role_t *role, const scenario_t *scenario)
{
    self->roles = json_array ();
    for (size_t i = 0; i < role->handover_count; i++)
        json_array_append_new (self->roles, json_string (role->handover [i]));
    for (size_t i = 0; !role->handover_count && scenario && i < scenario->role_count; i++)
        json_array_append_new (self->roles, json_string (scenario->roles [i]->name));
}

static json_t *
s_string_or_enum (const json_t *values, const char *description)
{
    json_t *schema = json_pack ("{s:s, s:s}", "type", "string", "description", description);
    if (json_array_size (values))
        json_object_set_new (schema, "enum", json_deep_copy (values));
    return schema;
}

static json_t *
s_statuses (void)
{
    return json_pack ("[s, s, s, s]", "in_progress", "revision", "done", "failed");
}

static json_t *
s_hand_over_params (const turn_schema_t *self)
{
    return json_pack ("{s:s, s:{s:o, s:o, s:{s:s, s:s}}, s:[s, s]}", "type", "object",
        "properties",
        "next", s_string_or_enum (self->roles, "the role that takes the turn; "
                                  "leave it out only with status done or failed"),
        "status", json_pack ("{s:s, s:o, s:s}", "type", "string", "enum", s_statuses (),
                             "description", "in_progress: the work goes on; revision: send "
                             "the work back (counts a revision); done: finished; failed: "
                             "cannot finish"),
        "summary", "type", "string", "description", "one line for the people watching",
        "required", "status", "summary");
}

static void
s_build_tools (turn_schema_t *self)
{
    self->tools = json_array ();
    for (size_t i = 0; i < self->key_count; i++) {
        const s_key_t *key = &self->keys [i];
        char description [400];
        snprintf (description, sizeof description, "Write the shared state key \"%s\" "
                  "(reducer %s): the value is %s.", key->key, key->reducer, key->type_text);
        json_t *value = json_deep_copy (key->value);
        json_object_set_new (value, "description", json_string (key->type_text));
        json_array_append_new (self->tools, llm_mode_tool (key->tool, description,
            json_pack ("{s:s, s:{s:o}, s:[s]}", "type", "object", "properties",
                       "value", value, "required", "value")));
    }
    if (self->any_key)
        json_array_append_new (self->tools, llm_mode_tool ("write",
            "Write a key of the shared state (its value replaces or adds, by the key's reducer).",
            json_pack ("{s:s, s:{s:{s:s}, s:{}}, s:[s, s]}", "type", "object", "properties",
                       "key", "type", "string", "value", "required", "key", "value")));
    json_array_append_new (self->tools, llm_mode_tool ("hand_over",
        "End your turn: name the role that takes it and the workflow's status. Call it "
        "once, after your writes.", s_hand_over_params (self)));
}

static void
s_build_object (turn_schema_t *self)
{
    json_t *ops = json_array ();
    for (size_t i = 0; i < self->key_count; i++)
        json_array_append_new (ops, json_pack ("{s:s, s:{s:{s:s}, s:{s:s}, s:O}, s:[s, s, s]}",
            "type", "object", "properties", "op", "const", "update", "key", "const",
            self->keys [i].key, "value", self->keys [i].value,
            "required", "op", "key", "value"));
    if (self->any_key)
        json_array_append_new (ops, json_pack ("{s:s, s:{s:{s:s}, s:{s:s}, s:{}}, s:[s, s, s]}",
            "type", "object", "properties", "op", "const", "update", "key", "type", "string",
            "value", "required", "op", "key", "value"));
    size_t kinds = json_array_size (ops);
    json_t *items = kinds == 1 ? json_incref (json_array_get (ops, 0))
                  : json_pack ("{s:O}", "anyOf", ops);
    json_t *list = kinds == 0 ? json_pack ("{s:s, s:i}", "type", "array", "maxItems", 0)
                 : json_pack ("{s:s, s:O}", "type", "array", "items", items);
    json_decref (items);
    json_decref (ops);
    json_t *hand_over = s_hand_over_params (self);
    json_t *properties = json_object_get (hand_over, "properties");
    json_object_set_new (properties, "ops", list);
    json_array_append_new (json_object_get (hand_over, "required"), json_string ("ops"));
    self->object = hand_over;
}

static void
s_texts (turn_schema_t *self)
{
    textbuf_t *buf = textbuf_new ();
    for (size_t i = 0; i < self->key_count; i++)
        textbuf_addf (buf, "- %s (%s: %s)\n", self->keys [i].key, self->keys [i].reducer,
                      self->keys [i].type_text);
    if (self->any_key)
        textbuf_add (buf, "- any key of the shared state\n");
    if (!self->key_count && !self->any_key)
        textbuf_add (buf, "- nothing: this role writes no key\n");
    self->writes_text = textbuf_detach (&buf);
    buf = textbuf_new ();
    size_t i;
    json_t *role;
    json_array_foreach (self->roles, i, role)
        textbuf_addf (buf, "%s%s", i ? ", " : "", json_string_value (role));
    if (!json_array_size (self->roles))
        textbuf_add (buf, "any role");
    self->roles_text = textbuf_detach (&buf);
}

turn_schema_t *
turn_schema_new (const role_t *role, const scenario_t *scenario)
{
    turn_schema_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    s_keys (self, role, scenario);
    s_roles (self, role, scenario);
    s_build_tools (self);
    s_build_object (self);
    s_texts (self);
    return self;
}

void
turn_schema_destroy (turn_schema_t **self_p)
{
    turn_schema_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->key_count; i++)
        json_decref (self->keys [i].value);
    json_decref (self->roles);
    json_decref (self->tools);
    json_decref (self->object);
    free (self->writes_text);
    free (self->roles_text);
    free (self);
    *self_p = NULL;
}

const json_t *turn_schema_tools (const turn_schema_t *self) { return self->tools; }
const json_t *turn_schema_object (const turn_schema_t *self) { return self->object; }
const char *turn_schema_writes_text (const turn_schema_t *self) { return self->writes_text; }
const char *turn_schema_roles_text (const turn_schema_t *self) { return self->roles_text; }

const char *
turn_schema_example_key (const turn_schema_t *self)
{
    return self->key_count ? self->keys [0].key : NULL;
}

const char *
turn_schema_example_value (const turn_schema_t *self)
{
    const char *type = self->key_count
                     ? json_string_value (json_object_get (self->keys [0].value, "type")) : NULL;
    static const struct { const char *type, *example; } examples [] = {
        { "array", "[\"...\"]" }, { "object", "{\"...\": \"...\"}" }, { "number", "1" },
        { "integer", "1" }, { "boolean", "true" },
    };
    for (size_t i = 0; type && i < sizeof examples / sizeof examples [0]; i++)
        if (strcmp (examples [i].type, type) == 0)
            return examples [i].example;
    return "\"...\"";
}

const char *
turn_schema_example_role (const turn_schema_t *self)
{
    return json_string_value (json_array_get (self->roles, 0));
}

static const s_key_t *
s_key_of_tool (const turn_schema_t *self, const char *tool)
{
    for (size_t i = 0; i < self->key_count; i++)
        if (strcmp (self->keys [i].tool, tool) == 0)
            return &self->keys [i];
    return NULL;
}

json_t *
turn_schema_from_calls (const turn_schema_t *self, const json_t *calls, char *err,
                        size_t err_size)
{
    json_t *turn = json_pack ("{s:[]}", "ops");
    json_t *ops = json_object_get (turn, "ops");
    size_t hand_overs = 0, i;
    json_t *call;
    json_array_foreach (calls, i, call) {
        const char *name = json_string_value (json_object_get (call, "name"));
        json_t *arguments = json_object_get (call, "arguments");
        const s_key_t *key = name ? s_key_of_tool (self, name) : NULL;
        if (!json_is_object (arguments)) {
            snprintf (err, err_size, "the arguments of your call %zu (%.64s) are not a JSON "
                      "object", i + 1, name ? name : "?");
            goto refused;
        }
        if (name && strcmp (name, "hand_over") == 0) {
            hand_overs++;
            json_t *value;
            const char *field;
            json_object_foreach (arguments, field, value)
                if (!strcmp (field, "next") || !strcmp (field, "status")
                ||  !strcmp (field, "summary"))
                    json_object_set (turn, field, value);
        }
        else
        if (key || (self->any_key && name && strcmp (name, "write") == 0)) {
            json_t *value = json_object_get (arguments, "value");
            const char *which = key ? key->key : json_string_value (json_object_get (arguments,
                                                                                     "key"));
            if (!value || !which) {
                snprintf (err, err_size, "your call %.64s has no %s", name, which ? "value" : "key");
                goto refused;
            }
            json_array_append_new (ops, json_pack ("{s:s, s:s, s:O}", "op", "update",
                                                   "key", which, "value", value));
        }
        else {
            snprintf (err, err_size, "there is no function \"%.64s\"; call write_<key> for "
                      "the keys you may write, then hand_over", name ? name : "");
            goto refused;
        }
    }
    if (hand_overs != 1) {
        snprintf (err, err_size, "call hand_over exactly once (you called it %zu times)",
                  hand_overs);
        goto refused;
    }
    return turn;
refused:
    json_decref (turn);
    return NULL;
}
