// SPDX-License-Identifier: MIT
/*  auth - ZAP handler and key allowlist. See auth.h.

    ZAP (RFC 27) request frames: version "1.0", request id, domain,
    address, routing id, mechanism, then the mechanism's credentials (for
    CURVE the client's 32-byte public key). The reply: version, request id,
    status code, status text, user id, metadata (empty here).
*/
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "auth.h"
#include "pcurve.h"
#include "plog.h"

typedef struct {
    unsigned rights;
    char *agents;               //  "A,B", "*", or NULL
} auth_key_t;

struct _auth_t {
    zsock_t *zap;
    char *allow_dir;            //  NULL: plain mode
    zhashx_t *keys;             //  Z85 public key -> auth_key_t
    uint64_t fingerprint;       //  of allow_dir's files when last read
    uint64_t next_serial;
    uint64_t denied;
};

static plog_limit_t s_denied_limit;

static void
s_key_destroy (void **item_p)
{
    auth_key_t *key = *item_p;
    if (key) {
        free (key->agents);
        free (key);
        *item_p = NULL;
    }
}

//  Reads every public certificate of the allowlist directory into a fresh
//  table. A secret key there is refused: that directory is meant to be
//  copied around, and one stray secret would leak the key.
static zhashx_t *
s_load_dir (const char *dir, char *why, size_t why_size)
{
    DIR *handle = opendir (dir);
    if (!handle) {
        snprintf (why, why_size, "cannot read --curve-allow %s: %s", dir, strerror (errno));
        return NULL;
    }
    zhashx_t *keys = zhashx_new ();
    zhashx_set_destructor (keys, s_key_destroy);
    struct dirent *entry;
    bool ok = true;
    while (ok && (entry = readdir (handle))) {
        const char *name = entry->d_name;
        if (name [0] == '.')
            continue;
        size_t len = strlen (name);
        if (len > 7 && strcmp (name + len - 7, "_secret") == 0) {
            snprintf (why, why_size, "%s/%s is a secret key: the allowlist holds public "
                      "certificates only", dir, name);
            ok = false;
            break;
        }
        char path [4096];
        snprintf (path, sizeof path, "%s/%s", dir, name);
        struct stat st;
        if (stat (path, &st) != 0 || !S_ISREG (st.st_mode))
            continue;
        zcert_t *cert = pcurve_load (path, false, why, why_size);
        if (!cert) {
            ok = false;
            break;
        }
        auth_key_t *key = calloc (1, sizeof *key);
        assert (key);
        char detail [256];
        const char *rights = zcert_meta (cert, "rights");
        if (!pcurve_rights_parse (rights? rights: "agent", &key->rights, detail, sizeof detail)) {
            snprintf (why, why_size, "%s: %s", path, detail);
            free (key);
            zcert_destroy (&cert);
            ok = false;
            break;
        }
        const char *agents = zcert_meta (cert, "agents");
        key->agents = agents && *agents? strdup (agents): NULL;
        if (zhashx_insert (keys, zcert_public_txt (cert), key) != 0) {
            plog_warn ("%s repeats a key already in %s; the first one counts", path, dir);
            s_key_destroy ((void **) &key);
        }
        zcert_destroy (&cert);
    }
    closedir (handle);
    if (!ok)
        zhashx_destroy (&keys);
    return keys;
}

//  What the allowlist's files are now: every entry's name, inode, size and
//  modification time, and the directory's, folded into one number (FNV-1a).
//  A certificate edited in place changes its own mtime, not the
//  directory's: both count. What is slow: a stat per file, once a second.
static uint64_t
s_fingerprint (const char *dir)
{
    uint64_t hash = 1469598103934665603ULL;
    struct stat st;
    if (stat (dir, &st) != 0)
        return 0;
    uint64_t parts [4];
    DIR *handle = opendir (dir);
    struct dirent *entry;
    while (handle && (entry = readdir (handle))) {
        char path [4096];
        snprintf (path, sizeof path, "%s/%s", dir, entry->d_name);
        if (entry->d_name [0] == '.' || stat (path, &st) != 0)
            continue;
        parts [0] = (uint64_t) st.st_ino;
        parts [1] = (uint64_t) st.st_size;
        parts [2] = (uint64_t) st.st_mtim.tv_sec;
        parts [3] = (uint64_t) st.st_mtim.tv_nsec;
        //  Entries come in no fixed order: each one's hash is summed.
        uint64_t one = 1469598103934665603ULL;
        for (const char *c = entry->d_name; *c; c++)
            one = (one ^ (uint8_t) *c) * 1099511628211ULL;
        for (size_t i = 0; i < sizeof parts; i++)
            one = (one ^ ((const uint8_t *) parts) [i]) * 1099511628211ULL;
        hash += one;
    }
    if (handle)
        closedir (handle);
    return hash ? hash : 1;
}

//  Reloads the allowlist when its files changed since the last read (a
//  file added, removed, renamed or edited in place). A directory that
//  became unreadable or holds a bad file keeps the previous list, with a
//  warning. True when the list was replaced.
static bool
s_refresh (auth_t *self)
{
    uint64_t fingerprint = s_fingerprint (self->allow_dir);
    if (!fingerprint || fingerprint == self->fingerprint)
        return false;
    self->fingerprint = fingerprint;
    char why [512];
    zhashx_t *keys = s_load_dir (self->allow_dir, why, sizeof why);
    if (!keys) {
        plog_warn ("allowlist not reloaded, keeping %zu keys: %s", zhashx_size (self->keys), why);
        return false;
    }
    zhashx_destroy (&self->keys);
    self->keys = keys;
    plog_info ("allowlist %s: %zu keys", self->allow_dir, zhashx_size (keys));
    return true;
}

bool
auth_tick (auth_t *self)
{
    return self && self->allow_dir && s_refresh (self);
}

auth_t *
auth_new (const char *allow_dir, char *why, size_t why_size)
{
    auth_t *self = calloc (1, sizeof (auth_t));
    assert (self);
    self->next_serial = 1;
    if (allow_dir) {
        self->allow_dir = strdup (allow_dir);
        self->fingerprint = s_fingerprint (allow_dir);
        self->keys = s_load_dir (allow_dir, why, why_size);
        if (!self->keys) {
            auth_destroy (&self);
            return NULL;
        }
    }
    self->zap = zsock_new (ZMQ_REP);
    if (!self->zap || zsock_bind (self->zap, "inproc://zeromq.zap.01") != 0) {
        snprintf (why, why_size, "cannot bind the ZAP handler: %s", zmq_strerror (zmq_errno ()));
        auth_destroy (&self);
        return NULL;
    }
    return self;
}

void
auth_destroy (auth_t **self_p)
{
    assert (self_p);
    auth_t *self = *self_p;
    if (self) {
        zsock_destroy (&self->zap);
        zhashx_destroy (&self->keys);
        free (self->allow_dir);
        free (self);
        *self_p = NULL;
    }
}

zsock_t *
auth_sock (auth_t *self)
{
    return self->zap;
}

bool
auth_curve (auth_t *self)
{
    return self && self->allow_dir;
}

uint64_t
auth_denied (auth_t *self)
{
    return self? self->denied: 0;
}

size_t
auth_keys (auth_t *self)
{
    return self && self->keys? zhashx_size (self->keys): 0;
}

static void
s_reply (auth_t *self, const char *version, zframe_t *request_id, const char *status,
         const char *text, const char *user_id)
{
    zmsg_t *reply = zmsg_new ();
    zmsg_addstr (reply, version);
    zmsg_append (reply, &request_id);
    zmsg_addstr (reply, status);
    zmsg_addstr (reply, text);
    zmsg_addstr (reply, user_id);
    zmsg_addmem (reply, NULL, 0);
    zmsg_send (&reply, self->zap);
}

int
auth_on_request (zloop_t *loop, zsock_t *reader, void *arg)
{
    auth_t *self = arg;
    zmsg_t *request = zmsg_recv (self->zap);
    if (!request)
        return 0;
    char *version = zmsg_popstr (request);
    zframe_t *request_id = zmsg_pop (request);
    char *domain = zmsg_popstr (request);
    char *address = zmsg_popstr (request);
    zframe_t *routing_id = zmsg_pop (request);
    char *mechanism = zmsg_popstr (request);
    zframe_t *credential = zmsg_pop (request);
    char user_id [64] = "";
    const char *refusal = NULL;
    if (!version || !request_id || !domain || !mechanism)
        refusal = "malformed ZAP request";
    else
    if (!self->allow_dir)
        snprintf (user_id, sizeof user_id, "%" PRIu64, self->next_serial++);
    else
    if (strcmp (mechanism, "CURVE") != 0 || !credential || zframe_size (credential) != 32)
        refusal = "CURVE is required";
    else {
        s_refresh (self);
        char key [41];
        pcurve_z85 (zframe_data (credential), key);
        auth_key_t *entry = zhashx_lookup (self->keys, key);
        if (!entry)
            refusal = "key not in the allowlist";
        else
        if (strcmp (domain, AUTH_DOMAIN_TAP) == 0 && !(entry->rights & PCURVE_RIGHT_TAP))
            refusal = "the tap needs a key with the tap right";
        else
            snprintf (user_id, sizeof user_id, "%" PRIu64 " %s", self->next_serial++, key);
    }
    if (refusal) {
        self->denied++;
        plog_limited (&s_denied_limit, 5, PLOG_WARN, "connection from %s to %s refused: %s",
                      address? address: "?", domain? domain: "?", refusal);
        s_reply (self, "1.0", request_id? request_id: zframe_new_empty (), "400", refusal, "");
    }
    else
        s_reply (self, "1.0", request_id, "200", "OK", user_id);
    zstr_free (&version);
    zstr_free (&domain);
    zstr_free (&address);
    zstr_free (&mechanism);
    zframe_destroy (&routing_id);
    zframe_destroy (&credential);
    zmsg_destroy (&request);
    return 0;
}

bool
auth_parse (const char *user_id, uint64_t *serial, char key [41])
{
    key [0] = 0;
    if (!user_id || !*user_id)
        return false;
    char *end;
    errno = 0;
    unsigned long long value = strtoull (user_id, &end, 10);
    if (errno || end == user_id)
        return false;
    *serial = value;
    if (*end == ' ') {
        if (strlen (end + 1) != 40)
            return false;
        memcpy (key, end + 1, 41);
    }
    return *end == ' ' || *end == 0;
}

unsigned
auth_rights (auth_t *self, const char *key)
{
    if (!auth_curve (self))
        return PCURVE_RIGHTS_ALL;
    auth_key_t *entry = key && *key? zhashx_lookup (self->keys, key): NULL;
    return entry? entry->rights: 0;
}

const char *
auth_agents (auth_t *self, const char *key)
{
    if (!auth_curve (self))
        return "*";
    auth_key_t *entry = key && *key? zhashx_lookup (self->keys, key): NULL;
    return entry? entry->agents: NULL;
}
