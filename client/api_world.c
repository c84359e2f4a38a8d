// SPDX-License-Identifier: MIT
/*  api_world - the world's requests and STEP (parley/world.h).

    A STEP with a step number is resent by client_conn_call after a lost reply
    or a reconnect, like ACT with its step: the broker answers a repeat
    from memory and applies nothing twice.
*/
#include <assert.h>
#include "client_internal.h"
#include "observation_int.h"
#include "step_int.h"
#include "stepped_int.h"

//  The request encoder's request sent; its OBSERVATION into *result_p.
static parley_err_t
s_observe (parley_client_t *self, parley_observation_t **result_p)
{
    client_conn_t *conn = client_conn_of (self);
    pmsg_t *reply = NULL;
    parley_err_t rc = client_conn_call (conn, PMSG_OBSERVATION, &reply);
    if (rc == PARLEY_OK && client_observation_decode (*result_p, &reply, pmsg_root (reply))
                           != PARLEY_OK)
        rc = client_conn_nomem (conn);
    pmsg_destroy (&reply);
    return rc;
}

static parley_err_t
s_perceive (parley_client_t *self, parley_observation_t **result_p)
{
    assert (self && result_p);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_observation_new);
    if (rc != PARLEY_OK)
        return rc;
    client_conn_begin (conn, PMSG_PERCEIVE, 0);
    return s_observe (self, result_p);
}

parley_err_t
parley_client_perceive (parley_client_t *self, parley_observation_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_perceive (self, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_observation_destroy);
    return rc;
}

static parley_err_t
s_act (parley_client_t *self, const char *action, uint64_t step,
       parley_observation_t **result_p)
{
    assert (self && result_p);
    client_conn_t *conn = client_conn_of (self);
    if (!action)
        return client_conn_fail (conn, PARLEY_ERR_INVALID, "ACT needs an action");
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_observation_new);
    if (rc != PARLEY_OK)
        return rc;
    //  `step` makes the move idempotent: a resend after a lost reply or a
    //  reconnect carries the same step, and the broker answers a repeated
    //  (agent, step) with the OBSERVATION it gave the first copy.
    penc_t *enc = client_conn_begin (conn, PMSG_ACT, step ? 2 : 1);
    penc_kv_cstr (enc, "action", action);
    if (step)
        penc_kv_uint (enc, "step", step);
    return s_observe (self, result_p);
}

parley_err_t
parley_client_act (parley_client_t *self, const char *action, uint64_t step,
                   parley_observation_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_act (self, action, step, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_observation_destroy);
    return rc;
}

parley_err_t
parley_client_world_reset (parley_client_t *self, uint64_t seed)
{
    assert (self);
    client_conn_t *conn = client_conn_of (self);
    penc_t *enc = client_conn_begin (conn, PMSG_WORLD_RESET, seed ? 1 : 0);
    if (seed)
        penc_kv_uint (enc, "seed", seed);
    pmsg_t *reply = NULL;
    parley_err_t rc = client_conn_call (conn, PMSG_OK, &reply);
    pmsg_destroy (&reply);
    return rc;
}

static parley_err_t
s_step (parley_client_t *self, const parley_step_t *step,
        parley_stepped_t **result_p)
{
    assert (self && step && result_p);
    client_conn_t *conn = client_conn_of (self);
    parley_err_t rc = CLIENT_PREPARE (conn, result_p, client_stepped_new);
    if (rc != PARLEY_OK)
        return rc;
    const char *why = "";
    rc = client_step_encode (step, client_conn_encoder (conn), client_conn_begin_id (conn),
                             client_max_body (self), &why);
    if (rc == PARLEY_ERR_NOMEM)
        return client_conn_nomem (conn);
    if (rc != PARLEY_OK)
        return client_conn_fail (conn, rc, "%s", why);
    pmsg_t *reply = NULL;
    rc = client_conn_call (conn, PMSG_STEPPED, &reply);
    if (rc == PARLEY_OK
    &&  client_stepped_decode (*result_p, &reply, 0, client_step_message_count (step),
                               client_dedup_of (self)) != PARLEY_OK)
        rc = client_conn_nomem (conn);
    pmsg_destroy (&reply);
    return rc;
}

parley_err_t
parley_client_step (parley_client_t *self, const parley_step_t *step,
                    parley_stepped_t **result_p)
{
    bool made = CLIENT_MAKES (result_p);
    parley_err_t rc = s_step (self, step, result_p);
    CLIENT_UNMAKE (rc, made, result_p, parley_stepped_destroy);
    return rc;
}
