// SPDX-License-Identifier: MIT
/*  perr - the protocol's error codes.

    One numbering for the wire (ERROR.code), the decoder and the broker's
    handlers, so a client in any language can switch on the number and a
    person can read the name. The numbers are part of the protocol: never
    renumber, only add. PROTOCOL.md lists them with their meaning.
*/
#ifndef PARLEY_PERR_H
#define PARLEY_PERR_H

typedef enum {
    PERR_NONE = 0,
    //  Frame and decoding (1-9)
    PERR_MALFORMED = 1,          //  not msgpack, truncated, trailing bytes, duplicate key
    PERR_TOO_LARGE = 2,          //  frame, string, batch or nesting over a limit
    PERR_UNKNOWN_TYPE = 3,       //  "t" names no message type
    PERR_BAD_FIELD = 4,          //  missing required field, wrong type, bad value
    PERR_VERSION = 5,            //  "v" is not a version this peer speaks
    PERR_NOT_REQUEST = 6,        //  a reply or event type sent as a request
    //  Session (10-19)
    PERR_NOT_HELLO = 10,         //  anything but HELLO before HELLO
    PERR_ID_IN_USE = 11,         //  another live connection holds this agent id
    PERR_BAD_NAME = 12,          //  agent or channel name outside the allowed set
    PERR_RESERVED_NAME = 13,     //  "all" and names starting with '$' are the broker's
    PERR_TOO_MANY_AGENTS = 14,
    //  Messaging (20-29)
    PERR_UNKNOWN_RECIPIENT = 20,
    PERR_INBOX_FULL = 21,
    PERR_CHANNEL_FULL = 22,
    PERR_TOO_MANY_CHANNELS = 23,
    PERR_NOT_LISTENING = 24,
    PERR_NO_SUCH_TARGET = 25,    //  a `resolve` item names no agent and no channel anyone listens to
    //  Shared state (30-39)
    PERR_BAD_REDUCER = 30,       //  unknown reducer name
    PERR_REDUCER_MISMATCH = 31,  //  value does not fit the key's reducer
    PERR_REDUCER_CONFLICT = 32,  //  key already declared with another reducer
    PERR_STATE_FULL = 33,
    PERR_NO_SUCH_KEY = 34,
    //  World (40-49)
    PERR_BAD_ACTION = 40,
    PERR_NOT_IN_WORLD = 41,
    //  Broker (50-59)
    PERR_INTERNAL = 50,
    PERR_SHUTTING_DOWN = 51,
    PERR_UNAUTHORIZED = 52,      //  the key or resume token does not allow this
    PERR_QUEUES_FULL = 53,       //  all queues together hold --max-queued-bytes
    PERR_STORAGE = 54,           //  the journal cannot be written (disk full, I/O error)
    //  Workflow (60-69)
    PERR_NOT_TURN_HOLDER = 60,   //  HANDOVER from an agent that does not hold the turn
    PERR_NO_WORKFLOW = 61,       //  a workflow request to a broker without a workflow
    PERR_WORKFLOW_ENDED = 62,    //  HANDOVER after done or failed
    PERR_NO_SUCH_CHECKPOINT = 63,//  a checkpoint number not (or no longer) kept
    PERR__COUNT
} perr_t;

//  "MALFORMED", "INBOX_FULL", ...; "UNKNOWN" for numbers not listed.
const char *perr_name (int code);

#endif
