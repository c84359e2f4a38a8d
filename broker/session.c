// SPDX-License-Identifier: MIT
/*  session - an agent's connection going away: BYE, expiry, unroutable,
    the connection closing (conn_watch.h).

    The registry (agents.c) only maps ids and connections; this file adds the
    broker-side consequences: the AGENT_EVENT on PUB, the log line, and
    forgetting an agent (OP_FORGET, within the caller's call). The
    liveness sweep runs on a timer (a quarter of --liveness-ms, at most once
    a second), so expiry costs O(agents) a few times a second and nothing
    per message. The same sweep forgets agents offline longer than
    --forget-after-ms (when set): without it a registration, and the mail
    queued for it, would stay until the broker stops.
*/
#include <assert.h>

#include "broker_internal.h"
#include "pclock.h"
#include "plog.h"

void
session_detach (broker_t *self, agent_t *agent, const char *event)
{
    if (!agent->online)
        return;
    agents_detach (self->agents, agent);
    agent->offline_since_ms = self->now_ms;
    //  Its parked SEND is applied now; SENDs waiting for its inbox stop
    //  waiting (an offline inbox is not waited for).
    parking_agent_gone (self, agent);
    plog_info ("agent %s %s (%zu messages queued)", agent->id, event,
               mailbox_count (agent->inbox));
    publish_agent_event (self, agent, event);
    turns_on_detach (self, agent, event);
}

void
session_forget (broker_t *self, agent_t **agent_p)
{
    agent_t *agent = *agent_p;
    assert (agent && !agent->online);
    parking_agent_gone (self, agent);
    plog_info ("agent %s forgotten (%zu messages released)", agent->id,
               mailbox_count (agent->inbox));
    mailroom_unmark_push (self->mailroom, agent);
    op_t op = { .kind = OP_FORGET };
    call_apply (self, &op, NULL);
    *agent_p = NULL;
}

void
session_end_closed (broker_t *self)
{
    int fd;
    while ((fd = conn_watch_next (self->conn_watch)) != -1) {
        if (fd < 0)
            continue;
        self->counters.closed++;
        observers_drop_fd (self->observers, fd);
        stall_drop_fd (self, fd);
        peers_forget (self->router_peers, fd);
        //  O(agents) per closed connection: closes are rare next to
        //  requests, and this keeps no index to maintain per HELLO/BYE.
        for (size_t i = 0; i < agents_size (self->agents); i++) {
            agent_t *agent = agents_at (self->agents, i);
            if (agent->online && agent->conn_fd == fd) {
                session_detach (self, agent, "disconnected");
                break;
            }
        }
    }
}

int
session_on_closed (zloop_t *loop, zsock_t *reader, void *arg)
{
    broker_t *self = arg;
    self->now_ms = pclock_mono_ms ();
    session_end_closed (self);
    //  The departures' events (and a workflow failed by one) leave now.
    return dispatch_release (self) ? 0 : -1;
}

int
session_on_sweep (zloop_t *loop, int timer_id, void *arg)
{
    broker_t *self = arg;
    int64_t now = pclock_mono_ms ();
    self->now_ms = now;
    int64_t forget_after = (int64_t) self->config.forget_after_ms;
    for (size_t i = 0; i < agents_size (self->agents); ) {
        agent_t *agent = agents_at (self->agents, i);
        if (agent->online && now - agent->last_seen_ms > (int64_t) self->config.liveness_ms)
            session_detach (self, agent, "expired");
        if (forget_after > 0 && !agent->online && now - agent->offline_since_ms > forget_after) {
            //  Its record first: a full disk keeps it registered, to be
            //  forgotten at a later sweep.
            call_begin (self, agent->id, NULL, NULL, 0, 0);
            if (!call_reserve (self, 0)) {
                call_end (self);
                i++;
                continue;
            }
            publish_agent_event (self, agent, "forgotten");
            session_forget (self, &agent);
            call_end (self);
            self->counters.forgotten++;
            continue;           //  swap-removed: index i holds another agent now
        }
        i++;
    }
    return dispatch_release (self) ? 0 : -1;
}
