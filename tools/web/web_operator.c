// SPDX-License-Identifier: MIT
/*  web_operator - parley-web's registered connections, one at a time.
    See web_operator.h.
*/
#include <assert.h>
#include <czmq.h>
#include <microhttpd.h>
#include <pthread.h>
#include "pcurve.h"
#include "web_operator.h"

struct _web_operator_t {
    pthread_mutex_t lock;
    char *broker;
    char *curve_key;
    char *curve_server_key;
    int64_t timeout_ms;
    char id [PARLEY_NAME_MAX + 1];
    bool observer;                  //  the connection open now is an observer
};

static char *
s_dup (const char *text)
{
    return text? strdup (text): NULL;
}

//  A client with the operator's settings, or NULL with `why`.
static parley_client_t *
s_client (web_operator_t *self, char *why, size_t why_size)
{
    parley_client_t *client = parley_client_new (self->broker, self->id);
    if (!client) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    parley_client_set_timeout (client, self->timeout_ms, 0);
    parley_client_set_connect_attempts (client, 1);
    parley_client_set_attempts (client, 1);
    if (parley_client_set_security (client, self->curve_key, self->curve_server_key, NULL)
        != PARLEY_OK) {
        snprintf (why, why_size, "%s", parley_client_error_text (client));
        parley_client_destroy (&client);
    }
    return client;
}

web_operator_t *
web_operator_new (const char *broker, const char *curve_key, const char *curve_server_key,
                  const char *id, int64_t timeout_ms, char *why, size_t why_size)
{
    assert (broker);
    web_operator_t *self = (web_operator_t *) zmalloc (sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    self->broker = strdup (broker);
    self->curve_key = s_dup (curve_key);
    self->curve_server_key = s_dup (curve_server_key);
    self->timeout_ms = timeout_ms;
    snprintf (self->id, sizeof self->id, "web-operator-%d", (int) getpid ());
    if (id && *id)
        snprintf (self->id, sizeof self->id, "%s", id);
    else
    if (curve_key && *curve_key) {
        //  A CURVE broker lets a key be only the ids it names: one named
        //  id is the one to use.
        char ignored [256];
        zcert_t *cert = pcurve_load (curve_key, false, ignored, sizeof ignored);
        const char *agents = cert? zcert_meta (cert, "agents"): NULL;
        if (agents && *agents && !strchr (agents, ',') && !streq (agents, "*"))
            snprintf (self->id, sizeof self->id, "%s", agents);
        zcert_destroy (&cert);
    }
    //  The key files are checked now, not at the first use.
    parley_client_t *client = s_client (self, why, why_size);
    if (!client)
        web_operator_destroy (&self);
    parley_client_destroy (&client);
    return self;
}

void
web_operator_destroy (web_operator_t **self_p)
{
    assert (self_p);
    web_operator_t *self = *self_p;
    if (!self)
        return;
    free (self->broker);
    free (self->curve_key);
    free (self->curve_server_key);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

const char *
web_operator_id (web_operator_t *self)
{
    assert (self);
    return self->id;
}

parley_client_t *
web_operator_open (web_operator_t *self, const char *const *caps, bool observe,
                   parley_err_t *err, char *why, size_t why_size)
{
    assert (self && err);
    pthread_mutex_lock (&self->lock);
    parley_client_t *client = s_client (self, why, why_size);
    if (!client) {
        *err = PARLEY_ERR_INVALID;
        pthread_mutex_unlock (&self->lock);
        return NULL;
    }
    parley_client_set_observe (client, observe);
    for (size_t i = 0; caps && caps [i] && i < 4; i++)
        parley_client_add_cap (client, caps [i]);
    *err = parley_client_connect (client);
    if (*err != PARLEY_OK) {
        snprintf (why, why_size, "HELLO as %s: %s: %s", self->id, parley_strerror (*err),
                  parley_client_error_text (client));
        parley_client_destroy (&client);
        pthread_mutex_unlock (&self->lock);
        return NULL;
    }
    self->observer = observe;
    return client;
}

void
web_operator_close (web_operator_t *self, parley_client_t **client_p)
{
    assert (self && client_p);
    if (*client_p && !self->observer)
        parley_client_bye (*client_p, true);
    parley_client_destroy (client_p);
    pthread_mutex_unlock (&self->lock);
}

int
web_operator_status (parley_err_t err)
{
    switch (err) {
        case PARLEY_OK: return MHD_HTTP_OK;
        case PARLEY_ERR_NO_WORKFLOW:
        case PARLEY_ERR_NO_SUCH_CHECKPOINT: return MHD_HTTP_NOT_FOUND;
        case PARLEY_ERR_UNAUTHORIZED: return MHD_HTTP_FORBIDDEN;
        case PARLEY_ERR_INVALID: return MHD_HTTP_BAD_REQUEST;
        case PARLEY_ERR_TIMEOUT:
        case PARLEY_ERR_LOST:
        case PARLEY_ERR_SOCKET: return MHD_HTTP_BAD_GATEWAY;
        default: return MHD_HTTP_CONFLICT;
    }
}
