// SPDX-License-Identifier: MIT
/*  tap_frame - a TAP frame and the Parley frame inside it; see tap_frame.h. */
#include <czmq.h>
#include <string.h>
#include "tap_frame.h"
#include "tap_record.h"

struct _tap_frame_t {
    size_t size;
    pmsg_t *tap;                //  outer TAP map, or NULL
    perr_t error;
    char why [256];
    char *peer;
    char dir_name [8];
    tap_dir_t dir;
    pmsg_t *body;               //  inner frame, or NULL
    perr_t body_error;
    char body_why [256];
    const void *body_data;      //  points into tap's zone
    size_t body_size;
};

const pwire_limits_t *
tap_frame_limits (void)
{
    static pwire_limits_t limits;
    if (limits.max_frame == 0) {
        limits = *pwire_default_limits ();
        limits.max_frame = TAP_RECORD_MAX;
        //  The TAP envelope adds one level of nesting and a few objects
        //  around a body that is itself within the default limits.
        limits.max_depth += 1;
        limits.max_objects += 16;
    }
    return &limits;
}

static void
s_decode_body (tap_frame_t *self)
{
    size_t len = 0;
    const char *body = pmsg_str (self->tap, "body", &len);
    if (!body) {
        self->body_error = PERR_BAD_FIELD;
        snprintf (self->body_why, sizeof self->body_why, "TAP frame has no body");
        return;
    }
    self->body_data = body;
    self->body_size = len;
    uint64_t id = 0;
    self->body = pmsg_decode (body, len, pwire_default_limits (), &self->body_error,
                              &id, self->body_why, sizeof self->body_why);
    if (self->body)
        self->body_error = PERR_NONE;
}

tap_frame_t *
tap_frame_new (const void *data, size_t size)
{
    assert (data || size == 0);
    tap_frame_t *self = (tap_frame_t *) zmalloc (sizeof (tap_frame_t));
    self->size = size;
    self->dir = TAP_DIR_UNKNOWN;
    uint64_t id = 0;
    self->tap = pmsg_decode (data, size, tap_frame_limits (), &self->error, &id,
                             self->why, sizeof self->why);
    if (self->tap && pmsg_type (self->tap) != PMSG_TAP) {
        self->error = PERR_UNKNOWN_TYPE;
        snprintf (self->why, sizeof self->why, "expected a TAP frame, got %s",
                  pmsg_type_name (pmsg_type (self->tap)));
        pmsg_destroy (&self->tap);
    }
    if (!self->tap) {
        self->peer = strdup ("");
        strcpy (self->dir_name, "?");
        return self;
    }
    self->error = PERR_NONE;
    size_t len = 0;
    const char *peer = pmsg_str (self->tap, "peer", &len);
    self->peer = strndup (peer? peer: "", peer? len: 0);
    const char *dir = pmsg_str (self->tap, "dir", &len);
    if (dir && len < sizeof self->dir_name) {
        memcpy (self->dir_name, dir, len);
        self->dir_name [len] = 0;
    }
    else
        strcpy (self->dir_name, "?");
    if (streq (self->dir_name, "in"))
        self->dir = TAP_DIR_IN;
    else
    if (streq (self->dir_name, "out"))
        self->dir = TAP_DIR_OUT;
    else
    if (streq (self->dir_name, "pub"))
        self->dir = TAP_DIR_PUB;
    s_decode_body (self);
    return self;
}

void
tap_frame_destroy (tap_frame_t **self_p)
{
    assert (self_p);
    tap_frame_t *self = *self_p;
    if (!self)
        return;
    pmsg_destroy (&self->body);
    pmsg_destroy (&self->tap);
    free (self->peer);
    free (self);
    *self_p = NULL;
}

bool tap_frame_ok (const tap_frame_t *self) { assert (self); return self->tap != NULL; }
perr_t tap_frame_error (const tap_frame_t *self) { assert (self); return self->error; }
const char *tap_frame_why (const tap_frame_t *self) { assert (self); return self->why; }
size_t tap_frame_size (const tap_frame_t *self) { assert (self); return self->size; }

uint64_t
tap_frame_tseq (const tap_frame_t *self)
{
    assert (self);
    return self->tap? pmsg_uint (self->tap, "tseq", 0): 0;
}

uint64_t
tap_frame_ts (const tap_frame_t *self)
{
    assert (self);
    return self->tap? pmsg_uint (self->tap, "ts", 0): 0;
}

tap_dir_t tap_frame_dir (const tap_frame_t *self) { assert (self); return self->dir; }
const char *tap_frame_dir_name (const tap_frame_t *self) { assert (self); return self->dir_name; }
const char *tap_frame_peer (const tap_frame_t *self) { assert (self); return self->peer; }
const pmsg_t *tap_frame_body (const tap_frame_t *self) { assert (self); return self->body; }
perr_t tap_frame_body_error (const tap_frame_t *self) { assert (self); return self->body_error; }
const char *tap_frame_body_why (const tap_frame_t *self) { assert (self); return self->body_why; }
size_t tap_frame_body_size (const tap_frame_t *self) { assert (self); return self->body_size; }
const void *tap_frame_body_data (const tap_frame_t *self) { assert (self); return self->body_data; }
