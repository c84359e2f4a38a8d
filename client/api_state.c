// SPDX-License-Identifier: MIT
/*  api_state - the shared state's requests (parley/state.h): WRITE, GET,
    SNAPSHOT, and the replica: subscribed first, then copied by paged
    SNAPSHOTs, then kept by the updates the event socket brings
    (replica.c).
*/
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "api_state.h"
#include "client_internal.h"
#include "ops_int.h"
#include "state_int.h"

#define S_PAGE 1000                     //  entries per SNAPSHOT page of the replica

parley_err_t
client_encode_write (parley_client_t *self, const parley_ops_t *ops)
{
    assert (self && ops);
    client_conn_t *conn = client_conn_of (self);
    const char *why = "";
    parley_err_t rc = client_ops_error (ops, &why);
    if (rc == PARLEY_ERR_NOMEM)
        return client_conn_nomem (conn);
    if (rc != PARLEY_OK)
        return client_conn_fail (conn, rc, "%s", why);
    size_t count = parley_ops_count (ops);
    if (count == 0 || count > PROTO_MAX_BATCH)
        return client_conn_fail (conn, PARLEY_ERR_INVALID, "WRITE of %zu ops (1..%d)", count,
                            PROTO_MAX_BATCH);
    client_ops_encode (ops, client_conn_begin (conn, PMSG_WRITE, 1));
    return PARLEY_OK;
}

static parley_err_t
s_write (parley_client_t *self, const parley_ops_t *ops, parley_written_t **result_p)
{
    assert (self && ops);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_written_new);
    if (rc == PARLEY_OK)
        rc = client_encode_write (self, ops);
    pmsg_t *reply = NULL;
    if (rc == PARLEY_OK)
        rc = client_conn_call (conn, PMSG_WRITTEN, &reply);
    if (rc == PARLEY_OK && result_p)
        client_written_decode (*result_p, pmsg_root (reply));
    pmsg_destroy (&reply);
    return rc;
}

parley_err_t
parley_client_write (parley_client_t *self, const parley_ops_t *ops, parley_written_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_write (self, ops, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_written_destroy);
    return rc;
}

//  The request encoder's STATE request sent, its reply into *result_p.
static parley_err_t
s_state_call (parley_client_t *self, parley_state_t *result)
{
    client_conn_t *conn = client_conn_of (self);
    pmsg_t *reply = NULL;
    parley_err_t rc = client_conn_call (conn, PMSG_STATE, &reply);
    if (rc == PARLEY_OK && client_state_decode (result, reply) != PARLEY_OK)
        rc = client_conn_nomem (conn);
    pmsg_destroy (&reply);
    return rc;
}

static parley_err_t
s_get (parley_client_t *self, const char *const *keys, size_t count,
       parley_state_t **result_p)
{
    assert (self && result_p && (keys || count == 0));
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_state_new);
    if (rc != PARLEY_OK)
        return rc;
    if (count == 0 || count > PROTO_MAX_BATCH)
        return client_conn_fail (conn, PARLEY_ERR_INVALID, "GET of %zu keys (1..%d)", count,
                            PROTO_MAX_BATCH);
    penc_t *enc = client_conn_begin (conn, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), count);
    for (size_t i = 0; i < count; i++)
        penc_cstr (enc, keys [i]);
    return s_state_call (self, *result_p);
}

parley_err_t
parley_client_get (parley_client_t *self, const char *const *keys, size_t count,
                   parley_state_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_get (self, keys, count, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_state_destroy);
    return rc;
}

static parley_err_t
s_snapshot (parley_client_t *self, const char *prefix, const char *after_key,
            size_t limit, parley_state_t **result_p)
{
    assert (self && result_p);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_state_new);
    if (rc != PARLEY_OK)
        return rc;
    size_t fields = (prefix && *prefix ? 1 : 0) + (after_key ? 1 : 0) + (limit ? 1 : 0);
    penc_t *enc = client_conn_begin (conn, PMSG_SNAPSHOT, fields);
    if (prefix && *prefix)
        penc_kv_cstr (enc, "prefix", prefix);
    if (after_key)
        penc_kv_cstr (enc, "after_key", after_key);
    if (limit)
        penc_kv_uint (enc, "limit", limit);
    return s_state_call (self, *result_p);
}

parley_err_t
parley_client_snapshot (parley_client_t *self, const char *prefix, const char *after_key,
                        size_t limit, parley_state_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_snapshot (self, prefix, after_key, limit, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_state_destroy);
    return rc;
}

//  ---------------------------------------------------------------------
//  The replica

//  Every page of a SNAPSHOT walk of one prefix into the copy.
static parley_err_t
s_copy_prefix (parley_client_t *self, const char *prefix, bool set_seq)
{
    client_conn_t *conn = client_conn_of (self);
    client_replica_t *replica = client_replica_of (self);
    char after [PROTO_MAX_KEY + 1] = "";
    parley_state_t *page = NULL;
    parley_err_t rc = PARLEY_OK;
    for (bool first = true; rc == PARLEY_OK; first = false) {
        rc = parley_client_snapshot (self, prefix, first ? NULL : after, S_PAGE, &page);
        if (rc != PARLEY_OK)
            break;
        if (first && set_seq)
            client_replica_set_seq (replica, parley_state_seq (page));
        size_t count = parley_state_count (page);
        for (size_t i = 0; i < count && rc == PARLEY_OK; i++) {
            const parley_entry_t *entry = parley_state_at (page, i);
            if (client_replica_put (replica, parley_entry_key (entry), parley_entry_seq (entry),
                                    parley_entry_value (entry), parley_entry_value_size (entry))
                != PARLEY_OK)
                rc = client_conn_nomem (conn);
        }
        if (rc != PARLEY_OK || !parley_state_more (page) || count == 0)
            break;
        snprintf (after, sizeof after, "%s", parley_entry_key (parley_state_at (page, count - 1)));
    }
    parley_state_destroy (&page);
    if (rc != PARLEY_OK)
        client_replica_mark_stale (replica);
    return rc;
}

//  A fresh copy of every prefix.
static parley_err_t
s_copy_all (parley_client_t *self, bool refresh)
{
    client_replica_t *replica = client_replica_of (self);
    client_replica_begin (replica, parley_client_epoch (self), refresh);
    for (size_t i = 0; i < client_replica_prefix_count (replica); i++) {
        parley_err_t rc = s_copy_prefix (self, client_replica_prefix (replica, i), i == 0);
        if (rc != PARLEY_OK)
            return rc;
    }
    client_replica_copied (replica, parley_client_epoch (self));
    return PARLEY_OK;
}

//  Follows `prefix` (the first, or one more), subscribed before the copy
//  so that no update after it is missed.
static parley_err_t
s_follow (parley_client_t *self, const char *prefix, bool first)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    prefix = prefix ? prefix : "";
    client_replica_t *replica = client_replica_of (self);
    if (!first && !client_replica_on (replica))
        first = true;
    char why [128];
    bool added;
    parley_err_t rc = client_replica_follow (replica, prefix, first, &added, why, sizeof why);
    if (rc != PARLEY_OK)
        return client_conn_fail (conn, rc, "%s", why);
    if (!added)
        return PARLEY_OK;
    char topic [PROTO_MAX_KEY + 8];
    snprintf (topic, sizeof topic, "state.%s", prefix);
    client_subscribe_socket (self, topic, true);
    rc = client_conn_ensure (conn);
    if (rc == PARLEY_OK)
        client_open_events (self);
    if (rc == PARLEY_OK)
        rc = first ? s_copy_all (self, false) : s_copy_prefix (self, prefix, false);
    if (rc != PARLEY_OK)
        client_replica_mark_stale (replica);
    return rc;
}

parley_err_t
parley_client_replica (parley_client_t *self, const char *prefix)
{
    return s_follow (self, prefix, true);
}

parley_err_t
parley_client_replica_add (parley_client_t *self, const char *prefix)
{
    return s_follow (self, prefix, false);
}

void
client_replica_refresh (parley_client_t *self)
{
    client_conn_t *conn = client_conn_of (self);
    client_replica_t *replica = client_replica_of (self);
    if (client_conn_busy (conn)
    ||  !client_replica_stale (replica, parley_client_epoch (self), client_conn_up (conn)))
        return;
    s_copy_all (self, true);
}

bool
parley_client_replica_get (parley_client_t *self, const char *key, const void **value,
                           size_t *value_size, uint64_t *seq)
{
    assert (self && key);
    return client_replica_get (client_replica_of (self), key, value, value_size, seq);
}

size_t
parley_client_replica_size (parley_client_t *self)
{
    assert (self);
    return client_replica_size (client_replica_of (self));
}
