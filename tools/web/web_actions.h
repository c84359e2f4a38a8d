// SPDX-License-Identifier: MIT
/*  web_actions - operator actions from the page, through libparley.

    Only with `parley-web --allow-actions`. The broker takes writes only
    from a registered id, so each action says HELLO as
    "web-operator-<pid>" (cap "operator"), acts, and says BYE with forget:
    the id exists for the length of one request. With the operator's CURVE
    key when one is given, so the broker decides what that key may do
    (WORLD_RESET needs the admin right). A mutex keeps one action at a time.

      world-reset {"seed": N}            WORLD_RESET (seed optional, 0: broker's)
      state-set   {"key": K, "value": V} WRITE set; V a string or an integer
*/
#ifndef PARLEY_WEB_ACTIONS_H
#define PARLEY_WEB_ACTIONS_H

#include "web_server.h"

typedef struct _web_actions_t web_actions_t;

//  NULL with `why` when the keys are unusable (nothing is sent yet).
web_actions_t *web_actions_new (const char *broker, const char *curve_key,
                                const char *curve_server_key, int64_t timeout_ms,
                                char *why, size_t why_size);
void web_actions_destroy (web_actions_t **self_p);
//  The web_action_fn for web_server_new; `arg` is the web_actions_t.
int web_actions_run (void *arg, web_action_t action, const json_t *request,
                     char *why, size_t why_size);

#endif
