// SPDX-License-Identifier: MIT
/*  channels - channel registry. See channels.h. */
#include <assert.h>
#include <string.h>

#include "channels.h"

struct _channels_t {
    zhashx_t *by_name;          //  name -> channel_t (owned)
    size_t max;
};

static void
s_channel_destroy (void **item_p)
{
    channel_t *channel = *item_p;
    if (channel) {
        //  Pending posts belong to inboxes; the mailroom released them.
        free (channel->listeners);
        free (channel);
        *item_p = NULL;
    }
}

channels_t *
channels_new (size_t max_channels)
{
    channels_t *self = calloc (1, sizeof (channels_t));
    if (!self)
        return NULL;
    self->by_name = zhashx_new ();
    if (!self->by_name) {
        free (self);
        return NULL;
    }
    zhashx_set_destructor (self->by_name, s_channel_destroy);
    self->max = max_channels;
    return self;
}

void
channels_destroy (channels_t **self_p)
{
    assert (self_p);
    channels_t *self = *self_p;
    if (self) {
        zhashx_destroy (&self->by_name);
        free (self);
        *self_p = NULL;
    }
}

void
channels_set_max (channels_t *self, size_t max_channels)
{
    assert (self);
    self->max = max_channels;
}

channel_t *
channels_lookup (channels_t *self, const char *name)
{
    assert (self && name);
    return zhashx_lookup (self->by_name, name);
}

//  At the limit, deletes one idle channel (no listeners, no pending post)
//  so that names any client can mint by posting once cannot lock channels
//  out for the life of the broker. Safe: no agent lists an idle channel
//  and no live mail links to it; the only mail that still names it are
//  drop-oldest tombstones, which never touch their channel again
//  (mailroom.c s_release). O(channels), and only when the limit is hit.
static bool
s_reclaim_idle (channels_t *self)
{
    for (channel_t *channel = zhashx_first (self->by_name); channel;
         channel = zhashx_next (self->by_name))
        if (channel->listener_count == 0 && channel->pending == 0) {
            zhashx_delete (self->by_name, channel->name);
            return true;
        }
    return false;
}

channel_t *
channels_ensure (channels_t *self, const char *name, bool *created)
{
    assert (self && name);
    channel_t *channel = zhashx_lookup (self->by_name, name);
    if (created)
        *created = false;
    if (channel)
        return channel;
    if (zhashx_size (self->by_name) >= self->max && !s_reclaim_idle (self))
        return NULL;
    channel = calloc (1, sizeof (channel_t));
    if (!channel)
        return NULL;
    channel->name_len = strlen (name);
    assert (channel->name_len <= PROTO_MAX_NAME);
    memcpy (channel->name, name, channel->name_len + 1);
    zhashx_insert (self->by_name, channel->name, channel);
    if (created)
        *created = true;
    return channel;
}

size_t
channels_size (channels_t *self)
{
    assert (self);
    return zhashx_size (self->by_name);
}

bool
channel_name_reserved (const char *name, size_t len)
{
    assert (name);
    return (len == 3 && memcmp (name, "all", 3) == 0) || (len > 0 && name [0] == '$');
}

bool
channel_listen (channel_t *self, agent_t *agent, bool *oom)
{
    assert (self && agent);
    *oom = false;
    for (size_t i = 0; i < self->listener_count; i++)
        if (self->listeners [i] == agent)
            return false;
    if (self->listener_count == self->listener_cap) {
        size_t cap = self->listener_cap ? self->listener_cap * 2 : 8;
        agent_t **grown = realloc (self->listeners, cap * sizeof (agent_t *));
        if (!grown) {
            *oom = true;
            return false;
        }
        self->listeners = grown;
        self->listener_cap = cap;
    }
    self->listeners [self->listener_count++] = agent;
    return true;
}

bool
channel_unlisten (channel_t *self, agent_t *agent)
{
    assert (self && agent);
    for (size_t i = 0; i < self->listener_count; i++)
        if (self->listeners [i] == agent) {
            //  Order of listeners does not matter: swap-remove.
            self->listeners [i] = self->listeners [--self->listener_count];
            return true;
        }
    return false;
}

void
channel_link (channel_t *self, mail_t *mail)
{
    assert (self && mail);
    mail->channel = self;
    mail->chan_prev = self->newest;
    mail->chan_next = NULL;
    if (self->newest)
        self->newest->chan_next = mail;
    else
        self->oldest = mail;
    self->newest = mail;
    self->pending++;
    self->pending_bytes += mail->body_len;
}

void
channel_unlink (channel_t *self, mail_t *mail)
{
    assert (self && mail && mail->channel == self);
    if (mail->chan_prev)
        mail->chan_prev->chan_next = mail->chan_next;
    else
        self->oldest = mail->chan_next;
    if (mail->chan_next)
        mail->chan_next->chan_prev = mail->chan_prev;
    else
        self->newest = mail->chan_prev;
    mail->chan_prev = mail->chan_next = NULL;
    self->pending--;
    self->pending_bytes -= mail->body_len;
}
