// SPDX-License-Identifier: MIT
/*  web_actions - operator actions from the page, through libparley.

    Only with `parley-web --allow-actions`. Each action is one use of the
    operator's connection (web_operator.h: HELLO as the operator id, the
    requests, BYE with forget), so the broker decides what the operator's
    key may do (WORLD_RESET and RESUME need the admin right).

      world-reset {"seed": N}            WORLD_RESET (seed optional, 0: broker's)
      state-set   {"key": K, "value": V} WRITE set; V a string or an integer
      resume      {"checkpoint": N}      RESUME: fork the run from checkpoint N
      submit      {"role": R, "next": NEXT, "status": S, "reason": T, "ops": [...]}
                                         a person's turn: HELLO with role:R,
                                         then one HANDOVER (the ops as
                                         parley-ctl submit's: update, set,
                                         clear, delete); next null with
                                         status done or failed
*/
#ifndef PARLEY_WEB_ACTIONS_H
#define PARLEY_WEB_ACTIONS_H

#include "web_operator.h"
#include "web_server.h"

typedef struct _web_actions_t web_actions_t;

web_actions_t *web_actions_new (web_operator_t *operator_);
void web_actions_destroy (web_actions_t **self_p);
//  The web_action_fn for web_server_new; `arg` is the web_actions_t.
int web_actions_run (void *arg, web_action_t action, const json_t *request,
                     char *why, size_t why_size);

#endif
