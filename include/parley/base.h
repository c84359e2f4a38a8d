// SPDX-License-Identifier: MIT
/*  parley/base.h - what every part of libparley's interface shares: the
    version, the outcomes (parley_err_t) and the names of the opaque types.
    Included by parley/client.h; programs include that one.

    Every type here is opaque: a program holds pointers to it and reads it
    through functions, so the library can add fields without breaking a
    program built against an older header (docs/CLIENT.md, "An ABI that can
    grow"). Objects a function hands out for the caller to keep are
    destroyed with their own parley_<type>_destroy (&pointer), which sets the
    pointer to NULL and accepts NULL.
*/
#ifndef PARLEY_API_BASE_H
#define PARLEY_API_BASE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  The version of this header. The library's own is parley_version ().
//  Within one major version, a newer library runs every program built
//  against an older header (libparley.so.2).
#define PARLEY_VERSION_MAJOR 2
#define PARLEY_VERSION_MINOR 1
#define PARLEY_VERSION_PATCH 0

#define PARLEY_NAME_MAX 64              //  agent and channel names, bytes

//  Outcomes. The protocol's ERROR codes keep their wire numbers (1..99);
//  what the client itself met is numbered from 1000. New codes may come
//  in a later version: treat an unknown one as a failure and show
//  parley_strerror's name for it.
typedef enum {
    PARLEY_OK = 0,
    PARLEY_ERR_MALFORMED = 1,
    PARLEY_ERR_TOO_LARGE = 2,
    PARLEY_ERR_UNKNOWN_TYPE = 3,
    PARLEY_ERR_BAD_FIELD = 4,
    PARLEY_ERR_VERSION = 5,
    PARLEY_ERR_NOT_REQUEST = 6,
    PARLEY_ERR_NOT_HELLO = 10,
    PARLEY_ERR_ID_IN_USE = 11,
    PARLEY_ERR_BAD_NAME = 12,
    PARLEY_ERR_RESERVED_NAME = 13,
    PARLEY_ERR_TOO_MANY_AGENTS = 14,
    PARLEY_ERR_UNKNOWN_RECIPIENT = 20,
    PARLEY_ERR_INBOX_FULL = 21,
    PARLEY_ERR_CHANNEL_FULL = 22,
    PARLEY_ERR_TOO_MANY_CHANNELS = 23,
    PARLEY_ERR_NOT_LISTENING = 24,
    PARLEY_ERR_NO_SUCH_TARGET = 25,     //  a resolved name is no agent and no listened channel
    PARLEY_ERR_BAD_REDUCER = 30,
    PARLEY_ERR_REDUCER_MISMATCH = 31,
    PARLEY_ERR_REDUCER_CONFLICT = 32,
    PARLEY_ERR_STATE_FULL = 33,
    PARLEY_ERR_NO_SUCH_KEY = 34,
    PARLEY_ERR_BAD_ACTION = 40,
    PARLEY_ERR_NOT_IN_WORLD = 41,
    PARLEY_ERR_INTERNAL = 50,
    PARLEY_ERR_SHUTTING_DOWN = 51,
    PARLEY_ERR_UNAUTHORIZED = 52,       //  the key or token does not allow it
    PARLEY_ERR_QUEUES_FULL = 53,        //  the broker's memory bound for queued mail is reached
    PARLEY_ERR_STORAGE = 54,            //  the broker cannot write its journal; nothing changed
    PARLEY_ERR_NOT_TURN_HOLDER = 60,    //  HANDOVER from an agent not holding the turn
    PARLEY_ERR_NO_WORKFLOW = 61,        //  the broker runs no workflow
    PARLEY_ERR_WORKFLOW_ENDED = 62,     //  HANDOVER after done or failed
    PARLEY_ERR_NO_SUCH_CHECKPOINT = 63, //  a checkpoint never recorded or no longer kept
    //  Client side
    PARLEY_ERR_TIMEOUT = 1000,          //  the broker answers HELLO but not this request
    PARLEY_ERR_STOPPED = 1001,          //  the stop flag was raised
    PARLEY_ERR_LOST = 1002,             //  no session: the broker refused our HELLO for good
    PARLEY_ERR_BAD_REPLY = 1003,        //  a reply of the wrong type, or one that did not decode
    PARLEY_ERR_INVALID = 1004,          //  a bad argument, caught before anything was sent
    PARLEY_ERR_SOCKET = 1005,           //  a socket could not be made or connected
    PARLEY_ERR_NOMEM = 1006             //  the client ran out of memory (see docs/CLIENT.md)
} parley_err_t;

//  "INBOX_FULL", "TIMEOUT", ...; "UNKNOWN" for other numbers (a newer broker).
const char *parley_strerror (int code);

//  The library's version, which may be newer than this header's.
void parley_version (int *major, int *minor, int *patch);

//  The client and the objects it hands out or takes (opaque).
typedef struct _parley_client_t parley_client_t;
typedef struct _parley_welcome_t parley_welcome_t;
//  Built by the caller (parley/mail.h, state.h, world.h, workflow.h).
typedef struct _parley_outbox_t parley_outbox_t;
typedef struct _parley_ops_t parley_ops_t;
typedef struct _parley_step_t parley_step_t;
typedef struct _parley_handover_t parley_handover_t;
//  Results.
typedef struct _parley_sent_t parley_sent_t;
typedef struct _parley_failure_t parley_failure_t;
typedef struct _parley_mail_t parley_mail_t;
typedef struct _parley_message_t parley_message_t;
typedef struct _parley_written_t parley_written_t;
typedef struct _parley_state_t parley_state_t;
typedef struct _parley_entry_t parley_entry_t;
typedef struct _parley_observation_t parley_observation_t;
typedef struct _parley_stepped_t parley_stepped_t;
typedef struct _parley_agent_list_t parley_agent_list_t;
typedef struct _parley_agent_t parley_agent_t;
typedef struct _parley_stats_t parley_stats_t;
typedef struct _parley_stat_t parley_stat_t;
typedef struct _parley_event_t parley_event_t;
typedef struct _parley_workflow_t parley_workflow_t;
typedef struct _parley_checkpoint_list_t parley_checkpoint_list_t;
typedef struct _parley_checkpoint_t parley_checkpoint_t;
typedef struct _parley_checkpoint_state_t parley_checkpoint_state_t;
typedef struct _parley_wf_event_t parley_wf_event_t;

//  A request in flight: its request id (parley/pipeline.h); a pipelined
//  post's own number (parley/mail.h).
typedef uint64_t parley_ticket_t;

#ifdef __cplusplus
}
#endif

#endif
