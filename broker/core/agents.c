// SPDX-License-Identifier: MIT
/*  agents - the registry. See agents.h. */
#include <assert.h>
#include <string.h>

#include "agents.h"

struct _agents_t {
    zhashx_t *by_id;            //  id -> agent_t (owned)
    zhashx_t *by_conn;          //  conn_id_t * (the agent's own) -> agent_t
    agent_t **all;              //  dense array, agent->index is its slot
    size_t count;
    size_t max;                 //  the limit
    size_t cap;                 //  room in `all` (>= count)
    size_t online;
};

//  FNV-1a over the routing id bytes.
size_t
conn_id_hash (const void *key)
{
    const conn_id_t *conn = key;
    uint64_t hash = 1469598103934665603ULL;
    for (size_t i = 0; i < conn->len; i++) {
        hash ^= conn->bytes [i];
        hash *= 1099511628211ULL;
    }
    return (size_t) hash;
}

int
conn_id_compare (const void *a, const void *b)
{
    const conn_id_t *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp (x->bytes, y->bytes, x->len);
}

//  An index keyed by a conn_id_t its value holds: it neither copies nor
//  frees keys.
static void *
s_key_keep (const void *key)
{
    return (void *) key;
}

static void
s_key_forget (void **key_p)
{
    *key_p = NULL;
}

zhashx_t *
conn_id_index_new (void)
{
    zhashx_t *index = zhashx_new ();
    if (index) {
        zhashx_set_key_hasher (index, conn_id_hash);
        zhashx_set_key_comparator (index, conn_id_compare);
        zhashx_set_key_duplicator (index, s_key_keep);
        zhashx_set_key_destructor (index, s_key_forget);
    }
    return index;
}

//  The channel list holds pointers: equal means the same channel.
static int
s_pointer_compare (const void *a, const void *b)
{
    return a == b ? 0 : (a < b ? -1 : 1);
}

static void
s_agent_destroy (agent_t **agent_p)
{
    agent_t *agent = *agent_p;
    if (agent) {
        zlistx_destroy (&agent->caps);
        zlistx_destroy (&agent->channels);
        mailbox_destroy (&agent->inbox);
        for (int slot = 0; slot < AGENT_SLOTS; slot++)
            replay_forget (&agent->slots [slot]);
        free (agent);
        *agent_p = NULL;
    }
}

static void
s_agent_destructor (void **item_p)
{
    s_agent_destroy ((agent_t **) item_p);
}

agents_t *
agents_new (size_t max_agents)
{
    assert (max_agents > 0);
    agents_t *self = calloc (1, sizeof (agents_t));
    if (!self)
        return NULL;
    self->by_id = zhashx_new ();
    self->by_conn = conn_id_index_new ();
    self->all = calloc (max_agents, sizeof (agent_t *));
    if (!self->by_id || !self->by_conn || !self->all)
        goto err;
    self->max = self->cap = max_agents;
    zhashx_set_destructor (self->by_id, s_agent_destructor);
    return self;
err:
    zhashx_destroy (&self->by_id);
    zhashx_destroy (&self->by_conn);
    free (self->all);
    free (self);
    return NULL;
}

void
agents_destroy (agents_t **self_p)
{
    assert (self_p);
    agents_t *self = *self_p;
    if (self) {
        zhashx_destroy (&self->by_conn);
        zhashx_destroy (&self->by_id);
        free (self->all);
        free (self);
        *self_p = NULL;
    }
}

void
agents_set_max (agents_t *self, size_t max_agents)
{
    assert (self && max_agents > 0);
    if (max_agents > self->cap) {
        agent_t **all = realloc (self->all, max_agents * sizeof (agent_t *));
        if (!all) {
            fprintf (stderr, "parley-broker: out of memory raising the agent limit\n");
            abort ();
        }
        self->all = all;
        self->cap = max_agents;
    }
    self->max = max_agents;
}

agent_t *
agents_lookup (agents_t *self, const char *id)
{
    assert (self && id);
    return zhashx_lookup (self->by_id, id);
}

agent_t *
agents_by_conn (agents_t *self, const conn_id_t *conn)
{
    assert (self && conn);
    return zhashx_lookup (self->by_conn, conn);
}

agent_t *
agents_create (agents_t *self, const char *id)
{
    assert (self && id);
    assert (!zhashx_lookup (self->by_id, id));
    if (self->count >= self->max)
        return NULL;
    agent_t *agent = calloc (1, sizeof (agent_t));
    if (!agent)
        return NULL;
    agent->id_len = strlen (id);
    assert (agent->id_len <= PROTO_MAX_NAME);
    memcpy (agent->id, id, agent->id_len + 1);
    agent->conn_fd = -1;
    agent->caps = zlistx_new ();
    agent->channels = zlistx_new ();
    agent->inbox = mailbox_new ();
    if (!agent->caps || !agent->channels || !agent->inbox) {
        s_agent_destroy (&agent);
        return NULL;
    }
    zlistx_set_destructor (agent->caps, (zlistx_destructor_fn *) zstr_free);
    zlistx_set_comparator (agent->channels, s_pointer_compare);
    zhashx_insert (self->by_id, agent->id, agent);
    agent->index = self->count;
    self->all [self->count++] = agent;
    return agent;
}

void
agents_attach (agents_t *self, agent_t *agent, const conn_id_t *conn, int64_t now_ms)
{
    assert (self && agent && conn);
    assert (!agent->online);
    agent->conn = *conn;
    agent->online = true;
    agent->last_seen_ms = now_ms;
    //  A new connection has been handed nothing yet: a streaming FETCH on
    //  it starts from the acknowledged position, like a plain one.
    agent->cursor = agent->acked;
    agent->out_count = 0;
    agent->out_bytes = 0;
    //  A push subscription belongs to the connection that opened it.
    agent->credit = 0;
    agent->push_blocked = false;
    //  A connection speaks for one agent: a stale mapping (its agent was
    //  detached without a lookup) cannot exist, detach removes it.
    zhashx_insert (self->by_conn, &agent->conn, agent);
    self->online++;
}

void
agents_detach (agents_t *self, agent_t *agent)
{
    assert (self && agent);
    if (!agent->online)
        return;
    zhashx_delete (self->by_conn, &agent->conn);
    agent->online = false;
    agent->conn.len = 0;
    agent->credit = 0;
    agent->push_blocked = false;
    self->online--;
}

void
agents_remove (agents_t *self, agent_t **agent_p)
{
    assert (self && agent_p && *agent_p);
    agent_t *agent = *agent_p;
    assert (mailbox_count (agent->inbox) == 0);
    assert (zlistx_size (agent->channels) == 0);
    agents_detach (self, agent);
    //  Swap-remove from the dense array.
    agent_t *last = self->all [--self->count];
    self->all [agent->index] = last;
    last->index = agent->index;
    self->all [self->count] = NULL;
    zhashx_delete (self->by_id, agent->id);     //  destroys the record
    *agent_p = NULL;
}

const char *const agents_model_fields [AGENTS_MODEL_FIELDS] = {
    "model_calls", "model_ok", "model_failed", "model_skipped", "model_retries",
    "model_prompt_tokens", "model_completion_tokens", "model_latency_ms",
    "model_latency_max_ms"
};

void
agents_set_caps (agent_t *agent, const char *const *caps, const size_t *lens, size_t count)
{
    assert (agent);
    zlistx_purge (agent->caps);
    for (size_t i = 0; i < count; i++) {
        char *cap = strndup (caps [i], lens [i]);
        if (cap)
            zlistx_add_end (agent->caps, cap);
    }
}

size_t
agents_size (agents_t *self)
{
    assert (self);
    return self->count;
}

size_t
agents_online (agents_t *self)
{
    assert (self);
    return self->online;
}

size_t
agents_max (agents_t *self)
{
    assert (self);
    return self->max;
}

agent_t *
agents_at (agents_t *self, size_t index)
{
    assert (self);
    assert (index < self->count);
    return self->all [index];
}

agent_t *const *
agents_array (agents_t *self)
{
    assert (self);
    return self->all;
}

void
conn_id_hex (const conn_id_t *conn, char *buf, size_t size)
{
    assert (conn && buf && size > 0);
    static const char hex [] = "0123456789abcdef";
    size_t out = 0;
    for (size_t i = 0; i < conn->len && out + 2 < size; i++) {
        buf [out++] = hex [conn->bytes [i] >> 4];
        buf [out++] = hex [conn->bytes [i] & 15];
    }
    buf [out] = 0;
}
