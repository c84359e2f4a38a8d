/*  brokerlink - the agent's connection to parley-broker: requests (send,
    wait for the reply by id, resend over reconnects), events, keepalive.
    See brokerlink.h; the handshake (HELLO, WELCOME, re-LISTEN, backoff)
    is in brokerlink_session.c.

    Three encoders: `enc` for the caller's request, `aux` for requests the
    link makes on its own (HEARTBEAT, LISTEN, BYE) and `hello` for the
    handshake, which can run in the middle of either of the others (a
    reconnect during a resend) without clobbering the frame being resent.
*/
#include <assert.h>
#include <czmq.h>
#include "brokerlink_int.h"
#include "pclock.h"
#include "plog.h"

brokerlink_t *
brokerlink_new (const char *endpoint, const char *agent_id)
{
    assert (endpoint && agent_id);
    brokerlink_t *self = (brokerlink_t *) zmalloc (sizeof (brokerlink_t));
    snprintf (self->endpoint, sizeof (self->endpoint), "%s", endpoint);
    snprintf (self->agent, sizeof (self->agent), "%s", agent_id);
    penc_init (&self->enc);
    penc_init (&self->aux);
    penc_init (&self->hello);
    penc_init (&self->keepalive);
    self->request_ms = 3000;
    self->backoff_max_ms = 2000;
    self->next_id = 1;
    //  SEND batch ids start from the wall clock in microseconds: the
    //  broker keeps the agent's last batch id across reconnects, so a
    //  restarted agent must not start where its previous run ended (a
    //  counter from 1 could repeat the old last id, and that SEND would be
    //  taken for a resend and not posted). An earlier run that started at
    //  T0 and sent n batches ended at T0 + n, below now as long as it sent
    //  less than one SEND per microsecond, which a request/reply round trip
    //  guarantees. Only a wall clock stepped back by more than the previous
    //  run's length could collide; it would cost one SEND.
    self->next_batch = (uint64_t) pclock_wall_us ();
    return self;
}

void
brokerlink_close_dealer (brokerlink_t *self)
{
    zsock_destroy (&self->dealer);
    self->session = false;
}

void
brokerlink_destroy (brokerlink_t **self_p)
{
    assert (self_p);
    brokerlink_t *self = *self_p;
    if (self) {
        brokerlink_close_dealer (self);
        zsock_destroy (&self->sub);
        for (size_t i = 0; i < self->cap_count; i++)
            free (self->caps[i]);
        free (self->curve_key);
        free (self->curve_server_key);
        free (self->token_file);
        penc_fini (&self->enc);
        penc_fini (&self->aux);
        penc_fini (&self->hello);
        penc_fini (&self->keepalive);
        free (self);
        *self_p = NULL;
    }
}

void
brokerlink_set_security (brokerlink_t *self, const char *curve_key,
                         const char *curve_server_key, const char *token_file)
{
    assert (self);
    free (self->curve_key);
    free (self->curve_server_key);
    free (self->token_file);
    self->curve_key = curve_key && *curve_key? strdup (curve_key): NULL;
    self->curve_server_key = curve_server_key && *curve_server_key? strdup (curve_server_key): NULL;
    self->token_file = token_file && *token_file? strdup (token_file): NULL;
    self->token[0] = 0;
    //  A token kept by an earlier run lets this one take its id over at once.
    FILE *file = self->token_file? fopen (self->token_file, "r"): NULL;
    if (file) {
        if (fgets (self->token, sizeof (self->token), file))
            self->token[strcspn (self->token, "\r\n")] = 0;
        else
            self->token[0] = 0;
        fclose (file);
    }
}

void
brokerlink_add_cap (brokerlink_t *self, const char *cap)
{
    assert (self && cap);
    if (self->cap_count < MAX_CAPS)
        self->caps[self->cap_count++] = strdup (cap);
}

void
brokerlink_set_timeout (brokerlink_t *self, int64_t request_ms, int64_t backoff_max_ms)
{
    assert (self);
    self->request_ms = request_ms > 0? request_ms: 3000;
    self->backoff_max_ms = backoff_max_ms > 0? backoff_max_ms: 2000;
}

void
brokerlink_set_stop (brokerlink_t *self, volatile sig_atomic_t *stop)
{
    assert (self);
    self->stop = stop;
}

bool
brokerlink_stopped (brokerlink_t *self)
{
    return self->stop && *self->stop;
}

//  One reply frame from the DEALER, decoded with the strict decoder (the
//  caller knows a frame is there, or waits for one). NULL when none came
//  or it did not decode: counted in bad_frames and logged.
pmsg_t *
brokerlink_recv_reply (brokerlink_t *self, bool nowait)
{
    zframe_t *frame = nowait? zframe_recv_nowait (self->dealer): zframe_recv (self->dealer);
    if (!frame)
        return NULL;
    perr_t code;
    uint64_t got_id;
    char why[256];
    pmsg_t *msg = pmsg_decode (zframe_data (frame), zframe_size (frame),
                               pwire_default_limits (), &code, &got_id, why, sizeof (why));
    zframe_destroy (&frame);
    if (!msg) {
        self->stats.bad_frames++;
        plog_warn ("bad reply from broker: %s", why);
    }
    return msg;
}

static int s_await (brokerlink_t *self, uint64_t id, int64_t until, pmsg_t **reply_p);

//  One send and the matching reply. 0 ok, -1 timeout or socket error,
//  -2 stopped. Replies with another id (late ones) are dropped.
int
brokerlink_exchange (brokerlink_t *self, penc_t *enc, uint64_t id, pmsg_t **reply_p)
{
    *reply_p = NULL;
    self->stats.requests++;
    if (zmq_send (zsock_resolve (self->dealer), penc_data (enc), penc_size (enc),
                  ZMQ_DONTWAIT) < 0)
        return -1;
    self->last_send_ms = pclock_mono_ms ();
    int64_t until = self->last_send_ms + self->request_ms;
    self->busy = true;
    int rc = s_await (self, id, until, reply_p);
    self->busy = false;
    return rc;
}

//  Waits for the reply carrying `id` until `until` (see brokerlink_exchange).
static int
s_await (brokerlink_t *self, uint64_t id, int64_t until, pmsg_t **reply_p)
{
    while (!brokerlink_stopped (self)) {
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0)
            return -1;
        zmq_pollitem_t item = { zsock_resolve (self->dealer), 0, ZMQ_POLLIN, 0 };
        if (zmq_poll (&item, 1, left < POLL_SLICE_MS? left: POLL_SLICE_MS) <= 0)
            continue;
        pmsg_t *msg = brokerlink_recv_reply (self, false);
        if (!msg)
            continue;
        if (pmsg_id (msg) == id) {
            *reply_p = msg;
            return 0;
        }
        pmsg_destroy (&msg);
    }
    return -2;
}

//  The request in `enc` (carrying `id`), resent over reconnects.
static pmsg_t *
s_request (brokerlink_t *self, penc_t *enc, uint64_t id, char *err, size_t err_size)
{
    *err = 0;
    self->lost = false;
    for (int attempt = 0; attempt < MAX_RESENDS; attempt++) {
        int rc = brokerlink_ensure_session (self, err, err_size);
        if (rc == -2)
            break;
        if (rc == -3) {
            self->lost = true;
            return NULL;
        }
        pmsg_t *reply;
        rc = brokerlink_exchange (self, enc, id, &reply);
        if (rc == -2)
            break;
        if (rc == 0 && pmsg_type (reply) == PMSG_ERROR
        &&  pmsg_uint (reply, "code", 0) == PERR_NOT_HELLO) {
            plog_info ("broker forgot us (NOT_HELLO); saying HELLO again");
            pmsg_destroy (&reply);
            brokerlink_close_dealer (self);
            continue;
        }
        if (rc == 0)
            return reply;
        self->stats.timeouts++;
        plog_warn ("no reply from broker in %" PRId64 " ms; reconnecting", self->request_ms);
        brokerlink_close_dealer (self);
    }
    if (brokerlink_stopped (self)) {
        self->lost = true;
        snprintf (err, err_size, "stopped");
    }
    else if (!*err)
        snprintf (err, err_size, "no reply after %d attempts", MAX_RESENDS);
    return NULL;
}

penc_t *
brokerlink_begin (brokerlink_t *self, pmsg_type_t type, size_t fields)
{
    assert (self);
    self->enc_id = self->next_id++;
    penc_begin (&self->enc, type, self->enc_id, fields);
    return &self->enc;
}

pmsg_t *
brokerlink_call (brokerlink_t *self, char *err, size_t err_size)
{
    assert (self);
    return s_request (self, &self->enc, self->enc_id, err, err_size);
}

bool
brokerlink_lost (brokerlink_t *self)
{
    assert (self);
    return self->lost;
}

uint64_t
brokerlink_next_batch (brokerlink_t *self)
{
    assert (self);
    return self->next_batch++;
}

pmsg_t *
brokerlink_simple (brokerlink_t *self, pmsg_type_t type, char *err, size_t err_size)
{
    brokerlink_begin (self, type, 0);
    return brokerlink_call (self, err, err_size);
}

static pmsg_t *
s_aux_simple (brokerlink_t *self, pmsg_type_t type, char *err, size_t err_size)
{
    self->aux_id = self->next_id++;
    penc_begin (&self->aux, type, self->aux_id, 0);
    return s_request (self, &self->aux, self->aux_id, err, err_size);
}

int
brokerlink_listen (brokerlink_t *self, const char *channel, char *err, size_t err_size)
{
    assert (self && channel);
    for (size_t i = 0; i < self->channel_count; i++)
        if (streq (self->channels[i], channel))
            return 0;
    if (!pmsg_name_valid (channel, strlen (channel))) {
        snprintf (err, err_size, "bad channel name '%.64s'", channel);
        return -1;
    }
    if (self->channel_count >= BROKERLINK_MAX_CHANNELS) {
        snprintf (err, err_size, "already listening to %d channels", BROKERLINK_MAX_CHANNELS);
        return -1;
    }
    self->aux_id = self->next_id++;
    penc_begin (&self->aux, PMSG_LISTEN, self->aux_id, 1);
    penc_kv_cstr (&self->aux, "channel", channel);
    pmsg_t *reply = s_request (self, &self->aux, self->aux_id, err, err_size);
    if (!reply)
        return -1;
    int rc = 0;
    if (pmsg_type (reply) != PMSG_OK) {
        brokerlink_error_text (reply, err, err_size);
        rc = -1;
    }
    else
        snprintf (self->channels[self->channel_count++], PROTO_MAX_NAME + 1, "%s", channel);
    pmsg_destroy (&reply);
    return rc;
}

static void
s_drain_events (brokerlink_t *self)
{
    while (self->sub && (zsock_events (self->sub) & ZMQ_POLLIN)) {
        zmsg_t *msg = zmsg_recv (self->sub);
        if (!msg)
            break;
        char *topic = zmsg_popstr (msg);
        if (topic && strncmp (topic, "mail.", 5) == 0) {
            self->stats.mail_wakeups++;
            self->mail_flag = true;
        }
        else
        if (topic && strncmp (topic, "world.", 6) == 0)
            self->stats.world_events++;
        free (topic);
        zmsg_destroy (&msg);
    }
}

void
brokerlink_tick (brokerlink_t *self)
{
    assert (self);
    if (!self->session)
        return;
    int64_t due = (int64_t) self->welcome.heartbeat_ms / 2;
    if (pclock_mono_ms () - self->last_send_ms < (due > 0? due: 500))
        return;
    char err[256];
    pmsg_t *reply = s_aux_simple (self, PMSG_HEARTBEAT, err, sizeof (err));
    pmsg_destroy (&reply);
}

//  Takes what the DEALER holds without waiting: the reply to our last
//  keepalive HEARTBEAT is matched by id (NOT_HELLO there means the broker
//  expired us: the session is dropped, and the next request says HELLO);
//  anything else is a late reply to a request we gave up on, dropped as
//  brokerlink_exchange drops it.
static void
s_drain_replies (brokerlink_t *self)
{
    while (self->dealer && (zsock_events (self->dealer) & ZMQ_POLLIN)) {
        pmsg_t *msg = brokerlink_recv_reply (self, true);
        if (!msg)
            continue;
        if (pmsg_id (msg) == self->keepalive_id && self->keepalive_id) {
            self->keepalive_id = 0;
            if (pmsg_type (msg) == PMSG_ERROR && pmsg_uint (msg, "code", 0) == PERR_NOT_HELLO) {
                plog_info ("broker forgot us (NOT_HELLO) during a wait; will say HELLO again");
                brokerlink_close_dealer (self);
            }
        }
        pmsg_destroy (&msg);
    }
}

void
brokerlink_keepalive (brokerlink_t *self)
{
    assert (self);
    if (self->busy || !self->session || !self->dealer)
        return;
    s_drain_events (self);
    s_drain_replies (self);
    if (!self->session)
        return;
    int64_t due = (int64_t) self->welcome.heartbeat_ms / 2;
    if (pclock_mono_ms () - self->last_send_ms < (due > 0? due: 500))
        return;
    //  Own encoder and id: the caller may be between a brokerlink_begin
    //  and its brokerlink_call, and `enc` must survive.
    self->keepalive_id = self->next_id++;
    penc_begin (&self->keepalive, PMSG_HEARTBEAT, self->keepalive_id, 0);
    if (zmq_send (zsock_resolve (self->dealer), penc_data (&self->keepalive),
                  penc_size (&self->keepalive), ZMQ_DONTWAIT) < 0)
        return;                 //  the next real request finds out why
    self->last_send_ms = pclock_mono_ms ();
    self->stats.keepalives++;
}

bool
brokerlink_wait (brokerlink_t *self, int64_t ms)
{
    assert (self);
    int64_t until = pclock_mono_ms () + ms;
    while (!brokerlink_stopped (self)) {
        s_drain_events (self);
        brokerlink_tick (self);
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0)
            break;
        int64_t slice = left < POLL_SLICE_MS? left: POLL_SLICE_MS;
        if (self->sub) {
            zmq_pollitem_t item = { zsock_resolve (self->sub), 0, ZMQ_POLLIN, 0 };
            zmq_poll (&item, 1, slice);
        }
        else
            pclock_sleep_ms (slice);
    }
    s_drain_events (self);
    return self->mail_flag;
}

bool
brokerlink_take_mail_flag (brokerlink_t *self)
{
    assert (self);
    s_drain_events (self);
    bool flag = self->mail_flag;
    self->mail_flag = false;
    return flag;
}

void
brokerlink_bye (brokerlink_t *self)
{
    assert (self);
    if (!self->session || !self->dealer)
        return;
    uint64_t id = self->next_id++;
    penc_begin (&self->aux, PMSG_BYE, id, 0);
    int64_t saved = self->request_ms;
    self->request_ms = 1000;
    pmsg_t *reply;
    brokerlink_exchange (self, &self->aux, id, &reply);
    pmsg_destroy (&reply);
    self->request_ms = saved;
    brokerlink_close_dealer (self);
}

const brokerlink_welcome_t *
brokerlink_welcome (brokerlink_t *self)
{
    return &self->welcome;
}

uint64_t
brokerlink_epoch (brokerlink_t *self)
{
    return self->epoch;
}

void
brokerlink_stats (brokerlink_t *self, brokerlink_stats_t *stats)
{
    assert (self && stats);
    *stats = self->stats;
}

void
brokerlink_error_text (const pmsg_t *reply, char *buf, size_t size)
{
    if (!reply || pmsg_type (reply) != PMSG_ERROR) {
        snprintf (buf, size, "unexpected reply %s",
                  reply? pmsg_type_name (pmsg_type (reply)): "(none)");
        return;
    }
    size_t len = 0;
    const char *text = pmsg_str (reply, "message", &len);
    snprintf (buf, size, "%s: %.*s", perr_name ((int) pmsg_uint (reply, "code", 0)),
              (int) (text? len: 0), text? text: "");
}
