/*  web_actions - WORLD_RESET and WRITE for the page. See web_actions.h. */
#include <assert.h>
#include <czmq.h>
#include <microhttpd.h>
#include <parley/client.h>
#include <pthread.h>
#include "web_actions.h"

struct _web_actions_t {
    pthread_mutex_t lock;
    parley_client_t *client;
    bool connected;
};

web_actions_t *
web_actions_new (const char *broker, const char *curve_key, const char *curve_server_key,
                 int64_t timeout_ms, char *why, size_t why_size)
{
    assert (broker);
    web_actions_t *self = (web_actions_t *) zmalloc (sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    char name [PARLEY_NAME_MAX + 1];
    snprintf (name, sizeof name, "web-ops-%d", (int) getpid ());
    self->client = parley_client_new (broker, name);
    parley_client_add_cap (self->client, "operator");
    parley_client_set_observe (self->client, true);
    parley_client_set_timeout (self->client, timeout_ms, 0);
    parley_client_set_connect_attempts (self->client, 1);
    if (parley_client_set_security (self->client, curve_key, curve_server_key, NULL) != PARLEY_OK) {
        snprintf (why, why_size, "%s", parley_client_error_text (self->client));
        web_actions_destroy (&self);
    }
    return self;
}

void
web_actions_destroy (web_actions_t **self_p)
{
    assert (self_p);
    web_actions_t *self = *self_p;
    if (!self)
        return;
    parley_client_destroy (&self->client);
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
    parley_op_t op = { .op = PARLEY_OP_SET, .key = json_string_value (key),
                       .value = packed, .value_size = used };
    parley_err_t err = parley_client_write (self->client, &op, 1, NULL);
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
    parley_err_t err = PARLEY_OK;
    if (!self->connected) {
        err = parley_client_connect (self->client);
        self->connected = err == PARLEY_OK;
    }
    if (err == PARLEY_OK) {
        if (action == WEB_ACTION_WORLD_RESET) {
            const json_t *seed = json_object_get (request, "seed");
            if (seed && (!json_is_integer (seed) || json_integer_value (seed) < 0)) {
                snprintf (why, why_size, "world-reset: \"seed\" must be a non-negative integer");
                pthread_mutex_unlock (&self->lock);
                return MHD_HTTP_BAD_REQUEST;
            }
            err = parley_client_world_reset (self->client, seed? (uint64_t) json_integer_value (seed): 0);
        }
        else {
            why [0] = 0;
            err = s_state_set (self, request, why, why_size);
            if (err == PARLEY_ERR_INVALID && why [0]) {
                pthread_mutex_unlock (&self->lock);
                return MHD_HTTP_BAD_REQUEST;
            }
        }
    }
    if (err != PARLEY_OK)
        snprintf (why, why_size, "%s: %s", parley_strerror (err), parley_client_error_text (self->client));
    pthread_mutex_unlock (&self->lock);
    return s_status (err);
}
