// SPDX-License-Identifier: MIT
/*  tap_discover - HELLO observe, read WELCOME.tap; see tap_discover.h. */
#include <czmq.h>
#include <unistd.h>
#include "pconfig.h"
#include "parley/client.h"
#include "pmsg.h"
#include "tap_discover.h"

//  "tap-<host>-<pid>", with the host cut and cleaned to the name rules.
static void
s_agent_name (char *name, size_t size)
{
    char host [64] = "host";
    gethostname (host, sizeof host - 1);
    host [40] = 0;
    for (char *c = host; *c; c++)
        if (!isalnum ((unsigned char) *c) && *c != '_' && *c != '.' && *c != '-')
            *c = '_';
    snprintf (name, size, "tap-%s-%d", host, (int) getpid ());
}

int
tap_discover (const char *broker, const char *curve_key, const char *curve_server_key,
              int64_t timeout_ms, char *tap, size_t tap_size, char *why, size_t why_size)
{
    assert (broker);
    assert (tap && tap_size > 0);
    char agent [PROTO_MAX_NAME + 1];
    s_agent_name (agent, sizeof agent);
    parley_client_t *client = parley_client_new (broker, agent);
    if (!client) {
        snprintf (why, why_size, "out of memory");
        return PARLEY_EXIT_FAILURE;
    }
    parley_client_add_cap (client, "tap");
    //  An observer: the broker tells it the endpoints without registering
    //  it, so the tap never shows in AGENTS and cannot receive mail.
    parley_client_set_observe (client, true);
    parley_client_set_timeout (client, timeout_ms, 0);
    parley_client_set_connect_attempts (client, 1);
    parley_client_set_stop (client, (volatile sig_atomic_t *) &zsys_interrupted);
    int rc = PARLEY_EXIT_OK;
    parley_err_t err = parley_client_set_security (client, curve_key, curve_server_key, NULL);
    if (err != PARLEY_OK) {
        snprintf (why, why_size, "%s", parley_client_error_text (client));
        parley_client_destroy (&client);
        return PARLEY_EXIT_USAGE;
    }
    err = parley_client_connect (client);
    if (err == PARLEY_ERR_TIMEOUT || err == PARLEY_ERR_STOPPED || err == PARLEY_ERR_SOCKET) {
        snprintf (why, why_size, "broker %s: %s", broker,
                  err == PARLEY_ERR_STOPPED? "interrupted": parley_client_error_text (client));
        rc = PARLEY_EXIT_NETWORK;
    }
    else
    if (err != PARLEY_OK) {
        snprintf (why, why_size, "broker %s refused HELLO as %s: %s: %s", broker, agent,
                  parley_strerror (err), parley_client_error_text (client));
        rc = PARLEY_EXIT_FAILURE;
    }
    else {
        const parley_welcome_t *welcome = parley_client_welcome (client);
        snprintf (tap, tap_size, "%s", parley_welcome_tap (welcome));
        if (!*tap || streq (tap, "off")) {
            snprintf (why, why_size, "broker %s answered HELLO with WELCOME and no tap endpoint "
                      "(is its tap off?)", broker);
            rc = PARLEY_EXIT_FAILURE;
        }
        else
            tap_discover_fix_wildcard (tap, tap_size, broker);
    }
    parley_client_destroy (&client);
    return rc;
}

//  The host part of "tcp://HOST:PORT" as [start, end); false if not tcp.
static bool
s_tcp_host (const char *endpoint, const char **start, const char **end)
{
    if (strncmp (endpoint, "tcp://", 6) != 0)
        return false;
    *start = endpoint + 6;
    *end = strrchr (*start, ':');
    return *end != NULL;
}

void
tap_discover_fix_wildcard (char *endpoint, size_t size, const char *reference)
{
    assert (endpoint);
    const char *start, *end;
    if (!s_tcp_host (endpoint, &start, &end))
        return;
    size_t len = (size_t) (end - start);
    bool wild = (len == 1 && *start == '*') || (len == 7 && !memcmp (start, "0.0.0.0", 7))
             || (len == 4 && !memcmp (start, "[::]", 4));
    if (!wild)
        return;
    char host [256] = "127.0.0.1";
    const char *rstart, *rend;
    if (reference && s_tcp_host (reference, &rstart, &rend)
    &&  (size_t) (rend - rstart) < sizeof host && rend > rstart) {
        memcpy (host, rstart, (size_t) (rend - rstart));
        host [rend - rstart] = 0;
        if (streq (host, "*") || streq (host, "0.0.0.0") || streq (host, "[::]"))
            strcpy (host, "127.0.0.1");
    }
    char fixed [512];
    snprintf (fixed, sizeof fixed, "tcp://%s%s", host, end);
    if (strlen (fixed) < size)
        strcpy (endpoint, fixed);
}
