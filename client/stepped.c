// SPDX-License-Identifier: MIT
/*  stepped - parley_stepped_t: STEP's answer, one part per piece of the
    step (parley/world.h). The parts are the results SEND, WRITE, ACT and
    FETCH give, decoded by their own decoders from the part's record; they
    are made the first time a step has them and filled again after that.
    The reply is kept: the mail's bodies and the image point into it.
*/
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "mail_int.h"
#include "mem.h"
#include "observation_int.h"
#include "sent_int.h"
#include "state_int.h"
#include "stepped_int.h"

typedef struct {
    int code;
    char message [256];
} s_part_error_t;

struct _parley_stepped_t {
    pmsg_t *reply;
    uint64_t step, acked;
    bool replayed;
    parley_sent_t *sent;
    parley_written_t *written;
    parley_observation_t *observation;
    parley_mail_t *mail;
    bool has_sent, has_written, has_observation, has_mail;
    s_part_error_t ops_error, action_error;
};

parley_stepped_t *
client_stepped_new (void)
{
    return (parley_stepped_t *) client_mem_zalloc (sizeof (parley_stepped_t));
}

void
parley_stepped_destroy (parley_stepped_t **self_p)
{
    assert (self_p);
    parley_stepped_t *self = *self_p;
    if (self) {
        pmsg_destroy (&self->reply);
        parley_sent_destroy (&self->sent);
        parley_written_destroy (&self->written);
        parley_observation_destroy (&self->observation);
        parley_mail_destroy (&self->mail);
        client_mem_free (self);
        *self_p = NULL;
    }
}

static void
s_clear (parley_stepped_t *self)
{
    pmsg_destroy (&self->reply);
    self->step = self->acked = 0;
    self->replayed = false;
    self->has_sent = self->has_written = self->has_observation = self->has_mail = false;
    memset (&self->ops_error, 0, sizeof self->ops_error);
    memset (&self->action_error, 0, sizeof self->action_error);
    if (self->mail)
        client_mail_clear (self->mail);
}

static const msgpack_object *
s_record (const msgpack_object *root, const char *name)
{
    const msgpack_object *part = pobj_get (root, name);
    return part && part->type == MSGPACK_OBJECT_MAP ? part : NULL;
}

static void
s_part_error (const msgpack_object *root, const char *name, s_part_error_t *out)
{
    const msgpack_object *part = s_record (root, name);
    if (!part)
        return;
    out->code = (int) pobj_uint (part, "code", PARLEY_ERR_INTERNAL);
    if (out->code == 0)
        out->code = PARLEY_ERR_BAD_REPLY;
    size_t len = 0;
    const char *text = pobj_str (part, "message", &len);
    snprintf (out->message, sizeof out->message, "%.*s", (int) (text ? len : 0), text ? text : "");
}

static parley_err_t
s_decode (parley_stepped_t *self, pmsg_t **reply_p, uint64_t batch, size_t count,
          client_dedup_t *dedup)
{
    const msgpack_object *root = pmsg_root (*reply_p);
    const msgpack_object *part;
    parley_err_t rc = PARLEY_OK;
    if ((part = s_record (root, "sent"))) {
        if (!self->sent && !(self->sent = client_sent_new ()))
            return PARLEY_ERR_NOMEM;
        if ((rc = client_sent_decode (self->sent, part, batch, count)) != PARLEY_OK)
            return rc;
        self->has_sent = true;
    }
    if ((part = s_record (root, "written"))) {
        if (!self->written && !(self->written = client_written_new ()))
            return PARLEY_ERR_NOMEM;
        client_written_decode (self->written, part);
        self->has_written = true;
    }
    if ((part = s_record (root, "observation"))) {
        if (!self->observation && !(self->observation = client_observation_new ()))
            return PARLEY_ERR_NOMEM;
        if ((rc = client_observation_decode (self->observation, NULL, part)) != PARLEY_OK)
            return rc;
        self->has_observation = true;
    }
    const msgpack_object *mail = pobj_get (root, "mail");
    if (mail && mail->type == MSGPACK_OBJECT_ARRAY) {
        //  The last part: the duplicate filter moves only once nothing
        //  else can fail.
        if (!self->mail && !(self->mail = client_mail_new ()))
            return PARLEY_ERR_NOMEM;
        if ((rc = client_mail_decode (self->mail, NULL, root, "mail", dedup)) != PARLEY_OK)
            return rc;
        self->has_mail = true;
    }
    s_part_error (root, "ops_error", &self->ops_error);
    s_part_error (root, "action_error", &self->action_error);
    self->step = pobj_uint (root, "step", 0);
    self->replayed = pobj_bool (root, "replayed", false);
    self->acked = pobj_uint (root, "acked", 0);
    if (self->has_mail)
        client_mail_set_acked (self->mail, self->acked);
    self->reply = *reply_p;
    *reply_p = NULL;
    return PARLEY_OK;
}

parley_err_t
client_stepped_decode (parley_stepped_t *self, pmsg_t **reply_p, uint64_t batch, size_t count,
                       client_dedup_t *dedup)
{
    assert (self && reply_p && *reply_p);
    s_clear (self);
    parley_err_t rc = s_decode (self, reply_p, batch, count, dedup);
    if (rc != PARLEY_OK)
        s_clear (self);
    return rc;
}

uint64_t
parley_stepped_step (const parley_stepped_t *self)
{
    assert (self);
    return self->step;
}

bool
parley_stepped_replayed (const parley_stepped_t *self)
{
    assert (self);
    return self->replayed;
}

uint64_t
parley_stepped_acked (const parley_stepped_t *self)
{
    assert (self);
    return self->acked;
}

const parley_sent_t *
parley_stepped_sent (const parley_stepped_t *self)
{
    assert (self);
    return self->has_sent ? self->sent : NULL;
}

const parley_written_t *
parley_stepped_written (const parley_stepped_t *self)
{
    assert (self);
    return self->has_written ? self->written : NULL;
}

int
parley_stepped_ops_code (const parley_stepped_t *self)
{
    assert (self);
    return self->ops_error.code;
}

const char *
parley_stepped_ops_message (const parley_stepped_t *self)
{
    assert (self);
    return self->ops_error.message;
}

const parley_observation_t *
parley_stepped_observation (const parley_stepped_t *self)
{
    assert (self);
    return self->has_observation ? self->observation : NULL;
}

int
parley_stepped_action_code (const parley_stepped_t *self)
{
    assert (self);
    return self->action_error.code;
}

const char *
parley_stepped_action_message (const parley_stepped_t *self)
{
    assert (self);
    return self->action_error.message;
}

const parley_mail_t *
parley_stepped_mail (const parley_stepped_t *self)
{
    assert (self);
    return self->has_mail ? self->mail : NULL;
}
