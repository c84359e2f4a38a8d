/*  brokerlink_session - the handshake half of brokerlink: a fresh DEALER,
    HELLO, WELCOME parsed, the SUB socket (re)connected to the PUB endpoint
    WELCOME names, and the channels re-LISTENed, retried with exponential
    backoff until the broker answers or the stop flag is raised. Requests,
    events and keepalive are in brokerlink.c.
*/
#include <assert.h>
#include <czmq.h>
#include <errno.h>
#include <sys/stat.h>
#include "brokerlink_int.h"
#include "pclock.h"
#include "pcurve.h"
#include "plog.h"

//  Sleeps up to ms in slices, returning early when stopped.
static void
s_nap (brokerlink_t *self, int64_t ms)
{
    int64_t until = pclock_mono_ms () + ms;
    while (!brokerlink_stopped (self)) {
        int64_t left = until - pclock_mono_ms ();
        if (left <= 0)
            break;
        pclock_sleep_ms (left < POLL_SLICE_MS? left: POLL_SLICE_MS);
    }
}

static int
s_open_dealer (brokerlink_t *self)
{
    brokerlink_close_dealer (self);
    self->dealer = zsock_new (ZMQ_DEALER);
    if (!self->dealer)
        return -1;
    zsock_set_linger (self->dealer, 0);
    zsock_set_maxmsgsize (self->dealer, PROTO_MAX_FRAME);
    char why[512];
    if (pcurve_client (self->dealer, self->curve_key, self->curve_server_key, why, sizeof (why))) {
        plog_error ("%s", why);
        zsock_destroy (&self->dealer);
        return -1;
    }
    if (zsock_connect (self->dealer, "%s", self->endpoint) != 0) {
        plog_error ("cannot connect to %s: %s", self->endpoint, zmq_strerror (zmq_errno ()));
        zsock_destroy (&self->dealer);
        return -1;
    }
    return 0;
}

static void
s_parse_welcome (brokerlink_t *self, pmsg_t *msg)
{
    brokerlink_welcome_t *w = &self->welcome;
    memset (w, 0, sizeof (*w));
    pmsg_strcpy (msg, "pub", w->pub, sizeof (w->pub));
    pmsg_strcpy (msg, "tap", w->tap, sizeof (w->tap));
    w->heartbeat_ms = pmsg_uint (msg, "heartbeat_ms", 1000);
    w->liveness_ms = pmsg_uint (msg, "liveness_ms", 5000);
    w->max_body = pmsg_uint (msg, "max_body", PROTO_MAX_BODY);
    w->max_batch = pmsg_uint (msg, "max_batch", PROTO_MAX_BATCH);
    w->acked = pmsg_uint (msg, "acked", 0);
    w->mail_seq = pmsg_uint (msg, "mail_seq", 0);
    w->state_seq = pmsg_uint (msg, "state_seq", 0);
    const msgpack_object *world = pmsg_field (msg, "world");
    if (world && world->type == MSGPACK_OBJECT_MAP) {
        if (!pobj_strcpy (world, "kind", w->world_kind, sizeof (w->world_kind)))
            strcpy (w->world_kind, "line");
        w->world_width = pobj_uint (world, "width", 0);
        w->world_height = pobj_uint (world, "height", 1);
        w->objects_total = pobj_uint (world, "objects_total", 0);
        w->explored = pobj_uint (world, "explored", 0);
        w->coverage = pobj_num (world, "coverage", 0);
        w->done = pobj_bool (world, "done", false);
    }
    else
        strcpy (w->world_kind, "line");
}

//  (Re)connects the SUB socket to the PUB endpoint WELCOME named.
static void
s_open_sub (brokerlink_t *self)
{
    if (!*self->welcome.pub)
        return;
    if (self->sub && streq (self->sub_endpoint, self->welcome.pub))
        return;
    zsock_destroy (&self->sub);
    self->sub = zsock_new (ZMQ_SUB);
    zsock_set_linger (self->sub, 0);
    zsock_set_maxmsgsize (self->sub, PROTO_MAX_FRAME);
    char topic[PROTO_MAX_NAME + 8];
    snprintf (topic, sizeof (topic), "mail.%s", self->agent);
    zsock_set_subscribe (self->sub, topic);
    zsock_set_subscribe (self->sub, "world.");
    char why[512];
    if (pcurve_client (self->sub, self->curve_key, self->curve_server_key, why, sizeof (why)))
        plog_warn ("events: %s", why);
    if (zsock_connect (self->sub, "%s", self->welcome.pub) != 0) {
        plog_warn ("cannot connect events to %s; polling mail instead", self->welcome.pub);
        zsock_destroy (&self->sub);
        return;
    }
    snprintf (self->sub_endpoint, sizeof (self->sub_endpoint), "%s", self->welcome.pub);
}

//  One LISTEN on the hello encoder (used during the handshake).
static int
s_listen_raw (brokerlink_t *self, const char *channel)
{
    uint64_t id = self->next_id++;
    penc_begin (&self->hello, PMSG_LISTEN, id, 1);
    penc_kv_cstr (&self->hello, "channel", channel);
    pmsg_t *reply;
    if (brokerlink_exchange (self, &self->hello, id, &reply) != 0)
        return -1;
    int rc = pmsg_type (reply) == PMSG_OK? 0: -1;
    pmsg_destroy (&reply);
    return rc;
}

//  Keeps the resume token WELCOME carries (plain mode), in the token file
//  too (written whole, then renamed), so a restart takes the id at once.
static void
s_keep_token (brokerlink_t *self, pmsg_t *welcome)
{
    char token[PROTO_MAX_NAME + 1];
    if (!pmsg_strcpy (welcome, "token", token, sizeof (token)) || streq (token, self->token))
        return;
    snprintf (self->token, sizeof (self->token), "%s", token);
    if (!self->token_file)
        return;
    char tmp[1100];
    snprintf (tmp, sizeof (tmp), "%s.tmp", self->token_file);
    mode_t old = umask (077);
    FILE *file = fopen (tmp, "w");
    umask (old);
    bool ok = file && fprintf (file, "%s\n", token) > 0;
    ok = file && fclose (file) == 0 && ok;
    if (!ok || rename (tmp, self->token_file) != 0) {
        plog_warn ("cannot keep the resume token in %s: %s", self->token_file, strerror (errno));
        unlink (tmp);
    }
}

//  One HELLO attempt on a fresh socket. 0 ok, -1 retry, -2 stopped,
//  -3 refused for good.
static int
s_hello_once (brokerlink_t *self, char *err, size_t err_size)
{
    if (s_open_dealer (self) != 0)
        return -1;
    uint64_t id = self->next_id++;
    penc_begin (&self->hello, PMSG_HELLO, id, self->token[0]? 3: 2);
    penc_kv_cstr (&self->hello, "agent", self->agent);
    penc_key (&self->hello, "caps");
    msgpack_pack_array (penc_packer (&self->hello), self->cap_count);
    for (size_t i = 0; i < self->cap_count; i++)
        penc_cstr (&self->hello, self->caps[i]);
    if (self->token[0])
        penc_kv_cstr (&self->hello, "token", self->token);
    pmsg_t *reply;
    int rc = brokerlink_exchange (self, &self->hello, id, &reply);
    if (rc != 0)
        return rc;
    if (pmsg_type (reply) == PMSG_WELCOME) {
        s_keep_token (self, reply);
        s_parse_welcome (self, reply);
        pmsg_destroy (&reply);
        self->session = true;
        self->epoch++;
        self->stats.hellos++;
        s_open_sub (self);
        for (size_t i = 0; i < self->channel_count; i++)
            if (s_listen_raw (self, self->channels[i]) != 0)
                plog_warn ("could not listen to %s again", self->channels[i]);
        return 0;
    }
    brokerlink_error_text (reply, err, err_size);
    uint64_t code = pmsg_uint (reply, "code", 0);
    pmsg_destroy (&reply);
    if (code == PERR_BAD_NAME || code == PERR_RESERVED_NAME || code == PERR_TOO_MANY_AGENTS
    ||  code == PERR_BAD_FIELD || code == PERR_UNAUTHORIZED)
        return -3;
    return -1;
}

//  HELLO until it works, with exponential backoff. 0, -2 stopped, -3 refused.
int
brokerlink_ensure_session (brokerlink_t *self, char *err, size_t err_size)
{
    int64_t backoff = 100;
    while (!self->session) {
        if (brokerlink_stopped (self))
            return -2;
        int rc = s_hello_once (self, err, err_size);
        if (rc == 0) {
            if (self->epoch > 1)
                plog_info ("reconnected to broker %s (session %" PRIu64 ")",
                           self->endpoint, self->epoch);
            return 0;
        }
        if (rc <= -2)
            return rc;
        brokerlink_close_dealer (self);
        self->stats.hello_failures++;
        if (self->stats.hello_failures == 1 || self->stats.hello_failures % 10 == 0)
            plog_warn ("broker %s not answering HELLO%s%s; retrying", self->endpoint,
                       *err? ": ": "", err);
        s_nap (self, backoff);
        backoff = backoff * 2 > self->backoff_max_ms? self->backoff_max_ms: backoff * 2;
    }
    return 0;
}

int
brokerlink_connect (brokerlink_t *self, char *err, size_t err_size)
{
    assert (self);
    *err = 0;
    self->session = false;
    return brokerlink_ensure_session (self, err, err_size) == 0? 0: -1;
}
