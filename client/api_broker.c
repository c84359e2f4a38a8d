// SPDX-License-Identifier: MIT
/*  api_broker - the broker's own requests (parley/broker.h): AGENTS,
    STATS, HEARTBEAT, BYE, and events taken by topic.
*/
#include <assert.h>
#include "agents_int.h"
#include "client_internal.h"
#include "stats_int.h"

static parley_err_t
s_agents (parley_client_t *self, parley_agent_list_t **result_p)
{
    assert (self && result_p);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_agent_list_new);
    if (rc != PARLEY_OK)
        return rc;
    client_conn_begin (conn, PMSG_AGENTS, 0);
    pmsg_t *reply = NULL;
    rc = client_conn_call (conn, PMSG_AGENT_LIST, &reply);
    if (rc == PARLEY_OK && client_agent_list_decode (*result_p, reply) != PARLEY_OK)
        rc = client_conn_nomem (conn);
    pmsg_destroy (&reply);
    return rc;
}

parley_err_t
parley_client_agents (parley_client_t *self, parley_agent_list_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_agents (self, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_agent_list_destroy);
    return rc;
}

static parley_err_t
s_stats (parley_client_t *self, parley_stats_t **result_p)
{
    assert (self && result_p);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_stats_new);
    if (rc != PARLEY_OK)
        return rc;
    client_conn_begin (conn, PMSG_STATS, 0);
    pmsg_t *reply = NULL;
    rc = client_conn_call (conn, PMSG_STATS_REPLY, &reply);
    if (rc == PARLEY_OK && client_stats_decode (*result_p, reply) != PARLEY_OK)
        rc = client_conn_nomem (conn);
    pmsg_destroy (&reply);
    return rc;
}

parley_err_t
parley_client_stats (parley_client_t *self, parley_stats_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_stats (self, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_stats_destroy);
    return rc;
}

parley_err_t
parley_client_heartbeat (parley_client_t *self)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    client_encode_heartbeat (self, client_conn_encoder (conn), client_conn_begin_id (conn));
    pmsg_t *reply = NULL;
    parley_err_t rc = client_conn_call (conn, PMSG_OK, &reply);
    pmsg_destroy (&reply);
    return rc;
}

//  Best effort with a short timeout and no resend: a broker that is gone
//  has nothing to say goodbye to.
parley_err_t
parley_client_bye (parley_client_t *self, bool forget)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    if (!client_conn_up (conn) || !client_transport_is_open (client_conn_transport (conn)))
        return PARLEY_OK;
    penc_t *enc = client_conn_begin (conn, PMSG_BYE, forget ? 1 : 0);
    if (forget)
        penc_kv_bool (enc, "forget", true);
    if (!penc_ok (enc))
        return client_conn_nomem (conn);
    parley_err_t rc = PARLEY_ERR_TIMEOUT;
    if (client_conn_send (conn, penc_data (enc), penc_size (enc), false) == 0) {
        int64_t wait = client_conn_request_ms (conn) < 1000 ? client_conn_request_ms (conn) : 1000;
        pmsg_t *reply = NULL;
        rc = client_conn_await (conn, client_conn_request_id (conn), client_conn_last_send (conn) + wait,
                           &reply);
        if (rc == PARLEY_OK && pmsg_type (reply) != PMSG_OK)
            rc = pmsg_type (reply) == PMSG_ERROR ? client_conn_error_reply (conn, reply)
                                                 : PARLEY_ERR_BAD_REPLY;
        pmsg_destroy (&reply);
    }
    client_conn_close (conn, PARLEY_ERR_TIMEOUT);
    return rc;
}

//  ---------------------------------------------------------------------
//  Events by topic

parley_err_t
parley_client_subscribe (parley_client_t *self, const char *prefix)
{
    assert (self && prefix);
    client_conn_t *conn = client_conn_of (self);
    char why [128];
    bool added;
    parley_err_t rc = client_events_subscribe (client_events_of (self), prefix, &added,
                                               why, sizeof why);
    if (rc == PARLEY_ERR_NOMEM)
        return client_conn_nomem (conn);
    if (rc != PARLEY_OK)
        return client_conn_fail (conn, rc, "%s", why);
    if (added)
        client_subscribe_socket (self, prefix, true);
    return PARLEY_OK;
}

void
parley_client_unsubscribe (parley_client_t *self, const char *prefix)
{
    assert (self && prefix);
    if (client_events_unsubscribe (client_events_of (self), prefix))
        client_subscribe_socket (self, prefix, false);
}

bool
parley_client_event (parley_client_t *self, parley_event_t **event_p)
{
    assert (self && event_p);
    client_take_events (self);
    return client_events_next (client_events_of (self), event_p);
}
