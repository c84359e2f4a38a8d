// SPDX-License-Identifier: MIT
/*  role - a role file, loaded into role_t. See role.h for the format.

    Every mapping is checked against a key table (ydoc_map), so a typo is
    an "unknown key" error with its line instead of a silently ignored
    setting. Names that become wire names (the role, state keys, channels,
    hand-over targets) are checked here against the protocol's rules, so a
    bad name is reported at load time with its line rather than as a
    BAD_NAME from the broker later.
*/
#include "role.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ydoc.h"

//  The protocol's limits (pmsg.h); common/ links before proto/, so the
//  name rule is restated here rather than calling pmsg_name_valid().
#define S_MAX_NAME 64
#define S_MAX_KEY 256

#define N(array) (sizeof (array) / sizeof ((array) [0]))

static const char *s_policy_names [ROLE_POLICY__COUNT] = {
    [ROLE_POLICY_LLM] = "llm",
    [ROLE_POLICY_HEURISTIC] = "heuristic",
    [ROLE_POLICY_SCENE_ORCHESTRATOR] = "scene_orchestrator",
    [ROLE_POLICY_SCENE_LIBRARIAN] = "scene_librarian",
    [ROLE_POLICY_SCENE_ARCHITECT] = "scene_architect",
    [ROLE_POLICY_SCENE_MATERIALS] = "scene_materials",
    [ROLE_POLICY_SCENE_CINEMATOGRAPHER] = "scene_cinematographer",
    [ROLE_POLICY_SCENE_CRITIC] = "scene_critic",
};

const char *
role_policy_name (role_policy_t policy)
{
    return (unsigned) policy < ROLE_POLICY__COUNT ? s_policy_names [policy] : "unknown";
}

bool
role_policy_from_name (const char *name, role_policy_t *policy)
{
    for (int i = 0; name && i < ROLE_POLICY__COUNT; i++)
        if (strcmp (s_policy_names [i], name) == 0) {
            *policy = (role_policy_t) i;
            return true;
        }
    return false;
}

typedef struct {
    const char *name;
    unsigned bit;
} s_word_t;

static const s_word_t s_moves [] = {
    { "forward", ROLE_MOVE_FORWARD }, { "backward", ROLE_MOVE_BACKWARD },
    { "left", ROLE_MOVE_LEFT }, { "right", ROLE_MOVE_RIGHT }, { "stay", ROLE_MOVE_STAY },
};
static const s_word_t s_stores [] = {
    { "observations", ROLE_STORE_OBSERVATIONS }, { "messages", ROLE_STORE_MESSAGES },
    { "decisions", ROLE_STORE_DECISIONS },
};
static const char *s_reducers [] = { "replace", "append", "union", "merge", "add" };

void
role_destroy (role_t **self_p)
{
    assert (self_p);
    role_t *self = *self_p;
    if (!self)
        return;
    free (self->path);
    free (self->name);
    free (self->goal);
    free (self->instructions);
    for (size_t i = 0; i < self->read_count; i++)
        free (self->reads [i]);
    free (self->reads);
    free (self->read_lines);
    for (size_t i = 0; i < self->write_count; i++) {
        free (self->writes [i].key);
        free (self->writes [i].reducer);
    }
    free (self->writes);
    for (size_t i = 0; i < self->handover_count; i++)
        free (self->handover [i]);
    free (self->handover);
    free (self->handover_lines);
    for (size_t i = 0; i < self->channel_count; i++)
        free (self->channels [i]);
    free (self->channels);
    free (self->index);
    free (self);
    *self_p = NULL;
}

//  The kinds of names a list may hold.
typedef enum { S_NAME_WIRE, S_NAME_KEY } s_name_rule_t;

//  1-64 bytes of [A-Za-z0-9_.:-], not starting with '.' or '-' (the
//  broker's own '$' names are not for role files).
static bool
s_name_valid (const char *name, size_t len)
{
    if (!name || len == 0 || len > S_MAX_NAME || name [0] == '.' || name [0] == '-')
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name [i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        ||  c == '_' || c == '.' || c == ':' || c == '-'))
            return false;
    }
    return true;
}

static int
s_check_name (ydoc_t *doc, const yaml_node_t *node, const char *key, s_name_rule_t rule,
              char *why, size_t why_size)
{
    const char *text = ydoc_text (node);
    size_t len = text ? strlen (text) : 0;
    if (rule == S_NAME_WIRE && !s_name_valid (text, len))
        return ydoc_fail (doc, node, key, why, why_size,
                          "\"%s\" is not a name (1-64 of A-Z a-z 0-9 _ . : -)", text ? text : "");
    if (rule == S_NAME_KEY && (len == 0 || len > S_MAX_KEY))
        return ydoc_fail (doc, node, key, why, why_size, "a state key is 1-%d bytes",
                          S_MAX_KEY);
    return 0;
}

//  A list of names into a fresh array.
//  A list of names into a fresh array, with the line of each when `lines`
//  is given (for the errors of the cross-checks, scenario.c).
static int
s_names (ydoc_t *doc, const yaml_node_t *node, const char *key, s_name_rule_t rule,
         char ***out, size_t **lines, size_t *count, char *why, size_t why_size)
{
    size_t items = ydoc_items (node);
    if (items > ROLE_MAX_LIST)
        return ydoc_fail (doc, node, key, why, why_size, "at most %d entries", ROLE_MAX_LIST);
    *out = calloc (items ? items : 1, sizeof (char *));
    if (lines)
        *lines = calloc (items ? items : 1, sizeof (size_t));
    if (!*out || (lines && !*lines))
        return ydoc_fail (doc, node, key, why, why_size, "out of memory");
    for (size_t i = 0; i < items; i++) {
        const yaml_node_t *item = ydoc_item (doc, node, i);
        if (s_check_name (doc, item, key, rule, why, why_size))
            return -1;
        (*out) [i] = strdup (ydoc_text (item));
        if (!(*out) [i])
            return ydoc_fail (doc, item, key, why, why_size, "out of memory");
        if (lines)
            (*lines) [i] = ydoc_line (item);
        (*count)++;
    }
    return 0;
}

//  A list of words from a table into bits.
static int
s_words (ydoc_t *doc, const yaml_node_t *node, const char *key, const s_word_t *words,
         size_t word_count, unsigned *bits, char *why, size_t why_size)
{
    *bits = 0;
    for (size_t i = 0; i < ydoc_items (node); i++) {
        const yaml_node_t *item = ydoc_item (doc, node, i);
        const char *text = ydoc_text (item);
        size_t w = 0;
        while (w < word_count && strcmp (words [w].name, text) != 0)
            w++;
        if (w == word_count) {
            char list [256] = "";
            for (size_t j = 0; j < word_count; j++)
                snprintf (list + strlen (list), sizeof list - strlen (list), "%s%s",
                          j ? ", " : "", words [j].name);
            return ydoc_fail (doc, item, key, why, why_size, "\"%s\" is not one of %s",
                              text, list);
        }
        *bits |= words [w].bit;
    }
    return 0;
}

static char *
s_dup_text (const yaml_node_t *node)
{
    const char *text = ydoc_text (node);
    return text ? strdup (text) : NULL;
}

enum { C_WORLD, C_MAILBOX, C_STATE };
static const ydoc_field_t s_connector_fields [] = {
    { "world", YDOC_BOOL, false }, { "mailbox", YDOC_BOOL, false },
    { "state", YDOC_STR_LIST, false },
};

static int
s_connectors (role_t *self, ydoc_t *doc, yaml_node_t *node, char *why, size_t why_size)
{
    yaml_node_t *f [N (s_connector_fields)];
    if (ydoc_map (doc, node, "connectors", s_connector_fields, N (f), f, why, why_size))
        return -1;
    self->sees_world = ydoc_bool (f [C_WORLD]);
    self->reads_mailbox = f [C_MAILBOX] ? ydoc_bool (f [C_MAILBOX]) : true;
    self->reads_line = f [C_STATE] ? ydoc_line (f [C_STATE]) : 0;
    if (f [C_STATE] && s_names (doc, f [C_STATE], "connectors.state", S_NAME_KEY,
                                &self->reads, &self->read_lines, &self->read_count,
                                why, why_size))
        return -1;
    return 0;
}

enum { W_KEY, W_REDUCER };
static const ydoc_field_t s_write_fields [] = {
    { "key", YDOC_STR, true }, { "reducer", YDOC_STR, false },
};

static int
s_writes (role_t *self, ydoc_t *doc, yaml_node_t *node, char *why, size_t why_size)
{
    size_t items = ydoc_items (node);
    if (items > ROLE_MAX_LIST)
        return ydoc_fail (doc, node, "actions.writes", why, why_size, "at most %d entries",
                          ROLE_MAX_LIST);
    self->writes = calloc (items ? items : 1, sizeof (role_write_t));
    if (!self->writes)
        return ydoc_fail (doc, node, "actions.writes", why, why_size, "out of memory");
    for (size_t i = 0; i < items; i++) {
        yaml_node_t *item = ydoc_item (doc, node, i);
        yaml_node_t *f [N (s_write_fields)];
        if (ydoc_map (doc, item, "actions.writes", s_write_fields, N (f), f, why, why_size)
        ||  s_check_name (doc, f [W_KEY], "actions.writes.key", S_NAME_KEY, why, why_size))
            return -1;
        const char *reducer = f [W_REDUCER] ? ydoc_text (f [W_REDUCER]) : "replace";
        size_t r = 0;
        while (r < N (s_reducers) && strcmp (s_reducers [r], reducer) != 0)
            r++;
        if (r == N (s_reducers))
            return ydoc_fail (doc, f [W_REDUCER], "actions.writes.reducer", why, why_size,
                              "\"%s\" is not one of replace, append, union, merge, add",
                              reducer);
        role_write_t *write = &self->writes [self->write_count++];
        write->key = s_dup_text (f [W_KEY]);
        write->reducer = strdup (reducer);
        write->line = ydoc_line (item);
        if (!write->key || !write->reducer)
            return ydoc_fail (doc, item, "actions.writes", why, why_size, "out of memory");
    }
    return 0;
}

enum { A_WORLD, A_WRITES, A_MESSAGES, A_HANDOVER };
static const ydoc_field_t s_action_fields [] = {
    { "world", YDOC_STR_LIST, false }, { "writes", YDOC_LIST, false },
    { "messages", YDOC_BOOL, false }, { "handover", YDOC_STR_LIST, false },
};

static int
s_actions (role_t *self, ydoc_t *doc, yaml_node_t *node, char *why, size_t why_size)
{
    yaml_node_t *f [N (s_action_fields)];
    if (ydoc_map (doc, node, "actions", s_action_fields, N (f), f, why, why_size))
        return -1;
    if (f [A_WORLD] && s_words (doc, f [A_WORLD], "actions.world", s_moves, N (s_moves),
                                &self->moves, why, why_size))
        return -1;
    if (f [A_WRITES] && s_writes (self, doc, f [A_WRITES], why, why_size))
        return -1;
    self->writes_line = f [A_WRITES] ? ydoc_line (f [A_WRITES]) : 0;
    self->handover_line = f [A_HANDOVER] ? ydoc_line (f [A_HANDOVER]) : 0;
    self->sends_messages = f [A_MESSAGES] ? ydoc_bool (f [A_MESSAGES]) : true;
    if (f [A_HANDOVER] && s_names (doc, f [A_HANDOVER], "actions.handover", S_NAME_WIRE,
                                   &self->handover, &self->handover_lines,
                                   &self->handover_count, why, why_size))
        return -1;
    return 0;
}

enum { M_STORE, M_TOP_K, M_INDEX };
static const ydoc_field_t s_memory_fields [] = {
    { "store", YDOC_STR_LIST, false }, { "top_k", YDOC_INT, false },
    { "index", YDOC_STR, false },
};

static int
s_memory (role_t *self, ydoc_t *doc, yaml_node_t *node, char *why, size_t why_size)
{
    yaml_node_t *f [N (s_memory_fields)];
    if (ydoc_map (doc, node, "memory", s_memory_fields, N (f), f, why, why_size))
        return -1;
    if (f [M_STORE] && s_words (doc, f [M_STORE], "memory.store", s_stores, N (s_stores),
                                &self->store, why, why_size))
        return -1;
    int64_t top_k = self->top_k;
    if (f [M_TOP_K] && ydoc_int (doc, f [M_TOP_K], "memory.top_k", 0, 64, &top_k, why, why_size))
        return -1;
    self->top_k = (unsigned) top_k;
    if (f [M_INDEX]) {
        //  The kinds of agent/vmemory/vmemory_index.h, in any case.
        static const char *kinds [] = { "flat", "hnsw", "ivf" };
        const char *index = ydoc_text (f [M_INDEX]), *kind = NULL;
        for (size_t i = 0; i < N (kinds) && !kind; i++)
            if (strcasecmp (index, kinds [i]) == 0)
                kind = kinds [i];
        if (!kind)
            return ydoc_fail (doc, f [M_INDEX], "memory.index", why, why_size,
                              "the memory's index kind: flat, hnsw or ivf");
        free (self->index);
        self->index = strdup (kind);
    }
    return 0;
}

enum { R_ROLE, R_GOAL, R_INSTRUCTIONS, R_HUMAN, R_POLICY, R_CONNECTORS, R_ACTIONS,
       R_CHANNELS, R_MEMORY };
static const ydoc_field_t s_role_fields [] = {
    { "role", YDOC_STR, true }, { "goal", YDOC_STR, true },
    { "instructions", YDOC_STR, false }, { "human", YDOC_BOOL, false },
    { "policy", YDOC_STR, false }, { "connectors", YDOC_MAP, false },
    { "actions", YDOC_MAP, false }, { "channels", YDOC_STR_LIST, false },
    { "memory", YDOC_MAP, false },
};

static int
s_fill (role_t *self, ydoc_t *doc, char *why, size_t why_size)
{
    yaml_node_t *f [N (s_role_fields)];
    if (ydoc_map (doc, ydoc_root (doc), "", s_role_fields, N (f), f, why, why_size))
        return -1;
    if (s_check_name (doc, f [R_ROLE], "role", S_NAME_WIRE, why, why_size))
        return -1;
    self->name = s_dup_text (f [R_ROLE]);
    self->line = ydoc_line (f [R_ROLE]);
    self->policy_line = f [R_POLICY] ? ydoc_line (f [R_POLICY]) : 0;
    self->goal = s_dup_text (f [R_GOAL]);
    self->instructions = s_dup_text (f [R_INSTRUCTIONS]);
    self->human = ydoc_bool (f [R_HUMAN]);
    if (f [R_POLICY] && !role_policy_from_name (ydoc_text (f [R_POLICY]), &self->policy)) {
        char list [256] = "";
        for (int i = 0; i < ROLE_POLICY__COUNT; i++)
            snprintf (list + strlen (list), sizeof list - strlen (list), "%s%s",
                      i ? ", " : "", s_policy_names [i]);
        return ydoc_fail (doc, f [R_POLICY], "policy", why, why_size,
                          "\"%s\" is not one of %s", ydoc_text (f [R_POLICY]), list);
    }
    if (f [R_CONNECTORS] && s_connectors (self, doc, f [R_CONNECTORS], why, why_size))
        return -1;
    if (f [R_ACTIONS] && s_actions (self, doc, f [R_ACTIONS], why, why_size))
        return -1;
    if (f [R_CHANNELS] && s_names (doc, f [R_CHANNELS], "channels", S_NAME_WIRE,
                                   &self->channels, NULL, &self->channel_count, why, why_size))
        return -1;
    if (f [R_MEMORY] && s_memory (self, doc, f [R_MEMORY], why, why_size))
        return -1;
    if (!self->name || !self->goal || !self->index)
        return ydoc_fail (doc, ydoc_root (doc), NULL, why, why_size, "out of memory");
    return 0;
}

role_t *
role_load (const char *path, char *why, size_t why_size)
{
    assert (path);
    ydoc_t *doc = ydoc_load (path, why, why_size);
    if (!doc)
        return NULL;
    role_t *self = calloc (1, sizeof (role_t));
    if (self) {
        self->path = strdup (path);
        self->policy = ROLE_POLICY_LLM;
        self->reads_mailbox = true;
        self->sends_messages = true;
        self->store = ROLE_STORE_OBSERVATIONS | ROLE_STORE_MESSAGES | ROLE_STORE_DECISIONS;
        self->top_k = 4;
        self->index = strdup ("flat");
    }
    if (!self)
        snprintf (why, why_size, "%s: out of memory", path);
    else
    if (s_fill (self, doc, why, why_size))
        role_destroy (&self);
    ydoc_destroy (&doc);
    return self;
}

const role_write_t *
role_write_of (const role_t *self, const char *key)
{
    assert (self);
    for (size_t i = 0; key && i < self->write_count; i++)
        if (strcmp (self->writes [i].key, key) == 0)
            return &self->writes [i];
    return NULL;
}
