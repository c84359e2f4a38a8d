// SPDX-License-Identifier: MIT
/*  teststate - helpers the shared-state suites share (check_state,
    check_state_batch, check_world): apply a WRITE's ops written as JSON
    text, and read a key back as compact JSON, so each case reads like the
    WRITE a client would send and the value it would GET.

    APPLY_OK, APPLY_ERR and VALUE_IS are macros only so that a failure
    names the test's own line; the work is in the functions.
*/
#ifndef PARLEY_TESTSTATE_H
#define PARLEY_TESTSTATE_H

#include <check.h>
#include "broker/core/state.h"

//  Applies a JSON array of write_ops (bad JSON fails the test); the
//  reason of a refusal is in teststate_why ().
perr_t teststate_apply (state_t *state, const char *json);
const char *teststate_why (void);
//  The key's value as compact JSON, or "<absent>". The text lives until
//  the next call.
const char *teststate_value (state_t *state, const char *key);
//  The key's reducer (the key must exist).
state_reducer_t teststate_reducer (state_t *state, const char *key);

#define APPLY_OK(state, json) do { \
    perr_t rc_ = teststate_apply ((state), (json)); \
    ck_assert_msg (rc_ == PERR_NONE, "%s -> %s: %s", (json), perr_name (rc_), teststate_why ()); \
} while (0)

//  A refusal must say the code and that the batch wrote nothing.
#define APPLY_ERR(state, json, code) do { \
    perr_t rc_ = teststate_apply ((state), (json)); \
    ck_assert_msg (rc_ == (code), "%s -> %s (want %s): %s", (json), perr_name (rc_), \
                   perr_name (code), teststate_why ()); \
    ck_assert_msg (strstr (teststate_why (), "nothing was written"), "why: %s", teststate_why ()); \
} while (0)

#define VALUE_IS(state, key, json) \
    ck_assert_str_eq (teststate_value ((state), (key)), (json))

#endif
