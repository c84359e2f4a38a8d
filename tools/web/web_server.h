// SPDX-License-Identifier: MIT
/*  web_server - the HTTP side of parley-web, on libmicrohttpd.

    Routes (anything else is 404; a known path with another method is 405
    with an Allow header):

        GET  /  /app.js  /app.css     the page and its assets, from the binary
        GET  /events                  Server-Sent Events (text/event-stream):
                                      "init" with the whole model, then every
                                      change (web_hub.h); a comment line every
                                      15 s keeps proxies from closing it
        GET  /api/frame/<tseq>        one tap frame in full, as JSON
        GET  /api/model               the whole model as one JSON document (what
                                      "init" carries): for the page's static
                                      mode (/?static=1) and for scripts
        GET  /api/workflow/...        the workflow panel's reads, from the
                                      read handler (web_workflow.h); 404
                                      without one (a replay)
        POST /api/actions/world-reset {"seed": N}           (optional seed)
        POST /api/actions/state-set   {"key": K, "value": V} (string or integer)
        POST /api/actions/resume      {"checkpoint": N}
        POST /api/actions/submit      {"role", "next", "status", "reason", "ops"}

    Actions are refused with 403 unless the server was made with an action
    handler (parley-web --allow-actions). They also need
    `Content-Type: application/json`, which a cross-site form cannot send
    without a CORS preflight, and this server answers no preflight (OPTIONS
    is 405): another web page open in the operator's browser cannot act.
    Request bodies are limited to WEB_SERVER_MAX_BODY (413 beyond).

    One thread per connection (streams block waiting for events), at most
    WEB_SERVER_MAX_CONNECTIONS at once; libmicrohttpd refuses the rest.
*/
#ifndef PARLEY_WEB_SERVER_H
#define PARLEY_WEB_SERVER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "web_hub.h"

#define WEB_SERVER_MAX_BODY        (64 * 1024)
#define WEB_SERVER_MAX_CONNECTIONS 64
#define WEB_SERVER_KEEPALIVE_MS    15000

typedef enum {
    WEB_ACTION_WORLD_RESET,
    WEB_ACTION_STATE_SET,
    WEB_ACTION_RESUME,
    WEB_ACTION_SUBMIT
} web_action_t;

//  Runs an action (from an HTTP thread; the handler serialises its own
//  work). Returns the HTTP status (200 on success) and fills `why`.
typedef int (web_action_fn) (void *arg, web_action_t action, const json_t *request,
                             char *why, size_t why_size);

//  Answers GET /api/workflow/<path> (from an HTTP thread): the HTTP
//  status, and on 200 the document in *reply (stolen); else `why`.
typedef int (web_read_fn) (void *arg, const char *path, json_t **reply, char *why,
                           size_t why_size);

typedef struct _web_server_t web_server_t;

//  Listens on `bind` ("HOST:PORT", "[V6]:PORT"; port 0 picks one).
//  `actions` NULL: read-only. NULL with a sentence in `why` on failure.
web_server_t *web_server_new (const char *bind, web_hub_t *hub, web_action_fn *actions,
                              void *actions_arg, char *why, size_t why_size);
//  The handler of GET /api/workflow/... (NULL: none, 404).
void web_server_set_reads (web_server_t *self, web_read_fn *reads, void *reads_arg);
//  Ends the streams (the hub must be stopped first) and the server.
void web_server_destroy (web_server_t **self_p);
//  The port it listens on.
uint16_t web_server_port (web_server_t *self);

//  Parses "HOST:PORT" into an address; false with `why` on a bad value.
//  Exposed for the flag check in main and for tests.
bool web_server_parse_bind (const char *bind, void *sockaddr_storage, char *why, size_t why_size);

#endif
