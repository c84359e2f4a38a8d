// SPDX-License-Identifier: MIT
/*  testagent - steps of the suites that run parley-agent (testagent.h). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "testagent.h"

const char *
testagent_summary (const char *out, const char *key)
{
    static char value [128];
    const char *line = strstr (out, "SUMMARY");
    ck_assert_msg (line, "no SUMMARY in:\n%s", out);
    char pattern [64];
    snprintf (pattern, sizeof pattern, " %s=", key);
    const char *at = strstr (line, pattern);
    ck_assert_msg (at, "no %s in SUMMARY", key);
    at += strlen (pattern);
    size_t len = strcspn (at, " \n");
    if (*at == '"')
        len = strcspn (at + 1, "\"") + 2;
    snprintf (value, sizeof value, "%.*s", (int) len, at);
    return value;
}

testclient_t *
testagent_mail_for (const char *router, const char *to, int count, const char *body)
{
    testclient_t *client = testclient_new (router);
    pmsg_t *reply = testclient_hello (client, to);
    pmsg_destroy (&reply);
    reply = testclient_call0 (client, PMSG_BYE);
    pmsg_destroy (&reply);
    testclient_destroy (&client);
    client = testclient_new (router);
    reply = testclient_hello (client, "Sender");
    pmsg_destroy (&reply);
    for (int i = 0; i < count; i++) {
        char numbered [16];
        snprintf (numbered, sizeof numbered, "m%d", i);
        reply = testclient_send_one (client, to, false, body ? body : numbered);
        ck_assert_int_eq (pmsg_type (reply), PMSG_SENT);
        pmsg_destroy (&reply);
    }
    return client;
}
