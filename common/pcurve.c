// SPDX-License-Identifier: MIT
/*  pcurve - CurveZMQ certificates for Parley. See pcurve.h.

    The files are checked by pkeys (a missing secret, a secret file
    readable by others: libzmq and czmq would use a world-readable key
    without a word) before czmq loads them with their metadata.
*/
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "pcurve.h"
#include "pkeys.h"

zcert_t *
pcurve_load (const char *path, bool need_secret, char *why, size_t why_size)
{
    assert (path);
    //  The checks (and their sentences) are pkeys', shared with libparley.
    char public_key [PKEYS_KEY], secret_key [PKEYS_KEY];
    if (pkeys_load (path, need_secret, public_key, secret_key, why, why_size) != 0)
        return NULL;
    zcert_t *cert = zcert_load (path);
    if (!cert)
        snprintf (why, why_size, "%s is not a CZMQ certificate (make one with parley-keygen)",
                  path);
    return cert;
}

int
pcurve_client (zsock_t *sock, const char *own_cert, const char *server_cert,
               char *why, size_t why_size)
{
    assert (sock);
    bool own = own_cert && *own_cert;
    bool server = server_cert && *server_cert;
    if (!own && !server)
        return 0;
    if (!own || !server) {
        snprintf (why, why_size, "CURVE needs both the own key (--curve-key) and the broker's "
                  "public key (--curve-server-key)");
        return -1;
    }
    zcert_t *mine = pcurve_load (own_cert, true, why, why_size);
    if (!mine)
        return -1;
    zcert_t *theirs = pcurve_load (server_cert, false, why, why_size);
    if (!theirs) {
        zcert_destroy (&mine);
        return -1;
    }
    zcert_apply (mine, sock);
    zsock_set_curve_serverkey (sock, zcert_public_txt (theirs));
    zcert_destroy (&mine);
    zcert_destroy (&theirs);
    return 0;
}

void
pcurve_server (zsock_t *sock, zcert_t *cert, const char *zap_domain)
{
    assert (sock && cert && zap_domain);
    zcert_apply (cert, sock);
    zsock_set_curve_server (sock, 1);
    zsock_set_zap_domain (sock, zap_domain);
}

static const struct {
    const char *name;
    pcurve_right_t bit;
} s_rights [] = {
    { "agent", PCURVE_RIGHT_AGENT },
    { "tap", PCURVE_RIGHT_TAP },
    { "admin", PCURVE_RIGHT_ADMIN },
};

bool
pcurve_rights_parse (const char *text, unsigned *rights, char *why, size_t why_size)
{
    *rights = 0;
    const char *at = text? text: "";
    while (*at) {
        size_t len = strcspn (at, ",");
        bool known = false;
        for (size_t i = 0; i < sizeof s_rights / sizeof s_rights [0]; i++)
            if (strlen (s_rights [i].name) == len && memcmp (s_rights [i].name, at, len) == 0) {
                *rights |= s_rights [i].bit;
                known = true;
            }
        if (!known && len > 0) {
            snprintf (why, why_size, "unknown right \"%.*s\" (agent, tap, admin)", (int) len, at);
            return false;
        }
        at += len;
        if (*at == ',')
            at++;
    }
    return true;
}

void
pcurve_rights_format (unsigned rights, char *buf, size_t size)
{
    assert (buf && size > 0);
    buf [0] = 0;
    size_t used = 0;
    for (size_t i = 0; i < sizeof s_rights / sizeof s_rights [0]; i++)
        if (rights & s_rights [i].bit) {
            int n = snprintf (buf + used, size - used, "%s%s", used? ",": "", s_rights [i].name);
            if (n < 0 || (size_t) n >= size - used)
                break;
            used += (size_t) n;
        }
    if (!used)
        snprintf (buf, size, "none");
}

bool
pcurve_may_be (const char *agents, const char *id)
{
    if (!agents || !id)
        return false;
    if (strcmp (agents, "*") == 0)
        return true;
    size_t id_len = strlen (id);
    const char *at = agents;
    while (*at) {
        size_t len = strcspn (at, ",");
        if (len == id_len && memcmp (at, id, len) == 0)
            return true;
        at += len;
        if (*at == ',')
            at++;
    }
    return false;
}

//  mkdir -p: missing parents get mode 0755 and `dir` itself `mode`, set
//  with chmod so the process umask (0077 under the systemd units) does not
//  narrow what others must read. Existing directories are left alone.
static int
s_mkdirs (const char *dir, mode_t mode, char *why, size_t why_size)
{
    char path [4096];
    snprintf (path, sizeof path, "%s", dir);
    size_t len = strlen (path);
    for (size_t i = 1; i <= len; i++) {
        if (path [i] != '/' && path [i] != 0)
            continue;
        char saved = path [i];
        path [i] = 0;
        bool last = saved == 0 || (saved == '/' && path [i + 1] == 0);
        if (mkdir (path, 0700) == 0) {
            if (chmod (path, last? mode: 0755) != 0) {
                snprintf (why, why_size, "cannot chmod %s: %s", path, strerror (errno));
                return -1;
            }
        }
        else
        if (errno != EEXIST) {
            snprintf (why, why_size, "cannot create %s: %s", path, strerror (errno));
            return -1;
        }
        path [i] = saved;
        if (last)
            break;
    }
    return 0;
}

int
pcurve_keygen (const char *dir, const char *name, const char *agents, unsigned rights,
               char *why, size_t why_size)
{
    assert (dir && name);
    if (!*name || strchr (name, '/') || name [0] == '.') {
        snprintf (why, why_size, "key name \"%s\" must be a plain file name", name);
        return -1;
    }
    if (s_mkdirs (dir, 0700, why, why_size) != 0)
        return -1;
    char path [4096], secret [4200];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    snprintf (secret, sizeof secret, "%s_secret", path);
    struct stat st;
    if (stat (path, &st) == 0 || stat (secret, &st) == 0) {
        snprintf (why, why_size, "%s already exists; keys are never overwritten "
                  "(remove it first to replace it)", path);
        return -1;
    }
    zcert_t *cert = zcert_new ();
    if (!cert) {
        snprintf (why, why_size, "cannot make a key pair (libzmq without CURVE?)");
        return -1;
    }
    char text [64];
    pcurve_rights_format (rights, text, sizeof text);
    zcert_set_meta (cert, "rights", "%s", text);
    if (agents && *agents)
        zcert_set_meta (cert, "agents", "%s", agents);
    //  zcert_save_secret writes under a private umask; the chmod makes the
    //  mode certain whatever czmq does.
    mode_t old = umask (077);
    int rc = zcert_save (cert, path);
    umask (old);
    zcert_destroy (&cert);
    if (rc != 0 || chmod (secret, 0600) != 0 || chmod (path, 0644) != 0) {
        snprintf (why, why_size, "cannot write %s: %s", path, strerror (errno));
        return -1;
    }
    return 0;
}

int
pcurve_copy_public (const char *path, const char *dir, const char *name,
                    char *why, size_t why_size)
{
    char target [4096];
    snprintf (target, sizeof target, "%s/%s", dir, name);
    struct stat st;
    if (stat (target, &st) == 0)
        return 0;
    if (s_mkdirs (dir, 0755, why, why_size) != 0)
        return -1;
    zcert_t *cert = pcurve_load (path, false, why, why_size);
    if (!cert)
        return -1;
    int rc = zcert_save_public (cert, target);
    zcert_destroy (&cert);
    if (rc != 0 || chmod (target, 0644) != 0) {
        snprintf (why, why_size, "cannot write %s: %s", target, strerror (errno));
        return -1;
    }
    return 0;
}

zsock_t *
pcurve_watch (zsock_t *sock)
{
    assert (sock);
    char endpoint [64];
    snprintf (endpoint, sizeof endpoint, "inproc://pcurve-watch-%p", (void *) sock);
    int events = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
               | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
    if (zmq_socket_monitor (zsock_resolve (sock), endpoint, events) != 0)
        return NULL;
    zsock_t *watch = zsock_new (ZMQ_PAIR);
    if (watch && zsock_connect (watch, "%s", endpoint) != 0)
        zsock_destroy (&watch);
    return watch;
}

bool
pcurve_watch_failed (zsock_t *watch, char *why, size_t why_size)
{
    return watch && pkeys_watch_failed (zsock_resolve (watch), why, why_size);
}

void
pcurve_z85 (const unsigned char key [32], char out [41])
{
    if (!zmq_z85_encode (out, key, 32))
        out [0] = 0;
}
