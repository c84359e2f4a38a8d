// SPDX-License-Identifier: MIT
/*  curve - CurveZMQ for libparley's sockets: the key pair and the broker's
    public key (certificate files parley-keygen writes, read by pkeys)
    applied to a bare libzmq socket. The handshake monitor is pkeys_watch.
*/
#ifndef PARLEY_CLIENT_CURVE_H
#define PARLEY_CLIENT_CURVE_H

#include <stddef.h>

//  Checks the pair: both paths or neither (plain, returns 0), each file
//  usable. 0, or -1 with `why`.
int client_curve_check (const char *own_cert, const char *server_cert, char *why, size_t why_size);
//  Makes the libzmq socket `sock` a CURVE client of the broker whose
//  public certificate is `server_cert`. Both NULL: plain. 0, or -1 with `why`.
int client_curve_apply (void *sock, const char *own_cert, const char *server_cert,
                        char *why, size_t why_size);

#endif
