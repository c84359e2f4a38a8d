// SPDX-License-Identifier: MIT
/*  web_workflow - the workflow panel's reads. See web_workflow.h. */
#include <assert.h>
#include <czmq.h>
#include <microhttpd.h>
#include "wfjson.h"
#include "web_feed.h"
#include "web_workflow.h"

typedef enum {
    S_OVERVIEW,
    S_CHECKPOINT,
    S_DIFF
} s_read_t;

struct _web_workflow_t {
    web_operator_t *operator_;
};

web_workflow_t *
web_workflow_new (web_operator_t *operator_)
{
    assert (operator_);
    web_workflow_t *self = (web_workflow_t *) zmalloc (sizeof *self);
    self->operator_ = operator_;
    return self;
}

void
web_workflow_destroy (web_workflow_t **self_p)
{
    assert (self_p);
    free (*self_p);
    *self_p = NULL;
}

//  The workflow and its checkpoints, or NULL with *err.
static json_t *
s_overview (parley_client_t *client, parley_err_t *err)
{
    parley_workflow_t *info = NULL;
    *err = parley_client_workflow (client, &info);
    if (*err == PARLEY_ERR_NO_WORKFLOW) {
        parley_workflow_destroy (&info);
        *err = PARLEY_OK;
        return json_pack ("{s:b}", "none", true);
    }
    if (*err != PARLEY_OK) {
        parley_workflow_destroy (&info);
        return NULL;
    }
    json_t *json = json_pack ("{s:o}", "info", wfjson_info (info));
    parley_workflow_destroy (&info);
    parley_checkpoint_list_t *list = NULL;
    *err = parley_client_checkpoints (client, &list);
    if (*err != PARLEY_OK) {
        parley_checkpoint_list_destroy (&list);
        json_decref (json);
        return NULL;
    }
    json_t *all = json_array ();
    for (size_t i = 0; i < parley_checkpoint_list_count (list); i++)
        json_array_append_new (all, wfjson_checkpoint (parley_checkpoint_list_at (list, i)));
    json_object_set_new (json, "checkpoints", all);
    json_object_set_new (json, "dropped",
                         json_integer ((json_int_t) parley_checkpoint_list_dropped (list)));
    parley_checkpoint_list_destroy (&list);
    return json;
}

//  The requests of one read on a connected client; the document or NULL
//  with *err.
static json_t *
s_read (parley_client_t *client, s_read_t what, uint64_t a, uint64_t b, parley_err_t *err)
{
    if (what == S_DIFF)
        return wfjson_diff (client, a, b, err);
    if (what == S_OVERVIEW)
        return s_overview (client, err);
    parley_checkpoint_state_t *state = NULL;
    *err = parley_client_checkpoint (client, a, &state);
    if (*err != PARLEY_OK) {
        parley_checkpoint_state_destroy (&state);
        return NULL;
    }
    json_t *json = json_pack ("{s:o, s:o}", "checkpoint",
                              wfjson_checkpoint (parley_checkpoint_state_info (state)),
                              "entries", wfjson_entries (state));
    parley_checkpoint_state_destroy (&state);
    //  What it changed, when the one before is still kept.
    parley_checkpoint_list_t *list = NULL;
    bool kept = false;
    if (a > 0 && parley_client_checkpoints (client, &list) == PARLEY_OK)
        for (size_t i = 0; i < parley_checkpoint_list_count (list); i++)
            kept |= parley_checkpoint_number (parley_checkpoint_list_at (list, i)) == a - 1;
    parley_checkpoint_list_destroy (&list);
    parley_err_t ignored;
    json_t *changes = kept? wfjson_diff (client, a - 1, a, &ignored): NULL;
    if (changes)
        json_object_set_new (json, "changes", changes);
    return json;
}

//  One read, on one use of the operator's connection.
static json_t *
s_ask (web_workflow_t *self, s_read_t what, uint64_t a, uint64_t b, parley_err_t *err,
       char *why, size_t why_size)
{
    //  The capability tells the view's feed this connection is its own.
    const char *caps [] = { WEB_FEED_READER_CAP, NULL };
    parley_client_t *client = web_operator_open (self->operator_, caps, false, err, why, why_size);
    if (!client)
        return NULL;
    json_t *json = s_read (client, what, a, b, err);
    if (!json)
        snprintf (why, why_size, "%s: %s", parley_strerror (*err),
                  parley_client_error_text (client));
    web_operator_close (self->operator_, &client);
    return json;
}

json_t *
web_workflow_overview (web_workflow_t *self, char *why, size_t why_size)
{
    assert (self);
    parley_err_t err;
    return s_ask (self, S_OVERVIEW, 0, 0, &err, why, why_size);
}

//  A checkpoint number in a path: digits only, at most 19 of them.
static bool
s_number (const char *text, size_t len, uint64_t *value)
{
    if (len == 0 || len > 19)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isdigit ((unsigned char) text [i]))
            return false;
    *value = strtoull (text, NULL, 10);
    return true;
}

int
web_workflow_serve (void *arg, const char *path, json_t **reply, char *why, size_t why_size)
{
    web_workflow_t *self = (web_workflow_t *) arg;
    assert (self && path && reply);
    *reply = NULL;
    uint64_t a = 0, b = 0;
    s_read_t what;
    if (streq (path, ""))
        what = S_OVERVIEW;
    else
    if (strncmp (path, "checkpoint/", 11) == 0 && s_number (path + 11, strlen (path + 11), &a))
        what = S_CHECKPOINT;
    else
    if (strncmp (path, "diff/", 5) == 0 && strchr (path + 5, '/')
    &&  s_number (path + 5, (size_t) (strchr (path + 5, '/') - path - 5), &a)
    &&  s_number (strchr (path + 5, '/') + 1, strlen (strchr (path + 5, '/') + 1), &b))
        what = S_DIFF;
    else {
        snprintf (why, why_size, "no such read: /api/workflow/checkpoint/N and "
                  "/api/workflow/diff/N/M are");
        return MHD_HTTP_NOT_FOUND;
    }
    parley_err_t err = PARLEY_OK;
    *reply = s_ask (self, what, a, b, &err, why, why_size);
    return *reply? MHD_HTTP_OK: web_operator_status (err);
}
