// SPDX-License-Identifier: MIT
/*  agents - parley_agent_list_t and parley_agent_t: AGENTS' answer
    (parley/broker.h). Names are copied into the records, capabilities into
    the list's arena with a table of offsets per agent.
*/
#include <assert.h>
#include <string.h>
#include "agents_int.h"
#include "arena.h"
#include "mem.h"

struct _parley_agent_t {
    const client_arena_t *arena;
    char name [PARLEY_NAME_MAX + 1];
    bool online;
    uint64_t idle_ms, pending;
    size_t caps, cap_count;         //  a table of offsets, in the arena
    bool model_reported;
    uint64_t model [PARLEY_MODEL_FIELDS];
    uint64_t unacked, inbox_bytes, step, acts;
};

struct _parley_agent_list_t {
    client_arena_t *arena;
    parley_agent_t *agents;
    size_t count, cap;
};

static const char *s_model_names [PARLEY_MODEL_FIELDS] = {
    [PARLEY_MODEL_CALLS] = "model_calls",
    [PARLEY_MODEL_OK] = "model_ok",
    [PARLEY_MODEL_FAILED] = "model_failed",
    [PARLEY_MODEL_SKIPPED] = "model_skipped",
    [PARLEY_MODEL_RETRIES] = "model_retries",
    [PARLEY_MODEL_PROMPT_TOKENS] = "model_prompt_tokens",
    [PARLEY_MODEL_COMPLETION_TOKENS] = "model_completion_tokens",
    [PARLEY_MODEL_LATENCY_MS] = "model_latency_ms",
    [PARLEY_MODEL_LATENCY_MAX_MS] = "model_latency_max_ms",
};

const char *
client_model_field_name (parley_model_field_t field)
{
    return (unsigned) field < PARLEY_MODEL_FIELDS ? s_model_names [field] : NULL;
}

parley_agent_list_t *
client_agent_list_new (void)
{
    parley_agent_list_t *self = (parley_agent_list_t *)
        client_mem_zalloc (sizeof (parley_agent_list_t));
    if (self && !(self->arena = client_arena_new ())) {
        client_mem_free (self);
        self = NULL;
    }
    return self;
}

void
parley_agent_list_destroy (parley_agent_list_t **self_p)
{
    assert (self_p);
    parley_agent_list_t *self = *self_p;
    if (self) {
        client_arena_destroy (&self->arena);
        client_mem_free (self->agents);
        client_mem_free (self);
        *self_p = NULL;
    }
}

static void
s_agent (parley_agent_t *agent, client_arena_t *arena, const msgpack_object *a)
{
    *agent = (parley_agent_t) {
        .arena = arena,
        .online = pobj_bool (a, "online", false),
        .idle_ms = pobj_uint (a, "idle_ms", 0),
        .pending = pobj_uint (a, "pending", 0),
        .unacked = pobj_uint (a, "unacked", 0),
        .inbox_bytes = pobj_uint (a, "inbox_bytes", 0),
        .step = pobj_uint (a, "step", 0),
        .acts = pobj_uint (a, "acts", 0),
    };
    if (!pobj_strcpy (a, "agent", agent->name, sizeof agent->name))
        agent->name [0] = 0;
    agent->caps = client_arena_strings (arena, pobj_get (a, "caps"), &agent->cap_count);
    for (size_t f = 0; f < PARLEY_MODEL_FIELDS; f++) {
        if (!pobj_get (a, s_model_names [f]))
            continue;
        agent->model_reported = true;
        agent->model [f] = pobj_uint (a, s_model_names [f], 0);
    }
}

parley_err_t
client_agent_list_decode (parley_agent_list_t *self, const pmsg_t *reply)
{
    assert (self && reply);
    client_arena_reset (self->arena);
    self->count = 0;
    const msgpack_object *agents = pmsg_field (reply, "agents");
    size_t n = agents && agents->type == MSGPACK_OBJECT_ARRAY ? agents->via.array.size : 0;
    if (n > self->cap) {
        parley_agent_t *grown = (parley_agent_t *)
            client_mem_array (self->agents, n, sizeof (parley_agent_t));
        if (!grown)
            return PARLEY_ERR_NOMEM;
        self->agents = grown;
        self->cap = n;
    }
    for (size_t i = 0; i < n; i++)
        s_agent (&self->agents [i], self->arena, &agents->via.array.ptr [i]);
    if (client_arena_failed (self->arena))
        return PARLEY_ERR_NOMEM;
    self->count = n;
    return PARLEY_OK;
}

size_t
parley_agent_list_count (const parley_agent_list_t *self)
{
    assert (self);
    return self->count;
}

const parley_agent_t *
parley_agent_list_at (const parley_agent_list_t *self, size_t index)
{
    assert (self);
    return index < self->count ? &self->agents [index] : NULL;
}

const parley_agent_t *
parley_agent_list_find (const parley_agent_list_t *self, const char *name)
{
    assert (self && name);
    for (size_t i = 0; i < self->count; i++)
        if (strcmp (self->agents [i].name, name) == 0)
            return &self->agents [i];
    return NULL;
}

const char *
parley_agent_name (const parley_agent_t *self)
{
    assert (self);
    return self->name;
}

#define S_FIELD(type, field) \
    type parley_agent_##field (const parley_agent_t *self) \
    { \
        assert (self); \
        return self->field; \
    }

S_FIELD (bool, online)
S_FIELD (uint64_t, idle_ms)
S_FIELD (uint64_t, pending)
S_FIELD (size_t, cap_count)
S_FIELD (bool, model_reported)
S_FIELD (uint64_t, unacked)
S_FIELD (uint64_t, inbox_bytes)
S_FIELD (uint64_t, step)
S_FIELD (uint64_t, acts)

const char *
parley_agent_cap (const parley_agent_t *self, size_t index)
{
    assert (self);
    return client_arena_string_at (self->arena, self->caps, self->cap_count, index);
}

uint64_t
parley_agent_model (const parley_agent_t *self, parley_model_field_t field)
{
    assert (self);
    return (unsigned) field < PARLEY_MODEL_FIELDS ? self->model [field] : 0;
}
