/*  workflow_requests - every workflow request a client sends, in one
    place: WORKFLOW, HANDOVER, CHECKPOINTS, CHECKPOINT, RESUME, and the GET
    a turn reads its keys with. parley-agent's workflow loop and parley-ctl
    both build their requests here, through brokerlink (so resends and
    re-HELLOs behave as for any other request). Each returns the reply
    (the normal one or ERROR; caller destroys) or NULL with `err` filled.

    The events side (WORKFLOW_EVENT on workflow.*) is workflow_events.h.
*/
#ifndef PARLEY_WORKFLOW_REQUESTS_H
#define PARLEY_WORKFLOW_REQUESTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include "brokerlink.h"
#include "pmsg.h"

pmsg_t *wfreq_info (brokerlink_t *link, char *err, size_t err_size);
//  ops: a JSON array of write_op objects ({"op","key","value"}) or NULL;
//  next, status, reason may be NULL.
pmsg_t *wfreq_handover (brokerlink_t *link, const json_t *ops, const char *next,
                        const char *status, const char *reason, char *err, size_t err_size);
pmsg_t *wfreq_checkpoints (brokerlink_t *link, char *err, size_t err_size);
//  since < 0: the whole state at `number`; else what differs from `since`.
pmsg_t *wfreq_checkpoint (brokerlink_t *link, uint64_t number, int64_t since,
                          char *err, size_t err_size);
pmsg_t *wfreq_resume (brokerlink_t *link, uint64_t number, char *err, size_t err_size);
pmsg_t *wfreq_get (brokerlink_t *link, const char *const *keys, size_t count,
                   char *err, size_t err_size);

//  A str field as a C string into buf ("" when absent).
const char *wfreq_str (const pmsg_t *msg, const char *field, char *buf, size_t size);

#endif
