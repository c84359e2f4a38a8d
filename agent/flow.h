/*  flow - a small node engine: nodes with prep / exec / post, wired by
    action strings.

    A node is a table of callbacks plus a context pointer:
      - prep (shared, ctx): reads what the node needs from the shared store.
        -1 stops the flow with the action "error" (nothing to retry: the
        input itself is missing).
      - exec (shared, ctx): does the work. -1 means "failed, try again": it
        is called up to 1 + max_retries times. Exec should only touch the
        node's own scratch area, so a retry starts clean.
      - fallback (shared, ctx): called once when every attempt failed. NULL,
        or -1 from it, makes the node's action "error".
      - post (shared, ctx): writes the result back to the shared store and
        returns the action string that picks the transition ("default",
        "continue", "end", ...). NULL means "default". Not called when the
        node ended in "error".

    Nodes know nothing of each other; flow_connect() wires them in one place.
    flow_run() starts at the start node and follows transitions until an
    action has no transition; that action is the flow's result. A loop
    (e.g. "continue" back to the first node) is fine: the nodes decide when
    to stop by returning an action that is not wired.

    The engine counts runs, attempts, retries and fallbacks per node, so
    tests and logs can see what happened without timing anything.
*/
#ifndef PARLEY_FLOW_H
#define PARLEY_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _flow_t flow_t;

typedef struct {
    int (*prep) (void *shared, void *ctx);
    int (*exec) (void *shared, void *ctx);
    int (*fallback) (void *shared, void *ctx);
    const char *(*post) (void *shared, void *ctx);
    unsigned max_retries;       //  extra exec attempts after the first
} flow_node_ops_t;

typedef struct {
    uint64_t runs;              //  times the node was entered
    uint64_t attempts;          //  exec calls
    uint64_t retries;           //  exec calls that were retries
    uint64_t fallbacks;         //  fallback calls
    uint64_t errors;            //  times the node ended in "error"
} flow_node_stats_t;

#define FLOW_MAX_NODES 32
#define FLOW_MAX_ACTION 64

flow_t *flow_new (void);
void flow_destroy (flow_t **self_p);

//  Adds a node; `ops` must outlive the flow. Returns the node's index
//  (>= 0), or -1 if the name is taken or FLOW_MAX_NODES is reached. The
//  first node added is the start node unless flow_set_start says otherwise.
int flow_add (flow_t *self, const char *name, const flow_node_ops_t *ops, void *ctx);

//  `from` --action--> `to`, by node name. -1 if either name is unknown or
//  the action is empty or longer than FLOW_MAX_ACTION.
int flow_connect (flow_t *self, const char *from, const char *action, const char *to);
int flow_set_start (flow_t *self, const char *name);

//  Optional: called before each node is entered; returning false stops the
//  flow with the action "stopped" (used for signals).
void flow_set_guard (flow_t *self, bool (*guard) (void *shared, const char *node));

//  Runs the flow; returns the last action (static storage inside the flow,
//  valid until the next run). "error" if a node failed without fallback and
//  no "error" transition exists.
const char *flow_run (flow_t *self, void *shared);

//  Where `action` leads from node `from`: the target node's name, or NULL
//  when `from` is unknown or has no such transition (the flow ends there).
//  Read-only; lets tests and tools check a wiring without running it.
const char *flow_next (flow_t *self, const char *from, const char *action);

//  Stats of a node by name; false if unknown.
bool flow_node_stats (flow_t *self, const char *name, flow_node_stats_t *stats);
//  Name of the node the last flow_run ended in, or NULL.
const char *flow_last_node (flow_t *self);
//  Total node entries over every run.
uint64_t flow_transitions (flow_t *self);

#endif
