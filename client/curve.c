// SPDX-License-Identifier: MIT
/*  curve - CurveZMQ keys on libparley's sockets. See curve.h. */
#include <stdio.h>
#include <zmq.h>
#include "curve.h"
#include "pkeys.h"

//  The three keys a client socket needs; 1 when plain, 0, or -1.
static int
s_keys (const char *own_cert, const char *server_cert, char own_public [PKEYS_KEY],
        char own_secret [PKEYS_KEY], char server_public [PKEYS_KEY], char *why, size_t why_size)
{
    bool own = own_cert && *own_cert;
    bool server = server_cert && *server_cert;
    if (!own && !server)
        return 1;
    if (!own || !server) {
        snprintf (why, why_size, "CURVE needs both the own key (--curve-key) and the broker's "
                  "public key (--curve-server-key)");
        return -1;
    }
    char unused [PKEYS_KEY];
    if (pkeys_load (own_cert, true, own_public, own_secret, why, why_size) != 0
    ||  pkeys_load (server_cert, false, server_public, unused, why, why_size) != 0)
        return -1;
    return 0;
}

int
client_curve_check (const char *own_cert, const char *server_cert, char *why, size_t why_size)
{
    char own_public [PKEYS_KEY], own_secret [PKEYS_KEY], server_public [PKEYS_KEY];
    return s_keys (own_cert, server_cert, own_public, own_secret, server_public,
                   why, why_size) < 0 ? -1 : 0;
}

int
client_curve_apply (void *sock, const char *own_cert, const char *server_cert,
                    char *why, size_t why_size)
{
    char own_public [PKEYS_KEY], own_secret [PKEYS_KEY], server_public [PKEYS_KEY];
    int rc = s_keys (own_cert, server_cert, own_public, own_secret, server_public, why, why_size);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    if (zmq_setsockopt (sock, ZMQ_CURVE_PUBLICKEY, own_public, PKEYS_KEY - 1) != 0
    ||  zmq_setsockopt (sock, ZMQ_CURVE_SECRETKEY, own_secret, PKEYS_KEY - 1) != 0
    ||  zmq_setsockopt (sock, ZMQ_CURVE_SERVERKEY, server_public, PKEYS_KEY - 1) != 0) {
        snprintf (why, why_size, "cannot use the CURVE keys: %s (libzmq built without CURVE?)",
                  zmq_strerror (zmq_errno ()));
        return -1;
    }
    return 0;
}
