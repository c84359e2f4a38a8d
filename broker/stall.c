// SPDX-License-Identifier: MIT
/*  stall - refused replies kept, requests held behind them. See stall.h.

    One record per connection with something kept: a FIFO of replies
    (each one allocation, header and bytes) and a FIFO of held request
    frames, in a hash by connection and a list in the order connections
    stalled. What is slow: nothing on the request path when no connection
    is stalled (one check of a count); a retry walks the stalled
    connections, every STALL_RETRY_MS while there are any.
*/
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "broker_internal.h"
#include "pclock.h"
#include "plog.h"

typedef struct _s_item_t {
    struct _s_item_t *next;
    //  A reply: where it goes. A request: how it came.
    uint64_t serial;
    bool envelope;
    char agent [PROTO_MAX_NAME + 1];
    request_t req;              //  requests only (its pointers are not kept)
    size_t extra;
    size_t size;
    char data [];
} s_item_t;

typedef struct {
    conn_id_t conn;
    int fd;                     //  -1: not known yet
    s_item_t *replies, *replies_tail;
    s_item_t *held, *held_tail;
    size_t reply_count, held_count;
    uint64_t bytes;
} s_record_t;

struct _stall_t {
    zhashx_t *by_conn;          //  conn_id_t * -> s_record_t (not owned)
    zlistx_t *list;             //  the records, in the order they stalled (owned)
    size_t replies, held;
    uint64_t bytes;
    uint64_t conn_bytes, total_bytes;   //  the bounds
    int timer_id;               //  -1: none
};

static plog_limit_t s_cut_limit;


static void
s_items_free (s_item_t *item)
{
    while (item) {
        s_item_t *next = item->next;
        free (item);
        item = next;
    }
}

static void
s_record_destroy (void **item_p)
{
    s_record_t *record = *item_p;
    if (record) {
        s_items_free (record->replies);
        s_items_free (record->held);
        free (record);
        *item_p = NULL;
    }
}

stall_t *
stall_new (uint64_t conn_bytes, uint64_t total_bytes)
{
    stall_t *self = calloc (1, sizeof (stall_t));
    if (!self)
        return NULL;
    self->timer_id = -1;
    self->conn_bytes = conn_bytes ? conn_bytes : STALL_CONN_BYTES_DEFAULT;
    self->total_bytes = total_bytes ? total_bytes : STALL_TOTAL_BYTES_DEFAULT;
    self->by_conn = conn_id_index_new ();
    self->list = zlistx_new ();
    if (!self->by_conn || !self->list) {
        stall_destroy (&self);
        return NULL;
    }
    zlistx_set_destructor (self->list, s_record_destroy);
    return self;
}

void
stall_destroy (stall_t **self_p)
{
    stall_t *self = *self_p;
    if (self) {
        zhashx_destroy (&self->by_conn);
        zlistx_destroy (&self->list);
        free (self);
        *self_p = NULL;
    }
}

size_t stall_replies (stall_t *self) { return self->replies; }
size_t stall_held (stall_t *self) { return self->held; }
size_t stall_conns (stall_t *self) { return zlistx_size (self->list); }
uint64_t stall_bytes (stall_t *self) { return self->bytes; }

bool
stall_blocked (stall_t *self, const conn_id_t *conn)
{
    return zlistx_size (self->list) && zhashx_lookup (self->by_conn, conn);
}

static void
s_forget (stall_t *self, s_record_t *record)
{
    self->replies -= record->reply_count;
    self->held -= record->held_count;
    self->bytes -= record->bytes;
    zhashx_delete (self->by_conn, &record->conn);
    void *handle = zlistx_find (self->list, record);
    if (handle)
        zlistx_delete (self->list, handle);
}

//  Past a bound: the connection is shut down (libzmq closes it; its
//  session ends as for any closed connection) and what it had is dropped.
static void
s_cut (broker_t *broker, s_record_t *record, const char *why)
{
    stall_t *self = broker->stall;
    broker->counters.connections_cut++;
    broker->counters.replies_dropped += record->reply_count;
    plog_limited (&s_cut_limit, 5, PLOG_WARN, "a connection%s%s does not read its replies "
                  "(%zu kept, %zu requests held, %llu bytes): cut (%s)",
                  record->replies && record->replies->agent [0] ? " of " : "",
                  record->replies ? record->replies->agent : "", record->reply_count,
                  record->held_count, (unsigned long long) record->bytes, why);
    if (record->fd >= 0)
        shutdown (record->fd, SHUT_RDWR);
    s_forget (self, record);
}

static int s_on_timer (zloop_t *loop, int timer_id, void *arg);

static s_record_t *
s_record (broker_t *broker, const conn_id_t *conn)
{
    stall_t *self = broker->stall;
    s_record_t *record = zhashx_lookup (self->by_conn, conn);
    if (record)
        return record;
    record = calloc (1, sizeof *record);
    if (!record)
        return NULL;
    record->conn = *conn;
    record->fd = -1;
    zhashx_insert (self->by_conn, &record->conn, record);
    zlistx_add_end (self->list, record);
    if (self->timer_id < 0 && broker->loop)
        self->timer_id = zloop_timer (broker->loop, STALL_RETRY_MS, 0, s_on_timer, broker);
    return record;
}

//  True when `more` bytes still fit the bounds of `record`; else it is cut.
static bool
s_room (broker_t *broker, s_record_t *record, size_t more)
{
    stall_t *self = broker->stall;
    if (record->bytes + more > self->conn_bytes) {
        s_cut (broker, record, "past --max-client-backlog");
        return false;
    }
    if (self->bytes + more > self->total_bytes) {
        s_cut (broker, record, "past --max-backlog, for all slow readers together");
        return false;
    }
    return true;
}

//  The descriptor to cut the connection by, before any request of it was
//  held (which tells it): its agent's, when the reply is to the session
//  of that very connection. A connection whose replies overflow in the
//  turn that made them is then cut too, not only forgotten.
static void
s_learn_fd (broker_t *broker, s_record_t *record, uint64_t serial, const char *agent_id)
{
    if (record->fd >= 0 || !agent_id || !agent_id [0])
        return;
    agent_t *agent = agents_lookup (broker->agents, agent_id);
    if (agent && agent->online && agent->conn_serial == serial
    &&  conn_id_compare (&agent->conn, &record->conn) == 0)
        record->fd = agent->conn_fd;
}

void
stall_reply (broker_t *broker, const conn_id_t *conn, uint64_t serial, bool envelope,
             const char *agent, const void *data, size_t size)
{
    stall_t *self = broker->stall;
    s_record_t *record = s_record (broker, conn);
    if (record)
        s_learn_fd (broker, record, serial, agent);
    if (!record || !s_room (broker, record, size)) {
        broker->counters.replies_dropped++;
        return;
    }
    s_item_t *item = malloc (sizeof *item + size);
    if (!item) {
        broker->counters.replies_dropped++;
        return;
    }
    memset (item, 0, sizeof *item);
    item->serial = serial;
    item->envelope = envelope;
    snprintf (item->agent, sizeof item->agent, "%s", agent ? agent : "");
    item->size = size;
    memcpy (item->data, data, size);
    if (record->replies_tail)
        record->replies_tail->next = item;
    else
        record->replies = item;
    record->replies_tail = item;
    record->reply_count++;
    record->bytes += size;
    self->replies++;
    self->bytes += size;
    broker->counters.replies_stalled++;
}

bool
stall_hold (broker_t *broker, const conn_id_t *conn, const void *data, size_t size,
            size_t extra_frames, const request_t *req)
{
    stall_t *self = broker->stall;
    if (!zlistx_size (self->list))
        return false;
    s_record_t *record = zhashx_lookup (self->by_conn, conn);
    if (!record)
        return false;
    int fd = request_fd (req);
    if (fd >= 0)
        record->fd = fd;
    if (!s_room (broker, record, size))
        return true;
    s_item_t *item = malloc (sizeof *item + size);
    if (!item) {
        s_cut (broker, record, "out of memory");
        return true;
    }
    memset (item, 0, sizeof *item);
    item->req = *req;
    item->req.conn_fd = fd;             //  the message is gone when it is handled
    item->req.body = NULL;
    item->extra = extra_frames;
    item->size = size;
    memcpy (item->data, data, size);
    if (record->held_tail)
        record->held_tail->next = item;
    else
        record->held = item;
    record->held_tail = item;
    record->held_count++;
    record->bytes += size;
    self->held++;
    self->bytes += size;
    return true;
}

void
stall_drop_fd (broker_t *broker, int fd)
{
    stall_t *self = broker->stall;
    for (s_record_t *record = zlistx_first (self->list); record;
         record = zlistx_next (self->list))
        if (record->fd == fd) {
            broker->counters.replies_dropped += record->reply_count;
            s_forget (self, record);
            return;
        }
}

//  Sends what the record's pipe takes now, in order. True when every
//  kept reply has left.
static bool
s_drain_replies (broker_t *broker, s_record_t *record)
{
    stall_t *self = broker->stall;
    while (record->replies) {
        s_item_t *item = record->replies;
        int rc = dispatch_try_send (broker, &record->conn, item->serial, item->envelope,
                                    item->agent, item->data, item->size);
        if (rc == EAGAIN)
            return false;
        //  Sent, or the peer is gone (counted there): either way it leaves.
        record->replies = item->next;
        if (!record->replies)
            record->replies_tail = NULL;
        record->reply_count--;
        record->bytes -= item->size;
        self->replies--;
        self->bytes -= item->size;
        free (item);
    }
    return true;
}

//  Hands up to a turn's worth of held requests on, in order. Their
//  replies go out at the end of the turn (the outbox): if the pipe
//  refuses them, they are kept again and the rest waits for the next try.
static void
s_drain_held (broker_t *broker, s_record_t *record)
{
    stall_t *self = broker->stall;
    for (int i = 0; i < BROKER_DRAIN_BATCH && record->held && !record->replies; i++) {
        s_item_t *item = record->held;
        record->held = item->next;
        if (!record->held)
            record->held_tail = NULL;
        record->held_count--;
        record->bytes -= item->size;
        self->held--;
        self->bytes -= item->size;
        conn_id_t conn = record->conn;
        request_t req = item->req;
        dispatch_incoming (broker, &conn, item->data, item->size, item->extra, &req);
        free (item);
    }
}

static int
s_on_timer (zloop_t *loop, int timer_id, void *arg)
{
    broker_t *broker = arg;
    stall_t *self = broker->stall;
    broker->now_ms = pclock_mono_ms ();
    //  The connections as they are now: a drain may stall another one (or
    //  this one again), or cut one; each is looked up again before its turn.
    size_t count = zlistx_size (self->list), n = 0;
    conn_id_t *conns = malloc ((count ? count : 1) * sizeof (conn_id_t));
    for (s_record_t *record = conns ? zlistx_first (self->list) : NULL; record;
         record = zlistx_next (self->list))
        conns [n++] = record->conn;
    for (size_t i = 0; i < n; i++) {
        s_record_t *record = zhashx_lookup (self->by_conn, &conns [i]);
        if (!record || !s_drain_replies (broker, record))
            continue;
        s_drain_held (broker, record);
        //  Kept until its held requests are all handed on: a request that
        //  arrives meanwhile waits behind them.
        record = zhashx_lookup (self->by_conn, &conns [i]);
        if (record && !record->replies && !record->held)
            s_forget (self, record);
    }
    free (conns);
    if (!zlistx_size (self->list) && self->timer_id >= 0) {
        zloop_timer_end (loop, self->timer_id);
        self->timer_id = -1;
    }
    return dispatch_turn_end (broker);
}
