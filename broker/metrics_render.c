// SPDX-License-Identifier: MIT
/*  metrics_render - the Prometheus text page, written on the loop thread
    from the broker's live objects (metrics.h, metrics_http.h).

    What is slow: per-agent series are O(agents), capped at
    METRICS_MAX_AGENTS; the rest is a fixed ~1000 lines. A render of a full
    broker is a few hundred microseconds, paid only when someone scrapes.
    Counters of request types nobody sent are still written (0), so rate()
    works from the first scrape; error series only once an error happened
    (types x codes would be 2500 zero lines).
*/
#include "broker_internal.h"
#include "pclock.h"

#define GAUGE(name, help, value) do {                                            \
        metrics_text_family (text, name, "gauge", help);                         \
        metrics_text_printf (text, "%s %llu\n", name, (unsigned long long) (value)); \
    } while (0)
#define COUNTER(name, help, value) do {                                          \
        metrics_text_family (text, name, "counter", help);                       \
        metrics_text_printf (text, "%s %llu\n", name, (unsigned long long) (value)); \
    } while (0)

static const char *
s_type_label (size_t type)
{
    return type == METRICS_TYPE_INVALID ? "invalid" : pmsg_type_name ((pmsg_type_t) type);
}

static bool
s_is_request (size_t type)
{
    return type == METRICS_TYPE_INVALID || pmsg_type_kind ((pmsg_type_t) type) == PMSG_REQUEST;
}

static void
s_requests (broker_t *self, metrics_text_t *text)
{
    const metrics_t *m = &self->metrics;
    metrics_text_family (text, "parley_requests_total", "counter",
                         "Requests handled, by type (invalid: frames that did not decode).");
    for (size_t t = 0; t <= METRICS_TYPE_INVALID; t++)
        if (s_is_request (t))
            metrics_text_printf (text, "parley_requests_total{type=\"%s\"} %llu\n",
                                 s_type_label (t), (unsigned long long) m->requests [t]);
    metrics_text_family (text, "parley_request_errors_total", "counter",
                         "ERROR replies, by request type and error code.");
    for (size_t t = 0; t <= METRICS_TYPE_INVALID; t++)
        for (size_t code = 1; code < PERR__COUNT; code++)
            if (m->errors [t][code])
                metrics_text_printf (text,
                                     "parley_request_errors_total{type=\"%s\",code=\"%s\"} %llu\n",
                                     s_type_label (t), perr_name ((int) code),
                                     (unsigned long long) m->errors [t][code]);
    metrics_text_family (text, "parley_request_duration_seconds", "histogram",
                         "Time from a request's frame to its reply being ready "
                         "(decode, journal write, handler).");
    for (size_t t = 0; t <= METRICS_TYPE_INVALID; t++)
        if (s_is_request (t)) {
            char labels [64];
            snprintf (labels, sizeof labels, "type=\"%s\",", s_type_label (t));
            metrics_text_histogram (text, "parley_request_duration_seconds", labels,
                                    &m->latency [t]);
        }
}

static void
s_broker (broker_t *self, metrics_text_t *text)
{
    const broker_counters_t *c = &self->counters;
    const mailroom_counters_t *mail = mailroom_counters (self->mailroom);
    state_stats_t state;
    state_stats (self->state, &state);
    metrics_text_family (text, "parley_uptime_seconds", "gauge", "Seconds since the broker started.");
    metrics_text_printf (text, "parley_uptime_seconds %.3f\n",
                         (double) (pclock_mono_ms () - self->started_ms) / 1000.0);
    COUNTER ("parley_replies_total", "Replies sent.", c->replies);
    COUNTER ("parley_bad_frames_total", "Frames that failed to decode or were not requests.",
             c->bad_frames);
    COUNTER ("parley_unroutable_replies_total",
             "Replies not sent: the connection was gone or its pipe full.", c->unroutable);
    COUNTER ("parley_dropped_replies_total",
             "Replies lost with a connection cut for not reading them.", c->replies_dropped);
    COUNTER ("parley_stalled_replies_total",
             "Replies a client's full pipe refused at first; kept and sent later.",
             c->replies_stalled);
    COUNTER ("parley_cut_connections_total",
             "Connections cut for not reading their replies (past the broker's bound).",
             c->connections_cut);
    COUNTER ("parley_unauthorized_total",
             "Requests refused for their key's rights or resume token.", c->unauthorized);
    COUNTER ("parley_auth_denied_total", "Connections refused at the CURVE handshake.",
             auth_denied (self->auth));
    COUNTER ("parley_events_published_total", "Events published on the PUB socket.", c->published);
    GAUGE ("parley_connections", "Connections open on the ROUTER.",
           conn_watch_open (self->conn_watch));
    GAUGE ("parley_agents", "Registered agents, online or not.", agents_size (self->agents));
    GAUGE ("parley_agents_online", "Agents with a live connection.", agents_online (self->agents));
    COUNTER ("parley_agents_forgotten_total", "Agents forgotten after --forget-after-ms offline.",
             c->forgotten);
    GAUGE ("parley_channels", "Channels in use.", channels_size (mailroom_channels (self->mailroom)));
    GAUGE ("parley_queued_messages", "Messages queued (not yet released by every recipient).",
           mail->queued);
    GAUGE ("parley_queued_bytes", "Body bytes of the queued messages.", mail->queued_bytes);
    GAUGE ("parley_queued_memory_bytes",
           "Memory of the queued messages (bodies and bookkeeping; --max-queued-bytes).",
           mail->queued_memory);
    COUNTER ("parley_messages_accepted_total", "Messages accepted from senders.", mail->accepted);
    COUNTER ("parley_messages_fetched_total", "Mail items handed out, by FETCH or pushed.",
             mail->fetched);
    COUNTER ("parley_messages_pushed_total", "Mail items pushed to consumers (MAIL_PUSH).",
             mail->pushed);
    COUNTER ("parley_push_deferred_total",
             "Pushes a consumer's full pipe refused (tried again, nothing lost).",
             c->push_deferred);
    COUNTER ("parley_messages_delivered_total", "Inbox placements.", mail->delivered);
    COUNTER ("parley_messages_dropped_total",
             "Placements removed unread by --overflow drop-oldest.", mail->dropped);
    COUNTER ("parley_messages_rejected_total",
             "Items or placements refused (full, unknown recipient...).", mail->rejected);
    GAUGE ("parley_state_keys", "Shared-state keys.", state.keys);
    GAUGE ("parley_state_bytes", "Shared-state bytes clients wrote.", state.bytes);
    COUNTER ("parley_tap_frames_total", "Frames mirrored on the tap.", tap_seq (self->tap));
    COUNTER ("parley_sends_parked_total", "SENDs that waited for room in a full inbox.",
             c->sends_parked);
    COUNTER ("parley_send_wait_timeouts_total",
             "Parked SENDs applied at their wait_ms deadline (their full part INBOX_FULL).",
             c->send_wait_timeouts);
    GAUGE ("parley_sends_waiting", "SENDs parked now.", parking_waiting (self->parking));
    GAUGE ("parley_requests_held", "Requests held behind parked SENDs.",
           parking_held (self->parking));
    COUNTER ("parley_confirms_total", "CONFIRM frames sent for pipelined SENDs.", c->confirms);
}

static void
s_journal (broker_t *self, metrics_text_t *text)
{
    journal_t *journal = durable_journal (self);
    if (!journal)
        return;                 //  --data-dir none: nothing is written
    journal_stats_t stats;
    journal_stats (journal, &stats);
    metrics_histogram_t sync;
    journal_sync_latency (journal, &sync);
    metrics_text_family (text, "parley_journal_fsync_duration_seconds", "histogram",
                         "fdatasync of the journal's log by the --fsync policy.");
    metrics_text_histogram (text, "parley_journal_fsync_duration_seconds", "", &sync);
    COUNTER ("parley_journal_written_bytes_total", "Bytes appended to the journal's logs.",
             stats.appended_bytes);
    GAUGE ("parley_journal_log_bytes", "Size of the current log.", stats.log_bytes);
    GAUGE ("parley_journal_snapshot_bytes", "Size of the newest snapshot.", stats.snapshot_bytes);
    COUNTER ("parley_journal_compactions_total", "Compactions finished.", stats.compactions);
    COUNTER ("parley_journal_write_errors_total", "Appends that failed.", stats.write_errors);
    COUNTER ("parley_journal_sync_errors_total", "Syncs that failed.", stats.sync_errors);
    //  Read here, not through STATS: under --fsync always an unhealthy
    //  journal holds every answer, so a probe over the ROUTER gets none.
    GAUGE ("parley_journal_healthy",
           "1 while the journal writes and syncs; 0 after a failure, until a snapshot heals it.",
           stats.healthy ? 1 : 0);
    COUNTER ("parley_journal_heals_total",
             "Snapshots that made an unhealthy journal healthy again.", stats.heals);
    COUNTER ("parley_storage_errors_total",
             "Journal records that could not be written (a request answered ERROR STORAGE among them).",
             durable_storage_errors (self));
}

//  One family over the listed agents; `field` < 0 writes online instead.
static void
s_agent_family (broker_t *self, metrics_text_t *text, size_t listed, const char *name,
                const char *type, const char *help, int field, double scale)
{
    metrics_text_family (text, name, type, help);
    for (size_t i = 0; i < listed; i++) {
        agent_t *agent = agents_at (self->agents, i);
        if (field >= 0 && !(agent->model_mask & (1u << field)))
            continue;
        metrics_text_printf (text, "%s{agent=\"", name);
        metrics_text_label (text, agent->id);
        double value = field == -1 ? agent->online
                     : field == -2 ? (double) mailbox_count (agent->inbox)
                     : (double) agent->model [field] * scale;
        metrics_text_printf (text, "\"} %.17g\n", value);
    }
}

static void
s_agents (broker_t *self, metrics_text_t *text)
{
    size_t count = agents_size (self->agents);
    size_t listed = count < METRICS_MAX_AGENTS ? count : METRICS_MAX_AGENTS;
    GAUGE ("parley_agents_unlisted",
           "Agents beyond the per-agent series' limit (METRICS_MAX_AGENTS, in registration order).",
           count - listed);
    s_agent_family (self, text, listed, "parley_agent_online", "gauge",
                    "1 while the agent has a live connection.", -1, 1);
    s_agent_family (self, text, listed, "parley_agent_inbox_messages", "gauge",
                    "Unacknowledged messages in the agent's inbox.", -2, 1);
    metrics_text_family (text, "parley_agent_step", "gauge",
                         "The step number of the agent's last ACT that moved it.");
    for (size_t i = 0; i < listed; i++) {
        agent_t *agent = agents_at (self->agents, i);
        if (!agent->step)
            continue;
        metrics_text_printf (text, "parley_agent_step{agent=\"");
        metrics_text_label (text, agent->id);
        metrics_text_printf (text, "\"} %llu\n", (unsigned long long) agent->step);
    }
    //  The agent's own report (HEARTBEAT model_* fields): totals since it
    //  started, so counters; a restarted agent starts again from 0.
    static const struct {
        const char *name;
        const char *help;
        double scale;
    } s_model [AGENTS_MODEL_FIELDS] = {
        { "parley_agent_model_calls_total", "Model calls the agent reports.", 1 },
        { "parley_agent_model_ok_total", "Model calls that got an answer.", 1 },
        { "parley_agent_model_failed_total", "Model calls that got none.", 1 },
        { "parley_agent_model_skipped_total", "Decisions not sent: circuit open.", 1 },
        { "parley_agent_model_retries_total", "HTTP retries of model calls.", 1 },
        { "parley_agent_prompt_tokens_total", "Prompt tokens the model server reported.", 1 },
        { "parley_agent_completion_tokens_total",
          "Completion tokens the model server reported.", 1 },
        { "parley_agent_model_latency_seconds_total", "Sum of model call latencies.", 1e-3 },
        { NULL, NULL, 0 },      //  model_latency_max_ms: a gauge, below
    };
    for (int f = 0; f < AGENTS_MODEL_FIELDS; f++)
        if (s_model [f].name)
            s_agent_family (self, text, listed, s_model [f].name, "counter", s_model [f].help,
                            f, s_model [f].scale);
    s_agent_family (self, text, listed, "parley_agent_model_latency_max_seconds", "gauge",
                    "The agent's slowest model call.", AGENTS_MODEL_FIELDS - 1, 1e-3);
    model_usage_metrics (self, text);
}

void
metrics_render (broker_t *self, metrics_text_t *text)
{
    metrics_text_reset (text);
    s_requests (self, text);
    s_broker (self, text);
    s_journal (self, text);
    s_agents (self, text);
}

int
metrics_on_wanted (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    broker_t *self = arg;
    unsigned long generation = metrics_http_wanted (self->metrics_http);
    metrics_render (self, &self->metrics_page);
    metrics_http_publish (self->metrics_http, generation, &self->metrics_page);
    return 0;
}
