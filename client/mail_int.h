// SPDX-License-Identifier: MIT
/*  mail_int - parley_mail_t (parley/mail.h) as the rest of libparley
    makes and fills it.
*/
#ifndef PARLEY_CLIENT_MAIL_INT_H
#define PARLEY_CLIENT_MAIL_INT_H

#include "parley/client.h"
#include "dedup.h"
#include "pmsg.h"

parley_mail_t *client_mail_new (void);
//  Empties it (dropping the reply it held), keeping its memory.
void client_mail_clear (parley_mail_t *self);
//  The mail array `key` of `map` (MAIL's "messages", MAIL_PUSH's, or
//  STEPPED's "mail"), with `pending` and `acked` from `map`, through the
//  duplicate filter (NULL: none). The bodies point into the frame `map`
//  belongs to: with `reply_p` the mail takes that frame (on success
//  only: on failure the caller keeps it), without it the frame must
//  outlive the mail (STEPPED's). PARLEY_OK, or PARLEY_ERR_NOMEM with the
//  mail empty and the filter unchanged.
parley_err_t client_mail_decode (parley_mail_t *self, pmsg_t **reply_p, const msgpack_object *map,
                                 const char *key, client_dedup_t *dedup);
//  STEPPED's acked position replaces the map's.
void client_mail_set_acked (parley_mail_t *self, uint64_t acked);

#endif
