// SPDX-License-Identifier: MIT
/*  openai_server - starts tests/openai_server.py for a test suite.

    Run it from an unchecked fixture (in the parent, before Check forks):
    the server is found at $PARLEY_TEST_DIR/openai_server.py, listens on a
    free loopback port and exits by itself when our end of its stdin pipe
    closes, so even a crashed test leaves nothing running.
*/
#ifndef PARLEY_TEST_OPENAI_SERVER_H
#define PARLEY_TEST_OPENAI_SERVER_H

#include <stdbool.h>

//  Starts the server; returns its base URL ("http://127.0.0.1:PORT"),
//  or aborts the test program with a message if it cannot.
const char *openai_server_start (void);
//  Stops it (closes its stdin, waits for it).
void openai_server_stop (void);

#include <jansson.h>
//  Every request body the server received for the full model string
//  `model`, oldest first (a JSON array; the caller decrefs).
json_t *openai_server_requests (const char *model);
//  The model strings ending in ":TAG" answer HTTP 503 from now on (`down`
//  true) or again normally (false).
void openai_server_set_down (const char *tag, bool down);

#endif
