// SPDX-License-Identifier: MIT
/*  pkeys - certificates and handshake monitoring on bare libzmq sockets.
    See pkeys.h.

    A certificate is a ZPL file: sections at the left margin, their
    entries indented by four spaces, "name = value" with the value quoted
    or bare. The keys are the `curve` section's public-key and secret-key,
    40 characters of Z85 each; a public certificate has no secret-key, and
    a key of all zeros means none. (czmq's zcert_load reads NAME_secret when
    it exists and NAME otherwise, as this does.)
*/
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zmq.h>
#include "pkeys.h"

static const char s_zero_key [] = "0000000000000000000000000000000000000000";

//  `line` without its leading `depth` and trailing whitespace.
static char *
s_trim (char *line, int *depth)
{
    int spaces = 0;
    while (line [spaces] == ' ')
        spaces++;
    *depth = spaces / 4;
    char *text = line + spaces;
    size_t len = strlen (text);
    while (len && (text [len - 1] == '\n' || text [len - 1] == '\r' || text [len - 1] == ' '
                   || text [len - 1] == '\t'))
        text [--len] = 0;
    return text;
}

//  "name = value": copies the value (unquoted) into `out` when `name` is
//  the entry's name.
static bool
s_entry (const char *text, const char *name, char *out, size_t out_size)
{
    size_t len = strlen (name);
    if (strncmp (text, name, len) != 0)
        return false;
    const char *p = text + len;
    while (*p == ' ')
        p++;
    if (*p++ != '=')
        return false;
    while (*p == ' ')
        p++;
    size_t value_len = strlen (p);
    if (value_len >= 2 && (*p == '"' || *p == '\'') && p [value_len - 1] == *p) {
        p++;
        value_len -= 2;
    }
    if (value_len >= out_size)
        return false;
    memcpy (out, p, value_len);
    out [value_len] = 0;
    return true;
}

//  The two keys of the file at `file` (empty when absent). 0, or -1 when
//  it cannot be read.
static int
s_read_keys (const char *file, char public_key [PKEYS_KEY],
             char secret_key [PKEYS_KEY])
{
    public_key [0] = secret_key [0] = 0;
    FILE *input = fopen (file, "r");
    if (!input)
        return -1;
    char line [1024];
    bool in_curve = false;
    while (fgets (line, sizeof line, input)) {
        int depth;
        char *text = s_trim (line, &depth);
        if (!*text || *text == '#')
            continue;
        if (depth == 0)
            in_curve = strcmp (text, "curve") == 0;
        else
        if (in_curve && depth == 1
        &&  !s_entry (text, "public-key", public_key, PKEYS_KEY))
            s_entry (text, "secret-key", secret_key, PKEYS_KEY);
    }
    fclose (input);
    return 0;
}

static bool
s_key_ok (const char *key)
{
    return strlen (key) == PKEYS_KEY - 1 && strcmp (key, s_zero_key) != 0;
}

int
pkeys_load (const char *path, bool need_secret, char public_key [PKEYS_KEY],
                   char secret_key [PKEYS_KEY], char *why, size_t why_size)
{
    char secret [4096];
    snprintf (secret, sizeof secret, "%s_secret", path);
    struct stat st;
    const char *file = stat (secret, &st) == 0 ? secret : path;
    if (stat (file, &st) != 0) {
        snprintf (why, why_size, "cannot read key %s: %s", path, strerror (errno));
        return -1;
    }
    if (!S_ISREG (st.st_mode)) {
        snprintf (why, why_size, "key %s is not a regular file", file);
        return -1;
    }
    if (s_read_keys (file, public_key, secret_key) != 0) {
        snprintf (why, why_size, "cannot read key %s: %s", file, strerror (errno));
        return -1;
    }
    if (!s_key_ok (public_key)) {
        snprintf (why, why_size, "%s is not a CZMQ certificate (make one with parley-keygen)",
                  file);
        return -1;
    }
    if (need_secret) {
        if (!s_key_ok (secret_key)) {
            snprintf (why, why_size, "%s has no secret key (expected %s, written by parley-keygen)",
                      path, secret);
            return -1;
        }
        if (st.st_mode & (S_IRWXG | S_IRWXO)) {
            snprintf (why, why_size, "secret key %s is readable by others (mode %03o); "
                      "chmod 600 it", file, (unsigned) (st.st_mode & 0777));
            return -1;
        }
    }
    return 0;
}

void *
pkeys_watch (void *context, void *sock)
{
    char endpoint [64];
    snprintf (endpoint, sizeof endpoint, "inproc://parley-watch-%p", sock);
    int events = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
               | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
    if (zmq_socket_monitor (sock, endpoint, events) != 0)
        return NULL;
    void *watch = zmq_socket (context, ZMQ_PAIR);
    if (watch && zmq_connect (watch, endpoint) != 0) {
        zmq_close (watch);
        watch = NULL;
    }
    return watch;
}

bool
pkeys_watch_failed (void *watch, char *why, size_t why_size)
{
    if (!watch)
        return false;
    bool failed = false;
    bool specific = false;      //  why names the cause, not just a failure
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    //  Each event is two frames: 16-bit event and 32-bit value, then the
    //  peer's endpoint. The last event wins, except that a bare failure
    //  (the peer closed first: HANDSHAKE_FAILED_NO_DETAIL, EPIPE) never
    //  hides a cause an earlier attempt reported; which of the two a
    //  reconnect sees depends on which side notices the mismatch first.
    while (zmq_msg_recv (&frame, watch, ZMQ_DONTWAIT) >= 0) {
        bool first = zmq_msg_size (&frame) == 6 && zmq_msg_more (&frame);
        uint16_t event = 0;
        uint32_t value = 0;
        if (first) {
            memcpy (&event, zmq_msg_data (&frame), 2);
            memcpy (&value, (char *) zmq_msg_data (&frame) + 2, 4);
        }
        while (zmq_msg_more (&frame) && zmq_msg_recv (&frame, watch, 0) >= 0)
            ;
        if (!first)
            continue;
        failed = true;
        if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
            snprintf (why, why_size, "the broker refused this key (ZAP status %u): is its "
                      "public certificate in the broker's --curve-allow directory?", value);
            specific = true;
        }
        else
        if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
        &&  value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
            snprintf (why, why_size, "security mismatch: one side uses CURVE and the other "
                      "does not (--curve-key/--curve-server-key)");
            specific = true;
        }
        else
        if (!specific)
            snprintf (why, why_size, "the connection's handshake failed (event 0x%x, value 0x%x): "
                      "wrong --curve-server-key?", event, value);
    }
    zmq_msg_close (&frame);
    return failed;
}
