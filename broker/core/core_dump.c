// SPDX-License-Identifier: MIT
/*  core_dump - the core's durable facts in a fixed order (core.h).

    A map of:
        limits      the limits in force
        origin      the counters' origin
        mail_seq    the last mail seq handed out
        state_seq   the last state seq
        agents      by id: id, token, caps, acked, delivered, channels
                    (sorted), the idempotency slots, step, acts
        mail        by seq: seq, ts, kind, from, to, body, bin, dropped,
                    holders (sorted)
        channels    by name, those with listeners or pending posts:
                    name, listeners (sorted)
        state       by key: key, reducer, seq, value
        world       world_dump, or nil
        workflow    workflow_dump, or nil
    What is left out is what a restart may lose on purpose: who is
    connected, delivery cursors, counters of traffic.

    What is slow: sorts of every agent, message and key. The dump is for
    tests and for `parley-broker --dump`, never for the request path.
*/
#include <string.h>

#include "core_int.h"

static void
s_str (msgpack_packer *pk, const char *text, size_t len)
{
    msgpack_pack_str (pk, len);
    msgpack_pack_str_body (pk, text, len);
}

static void
s_key (msgpack_packer *pk, const char *key)
{
    s_str (pk, key, strlen (key));
}

static int
s_agent_cmp (const void *a, const void *b)
{
    return strcmp ((*(agent_t *const *) a)->id, (*(agent_t *const *) b)->id);
}

static int
s_name_cmp (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static agent_t **
s_sorted_agents (core_t *self, size_t *count)
{
    *count = agents_size (self->agents);
    agent_t **list = malloc ((*count ? *count : 1) * sizeof (agent_t *));
    assert (list);
    memcpy (list, agents_array (self->agents), *count * sizeof (agent_t *));
    qsort (list, *count, sizeof (agent_t *), s_agent_cmp);
    return list;
}

static void
s_dump_agent (agent_t *agent, msgpack_packer *pk)
{
    msgpack_pack_array (pk, 9);
    s_str (pk, agent->id, agent->id_len);
    s_key (pk, agent->token);
    msgpack_pack_array (pk, (uint32_t) zlistx_size (agent->caps));
    for (const char *cap = zlistx_first (agent->caps); cap; cap = zlistx_next (agent->caps))
        s_key (pk, cap);
    msgpack_pack_uint64 (pk, agent->acked);
    msgpack_pack_uint64 (pk, agent->delivered);
    size_t channels = zlistx_size (agent->channels), n = 0;
    const char **names = malloc ((channels ? channels : 1) * sizeof (char *));
    assert (names);
    for (channel_t *channel = zlistx_first (agent->channels); channel;
         channel = zlistx_next (agent->channels))
        names [n++] = channel->name;
    qsort (names, n, sizeof (char *), s_name_cmp);
    msgpack_pack_array (pk, (uint32_t) n);
    for (size_t i = 0; i < n; i++)
        s_key (pk, names [i]);
    free (names);
    msgpack_pack_array (pk, AGENT_SLOTS);
    for (int slot = 0; slot < AGENT_SLOTS; slot++) {
        const replay_t *r = &agent->slots [slot];
        if (!r->data) {
            msgpack_pack_nil (pk);
            continue;
        }
        msgpack_pack_array (pk, 3);
        msgpack_pack_uint64 (pk, r->key);
        msgpack_pack_uint64 (pk, r->fields);
        msgpack_pack_bin (pk, r->size);
        msgpack_pack_bin_body (pk, r->data, r->size);
    }
    msgpack_pack_uint64 (pk, agent->step);
    msgpack_pack_uint64 (pk, agent->acts);
}

typedef struct {
    mail_t *mail;
    agent_t *agent;
} s_place_t;

static int
s_place_cmp (const void *a, const void *b)
{
    const s_place_t *x = a, *y = b;
    if (x->mail->seq != y->mail->seq)
        return x->mail->seq < y->mail->seq ? -1 : 1;
    return strcmp (x->agent->id, y->agent->id);
}

static void
s_dump_mail (core_t *self, msgpack_packer *pk)
{
    size_t count = agents_size (self->agents), placements = 0;
    for (size_t i = 0; i < count; i++)
        placements += mailbox_count (agents_at (self->agents, i)->inbox);
    s_place_t *all = malloc ((placements ? placements : 1) * sizeof (s_place_t));
    assert (all);
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        agent_t *agent = agents_at (self->agents, i);
        for (size_t j = 0; j < mailbox_count (agent->inbox); j++)
            all [n++] = (s_place_t) { mailbox_at (agent->inbox, j), agent };
    }
    qsort (all, n, sizeof (s_place_t), s_place_cmp);
    size_t messages = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || all [i].mail != all [i - 1].mail)
            messages++;
    msgpack_pack_array (pk, (uint32_t) messages);
    for (size_t i = 0; i < n; ) {
        mail_t *mail = all [i].mail;
        size_t end = i;
        while (end < n && all [end].mail == mail)
            end++;
        msgpack_pack_array (pk, 9);
        msgpack_pack_uint64 (pk, mail->seq);
        msgpack_pack_int64 (pk, mail->ts);
        msgpack_pack_uint32 (pk, mail->kind);
        s_str (pk, mail_from (mail), mail->from_len);
        s_str (pk, mail_to (mail), mail->to_len);
        msgpack_pack_bin (pk, mail->body_len);
        msgpack_pack_bin_body (pk, mail_body (mail), mail->body_len);
        if (mail->body_bin) msgpack_pack_true (pk); else msgpack_pack_false (pk);
        if (mail->dropped) msgpack_pack_true (pk); else msgpack_pack_false (pk);
        msgpack_pack_array (pk, (uint32_t) (end - i));
        for (size_t j = i; j < end; j++)
            s_str (pk, all [j].agent->id, all [j].agent->id_len);
        i = end;
    }
    free (all);
}

typedef struct {
    msgpack_packer *pk;
    size_t count;
} s_state_walk_t;

static void
s_dump_key (const state_entry_t *entry, void *arg)
{
    s_state_walk_t *walk = arg;
    msgpack_pack_array (walk->pk, 4);
    s_key (walk->pk, entry->key);
    msgpack_pack_uint32 (walk->pk, (uint32_t) entry->reducer);
    msgpack_pack_uint64 (walk->pk, entry->seq);
    msgpack_pack_bin (walk->pk, entry->size);
    msgpack_pack_bin_body (walk->pk, entry->value, entry->size);
}

static void
s_count_key (const state_entry_t *entry, void *arg)
{
    ((s_state_walk_t *) arg)->count++;
}

void
core_dump (core_t *self, msgpack_packer *pk)
{
    assert (self && pk);
    msgpack_pack_map (pk, 10);
    s_key (pk, "limits");
    limits_encode (&self->limits, pk);
    s_key (pk, "origin");
    msgpack_pack_uint64 (pk, self->origin);
    s_key (pk, "mail_seq");
    msgpack_pack_uint64 (pk, mailroom_counters (self->mailroom)->mail_seq);
    s_key (pk, "state_seq");
    msgpack_pack_uint64 (pk, state_seq (self->state));

    s_key (pk, "agents");
    size_t count;
    agent_t **agents = s_sorted_agents (self, &count);
    msgpack_pack_array (pk, (uint32_t) count);
    for (size_t i = 0; i < count; i++)
        s_dump_agent (agents [i], pk);

    s_key (pk, "mail");
    s_dump_mail (self, pk);

    //  Channels in use: listened to by someone (a channel's pending posts
    //  are in the holders' inboxes, dumped with the mail).
    s_key (pk, "channels");
    zhashx_t *listeners = zhashx_new ();
    assert (listeners);
    for (size_t i = 0; i < count; i++)
        for (channel_t *c = zlistx_first (agents [i]->channels); c;
             c = zlistx_next (agents [i]->channels))
            zhashx_insert (listeners, c->name, c);
    zlistx_t *names = zhashx_keys (listeners);
    zlistx_set_comparator (names, (zlistx_comparator_fn *) strcmp);
    zlistx_sort (names);
    msgpack_pack_array (pk, (uint32_t) zlistx_size (names));
    for (const char *name = zlistx_first (names); name; name = zlistx_next (names)) {
        channel_t *channel = zhashx_lookup (listeners, name);
        msgpack_pack_array (pk, 2);
        s_key (pk, name);
        const char **ids = malloc ((channel->listener_count ? channel->listener_count : 1)
                                   * sizeof (char *));
        assert (ids);
        for (size_t j = 0; j < channel->listener_count; j++)
            ids [j] = channel->listeners [j]->id;
        qsort (ids, channel->listener_count, sizeof (char *), s_name_cmp);
        msgpack_pack_array (pk, (uint32_t) channel->listener_count);
        for (size_t j = 0; j < channel->listener_count; j++)
            s_key (pk, ids [j]);
        free (ids);
    }
    zlistx_destroy (&names);
    zhashx_destroy (&listeners);
    free (agents);

    s_key (pk, "state");
    s_state_walk_t walk = { .pk = pk };
    state_foreach_prefix (self->state, NULL, 0, s_count_key, &walk);
    msgpack_pack_array (pk, (uint32_t) walk.count);
    state_foreach_prefix (self->state, NULL, 0, s_dump_key, &walk);

    s_key (pk, "world");
    if (self->world)
        world_snapshot_encode (self->world, pk);
    else
        msgpack_pack_nil (pk);
    s_key (pk, "workflow");
    if (self->workflow)
        workflow_dump (self->workflow, pk);
    else
        msgpack_pack_nil (pk);
}
