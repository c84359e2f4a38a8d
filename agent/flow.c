/*  flow - the node engine. See flow.h.

    Nodes and transitions live in small fixed arrays: a flow has a handful of
    nodes (the agent has six) and each node a few exits, so a linear scan is
    cheaper and simpler than a hash table. The limits are in flow.h.
*/
#include <assert.h>
#include <czmq.h>
#include <string.h>
#include "flow.h"
#include "plog.h"

#define FLOW_MAX_EDGES 8
#define FLOW_MAX_NAME 48

typedef struct {
    char action[FLOW_MAX_ACTION + 1];
    int to;
} edge_t;

typedef struct {
    char name[FLOW_MAX_NAME + 1];
    const flow_node_ops_t *ops;
    void *ctx;
    edge_t edges[FLOW_MAX_EDGES];
    size_t edge_count;
    flow_node_stats_t stats;
} node_t;

struct _flow_t {
    node_t nodes[FLOW_MAX_NODES];
    size_t count;
    int start;
    int last_node;
    uint64_t transitions;
    bool (*guard) (void *shared, const char *node);
    char result[FLOW_MAX_ACTION + 1];
};

flow_t *
flow_new (void)
{
    flow_t *self = (flow_t *) zmalloc (sizeof (flow_t));
    self->start = -1;
    self->last_node = -1;
    return self;
}

void
flow_destroy (flow_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        free (*self_p);
        *self_p = NULL;
    }
}

static int
s_find (flow_t *self, const char *name)
{
    for (size_t i = 0; i < self->count; i++)
        if (streq (self->nodes[i].name, name))
            return (int) i;
    return -1;
}

int
flow_add (flow_t *self, const char *name, const flow_node_ops_t *ops, void *ctx)
{
    assert (self);
    assert (name);
    assert (ops && ops->exec);
    if (self->count >= FLOW_MAX_NODES || strlen (name) == 0
    ||  strlen (name) > FLOW_MAX_NAME || s_find (self, name) >= 0)
        return -1;
    node_t *node = &self->nodes[self->count];
    memset (node, 0, sizeof (*node));
    strcpy (node->name, name);
    node->ops = ops;
    node->ctx = ctx;
    if (self->start < 0)
        self->start = (int) self->count;
    return (int) self->count++;
}

int
flow_connect (flow_t *self, const char *from, const char *action, const char *to)
{
    assert (self);
    assert (from && action && to);
    int f = s_find (self, from);
    int t = s_find (self, to);
    size_t len = strlen (action);
    if (f < 0 || t < 0 || len == 0 || len > FLOW_MAX_ACTION)
        return -1;
    node_t *node = &self->nodes[f];
    for (size_t i = 0; i < node->edge_count; i++)
        if (streq (node->edges[i].action, action)) {
            node->edges[i].to = t;      //  rewiring replaces the old exit
            return 0;
        }
    if (node->edge_count >= FLOW_MAX_EDGES)
        return -1;
    strcpy (node->edges[node->edge_count].action, action);
    node->edges[node->edge_count].to = t;
    node->edge_count++;
    return 0;
}

int
flow_set_start (flow_t *self, const char *name)
{
    assert (self);
    int index = s_find (self, name);
    if (index < 0)
        return -1;
    self->start = index;
    return 0;
}

void
flow_set_guard (flow_t *self, bool (*guard) (void *shared, const char *node))
{
    assert (self);
    self->guard = guard;
}

//  Runs exec with retries, then the fallback. Returns 0 if the node has a
//  result to post, -1 if it ended in error.
static int
s_exec_node (node_t *node, void *shared)
{
    const flow_node_ops_t *ops = node->ops;
    for (unsigned attempt = 0; attempt <= ops->max_retries; attempt++) {
        node->stats.attempts++;
        if (attempt > 0)
            node->stats.retries++;
        if (ops->exec (shared, node->ctx) == 0)
            return 0;
        plog_debug ("flow: node %s attempt %u of %u failed", node->name,
                    attempt + 1, ops->max_retries + 1);
    }
    if (ops->fallback) {
        node->stats.fallbacks++;
        if (ops->fallback (shared, node->ctx) == 0)
            return 0;
    }
    return -1;
}

//  Enters one node; returns the action it chose (never NULL).
static const char *
s_run_node (node_t *node, void *shared)
{
    node->stats.runs++;
    if (node->ops->prep && node->ops->prep (shared, node->ctx) != 0) {
        node->stats.errors++;
        return "error";
    }
    if (s_exec_node (node, shared) != 0) {
        node->stats.errors++;
        plog_warn ("flow: node %s failed after %u attempt(s)", node->name,
                   node->ops->max_retries + 1);
        return "error";
    }
    const char *action = node->ops->post? node->ops->post (shared, node->ctx): NULL;
    return action && *action? action: "default";
}

static int
s_next (node_t *node, const char *action)
{
    for (size_t i = 0; i < node->edge_count; i++)
        if (streq (node->edges[i].action, action))
            return node->edges[i].to;
    return -1;
}

const char *
flow_next (flow_t *self, const char *from, const char *action)
{
    assert (self && from && action);
    int f = s_find (self, from);
    if (f < 0)
        return NULL;
    int t = s_next (&self->nodes [f], action);
    return t < 0 ? NULL : self->nodes [t].name;
}

const char *
flow_run (flow_t *self, void *shared)
{
    assert (self);
    int current = self->start;
    const char *action = "end";
    self->last_node = -1;
    while (current >= 0) {
        node_t *node = &self->nodes[current];
        if (self->guard && !self->guard (shared, node->name)) {
            action = "stopped";
            break;
        }
        self->transitions++;
        self->last_node = current;
        action = s_run_node (node, shared);
        current = s_next (node, action);
    }
    snprintf (self->result, sizeof (self->result), "%s", action);
    return self->result;
}

bool
flow_node_stats (flow_t *self, const char *name, flow_node_stats_t *stats)
{
    assert (self);
    assert (stats);
    int index = s_find (self, name);
    if (index < 0)
        return false;
    *stats = self->nodes[index].stats;
    return true;
}

const char *
flow_last_node (flow_t *self)
{
    assert (self);
    return self->last_node >= 0? self->nodes[self->last_node].name: NULL;
}

uint64_t
flow_transitions (flow_t *self)
{
    assert (self);
    return self->transitions;
}
