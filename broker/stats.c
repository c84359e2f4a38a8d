// SPDX-License-Identifier: MIT
/*  stats - STATS_REPLY and the one-second message rates.

    Counters live where they are counted (mailroom, state, broker); this file
    only reads them. Rates are the difference over the last full second,
    taken by a one-second timer: cheap, and what PROTOCOL.md asks for
    ("messages/s over the last second").
*/
#include "broker_internal.h"
#include "pclock.h"
#include "pconfig.h"

void
stats_tick (broker_t *self)
{
    const mailroom_counters_t *mail = mailroom_counters (self->mailroom);
    int64_t now = pclock_mono_ms ();
    broker_counters_t *c = &self->counters;
    int64_t elapsed = now - c->rate_tick_ms;
    if (elapsed <= 0)
        return;
    c->rate_in = (double) (mail->accepted - c->last_in) * 1000.0 / (double) elapsed;
    c->rate_out = (double) (mail->fetched - c->last_out) * 1000.0 / (double) elapsed;
    c->last_in = mail->accepted;
    c->last_out = mail->fetched;
    c->rate_tick_ms = now;
}

#define STATS_FIELDS 44
#define STATS_JOURNAL_FIELDS 7      //  only from a broker that journals (--data-dir)

void
stats_encode (broker_t *self, uint64_t id)
{
    const mailroom_counters_t *mail = mailroom_counters (self->mailroom);
    state_stats_t state;
    state_stats (self->state, &state);
    journal_t *journal = durable_journal (self);
    penc_t *enc = &self->reply;
    penc_begin (enc, PMSG_STATS_REPLY, id,
                STATS_FIELDS + (journal ? STATS_JOURNAL_FIELDS : 0));
    penc_kv_uint (enc, "uptime_ms", (uint64_t) (pclock_mono_ms () - self->started_ms));
    penc_kv_uint (enc, "agents", agents_size (self->agents));
    penc_kv_uint (enc, "online", agents_online (self->agents));
    penc_kv_uint (enc, "channels", channels_size (mailroom_channels (self->mailroom)));
    penc_kv_uint (enc, "queued", mail->queued);
    penc_kv_uint (enc, "queued_bytes", mail->queued_bytes);
    penc_kv_uint (enc, "delivered", mail->delivered);
    penc_kv_uint (enc, "dropped", mail->dropped);
    penc_kv_uint (enc, "rejected", mail->rejected);
    penc_kv_uint (enc, "msgs_in", mail->accepted);
    penc_kv_uint (enc, "msgs_out", mail->fetched);
    penc_kv_num (enc, "rate_in", self->counters.rate_in);
    penc_kv_num (enc, "rate_out", self->counters.rate_out);
    penc_kv_uint (enc, "state_keys", state.keys);
    penc_kv_uint (enc, "state_bytes", state.bytes);
    penc_kv_uint (enc, "state_seq", state.seq);
    penc_kv_uint (enc, "mail_seq", mail->mail_seq);
    penc_kv_uint (enc, "errors", self->counters.errors);
    penc_kv_uint (enc, "bad_frames", self->counters.bad_frames);
    penc_kv_uint (enc, "unroutable", self->counters.unroutable);
    penc_kv_uint (enc, "requests", self->counters.requests);
    penc_kv_uint (enc, "tap_seq", tap_seq (self->tap));
    penc_kv_uint (enc, "forgotten", self->counters.forgotten);
    penc_kv_uint (enc, "unauthorized", self->counters.unauthorized);
    penc_kv_uint (enc, "auth_denied", auth_denied (self->auth));
    penc_kv_uint (enc, "replies_dropped", self->counters.replies_dropped);
    penc_kv_uint (enc, "replies_stalled", self->counters.replies_stalled);
    penc_kv_uint (enc, "replies_waiting", stall_replies (self->stall));
    penc_kv_uint (enc, "connections_cut", self->counters.connections_cut);
    penc_kv_uint (enc, "requests_stalled", stall_held (self->stall));
    penc_kv_uint (enc, "queued_memory", mail->queued_memory);
    penc_kv_uint (enc, "storage_errors", durable_storage_errors (self));
    penc_kv_cstr (enc, "version", PARLEY_VERSION);
    penc_kv_uint (enc, "sends_parked", self->counters.sends_parked);
    penc_kv_uint (enc, "send_wait_timeouts", self->counters.send_wait_timeouts);
    penc_kv_uint (enc, "sends_waiting", parking_waiting (self->parking));
    penc_kv_uint (enc, "requests_held", parking_held (self->parking));
    penc_kv_uint (enc, "requests_refused_held", self->counters.requests_refused_held);
    penc_kv_uint (enc, "confirms", self->counters.confirms);
    penc_kv_uint (enc, "pushed", mail->pushed);
    penc_kv_uint (enc, "push_frames", self->counters.push_frames);
    penc_kv_uint (enc, "push_deferred", self->counters.push_deferred);
    penc_kv_uint (enc, "consumers", push_consumers (self));
    //  The journal's own figures, as /metrics has them: a tool asking STATS
    //  can tell a journaling broker and how its disk use goes.
    if (journal) {
        journal_stats_t written;
        journal_stats (journal, &written);
        penc_kv_uint (enc, "journal_log_bytes", written.log_bytes);
        penc_kv_uint (enc, "journal_snapshot_bytes", written.snapshot_bytes);
        penc_kv_uint (enc, "journal_written_bytes", written.appended_bytes);
        penc_kv_uint (enc, "journal_compactions", written.compactions);
        penc_kv_uint (enc, "journal_write_errors", written.write_errors);
        penc_kv_uint (enc, "journal_sync_errors", written.sync_errors);
        penc_kv_uint (enc, "journal_healthy", durable_healthy (self) ? 1 : 0);
    }
    model_usage_encode (self, enc);
}
