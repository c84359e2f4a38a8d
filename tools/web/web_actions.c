// SPDX-License-Identifier: MIT
/*  web_actions - WORLD_RESET, WRITE, RESUME and a person's HANDOVER for
    the page. See web_actions.h. */
#include <assert.h>
#include <czmq.h>
#include <microhttpd.h>
#include <parley/client.h>
#include "jsonops.h"
#include "wfjson.h"
#include "web_actions.h"

struct _web_actions_t {
    web_operator_t *operator_;
};

web_actions_t *
web_actions_new (web_operator_t *operator_)
{
    assert (operator_);
    web_actions_t *self = (web_actions_t *) zmalloc (sizeof *self);
    self->operator_ = operator_;
    return self;
}

void
web_actions_destroy (web_actions_t **self_p)
{
    assert (self_p);
    free (*self_p);
    *self_p = NULL;
}

static parley_err_t
s_state_set (parley_client_t *client, const json_t *request, char *why, size_t why_size)
{
    const json_t *key = json_object_get (request, "key");
    const json_t *value = json_object_get (request, "value");
    size_t size = json_is_string (value)? json_string_length (value) + 5: 9;
    uint8_t *packed = (uint8_t *) zmalloc (size);
    size_t used = 0;
    if (json_is_string (value))
        used = parley_pack_str (packed, size, json_string_value (value));
    else
    if (json_is_integer (value))
        used = parley_pack_int (packed, size, (int64_t) json_integer_value (value));
    if (!used) {
        free (packed);
        snprintf (why, why_size, "state-set needs \"value\" (a string or an integer)");
        return PARLEY_ERR_INVALID;
    }
    parley_ops_t *ops = parley_ops_new ();
    parley_err_t err = ops ? parley_ops_set (ops, json_string_value (key), packed, used)
                           : PARLEY_ERR_NOMEM;
    if (err == PARLEY_OK)
        err = parley_client_write (client, ops, NULL);
    parley_ops_destroy (&ops);
    free (packed);
    return err;
}

static parley_err_t
s_submit (parley_client_t *client, const json_t *request, char *why, size_t why_size,
          json_t **result)
{
    jsonops_t *ops = jsonops_new (json_object_get (request, "ops"), why, why_size);
    if (!ops)
        return PARLEY_ERR_INVALID;
    const char *status = json_string_value (json_object_get (request, "status"));
    parley_handover_t *handover = parley_handover_new ();
    parley_err_t err = handover ? jsonops_fill (ops, parley_handover_ops (handover))
                                : PARLEY_ERR_NOMEM;
    if (err == PARLEY_OK)
        err = parley_handover_set_next (handover,
                                        json_string_value (json_object_get (request, "next")));
    if (err == PARLEY_OK)
        err = parley_handover_set_status (handover, status ? parley_wf_status_parse (status)
                                                           : PARLEY_WF_UNSET);
    if (err == PARLEY_OK)
        err = parley_handover_set_reason (handover,
                                          json_string_value (json_object_get (request, "reason")));
    parley_workflow_t *info = NULL;
    if (err == PARLEY_OK)
        err = parley_client_handover (client, handover, &info);
    if (err == PARLEY_OK)
        *result = wfjson_info (info);
    parley_workflow_destroy (&info);
    parley_handover_destroy (&handover);
    jsonops_destroy (&ops);
    return err;
}

//  The request's fields, checked before anything is sent; false with `why`.
static bool
s_valid (web_action_t action, const json_t *request, char *why, size_t why_size)
{
    if (action == WEB_ACTION_WORLD_RESET) {
        const json_t *seed = json_object_get (request, "seed");
        if (seed && (!json_is_integer (seed) || json_integer_value (seed) < 0)) {
            snprintf (why, why_size, "world-reset: \"seed\" must be a non-negative integer");
            return false;
        }
    }
    if (action == WEB_ACTION_STATE_SET) {
        const json_t *key = json_object_get (request, "key");
        const json_t *value = json_object_get (request, "value");
        if (!json_is_string (key) || !json_string_length (key)) {
            snprintf (why, why_size, "state-set needs \"key\" (a non-empty string)");
            return false;
        }
        if (!json_is_string (value) && !json_is_integer (value)) {
            snprintf (why, why_size, "state-set needs \"value\" (a string or an integer)");
            return false;
        }
    }
    if (action == WEB_ACTION_RESUME) {
        const json_t *number = json_object_get (request, "checkpoint");
        if (!json_is_integer (number) || json_integer_value (number) < 0) {
            snprintf (why, why_size, "resume needs \"checkpoint\" (a checkpoint number)");
            return false;
        }
    }
    if (action == WEB_ACTION_SUBMIT) {
        const json_t *role = json_object_get (request, "role");
        const json_t *next = json_object_get (request, "next");
        const json_t *status = json_object_get (request, "status");
        const json_t *ops = json_object_get (request, "ops");
        if (!json_is_string (role) || !json_string_length (role)
        ||  json_string_length (role) > PARLEY_NAME_MAX) {
            snprintf (why, why_size, "submit needs \"role\": the human role whose turn it is");
            return false;
        }
        if (next && !json_is_null (next) && !json_is_string (next)) {
            snprintf (why, why_size, "submit: \"next\" is a role, or null with status done "
                      "or failed");
            return false;
        }
        if (status && !json_is_null (status) && (!json_is_string (status)
            || parley_wf_status_parse (json_string_value (status)) == PARLEY_WF_UNSET)) {
            snprintf (why, why_size, "submit: \"status\" is in_progress, revision, done or "
                      "failed");
            return false;
        }
        if (ops && !json_is_array (ops)) {
            snprintf (why, why_size, "submit: \"ops\" is an array of {op, key, value}");
            return false;
        }
        char ignored [256];
        jsonops_t *parsed = jsonops_new (ops, ignored, sizeof ignored);
        if (!parsed) {
            snprintf (why, why_size, "submit: %s", ignored);
            return false;
        }
        jsonops_destroy (&parsed);
    }
    return true;
}

int
web_actions_run (void *arg, web_action_t action, const json_t *request, char *why, size_t why_size)
{
    web_actions_t *self = (web_actions_t *) arg;
    assert (self);
    assert (request);
    if (!s_valid (action, request, why, why_size))
        return MHD_HTTP_BAD_REQUEST;
    //  A person's turn is taken by a connection playing the human role.
    char role [PARLEY_NAME_MAX + 8];
    const char *caps [] = { "operator", NULL, NULL };
    if (action == WEB_ACTION_SUBMIT) {
        snprintf (role, sizeof role, "role:%s", json_string_value (json_object_get (request, "role")));
        caps [1] = role;
    }
    parley_err_t err;
    parley_client_t *client = web_operator_open (self->operator_, caps, false, &err, why, why_size);
    if (!client)
        return web_operator_status (err);
    json_t *result = NULL;
    why [0] = 0;
    switch (action) {
        case WEB_ACTION_WORLD_RESET: {
            const json_t *seed = json_object_get (request, "seed");
            err = parley_client_world_reset (client, seed? (uint64_t) json_integer_value (seed): 0);
            break;
        }
        case WEB_ACTION_STATE_SET:
            err = s_state_set (client, request, why, why_size);
            break;
        case WEB_ACTION_RESUME:
            err = parley_client_resume (client, (uint64_t) json_integer_value (
                                            json_object_get (request, "checkpoint")), NULL);
            break;
        case WEB_ACTION_SUBMIT:
            err = s_submit (client, request, why, why_size, &result);
            break;
    }
    if (err != PARLEY_OK && !(err == PARLEY_ERR_INVALID && why [0]))
        snprintf (why, why_size, "%s: %s", parley_strerror (err), parley_client_error_text (client));
    json_decref (result);
    //  Gone again at once, mail and all: the team sees no new teammate.
    web_operator_close (self->operator_, &client);
    return web_operator_status (err);
}
