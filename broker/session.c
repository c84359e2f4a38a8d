/*  session - an agent's connection going away: BYE, expiry, unroutable.

    The registry (agents.c) only maps ids and connections; this file adds the
    broker-side consequences: the AGENT_EVENT on PUB and the log line. The
    liveness sweep runs on a timer (a quarter of --liveness-ms, at most once
    a second), so expiry costs O(agents) a few times a second and nothing
    per message.
*/
#include "broker_internal.h"
#include "pclock.h"
#include "plog.h"

void
session_detach (broker_t *self, agent_t *agent, const char *event)
{
    if (!agent->online)
        return;
    agents_detach (self->agents, agent);
    plog_info ("agent %s %s (%zu messages queued)", agent->id, event,
               mailbox_count (agent->inbox));
    publish_agent_event (self, agent, event);
}

int
session_on_sweep (zloop_t *loop, int timer_id, void *arg)
{
    broker_t *self = arg;
    int64_t now = pclock_mono_ms ();
    self->now_ms = now;
    for (size_t i = 0; i < agents_size (self->agents); i++) {
        agent_t *agent = agents_at (self->agents, i);
        if (agent->online && now - agent->last_seen_ms > (int64_t) self->config.liveness_ms)
            session_detach (self, agent, "expired");
    }
    return self->stop ? -1 : 0;
}
