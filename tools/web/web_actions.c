// SPDX-License-Identifier: MIT
/*  web_actions - WORLD_RESET and WRITE for the page. See web_actions.h. */
#include <assert.h>
#include <czmq.h>
#include <microhttpd.h>
#include <parley/client.h>
#include <pthread.h>
#include "web_actions.h"

struct _web_actions_t {
    pthread_mutex_t lock;
    char *broker;
    char *curve_key;
    char *curve_server_key;
    int64_t timeout_ms;
    char name [PARLEY_NAME_MAX + 1];
    parley_client_t *client;        //  during one action only
};

static char *
s_dup (const char *text)
{
    return text? strdup (text): NULL;
}

//  A client for one action: HELLO as the operator (a registered id, since
//  the broker takes writes only from one), or NULL with `why`.
static parley_client_t *
s_client (web_actions_t *self, char *why, size_t why_size)
{
    parley_client_t *client = parley_client_new (self->broker, self->name);
    if (!client) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    parley_client_add_cap (client, "operator");
    parley_client_set_timeout (client, self->timeout_ms, 0);
    parley_client_set_connect_attempts (client, 1);
    if (parley_client_set_security (client, self->curve_key, self->curve_server_key, NULL) != PARLEY_OK) {
        snprintf (why, why_size, "%s", parley_client_error_text (client));
        parley_client_destroy (&client);
    }
    return client;
}

web_actions_t *
web_actions_new (const char *broker, const char *curve_key, const char *curve_server_key,
                 int64_t timeout_ms, char *why, size_t why_size)
{
    assert (broker);
    web_actions_t *self = (web_actions_t *) zmalloc (sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    self->broker = strdup (broker);
    self->curve_key = s_dup (curve_key);
    self->curve_server_key = s_dup (curve_server_key);
    self->timeout_ms = timeout_ms;
    snprintf (self->name, sizeof self->name, "web-operator-%d", (int) getpid ());
    //  The key files are checked now, not at the first click.
    parley_client_t *client = s_client (self, why, why_size);
    if (!client)
        web_actions_destroy (&self);
    parley_client_destroy (&client);
    return self;
}

void
web_actions_destroy (web_actions_t **self_p)
{
    assert (self_p);
    web_actions_t *self = *self_p;
    if (!self)
        return;
    free (self->broker);
    free (self->curve_key);
    free (self->curve_server_key);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

//  The HTTP status for a libparley outcome.
static int
s_status (parley_err_t err)
{
    switch (err) {
        case PARLEY_OK: return MHD_HTTP_OK;
        case PARLEY_ERR_TIMEOUT:
        case PARLEY_ERR_SOCKET: return MHD_HTTP_BAD_GATEWAY;
        case PARLEY_ERR_UNAUTHORIZED: return MHD_HTTP_FORBIDDEN;
        default: return MHD_HTTP_CONFLICT;
    }
}

static parley_err_t
s_state_set (web_actions_t *self, const json_t *request, char *why, size_t why_size)
{
    const json_t *key = json_object_get (request, "key");
    const json_t *value = json_object_get (request, "value");
    if (!json_is_string (key) || !json_string_length (key)) {
        snprintf (why, why_size, "state-set needs \"key\" (a non-empty string)");
        return PARLEY_ERR_INVALID;
    }
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
        err = parley_client_write (self->client, ops, NULL);
    parley_ops_destroy (&ops);
    free (packed);
    return err;
}

int
web_actions_run (void *arg, web_action_t action, const json_t *request, char *why, size_t why_size)
{
    web_actions_t *self = (web_actions_t *) arg;
    assert (self);
    assert (request);
    pthread_mutex_lock (&self->lock);
    self->client = s_client (self, why, why_size);
    if (!self->client) {
        pthread_mutex_unlock (&self->lock);
        return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
    parley_err_t err = parley_client_connect (self->client);
    if (err == PARLEY_OK) {
        if (action == WEB_ACTION_WORLD_RESET) {
            const json_t *seed = json_object_get (request, "seed");
            if (seed && (!json_is_integer (seed) || json_integer_value (seed) < 0)) {
                snprintf (why, why_size, "world-reset: \"seed\" must be a non-negative integer");
                err = PARLEY_ERR_INVALID;
                goto done;
            }
            err = parley_client_world_reset (self->client, seed? (uint64_t) json_integer_value (seed): 0);
        }
        else {
            why [0] = 0;
            err = s_state_set (self, request, why, why_size);
            if (err == PARLEY_ERR_INVALID && why [0])
                goto done;
        }
    }
    if (err != PARLEY_OK)
        snprintf (why, why_size, "%s: %s", parley_strerror (err), parley_client_error_text (self->client));
done:
    //  Gone again at once, mail and all: the team sees no new teammate.
    if (err != PARLEY_ERR_TIMEOUT && err != PARLEY_ERR_SOCKET)
        parley_client_bye (self->client, true);
    parley_client_destroy (&self->client);
    pthread_mutex_unlock (&self->lock);
    return err == PARLEY_ERR_INVALID? MHD_HTTP_BAD_REQUEST: s_status (err);
}
