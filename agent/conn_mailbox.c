// SPDX-License-Identifier: MIT
/*  conn_mailbox - messages received. See conn_mailbox.h.

    Observations are produced from the batch once (observe marks it as
    reported), so the same message is never a new observation twice.

    The agent's STEP brings the next step's mail in its reply: Execution
    stages it (conn_mailbox_stage) and the next capture takes it without
    a request of its own. Without staged mail (the first step, a STEP that
    failed) capture FETCHes as below.

    Acknowledgement lags on purpose: a FETCH asks for at most what one
    step's view holds, so nothing is taken that the step cannot see, and
    acknowledges only `committed`, the position the agent declared safe
    (its memory holding the mail was saved). FETCHes use `stream` so new
    mail keeps coming while the acknowledgement lags; after a reconnect
    the broker starts again from the acknowledged position and the
    client's duplicate filter leaves out what this process already saw.
*/
#include <assert.h>
#include "conn_mailbox.h"
#include "plog.h"
#include "textbuf.h"

#define MAX_FETCHES 8           //  FETCH rounds per capture while mail is pending

typedef struct {
    parley_client_t *link;
    parley_mail_t *fetched;     //  FETCH's result, filled again every time
    mail_view_t batch[MAILBOX_MAX_BATCH];
    size_t count;
    mail_view_t staged[MAILBOX_MAX_BATCH];  //  for the next capture (conn_mailbox_stage)
    size_t staged_count;
    bool has_staged;
    bool reported;
    uint64_t last_seq;          //  highest seq handed to a step
    uint64_t committed;         //  acknowledged with the next FETCH
    uint64_t epoch;
    uint64_t origin;
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

static void
s_feed_items (mailbox_t *self, const parley_mail_t *mail)
{
    for (size_t i = 0; i < parley_mail_count (mail); i++) {
        const parley_message_t *m = parley_mail_at (mail, i);
        s_feed (self, parley_message_seq (m), parley_message_from (m), parley_message_to (m),
                parley_message_channel (m), (const char *) parley_message_body (m),
                parley_message_body_size (m));
    }
}

//  A new session on a restarted broker restarts its mail counter: the
//  positions go back to what WELCOME says we acknowledged.
static void
s_check_epoch (mailbox_t *self)
{
    uint64_t epoch = parley_client_epoch (self->link);
    if (epoch == self->epoch)
        return;
    const parley_welcome_t *w = parley_client_welcome (self->link);
    bool new_origin = parley_welcome_origin (w) != self->origin;
    self->origin = parley_welcome_origin (w);
    if (self->epoch != 0 && (new_origin || parley_welcome_mail_seq (w) < self->last_seq)) {
        uint64_t acked = parley_welcome_acked (w);
        plog_info ("broker mail counter restarted; the mailbox resumes at %" PRIu64, acked);
        self->last_seq = acked;
        self->committed = acked;
    }
    self->epoch = epoch;
}

static void
s_unstage (mailbox_t *self)
{
    for (size_t i = 0; i < self->staged_count; i++)
        zstr_free (&self->staged[i].text);
    self->staged_count = 0;
    self->has_staged = false;
}

static int
s_capture (void *impl, char *err, size_t err_size)
{
    mailbox_t *self = (mailbox_t *) impl;
    s_clear (self);
    if (self->has_staged) {
        //  The mail the step's STEP brought: no request of our own.
        for (size_t i = 0; i < self->staged_count; i++) {
            const mail_view_t *m = &self->staged[i];
            s_feed (self, m->seq, m->from, m->to, m->channel, m->text, strlen (m->text));
        }
        s_unstage (self);
        return 0;
    }
    if (!self->link)
        return 0;
    parley_client_take_mail (self->link);
    for (int round = 0; round < MAX_FETCHES && self->count < MAILBOX_MAX_BATCH; round++) {
        s_check_epoch (self);
        parley_err_t rc = parley_client_fetch (self->link, self->committed,
                                               MAILBOX_MAX_BATCH - self->count, true,
                                               &self->fetched);
        if (rc != PARLEY_OK) {
            snprintf (err, err_size, "%s: %s", parley_strerror (rc),
                      parley_client_error_text (self->link));
            return -1;
        }
        s_check_epoch (self);
        s_feed_items (self, self->fetched);
        if (parley_mail_pending (self->fetched) == 0)
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
    s_unstage (self);
    parley_mail_destroy (&self->fetched);
    free (self);
}

static const connector_ops_t s_ops = {
    .capture = s_capture, .observe = s_observe, .render = s_render, .destroy = s_destroy
};

connector_t *
conn_mailbox_new (parley_client_t *link)
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

void
conn_mailbox_commit (connector_t *self)
{
    mailbox_t *box = (mailbox_t *) connector_impl (self);
    box->committed = box->last_seq;
}

uint64_t
conn_mailbox_committed (connector_t *self)
{
    return ((mailbox_t *) connector_impl (self))->committed;
}

void
conn_mailbox_stage (connector_t *self, const parley_mail_t *mail)
{
    assert (mail);
    mailbox_t *box = (mailbox_t *) connector_impl (self);
    s_unstage (box);
    if (box->link)
        s_check_epoch (box);
    size_t count = parley_mail_count (mail);
    for (size_t i = 0; i < count && box->staged_count < MAILBOX_MAX_BATCH; i++) {
        const parley_message_t *m = parley_mail_at (mail, i);
        mail_view_t *v = &box->staged[box->staged_count++];
        v->seq = parley_message_seq (m);
        snprintf (v->from, sizeof (v->from), "%s", parley_message_from (m));
        snprintf (v->to, sizeof (v->to), "%s", parley_message_to (m));
        snprintf (v->channel, sizeof (v->channel), "%s", parley_message_channel (m));
        //  Cut as s_feed cuts; the text holds no NUL (a body with one is
        //  cut there, which s_feed's "%.*s" did too).
        size_t len = parley_message_body_size (m);
        v->text = zsys_sprintf ("%.*s", (int) (len > MAILBOX_MAX_TEXT + 3 ? MAILBOX_MAX_TEXT + 3
                                                                           : len),
                                (const char *) parley_message_body (m));
    }
    box->has_staged = true;
}

size_t
conn_mailbox_staged (connector_t *self)
{
    mailbox_t *box = (mailbox_t *) connector_impl (self);
    return box->has_staged? box->staged_count: 0;
}

const mail_view_t *
conn_mailbox_staged_at (connector_t *self, size_t index)
{
    mailbox_t *box = (mailbox_t *) connector_impl (self);
    return box->has_staged && index < box->staged_count? &box->staged[index]: NULL;
}
