// SPDX-License-Identifier: MIT
/*  agents - the registry: agent id <-> connection, liveness.

    An agent is registered by its first HELLO and stays registered (with its
    inbox and channel memberships) when its connection goes away, so mail for
    an agent that is briefly offline is kept (within the inbox bounds). Only
    BYE with `forget`, or --forget-after-ms offline (session.c), removes a
    registration.

    Two indexes: by id (owns the records) and by connection routing id (the
    ROUTER identity of the connection that said HELLO; binary, hashed as
    bytes). A dense array of all agents makes "all" fan-out and the liveness
    sweep a tight loop instead of a hash iteration.

    agent_t is a plain record: the handlers and the mailroom read and write
    its fields directly (inbox, acked position, wake-up flag).
*/
#ifndef PARLEY_BROKER_AGENTS_H
#define PARLEY_BROKER_AGENTS_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>
#include "pmsg.h"
#include "mailbox.h"
#include "replay.h"

//  A ROUTER routing id: at most 255 bytes (libzmq's rule).
typedef struct {
    uint8_t len;
    uint8_t bytes [255];
} conn_id_t;

typedef struct _agent_t agent_t;

//  Idempotency slots an agent has (op.h's slot_t).
#define AGENT_SLOTS 4

//  The model_* fields of HEARTBEAT and agent_info, in one order.
#define AGENTS_MODEL_FIELDS 9
extern const char *const agents_model_fields [AGENTS_MODEL_FIELDS];
struct _agent_t {
    char id [PROTO_MAX_NAME + 1];
    size_t id_len;
    conn_id_t conn;             //  valid while online
    uint64_t conn_serial;       //  that connection's handshake serial (auth.h)
    char token [33];            //  resume token (hex) issued at HELLO; "" none
    bool online;                //  has a live connection
    int64_t last_seen_ms;       //  monotonic
    int64_t offline_since_ms;   //  monotonic, when it was last detached
    zlistx_t *caps;             //  char * (owned)
    mailbox_t *inbox;           //  unacknowledged mail, seq order
    uint64_t acked;             //  everything <= acked is released
    uint64_t delivered;         //  highest seq a FETCH returned (ack clamp)
    uint64_t cursor;            //  stream position: last seq handed out since
                                //  the last plain FETCH (FETCH stream: true
                                //  continues after it); reset on attach
    zlistx_t *channels;         //  channel_t * it listens to (not owned)
    size_t index;               //  position in the registry's dense array
    bool wake_pending;          //  a MAIL_READY is due at the end of this turn
    uint64_t wake_seq;          //  newest seq queued for it
    //  Idempotent requests (replay.h), one slot per kind (op.h slot_t):
    //  the SENT answering the last SEND `batch` (forgotten by a SEND
    //  without one), the OBSERVATION answering the last ACT `step`
    //  (forgotten by a step-less ACT and a world reset), STEP's parts
    //  without the mail, and the WORKFLOW_INFO answering the last
    //  HANDOVER `turn`. Journaled (OP_REMEMBER): a retry after a restart
    //  is recognised.
    replay_t slots [AGENT_SLOTS];
    //  The model report of its last HEARTBEAT that had one (PROTOCOL.md,
    //  HEARTBEAT): kept as sent, listed by AGENTS. Bit i of model_mask
    //  says model[i] (named agents_model_fields[i]) was reported.
    uint64_t model [AGENTS_MODEL_FIELDS];
    uint32_t model_mask;
    int conn_fd;                //  descriptor of `conn` (conn_watch.h), -1 unknown
    //  For AGENTS: the `step` of its last ACT that moved (0: none had one),
    //  and the ACTs that moved (replays of a step not counted).
    uint64_t step;
    uint64_t acts;
    //  Pushed delivery (CONSUME, handle_consume.c, push.c). `credit` is
    //  the window in messages (0: no push subscription), `credit_bytes`
    //  in body bytes. out_count/out_bytes are what is handed out (by a
    //  push or a FETCH) and not acknowledged: exactly the inbox entries
    //  with seq <= cursor, kept as the cursor moves and as acks and
    //  drops pop the inbox (mailroom.c), so the credit check costs
    //  nothing per message.
    uint32_t credit;
    uint64_t credit_bytes;
    size_t out_count;
    uint64_t out_bytes;
    bool push_pending;          //  in the mailroom's push list this turn
    bool push_blocked;          //  its pipe was full: retried on a timer
};

typedef struct _agents_t agents_t;

agents_t *agents_new (size_t max_agents);
//  Destroys every record; their inboxes must already be empty.
void agents_destroy (agents_t **self_p);

//  The agent limit from now on (the core's limits); existing agents stay.
void agents_set_max (agents_t *self, size_t max_agents);
agent_t *agents_lookup (agents_t *self, const char *id);
agent_t *agents_by_conn (agents_t *self, const conn_id_t *conn);
//  Registers a new, offline agent; NULL when the agent limit is reached.
agent_t *agents_create (agents_t *self, const char *id);
//  Binds the agent to a connection (it must be offline) and marks it online.
void agents_attach (agents_t *self, agent_t *agent, const conn_id_t *conn, int64_t now_ms);
//  Marks it offline and forgets its connection; the registration stays.
void agents_detach (agents_t *self, agent_t *agent);
//  Removes the registration; its inbox must be empty and its channel list
//  too (the mailroom empties them first).
void agents_remove (agents_t *self, agent_t **agent_p);
//  Replaces the capability list with the strings of a msgpack array (may be NULL).
void agents_set_caps (agent_t *agent, const char *const *caps, const size_t *lens, size_t count);

size_t agents_size (agents_t *self);
size_t agents_online (agents_t *self);
size_t agents_max (agents_t *self);
agent_t *agents_at (agents_t *self, size_t index);
//  The dense array of all agents (agents_size long), valid until the next
//  create or remove: for loops over everyone ("all" fan-out).
agent_t *const *agents_array (agents_t *self);
//  Hex of a routing id, for logs and the tap ("peer" before HELLO).
void conn_id_hex (const conn_id_t *conn, char *buf, size_t size);
//  A zhashx keyed by connection: the key is a conn_id_t the value holds
//  (borrowed: never copied, never freed). NULL when out of memory.
zhashx_t *conn_id_index_new (void);
//  zhashx key hasher and comparator for conn_id_t keys.
size_t conn_id_hash (const void *key);
int conn_id_compare (const void *a, const void *b);

#endif
