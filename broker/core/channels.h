// SPDX-License-Identifier: MIT
/*  channels - named channels (the agents' "domains"): listeners and pending posts.

    A channel is created on first use (post or LISTEN). The broker's channel
    limit bounds how many exist at once; when it is reached, an idle channel
    (nobody listens, nothing pending) is reclaimed to make room, so only
    channels in use count against it. A reclaimed channel's counters
    (posts, dropped) go with it. A post is
    delivered, at the moment it is made, into the inbox of every agent that
    listens then, so a late FETCH still sees it and an agent that starts
    listening later does not see older posts.

    The channel also keeps its pending posts (accepted and not yet released by
    every listener) in an intrusive list, oldest first, so the per-channel
    count/byte bound is exact and drop-oldest is O(1).

    Listeners are a dense array (hot path: fan-out per post); LISTEN/UNLISTEN
    are rare and scan it.
*/
#ifndef PARLEY_BROKER_CHANNELS_H
#define PARLEY_BROKER_CHANNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pmsg.h"
#include "agents.h"
#include "mail.h"

struct _channel_t {
    char name [PROTO_MAX_NAME + 1];
    size_t name_len;
    agent_t **listeners;
    size_t listener_count, listener_cap;
    mail_t *oldest, *newest;    //  pending posts, seq order
    size_t pending;
    uint64_t pending_bytes;
    uint64_t posts;             //  accepted posts, ever
    uint64_t dropped;           //  posts dropped by drop-oldest
};

typedef struct _channels_t channels_t;

channels_t *channels_new (size_t max_channels);
void channels_destroy (channels_t **self_p);

//  The channel limit from now on (existing channels stay).
void channels_set_max (channels_t *self, size_t max_channels);
channel_t *channels_lookup (channels_t *self, const char *name);
//  Looks up, or creates (reclaiming an idle channel at the limit); NULL
//  when the limit is reached and every channel is in use.
channel_t *channels_ensure (channels_t *self, const char *name, bool *created);
size_t channels_size (channels_t *self);
//  True for names clients may not use as a channel: "all" (broadcast) and
//  "$..." (the broker's own, PROTOCOL.md section 2). LISTEN, UNLISTEN and
//  SEND all ask here, so the rule lives once.
bool channel_name_reserved (const char *name, size_t len);

//  True if newly added (false: already listening, or out of memory: *oom).
bool channel_listen (channel_t *self, agent_t *agent, bool *oom);
//  True if it was listening.
bool channel_unlisten (channel_t *self, agent_t *agent);
//  Pending-post list, kept by the mailroom.
void channel_link (channel_t *self, mail_t *mail);
void channel_unlink (channel_t *self, mail_t *mail);

#endif
