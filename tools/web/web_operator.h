// SPDX-License-Identifier: MIT
/*  web_operator - the connections parley-web makes for what its observer
    may not do: the workflow's reads (WORKFLOW, CHECKPOINTS, CHECKPOINT)
    and, with --allow-actions, the actions.

    The broker answers those only on a registered connection, so each use
    says HELLO as the operator id (--operator-id; default: the one id the
    --curve-key names, else "web-operator-<pid>") with the capabilities the
    request needs, makes its requests and says BYE with forget: the id is
    registered for the length of one use and never stays in the team
    (the page leaves its AGENT_LIST entry out, and the frames of its reads:
    web_feed.h). One use at
    a time, from any thread (a mutex): the live loop and the HTTP threads
    share it, and two connections with one id would push each other out.
*/
#ifndef PARLEY_WEB_OPERATOR_H
#define PARLEY_WEB_OPERATOR_H

#include <parley/client.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct _web_operator_t web_operator_t;

//  NULL with `why` when the key files are unusable (nothing is sent yet).
web_operator_t *web_operator_new (const char *broker, const char *curve_key,
                                  const char *curve_server_key, const char *id,
                                  int64_t timeout_ms, char *why, size_t why_size);
void web_operator_destroy (web_operator_t **self_p);
//  The id its registered connections say HELLO as.
const char *web_operator_id (web_operator_t *self);

//  Takes the operator (waiting for another use to end) and connects,
//  registered with `caps` (at most 4; NULL-terminated, may be NULL), or
//  as an observer. NULL when HELLO failed: *err and `why` say why, and
//  the operator is free again.
parley_client_t *web_operator_open (web_operator_t *self, const char *const *caps, bool observe,
                                    parley_err_t *err, char *why, size_t why_size);
//  BYE with forget (not for an observer, which has nothing registered),
//  then frees the operator for the next use.
void web_operator_close (web_operator_t *self, parley_client_t **client_p);

//  The HTTP status for a libparley outcome: 200, 404 for what does not
//  exist, 403 refused by the key's rights, 502 no answer, 409 otherwise.
int web_operator_status (parley_err_t err);

#endif
