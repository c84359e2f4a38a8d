// SPDX-License-Identifier: MIT
/*  pkeys - CurveZMQ certificates and handshake failures on bare libzmq
    sockets, without czmq: what libparley (which links no czmq) and
    pcurve (the broker's and tools' czmq side) share.

    A certificate is CZMQ's: NAME holds the public key, NAME_secret the
    secret key too (mode 0600). pkeys_load reads the keys into fixed
    buffers, with the checks every Parley program makes: a secret file
    readable by group or others is refused.
*/
#ifndef PARLEY_PKEYS_H
#define PARLEY_PKEYS_H

#include <stdbool.h>
#include <stddef.h>

#define PKEYS_KEY 41                    //  Z85 text of a key, with its NUL

//  Reads the certificate `path` (NAME_secret when it exists, else NAME).
//  With `need_secret` the secret key must be there. 0, or -1 with a
//  sentence naming the file in `why`.
int pkeys_load (const char *path, bool need_secret, char public_key [PKEYS_KEY],
                char secret_key [PKEYS_KEY], char *why, size_t why_size);
//  A monitor of `sock`'s handshake failures: events go to a PAIR socket
//  made on `context` (returned; close it before `sock`), or NULL.
void *pkeys_watch (void *context, void *sock);
//  After a timeout: whether a handshake failed on the monitored socket,
//  and why (the broker refused the key, or plain and CURVE met).
bool pkeys_watch_failed (void *watch, char *why, size_t why_size);

#endif
