/*  conn_mailbox - messages received. See conn_mailbox.h.

    Observations are produced from the batch once (observe marks it as
    reported), so the same message is never a new observation twice.
*/
#include <assert.h>
#include "conn_mailbox.h"
#include "plog.h"
#include "textbuf.h"

#define MAX_FETCHES 8           //  FETCH rounds per capture while mail is pending

typedef struct {
    brokerlink_t *link;
    mail_view_t batch[MAILBOX_MAX_BATCH];
    size_t count;
    bool reported;
    uint64_t last_seq;
    uint64_t epoch;
    uint64_t received, duplicates, dropped;
} mailbox_t;

static void
s_clear (mailbox_t *self)
{
    for (size_t i = 0; i < self->count; i++)
        zstr_free (&self->batch[i].text);
    self->count = 0;
    self->reported = false;
}

static int
s_feed (mailbox_t *self, uint64_t seq, const char *from, const char *to,
        const char *channel, const char *text, size_t len)
{
    if (seq != 0 && seq <= self->last_seq) {
        self->duplicates++;
        return 1;
    }
    if (seq > self->last_seq)
        self->last_seq = seq;
    self->received++;
    if (self->count >= MAILBOX_MAX_BATCH) {
        self->dropped++;
        return 2;
    }
    mail_view_t *m = &self->batch[self->count++];
    m->seq = seq;
    snprintf (m->from, sizeof (m->from), "%s", from? from: "?");
    snprintf (m->to, sizeof (m->to), "%s", to? to: "");
    snprintf (m->channel, sizeof (m->channel), "%s", channel? channel: "");
    if (len > MAILBOX_MAX_TEXT)
        m->text = zsys_sprintf ("%.*s...", MAILBOX_MAX_TEXT, text);
    else
        m->text = zsys_sprintf ("%.*s", (int) len, text);
    return 0;
}

//  Copies a str field of a mail item into buf ("" if absent).
static void
s_copy (const msgpack_object *item, const char *name, char *buf, size_t size)
{
    if (!pobj_strcpy (item, name, buf, size))
        buf[0] = 0;
}

static void
s_feed_items (mailbox_t *self, const pmsg_t *mail)
{
    const msgpack_object *items = pmsg_field (mail, "messages");
    if (!items || items->type != MSGPACK_OBJECT_ARRAY)
        return;
    for (uint32_t i = 0; i < items->via.array.size; i++) {
        const msgpack_object *item = &items->via.array.ptr[i];
        char from[PROTO_MAX_NAME + 1], to[PROTO_MAX_NAME + 1], channel[PROTO_MAX_NAME + 1];
        s_copy (item, "from", from, sizeof (from));
        s_copy (item, "to", to, sizeof (to));
        s_copy (item, "channel", channel, sizeof (channel));
        size_t len = 0;
        const char *body = pobj_str (item, "body", &len);
        s_feed (self, pobj_uint (item, "seq", 0), from, to, channel, body? body: "", len);
    }
}

//  A new session on a restarted broker restarts its mail counter.
static void
s_check_epoch (mailbox_t *self)
{
    uint64_t epoch = brokerlink_epoch (self->link);
    if (epoch == self->epoch)
        return;
    const brokerlink_welcome_t *w = brokerlink_welcome (self->link);
    if (self->epoch != 0 && w->mail_seq < self->last_seq) {
        plog_info ("broker mail counter restarted (%" PRIu64 " < %" PRIu64 "); resetting",
                   w->mail_seq, self->last_seq);
        self->last_seq = w->acked;
    }
    self->epoch = epoch;
}

static int
s_capture (void *impl, char *err, size_t err_size)
{
    mailbox_t *self = (mailbox_t *) impl;
    s_clear (self);
    if (!self->link)
        return 0;
    brokerlink_take_mail_flag (self->link);
    for (int round = 0; round < MAX_FETCHES; round++) {
        s_check_epoch (self);
        penc_t *enc = brokerlink_begin (self->link, PMSG_FETCH, 1);
        penc_kv_uint (enc, "ack", self->last_seq);
        pmsg_t *reply = brokerlink_call (self->link, err, err_size);
        if (!reply)
            return -1;
        if (pmsg_type (reply) != PMSG_MAIL) {
            brokerlink_error_text (reply, err, err_size);
            pmsg_destroy (&reply);
            return -1;
        }
        s_check_epoch (self);
        s_feed_items (self, reply);
        uint64_t pending = pmsg_uint (reply, "pending", 0);
        pmsg_destroy (&reply);
        if (pending == 0)
            break;
    }
    return 0;
}

static void
s_observe (void *impl, const char *id, zlistx_t *out)
{
    mailbox_t *self = (mailbox_t *) impl;
    if (self->reported)
        return;
    for (size_t i = 0; i < self->count; i++) {
        const mail_view_t *m = &self->batch[i];
        char *text = *m->channel
            ? zsys_sprintf ("In %s, from %s: %s", m->channel, m->from, m->text)
            : zsys_sprintf ("From %s: %s", m->from, m->text);
        zlistx_add_end (out, observation_new_text (id, "mail.message", text));
        free (text);
    }
    self->reported = true;
}

//  Built with a textbuf: a step can bring tens of posts, and appending
//  with sprintf ("%s%s") copied the whole text per post.
static char *
s_render (void *impl)
{
    mailbox_t *self = (mailbox_t *) impl;
    textbuf_t *buf = textbuf_new ();
    textbuf_add (buf, "Communication information:");
    if (self->count == 0) {
        textbuf_add (buf, "\nNo messages from other agents.");
        return textbuf_detach (&buf);
    }
    for (size_t i = 0; i < self->count; i++) {
        const mail_view_t *m = &self->batch[i];
        if (!*m->channel)
            textbuf_addf (buf, "\nFrom %s:\n    %s", m->from, m->text);
    }
    //  Channels in order of first appearance, each with its posts.
    for (size_t i = 0; i < self->count; i++) {
        const char *channel = self->batch[i].channel;
        bool first = *channel != 0;
        for (size_t j = 0; first && j < i; j++)
            if (streq (self->batch[j].channel, channel))
                first = false;
        if (!first)
            continue;
        textbuf_addf (buf, "\nIn %s:", channel);
        for (size_t j = i; j < self->count; j++)
            if (streq (self->batch[j].channel, channel))
                textbuf_addf (buf, "\n    From %s: %s", self->batch[j].from, self->batch[j].text);
    }
    return textbuf_detach (&buf);
}

static void
s_destroy (void *impl)
{
    mailbox_t *self = (mailbox_t *) impl;
    s_clear (self);
    free (self);
}

static const connector_ops_t s_ops = {
    .capture = s_capture, .observe = s_observe, .render = s_render, .destroy = s_destroy
};

connector_t *
conn_mailbox_new (brokerlink_t *link)
{
    mailbox_t *self = (mailbox_t *) zmalloc (sizeof (mailbox_t));
    self->link = link;
    return connector_new ("mailbox", &s_ops, self);
}

void
conn_mailbox_begin (connector_t *self)
{
    s_clear ((mailbox_t *) connector_impl (self));
}

int
conn_mailbox_feed (connector_t *self, uint64_t seq, const char *from, const char *to,
                   const char *channel, const char *text, size_t len)
{
    assert (text);
    return s_feed ((mailbox_t *) connector_impl (self), seq, from, to, channel, text, len);
}

size_t
conn_mailbox_count (connector_t *self)
{
    return ((mailbox_t *) connector_impl (self))->count;
}

const mail_view_t *
conn_mailbox_at (connector_t *self, size_t index)
{
    mailbox_t *box = (mailbox_t *) connector_impl (self);
    return index < box->count? &box->batch[index]: NULL;
}

uint64_t
conn_mailbox_last_seq (connector_t *self)
{
    return ((mailbox_t *) connector_impl (self))->last_seq;
}

uint64_t
conn_mailbox_received (connector_t *self)
{
    return ((mailbox_t *) connector_impl (self))->received;
}

uint64_t
conn_mailbox_duplicates (connector_t *self)
{
    return ((mailbox_t *) connector_impl (self))->duplicates;
}

uint64_t
conn_mailbox_dropped (connector_t *self)
{
    return ((mailbox_t *) connector_impl (self))->dropped;
}
