// SPDX-License-Identifier: MIT
/*  scenario - scenario.yaml and its role files. See scenario.h.

    The roles folder is read with glob(3) in name order, so the same
    folder always loads the same way; a folder with no role files is an
    error only when the scenario has a workflow (its entry must be one).
*/
#include "scenario.h"

#include <assert.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ydoc.h"

#define N(array) (sizeof (array) / sizeof ((array) [0]))

static const char *s_reducers [] = { "replace", "append", "union", "merge", "add" };

static void
s_free_list (char **list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (list [i]);
    free (list);
}

void
scenario_destroy (scenario_t **self_p)
{
    assert (self_p);
    scenario_t *self = *self_p;
    if (!self)
        return;
    free (self->dir);
    free (self->path);
    free (self->name);
    free (self->description);
    for (size_t i = 0; i < self->key_count; i++) {
        free (self->keys [i].key);
        free (self->keys [i].reducer);
        free (self->keys [i].value);
    }
    free (self->keys);
    scenario_workflow_t *flow = &self->workflow;
    free (flow->entry);
    s_free_list (flow->clear_on_revision, flow->clear_count);
    free (flow->holder_key);
    free (flow->status_key);
    free (flow->revisions_key);
    free (flow->turn_key);
    free (flow->fallback_role);
    free (flow->fallback_note);
    for (size_t i = 0; i < self->role_count; i++)
        role_destroy (&self->roles [i]);
    free (self->roles);
    free (self);
    *self_p = NULL;
}

// ---------------------------------------------------------------------------
//  world

enum { W_KIND, W_SIZE, W_WIDTH, W_HEIGHT, W_SEED };
static const ydoc_field_t s_world_fields [] = {
    { "kind", YDOC_STR, true }, { "size", YDOC_INT, false }, { "width", YDOC_INT, false },
    { "height", YDOC_INT, false }, { "seed", YDOC_INT, false },
};

static int
s_world (scenario_t *self, ydoc_t *doc, yaml_node_t *node, char *why, size_t why_size)
{
    if (node->type == YAML_SCALAR_NODE) {
        if (strcmp (ydoc_text (node), "none") != 0)
            return ydoc_fail (doc, node, "world", why, why_size,
                              "expected none or a mapping with kind: line or grid");
        self->world = SCENARIO_WORLD_NONE;
        return 0;
    }
    yaml_node_t *f [N (s_world_fields)];
    if (ydoc_map (doc, node, "world", s_world_fields, N (f), f, why, why_size))
        return -1;
    const char *kind = ydoc_text (f [W_KIND]);
    int64_t width = 0, height = 0, seed = 0;
    if (strcmp (kind, "line") == 0) {
        self->world = SCENARIO_WORLD_LINE;
        if (f [W_WIDTH] || f [W_HEIGHT])
            return ydoc_fail (doc, f [W_WIDTH] ? f [W_WIDTH] : f [W_HEIGHT], "world", why,
                              why_size, "a line has a size, not a width or height");
        if (f [W_SIZE] && ydoc_int (doc, f [W_SIZE], "world.size", 1, 4096, &width, why,
                                    why_size))
            return -1;
    }
    else
    if (strcmp (kind, "grid") == 0) {
        self->world = SCENARIO_WORLD_GRID;
        if (!f [W_WIDTH] || !f [W_HEIGHT] || f [W_SIZE])
            return ydoc_fail (doc, node, "world", why, why_size,
                              "a grid has a width and a height, not a size");
        if (ydoc_int (doc, f [W_WIDTH], "world.width", 1, 4096, &width, why, why_size)
        ||  ydoc_int (doc, f [W_HEIGHT], "world.height", 1, 4096, &height, why, why_size))
            return -1;
        if (width * height > 4096)
            return ydoc_fail (doc, node, "world", why, why_size,
                              "a grid has at most 4096 cells, not %lld",
                              (long long) (width * height));
    }
    else
        return ydoc_fail (doc, f [W_KIND], "world.kind", why, why_size,
                          "\"%s\" is not line or grid", kind);
    if (f [W_SEED]) {
        if (ydoc_int (doc, f [W_SEED], "world.seed", 0, INT64_MAX, &seed, why, why_size))
            return -1;
        self->world_seed = (uint64_t) seed;
        self->world_seed_set = true;
    }
    self->world_width = (uint32_t) width;
    self->world_height = (uint32_t) height;
    return 0;
}

// ---------------------------------------------------------------------------
//  state

enum { K_REDUCER, K_VALUE };
static const ydoc_field_t s_key_fields [] = {
    { "reducer", YDOC_STR, false }, { "value", YDOC_ANY, false },
};

static int
s_state_key (scenario_t *self, ydoc_t *doc, yaml_node_t *name, yaml_node_t *node,
             char *why, size_t why_size)
{
    const char *key = ydoc_text (name);
    if (!key || !*key || strlen (key) > 256)
        return ydoc_fail (doc, name, "state", why, why_size, "a state key is 1-256 bytes");
    char where [300];
    snprintf (where, sizeof where, "state.%s", key);
    yaml_node_t *f [N (s_key_fields)];
    if (ydoc_map (doc, node, where, s_key_fields, N (f), f, why, why_size))
        return -1;
    const char *reducer = f [K_REDUCER] ? ydoc_text (f [K_REDUCER]) : "replace";
    size_t r = 0;
    while (r < N (s_reducers) && strcmp (s_reducers [r], reducer) != 0)
        r++;
    if (r == N (s_reducers)) {
        snprintf (where, sizeof where, "state.%s.reducer", key);
        return ydoc_fail (doc, f [K_REDUCER], where, why, why_size,
                          "\"%s\" is not one of replace, append, union, merge, add", reducer);
    }
    scenario_key_t *entry = &self->keys [self->key_count++];
    entry->key = strdup (key);
    entry->reducer = strdup (reducer);
    entry->line = ydoc_line (name);
    if (!entry->key || !entry->reducer)
        return ydoc_fail (doc, name, where, why, why_size, "out of memory");
    if (f [K_VALUE]) {
        msgpack_sbuffer buffer;
        msgpack_sbuffer_init (&buffer);
        msgpack_packer packer;
        msgpack_packer_init (&packer, &buffer, msgpack_sbuffer_write);
        if (ydoc_pack (doc, f [K_VALUE], &packer, why, why_size)) {
            msgpack_sbuffer_destroy (&buffer);
            return -1;
        }
        entry->value = buffer.data;           //  the buffer's data is ours now
        entry->size = buffer.size;
    }
    return 0;
}

static int
s_state (scenario_t *self, ydoc_t *doc, yaml_node_t *node, char *why, size_t why_size)
{
    size_t count = ydoc_items (node);
    if (count > SCENARIO_MAX_KEYS)
        return ydoc_fail (doc, node, "state", why, why_size, "at most %d keys",
                          SCENARIO_MAX_KEYS);
    self->keys = calloc (count ? count : 1, sizeof (scenario_key_t));
    if (!self->keys)
        return ydoc_fail (doc, node, "state", why, why_size, "out of memory");
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *name = ydoc_pair_key (doc, node, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp (ydoc_text (ydoc_pair_key (doc, node, j)) ?: "", ydoc_text (name) ?: "") == 0)
                return ydoc_fail (doc, name, "state", why, why_size, "key \"%s\" given twice",
                                  ydoc_text (name));
        if (s_state_key (self, doc, name, ydoc_pair_value (doc, node, i), why, why_size))
            return -1;
    }
    return 0;
}

// ---------------------------------------------------------------------------
//  workflow

enum { FK_HOLDER, FK_STATUS, FK_REVISIONS, FK_TURN };
static const ydoc_field_t s_flow_key_fields [] = {
    { "holder", YDOC_STR, false }, { "status", YDOC_STR, false },
    { "revisions", YDOC_STR, false }, { "turn", YDOC_STR, false },
};

enum { F_ENTRY, F_MAX_REVISIONS, F_MAX_TURNS, F_TIMEOUT, F_ON_TIMEOUT, F_CLEAR, F_KEYS,
       F_CORRECTIONS, F_FALLBACK, F_NOTE };
static const ydoc_field_t s_flow_fields [] = {
    { "entry", YDOC_STR, true }, { "max_revisions", YDOC_INT, false },
    { "max_turns", YDOC_INT, false }, { "turn_timeout_ms", YDOC_INT, false },
    { "on_timeout", YDOC_STR, false }, { "clear_on_revision", YDOC_STR_LIST, false },
    { "keys", YDOC_MAP, false }, { "corrections", YDOC_INT, false },
    { "fallback", YDOC_STR, false }, { "fallback_note", YDOC_STR, false },
};

//  corrections, fallback and fallback_note: where a turn goes when its
//  model cannot take it. The fallback's role is checked against the roles
//  later (scenario_check.c), once they are loaded.
static int
s_fallback (scenario_t *self, ydoc_t *doc, yaml_node_t **f, char *why, size_t why_size)
{
    scenario_workflow_t *flow = &self->workflow;
    int64_t corrections = 3;
    if (f [F_CORRECTIONS] && ydoc_int (doc, f [F_CORRECTIONS], "workflow.corrections", 0,
                                       SCENARIO_MAX_CORRECTIONS, &corrections, why, why_size))
        return -1;
    flow->corrections = (unsigned) corrections;
    if (f [F_FALLBACK]) {
        const char *text = ydoc_text (f [F_FALLBACK]);
        flow->fallback_line = ydoc_line (f [F_FALLBACK]);
        if (strcmp (text, "entry") == 0)
            flow->fallback = SCENARIO_FALLBACK_ENTRY;
        else
        if (strcmp (text, "fail") != 0) {
            flow->fallback = SCENARIO_FALLBACK_HUMAN;
            flow->fallback_role = strdup (text);
            if (!flow->fallback_role)
                return ydoc_fail (doc, f [F_FALLBACK], "workflow.fallback", why, why_size,
                                  "out of memory");
        }
    }
    if (f [F_NOTE]) {
        const char *key = ydoc_text (f [F_NOTE]);
        const scenario_key_t *declared = scenario_key (self, key);
        flow->note_line = ydoc_line (f [F_NOTE]);
        if (!declared)
            return ydoc_fail (doc, f [F_NOTE], "workflow.fallback_note", why, why_size,
                              "\"%s\" is not a key of state", key);
        if (strcmp (declared->reducer, "replace") && strcmp (declared->reducer, "append")
        &&  strcmp (declared->reducer, "union"))
            return ydoc_fail (doc, f [F_NOTE], "workflow.fallback_note", why, why_size,
                              "\"%s\" is declared %s; a note needs replace, append or union",
                              key, declared->reducer);
        flow->fallback_note = strdup (key);
        if (!flow->fallback_note)
            return ydoc_fail (doc, f [F_NOTE], "workflow.fallback_note", why, why_size,
                              "out of memory");
    }
    if (flow->fallback == SCENARIO_FALLBACK_ENTRY && !flow->fallback_note)
        return ydoc_fail (doc, f [F_FALLBACK], "workflow.fallback", why, why_size,
                          "entry needs workflow.fallback_note, the key that tells the entry "
                          "role why the turn came back");
    return 0;
}

static int
s_flow_keys (scenario_workflow_t *flow, ydoc_t *doc, yaml_node_t *node, char *why,
             size_t why_size)
{
    yaml_node_t *f [N (s_flow_key_fields)];
    if (node && ydoc_map (doc, node, "workflow.keys", s_flow_key_fields, N (f), f, why,
                          why_size))
        return -1;
    char **slots [] = { &flow->holder_key, &flow->status_key, &flow->revisions_key,
                        &flow->turn_key };
    const char *defaults [] = { "current_agent", "workflow_status", "iteration_count", "turn" };
    for (size_t i = 0; i < N (slots); i++) {
        const char *text = node && f [i] ? ydoc_text (f [i]) : defaults [i];
        if (!*text || strlen (text) > 256)
            return ydoc_fail (doc, f [i], "workflow.keys", why, why_size,
                              "a state key is 1-256 bytes");
        for (size_t j = 0; j < i; j++)
            if (strcmp (*slots [j], text) == 0)
                return ydoc_fail (doc, f [i], "workflow.keys", why, why_size,
                                  "\"%s\" names two workflow fields", text);
        *slots [i] = strdup (text);
        if (!*slots [i])
            return ydoc_fail (doc, node, "workflow.keys", why, why_size, "out of memory");
    }
    return 0;
}

static int
s_workflow (scenario_t *self, ydoc_t *doc, yaml_node_t *node, char *why, size_t why_size)
{
    scenario_workflow_t *flow = &self->workflow;
    yaml_node_t *f [N (s_flow_fields)];
    if (ydoc_map (doc, node, "workflow", s_flow_fields, N (f), f, why, why_size))
        return -1;
    flow->enabled = true;
    flow->entry = strdup (ydoc_text (f [F_ENTRY]));
    flow->entry_line = ydoc_line (f [F_ENTRY]);
    int64_t revisions = 3, turns = 100, timeout = 0;
    if ((f [F_MAX_REVISIONS] && ydoc_int (doc, f [F_MAX_REVISIONS], "workflow.max_revisions",
                                          1, 5, &revisions, why, why_size))
    ||  (f [F_MAX_TURNS] && ydoc_int (doc, f [F_MAX_TURNS], "workflow.max_turns", 1, 100000,
                                      &turns, why, why_size))
    ||  (f [F_TIMEOUT] && ydoc_int (doc, f [F_TIMEOUT], "workflow.turn_timeout_ms", 0,
                                    86400000, &timeout, why, why_size)))
        return -1;
    flow->max_revisions = (unsigned) revisions;
    flow->max_turns = (unsigned) turns;
    flow->turn_timeout_ms = (uint64_t) timeout;
    if (f [F_ON_TIMEOUT]) {
        const char *text = ydoc_text (f [F_ON_TIMEOUT]);
        if (strcmp (text, "replace") == 0)
            flow->on_timeout = SCENARIO_TIMEOUT_REPLACE;
        else
        if (strcmp (text, "fail") != 0)
            return ydoc_fail (doc, f [F_ON_TIMEOUT], "workflow.on_timeout", why, why_size,
                              "\"%s\" is not fail or replace", text);
    }
    if (f [F_CLEAR]) {
        size_t count = ydoc_items (f [F_CLEAR]);
        if (count > SCENARIO_MAX_CLEAR)
            return ydoc_fail (doc, f [F_CLEAR], "workflow.clear_on_revision", why, why_size,
                              "at most %d keys", SCENARIO_MAX_CLEAR);
        flow->clear_on_revision = calloc (count ? count : 1, sizeof (char *));
        if (!flow->clear_on_revision)
            return ydoc_fail (doc, node, "workflow", why, why_size, "out of memory");
        for (size_t i = 0; i < count; i++) {
            yaml_node_t *item = ydoc_item (doc, f [F_CLEAR], i);
            if (!scenario_key (self, ydoc_text (item)))
                return ydoc_fail (doc, item, "workflow.clear_on_revision", why, why_size,
                                  "\"%s\" is not a key of state", ydoc_text (item));
            flow->clear_on_revision [flow->clear_count++] = strdup (ydoc_text (item));
        }
    }
    if (s_fallback (self, doc, f, why, why_size))
        return -1;
    return s_flow_keys (flow, doc, f [F_KEYS], why, why_size);
}

// ---------------------------------------------------------------------------
//  roles

static int
s_roles (scenario_t *self, char *why, size_t why_size)
{
    char pattern [4096];
    snprintf (pattern, sizeof pattern, "%s/roles/*.yaml", self->dir);
    glob_t found;
    int rc = glob (pattern, 0, NULL, &found);
    if (rc == GLOB_NOMATCH)
        return 0;
    if (rc) {
        snprintf (why, why_size, "%s/roles: cannot list the role files", self->dir);
        return -1;
    }
    if (found.gl_pathc > SCENARIO_MAX_ROLES) {
        snprintf (why, why_size, "%s/roles: at most %d role files", self->dir,
                  SCENARIO_MAX_ROLES);
        globfree (&found);
        return -1;
    }
    self->roles = calloc (found.gl_pathc ? found.gl_pathc : 1, sizeof (role_t *));
    for (size_t i = 0; self->roles && i < found.gl_pathc; i++) {
        role_t *role = role_load (found.gl_pathv [i], why, why_size);
        if (!role) {
            globfree (&found);
            return -1;
        }
        if (scenario_role (self, role->name)) {
            snprintf (why, why_size, "%s:1: role: \"%s\" is also the role of %s",
                      role->path, role->name, scenario_role (self, role->name)->path);
            role_destroy (&role);
            globfree (&found);
            return -1;
        }
        self->roles [self->role_count++] = role;
    }
    globfree (&found);
    if (!self->roles) {
        snprintf (why, why_size, "out of memory");
        return -1;
    }
    return 0;
}

enum { S_NAME, S_DESCRIPTION, S_WORLD, S_STATE, S_WORKFLOW };
static const ydoc_field_t s_fields [] = {
    { "name", YDOC_STR, true }, { "description", YDOC_STR, false },
    { "world", YDOC_ANY, false }, { "state", YDOC_MAP, false },
    { "workflow", YDOC_MAP, false },
};

static int
s_fill (scenario_t *self, char *why, size_t why_size)
{
    ydoc_t *doc = ydoc_load (self->path, why, why_size);
    if (!doc)
        return -1;
    yaml_node_t *f [N (s_fields)];
    int rc = ydoc_map (doc, ydoc_root (doc), "", s_fields, N (f), f, why, why_size);
    if (!rc) {
        self->name = strdup (ydoc_text (f [S_NAME]));
        self->description = f [S_DESCRIPTION] ? strdup (ydoc_text (f [S_DESCRIPTION])) : NULL;
    }
    if (!rc && f [S_WORLD])
        rc = s_world (self, doc, f [S_WORLD], why, why_size);
    if (!rc && f [S_STATE])
        rc = s_state (self, doc, f [S_STATE], why, why_size);
    if (!rc && f [S_WORKFLOW])
        rc = s_workflow (self, doc, f [S_WORKFLOW], why, why_size);
    ydoc_destroy (&doc);
    if (!rc)
        rc = s_roles (self, why, why_size);
    if (!rc)
        rc = scenario_check (self, why, why_size);
    return rc;
}

scenario_t *
scenario_load (const char *path, char *why, size_t why_size)
{
    assert (path);
    scenario_t *self = calloc (1, sizeof (scenario_t));
    if (!self) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    struct stat info;
    if (stat (path, &info) == 0 && S_ISDIR (info.st_mode)) {
        self->dir = strdup (path);
        if (self->dir && asprintf (&self->path, "%s/scenario.yaml", path) < 0)
            self->path = NULL;
    }
    else {
        self->path = strdup (path);
        self->dir = strdup (path);
        char *slash = self->dir ? strrchr (self->dir, '/') : NULL;
        if (slash)
            *slash = 0;
        else
        if (self->dir)
            strcpy (self->dir, ".");
    }
    if (!self->dir || !self->path) {
        snprintf (why, why_size, "out of memory");
        scenario_destroy (&self);
        return NULL;
    }
    if (s_fill (self, why, why_size))
        scenario_destroy (&self);
    return self;
}

const role_t *
scenario_role (const scenario_t *self, const char *name)
{
    assert (self);
    for (size_t i = 0; name && i < self->role_count; i++)
        if (strcmp (self->roles [i]->name, name) == 0)
            return self->roles [i];
    return NULL;
}

const scenario_key_t *
scenario_key (const scenario_t *self, const char *key)
{
    assert (self);
    for (size_t i = 0; key && i < self->key_count; i++)
        if (strcmp (self->keys [i].key, key) == 0)
            return &self->keys [i];
    return NULL;
}
