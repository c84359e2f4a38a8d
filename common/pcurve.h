// SPDX-License-Identifier: MIT
/*  pcurve - CurveZMQ keys for Parley: load a certificate, apply it to a
    socket, read what a key is allowed to do, and write new key pairs.

    Certificates are CZMQ's (zcert): NAME holds the public key and the
    metadata, NAME_secret the secret key too (mode 0600). Parley reads two
    metadata entries, written by parley-keygen:

        agents = "Scout1,Scout2"        ids the key may say HELLO as
                                        ("*": any id)
        rights = "agent,tap"            agent, tap, admin (comma-separated)

    A client applies its own pair and the broker's public certificate:

        char why [256];
        if (pcurve_client (sock, "keys/scout1", "keys/broker.pub", why, sizeof why))
            ... refuse to start: why says which file and what is wrong ...

    Both paths NULL (or empty) leaves the socket in plain mode. The broker
    applies its own pair with pcurve_server. Every call that can fail says
    why in a sentence naming the file.
*/
#ifndef PARLEY_PCURVE_H
#define PARLEY_PCURVE_H

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>

//  Rights a key carries (a bit set).
typedef enum {
    PCURVE_RIGHT_AGENT = 1,     //  HELLO as the ids it names; agent requests
    PCURVE_RIGHT_TAP = 2,       //  the tap socket, and HELLO observe
    PCURVE_RIGHT_ADMIN = 4      //  WORLD_RESET, WRITE delete/clear
} pcurve_right_t;

#define PCURVE_RIGHTS_ALL (PCURVE_RIGHT_AGENT | PCURVE_RIGHT_TAP | PCURVE_RIGHT_ADMIN)

//  Loads a certificate. With `need_secret`, the secret key must be there
//  (NAME_secret, or NAME itself if it is a secret file), and a secret file
//  readable by group or others is refused. NULL with a sentence in `why`.
zcert_t *pcurve_load (const char *path, bool need_secret, char *why, size_t why_size);

//  Makes `sock` a CURVE client: own pair from `own_cert`, the broker's
//  public key from `server_cert`. Both NULL/empty: plain, returns 0. Only
//  one given, or a file unusable: -1 with `why`.
int pcurve_client (zsock_t *sock, const char *own_cert, const char *server_cert,
                   char *why, size_t why_size);

//  Makes `sock` a CURVE server with `cert` (which has its secret key),
//  authenticated through ZAP under `zap_domain`.
void pcurve_server (zsock_t *sock, zcert_t *cert, const char *zap_domain);

//  "agent,tap,admin" -> bits. False (with `why`) on an unknown word.
bool pcurve_rights_parse (const char *text, unsigned *rights, char *why, size_t why_size);
//  Bits -> "agent,tap,admin" (or "none").
void pcurve_rights_format (unsigned rights, char *buf, size_t size);
//  True if `id` is in the comma-separated `agents` list, or the list is "*".
bool pcurve_may_be (const char *agents, const char *id);

//  Writes a new key pair as DIR/NAME (public) and DIR/NAME_secret (0600),
//  creating DIR (mode 0700) and its missing parents (0755), with the
//  agents/rights metadata.
//  Refuses to overwrite an existing file. 0, or -1 with `why`.
int pcurve_keygen (const char *dir, const char *name, const char *agents, unsigned rights,
                   char *why, size_t why_size);

//  Copies the public certificate `path` to DIR/NAME (DIR and parents created 0755),
//  unless DIR/NAME exists. 0, or -1 with `why`.
int pcurve_copy_public (const char *path, const char *dir, const char *name,
                        char *why, size_t why_size);

//  Handshake failures are silent in libzmq: a refused client only sees no
//  reply. pcurve_watch (before connecting) starts a socket monitor and
//  returns the socket its events arrive on (destroy it before `sock`);
//  pcurve_watch_failed says, after a timeout, whether a handshake failed
//  and why (the broker refused the key, or plain and CURVE met).
zsock_t *pcurve_watch (zsock_t *sock);
bool pcurve_watch_failed (zsock_t *watch, char *why, size_t why_size);

//  The key's 40-character Z85 form from the 32 bytes ZAP hands over.
void pcurve_z85 (const unsigned char key [32], char out [41]);

#endif
