// SPDX-License-Identifier: MIT
/*  teststate - helpers of the shared-state suites; see teststate.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpjson.h"
#include "teststate.h"

static char s_why [512];
static char s_value [8192];

perr_t
teststate_apply (state_t *state, const char *json)
{
    msgpack_unpacked result;
    const msgpack_object *ops = mpjson_object (&result, json);
    ck_assert_msg (ops, "bad test JSON: %s", json);
    s_why [0] = 0;
    perr_t rc = state_apply (state, ops, NULL, s_why, sizeof (s_why));
    msgpack_unpacked_destroy (&result);
    return rc;
}

const char *
teststate_why (void)
{
    return s_why;
}

const char *
teststate_value (state_t *state, const char *key)
{
    state_entry_t entry;
    if (!state_get (state, key, &entry))
        return "<absent>";
    char *text = mpjson_dump (entry.value, entry.size);
    ck_assert_msg (strlen (text) < sizeof (s_value), "value of %s too long for a test", key);
    snprintf (s_value, sizeof (s_value), "%s", text);
    free (text);
    return s_value;
}

state_reducer_t
teststate_reducer (state_t *state, const char *key)
{
    state_entry_t entry;
    ck_assert_msg (state_get (state, key, &entry), "no key %s", key);
    return entry.reducer;
}
