// SPDX-License-Identifier: MIT
/*  testcurve - a CURVE broker and its keys for tests. See testcurve.h. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "pcurve.h"
#include "testcheck.h"
#include "testcurve.h"
#include "tproc.h"

static tproc_dir_t *s_dir;
static testbroker_t *s_broker;
static char s_keys [1024], s_allow [1024], s_server [1100];

const char *
testcurve_key (const char *name, const char *agents, unsigned rights, bool allowed)
{
    static char path [1100];
    char why [512];
    ck_assert_msg (pcurve_keygen (s_keys, name, agents, rights, why, sizeof why) == 0, "%s", why);
    snprintf (path, sizeof path, "%s/%s", s_keys, name);
    if (allowed) {
        char copy [2400];
        snprintf (copy, sizeof copy, "cp '%s' '%s/'", path, s_allow);
        ck_assert_int_eq (system (copy), 0);
    }
    return path;
}

void
testcurve_start (const char *const *extra)
{
    s_dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (s_dir);
    snprintf (s_keys, sizeof s_keys, "%s/keys", tproc_dir_name (s_dir));
    snprintf (s_allow, sizeof s_allow, "%s/allow", tproc_dir_name (s_dir));
    ck_assert_int_eq (mkdir (s_allow, 0700), 0);
    testcurve_key ("broker", NULL, PCURVE_RIGHT_AGENT, false);
    snprintf (s_server, sizeof s_server, "%s/broker", s_keys);
    const char *args [32] = { "--curve-keys", s_keys, "--curve-allow", s_allow };
    size_t n = 4;
    for (size_t i = 0; extra && extra [i] && n < 31; i++)
        args [n++] = extra [i];
    args [n] = NULL;
    s_broker = testcheck_start (args);
}

void
testcurve_stop (void)
{
    testcheck_stop (&s_broker);
    tproc_dir_destroy (&s_dir);
}

testbroker_t *testcurve_broker (void) { return s_broker; }
const char *testcurve_server (void) { return s_server; }
const char *testcurve_allow (void) { return s_allow; }
const char *testcurve_keys (void) { return s_keys; }

testclient_t *
testcurve_client (const char *key)
{
    char copy [1100];
    snprintf (copy, sizeof copy, "%s", key);
    testclient_t *client = testclient_new_curve (testbroker_router (s_broker), copy, s_server);
    ck_assert_ptr_nonnull (client);
    return client;
}
