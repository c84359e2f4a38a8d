// SPDX-License-Identifier: MIT
/*  perr - names of the protocol's error codes.

    A table indexed by code, so perr_name() is a bounds check and a load; the
    broker calls it for every ERROR reply it sends.
*/
#include <stddef.h>
#include "perr.h"

static const char *s_names [PERR__COUNT] = {
    [PERR_NONE] = "NONE",
    [PERR_MALFORMED] = "MALFORMED",
    [PERR_TOO_LARGE] = "TOO_LARGE",
    [PERR_UNKNOWN_TYPE] = "UNKNOWN_TYPE",
    [PERR_BAD_FIELD] = "BAD_FIELD",
    [PERR_VERSION] = "VERSION",
    [PERR_NOT_REQUEST] = "NOT_REQUEST",
    [PERR_NOT_HELLO] = "NOT_HELLO",
    [PERR_ID_IN_USE] = "ID_IN_USE",
    [PERR_BAD_NAME] = "BAD_NAME",
    [PERR_RESERVED_NAME] = "RESERVED_NAME",
    [PERR_TOO_MANY_AGENTS] = "TOO_MANY_AGENTS",
    [PERR_UNKNOWN_RECIPIENT] = "UNKNOWN_RECIPIENT",
    [PERR_INBOX_FULL] = "INBOX_FULL",
    [PERR_CHANNEL_FULL] = "CHANNEL_FULL",
    [PERR_TOO_MANY_CHANNELS] = "TOO_MANY_CHANNELS",
    [PERR_NOT_LISTENING] = "NOT_LISTENING",
    [PERR_NO_SUCH_TARGET] = "NO_SUCH_TARGET",
    [PERR_BAD_REDUCER] = "BAD_REDUCER",
    [PERR_REDUCER_MISMATCH] = "REDUCER_MISMATCH",
    [PERR_REDUCER_CONFLICT] = "REDUCER_CONFLICT",
    [PERR_STATE_FULL] = "STATE_FULL",
    [PERR_NO_SUCH_KEY] = "NO_SUCH_KEY",
    [PERR_BAD_ACTION] = "BAD_ACTION",
    [PERR_NOT_IN_WORLD] = "NOT_IN_WORLD",
    [PERR_INTERNAL] = "INTERNAL",
    [PERR_SHUTTING_DOWN] = "SHUTTING_DOWN",
    [PERR_UNAUTHORIZED] = "UNAUTHORIZED",
    [PERR_QUEUES_FULL] = "QUEUES_FULL",
    [PERR_STORAGE] = "STORAGE",
    [PERR_NOT_TURN_HOLDER] = "NOT_TURN_HOLDER",
    [PERR_NO_WORKFLOW] = "NO_WORKFLOW",
    [PERR_WORKFLOW_ENDED] = "WORKFLOW_ENDED",
    [PERR_NO_SUCH_CHECKPOINT] = "NO_SUCH_CHECKPOINT",
};

const char *
perr_name (int code)
{
    if (code < 0 || code >= PERR__COUNT || s_names [code] == NULL)
        return "UNKNOWN";
    return s_names [code];
}
