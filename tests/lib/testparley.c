// SPDX-License-Identifier: MIT
/*  testparley - Check shortcuts through libparley (testparley.h). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "testparley.h"

parley_client_t *
testparley_observer (const char *router, const char *name, int64_t timeout_ms)
{
    parley_client_t *client = parley_client_new (router, name);
    ck_assert_ptr_nonnull (client);
    parley_client_set_observe (client, true);
    if (timeout_ms > 0)
        parley_client_set_timeout (client, timeout_ms, 200);
    ck_assert_int_eq (parley_client_connect (client), PARLEY_OK);
    return client;
}

void
testparley_registered (parley_client_t *eyes, char *list, size_t size)
{
    parley_agent_list_t *agents = NULL;
    ck_assert_int_eq (parley_client_agents (eyes, &agents), PARLEY_OK);
    list [0] = 0;
    for (size_t i = 0; i < parley_agent_list_count (agents); i++) {
        size_t used = strlen (list);
        snprintf (list + used, size - used, "%s,",
                  parley_agent_name (parley_agent_list_at (agents, i)));
    }
    parley_agent_list_destroy (&agents);
}
