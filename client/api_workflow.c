// SPDX-License-Identifier: MIT
/*  api_workflow - the workflow's requests (WORKFLOW, HANDOVER, RESUME,
    CHECKPOINTS, CHECKPOINT) and its events (parley/workflow.h).
*/
#include <assert.h>
#include "checkpoints_int.h"
#include "client_internal.h"
#include "handover_int.h"
#include "workflow_int.h"

//  The request encoder's request sent; its WORKFLOW_INFO into *result_p
//  (NULL: not wanted).
static parley_err_t
s_info_call (parley_client_t *self, parley_workflow_t **result_p)
{
    client_conn_t *conn = client_conn_of (self);
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_workflow_new);
    pmsg_t *reply = NULL;
    if (rc == PARLEY_OK)
        rc = client_conn_call (conn, PMSG_WORKFLOW_INFO, &reply);
    if (rc == PARLEY_OK && result_p && client_workflow_decode (*result_p, reply) != PARLEY_OK)
        rc = client_conn_nomem (conn);
    pmsg_destroy (&reply);
    CLIENT_UNMAKE (rc, made, result_p, parley_workflow_destroy);
    return rc;
}

parley_err_t
parley_client_workflow (parley_client_t *self, parley_workflow_t **result_p)
{
    assert (self && result_p);
    client_conn_t *conn = client_conn_of (self);
    client_conn_begin (conn, PMSG_WORKFLOW, 0);
    return s_info_call (self, result_p);
}

parley_err_t
parley_client_handover (parley_client_t *self, const parley_handover_t *handover,
                        parley_workflow_t **result_p)
{
    assert (self && handover);
    client_conn_t *conn = client_conn_of (self);
    const char *why = "";
    parley_err_t rc = client_handover_encode (handover, client_conn_encoder (conn),
                                              client_conn_begin_id (conn), &why);
    if (rc == PARLEY_ERR_NOMEM)
        return client_conn_nomem (conn);
    if (rc != PARLEY_OK)
        return client_conn_fail (conn, rc, "%s", why);
    return s_info_call (self, result_p);
}

parley_err_t
parley_client_resume (parley_client_t *self, uint64_t number, parley_workflow_t **result_p)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    penc_t *enc = client_conn_begin (conn, PMSG_RESUME, 1);
    penc_kv_uint (enc, "number", number);
    return s_info_call (self, result_p);
}

static parley_err_t
s_checkpoints (parley_client_t *self, parley_checkpoint_list_t **result_p)
{
    assert (self && result_p);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_checkpoint_list_new);
    if (rc != PARLEY_OK)
        return rc;
    client_conn_begin (conn, PMSG_CHECKPOINTS, 0);
    pmsg_t *reply = NULL;
    rc = client_conn_call (conn, PMSG_CHECKPOINT_LIST, &reply);
    if (rc == PARLEY_OK && client_checkpoint_list_decode (*result_p, reply) != PARLEY_OK)
        rc = client_conn_nomem (conn);
    pmsg_destroy (&reply);
    return rc;
}

parley_err_t
parley_client_checkpoints (parley_client_t *self, parley_checkpoint_list_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_checkpoints (self, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_checkpoint_list_destroy);
    return rc;
}

static parley_err_t
s_checkpoint (parley_client_t *self, uint64_t number, const uint64_t *since,
              parley_checkpoint_state_t **result_p)
{
    assert (self && result_p);
    client_conn_t *conn = client_conn_of (self);
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_checkpoint_state_new);
    if (rc != PARLEY_OK)
        return rc;
    penc_t *enc = client_conn_begin (conn, PMSG_CHECKPOINT, since ? 2 : 1);
    penc_kv_uint (enc, "number", number);
    if (since)
        penc_kv_uint (enc, "since", *since);
    pmsg_t *reply = NULL;
    rc = client_conn_call (conn, PMSG_CHECKPOINT_STATE, &reply);
    if (rc == PARLEY_OK && client_checkpoint_state_decode (*result_p, reply) != PARLEY_OK)
        rc = client_conn_nomem (conn);
    pmsg_destroy (&reply);
    CLIENT_UNMAKE (rc, made, result_p, parley_checkpoint_state_destroy);
    return rc;
}

parley_err_t
parley_client_checkpoint (parley_client_t *self, uint64_t number,
                          parley_checkpoint_state_t **result_p)
{
    return s_checkpoint (self, number, NULL, result_p);
}

parley_err_t
parley_client_checkpoint_diff (parley_client_t *self, uint64_t number, uint64_t since,
                               parley_checkpoint_state_t **result_p)
{
    return s_checkpoint (self, number, &since, result_p);
}

void
parley_client_workflow_events (parley_client_t *self, bool on)
{
    assert (self);
    client_events_t *events = client_events_of (self);
    if (on != client_events_workflow (events))
        client_subscribe_socket (self, "workflow.", on);
    client_events_set_workflow (events, on);
}

bool
parley_client_workflow_event (parley_client_t *self, parley_wf_event_t **event_p)
{
    assert (self && event_p);
    client_take_events (self);
    return client_events_wf_next (client_events_of (self), event_p);
}
