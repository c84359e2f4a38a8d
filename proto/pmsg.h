// SPDX-License-Identifier: MIT
/*  pmsg - Parley wire messages: decode (strict, bounded) and encode.

    Every request, reply and event is ONE msgpack map: the envelope keys
        "v"  uint  protocol version (PROTO_VERSION)
        "t"  str   message type name, e.g. "SEND"
        "id" uint  request id chosen by the client, echoed in the reply
                   (optional in requests, default 0; 0 in events)
    followed by the type's own fields (see pmsg_schema.c and PROTOCOL.md).

    Decoding is three steps, and nothing is allocated from what the input
    merely claims:
      1. pwire_check() walks the raw bytes: every declared str/bin/ext length
         and every array/map count is checked against the bytes that remain,
         nesting depth and total object count are capped. Only then may
         msgpack-c's unpacker (which trusts declared counts) see the bytes.
      2. msgpack_unpack into a zone sized by the frame.
      3. The map is checked against the type's schema: required fields
         present, every known field of the right kind and within its limit,
         nested records checked the same way, duplicate keys rejected.
         Unknown fields are ignored (that is the forward-compatibility rule).

    Errors are typed (perr_t) with a human sentence naming the field.
*/
#ifndef PARLEY_PMSG_H
#define PARLEY_PMSG_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "perr.h"

#define PROTO_VERSION 1

//  Default limits. Brokers and agents may lower them; PROTOCOL.md documents
//  them as the largest a conforming peer must accept.
#define PROTO_MAX_FRAME        (1024 * 1024)   //  bytes in one frame
#define PROTO_MAX_DEPTH        16              //  nesting of arrays/maps
#define PROTO_MAX_OBJECTS      (256 * 1024)    //  msgpack objects in one frame
#define PROTO_MAX_NAME         64              //  agent, channel names (bytes)
#define PROTO_MAX_KEY          256             //  state keys (bytes)
#define PROTO_MAX_BODY         (64 * 1024)     //  message body (bytes)
#define PROTO_MAX_BATCH        4096            //  messages in SEND, MAIL; ops in WRITE
#define PROTO_MAX_TEXT         4096            //  free text: errors, actions, summaries
#define PROTO_MAX_STATE_ENTRIES 65536          //  entries in one STATE reply
//  A TAP event carries a whole frame as its body, so tap readers need a
//  frame limit a little above PROTO_MAX_FRAME (see pwire_tap_limits).
#define PROTO_MAX_TAP_FRAME    (PROTO_MAX_FRAME + 4096)

typedef struct {
    size_t max_frame;
    unsigned max_depth;
    size_t max_objects;
} pwire_limits_t;

//  Step 1 on its own, for tests and the fuzzer. Returns PERR_NONE or the
//  error, with a sentence in `why` (may be NULL).
perr_t pwire_check (const void *data, size_t size, const pwire_limits_t *limits,
                    char *why, size_t why_size);
const pwire_limits_t *pwire_default_limits (void);
//  The default limits with max_frame = PROTO_MAX_TAP_FRAME, for TAP readers.
const pwire_limits_t *pwire_tap_limits (void);

//  Every message type. The order is the schema table's order; the names are
//  the wire names. Directions: C->B request, B->C reply, B->* PUB event.
typedef enum {
    //  requests (client -> broker ROUTER)
    PMSG_HELLO = 0,
    PMSG_HEARTBEAT,
    PMSG_BYE,
    PMSG_AGENTS,
    PMSG_SEND,
    PMSG_FETCH,
    PMSG_ACK,
    PMSG_LISTEN,
    PMSG_UNLISTEN,
    PMSG_WRITE,
    PMSG_GET,
    PMSG_SNAPSHOT,
    PMSG_PERCEIVE,
    PMSG_ACT,
    PMSG_WORLD_RESET,
    PMSG_STATS,
    //  replies (broker -> client)
    PMSG_WELCOME,
    PMSG_OK,
    PMSG_ERROR,
    PMSG_AGENT_LIST,
    PMSG_SENT,
    PMSG_MAIL,
    PMSG_WRITTEN,
    PMSG_STATE,
    PMSG_OBSERVATION,
    PMSG_STATS_REPLY,
    //  events (broker PUB; tap PUB)
    PMSG_MAIL_READY,
    PMSG_STATE_UPDATE,
    PMSG_WORLD_EVENT,
    PMSG_AGENT_EVENT,
    PMSG_TAP,
    //  Added after the first table, each with its kind in pmsg_schema.c:
    //  the workflow (turns, hand-over) and its checkpoints.
    PMSG_HANDOVER,          //  request
    PMSG_WORKFLOW,          //  request
    PMSG_CHECKPOINTS,       //  request
    PMSG_CHECKPOINT,        //  request
    PMSG_RESUME,            //  request
    PMSG_WORKFLOW_INFO,     //  reply
    PMSG_CHECKPOINT_LIST,   //  reply
    PMSG_CHECKPOINT_STATE,  //  reply
    PMSG_WORKFLOW_EVENT,    //  event
    //  One request for an agent's whole step.
    PMSG_STEP,              //  request
    PMSG_STEPPED,           //  reply
    //  Pipelined SENDs: the broker's cumulative confirm (id 0).
    PMSG_CONFIRM,           //  reply
    //  Pushed delivery with credit (PROTOCOL.md, CONSUME).
    PMSG_CONSUME,           //  request
    PMSG_MAIL_PUSH,         //  reply kind: pushed on the request socket, id 0
    PMSG__COUNT
} pmsg_type_t;

typedef enum { PMSG_REQUEST, PMSG_REPLY, PMSG_EVENT } pmsg_kind_t;

const char *pmsg_type_name (pmsg_type_t type);          //  "SEND"
bool pmsg_type_from_name (const char *name, size_t len, pmsg_type_t *type);
pmsg_kind_t pmsg_type_kind (pmsg_type_t type);

//  Field kinds of the schema; nested records are schemas of their own.
typedef enum {
    PF_UINT,        //  positive integer
    PF_INT,         //  any integer
    PF_NUM,         //  integer or float
    PF_BOOL,
    PF_STR,         //  str, at most `max` bytes
    PF_NAME,        //  str, agent/channel name rules (pmsg_name_valid)
    PF_BODY,        //  str or bin, at most `max` bytes
    PF_ANY,         //  any msgpack value (already bounded by pwire_check)
    PF_MAP,         //  map with str keys, any values
    PF_STR_ARRAY,   //  array of str, at most `max` elements of PROTO_MAX_KEY bytes
    PF_UINT_ARRAY,  //  array of uint, at most `max` elements
    PF_REC,         //  map checked against `rec`
    PF_REC_ARRAY    //  array of maps checked against `rec`, at most `max`
} pfield_kind_t;

typedef struct pschema_s pschema_t;
typedef struct {
    const char *name;
    pfield_kind_t kind;
    bool required;
    size_t max;                 //  bytes (STR/NAME/BODY) or elements (arrays); 0 = default
    const pschema_t *rec;       //  for PF_REC / PF_REC_ARRAY
    const char *doc;            //  one line, for PROTOCOL.md checks and tools
} pfield_t;

struct pschema_s {
    const char *name;           //  message type or record name
    const pfield_t *fields;
    size_t count;
};

//  The schema of a message type, and the record schemas, for tools and tests.
const pschema_t *pmsg_schema (pmsg_type_t type);
const pschema_t *pmsg_record_schema (const char *name);   //  "send_item", ...
size_t pmsg_record_schema_count (void);
const pschema_t *pmsg_record_schema_at (size_t index);

//  Agent and channel names: 1..PROTO_MAX_NAME bytes of [A-Za-z0-9_.:-],
//  not starting with '.' or '-', optionally after one leading '$' (names
//  starting with '$' are valid on the wire but reserved for the broker, which
//  answers RESERVED_NAME when a client claims one).
bool pmsg_name_valid (const char *name, size_t len);

// ---------------------------------------------------------------------------
//  Decoded message

typedef struct _pmsg_t pmsg_t;

//  Decodes and validates one frame. On failure returns NULL and sets *err
//  and `why`; *id_out gets the request id when the envelope was readable
//  far enough to find it (so the ERROR reply can echo it), else 0.
pmsg_t *pmsg_decode (const void *data, size_t size, const pwire_limits_t *limits,
                     perr_t *err, uint64_t *id_out, char *why, size_t why_size);
//  As pmsg_decode, and on failure too: *type_known says whether the
//  envelope named a known type in "t", *type_out which. A broker needs it
//  to answer NOT_REQUEST for a reply or event type whatever else is wrong
//  with the frame, without parsing the frame a second time.
pmsg_t *pmsg_decode_with_type (const void *data, size_t size, const pwire_limits_t *limits,
                               perr_t *err, uint64_t *id_out, pmsg_type_t *type_out,
                               bool *type_known, char *why, size_t why_size);
//  As pmsg_decode, without copying the frame: the message's strings point
//  into `data`, which the message now owns. release (release_arg) frees
//  the frame when the message is destroyed, or at once when the decode
//  fails. For a receiver that holds each frame in a buffer of its own
//  (a zframe): a MAIL reply is then never copied.
pmsg_t *pmsg_decode_adopt (const void *data, size_t size, const pwire_limits_t *limits,
                           void (*release) (void *), void *release_arg,
                           perr_t *err, uint64_t *id_out, char *why, size_t why_size);
void pmsg_destroy (pmsg_t **self_p);

pmsg_type_t pmsg_type (const pmsg_t *self);
uint64_t pmsg_id (const pmsg_t *self);
//  The whole decoded map (envelope included).
const msgpack_object *pmsg_root (const pmsg_t *self);
//  A top-level field, or NULL when absent (or nil).
const msgpack_object *pmsg_field (const pmsg_t *self, const char *name);

//  Typed getters; the schema already checked types, so these only pick the
//  representation. Absent fields give the fallback / false / NULL.
uint64_t pmsg_uint (const pmsg_t *self, const char *name, uint64_t fallback);
int64_t pmsg_int (const pmsg_t *self, const char *name, int64_t fallback);
double pmsg_num (const pmsg_t *self, const char *name, double fallback);
bool pmsg_bool (const pmsg_t *self, const char *name, bool fallback);
//  str or bin: pointer into the frame's zone (valid until destroy), not
//  NUL-terminated; NULL if absent.
const char *pmsg_str (const pmsg_t *self, const char *name, size_t *len);
//  Copies a str field into buf with a NUL; false if absent or too long.
bool pmsg_strcpy (const pmsg_t *self, const char *name, char *buf, size_t size);

//  The same getters for nested records (any msgpack map).
const msgpack_object *pobj_get (const msgpack_object *map, const char *name);
uint64_t pobj_uint (const msgpack_object *map, const char *name, uint64_t fallback);
int64_t pobj_int (const msgpack_object *map, const char *name, int64_t fallback);
double pobj_num (const msgpack_object *map, const char *name, double fallback);
bool pobj_bool (const msgpack_object *map, const char *name, bool fallback);
const char *pobj_str (const msgpack_object *map, const char *name, size_t *len);
bool pobj_strcpy (const msgpack_object *map, const char *name, char *buf, size_t size);
bool pobj_streq (const msgpack_object *o, const char *text);   //  str equal to text

// ---------------------------------------------------------------------------
//  Encoder: builds one frame in a reusable buffer.
//
//      penc_t enc;  penc_init (&enc);
//      penc_begin (&enc, PMSG_OK, request_id, 0);     //  0 own fields
//      zmq_send (sock, penc_data (&enc), penc_size (&enc), 0);
//      penc_fini (&enc);
//
//  penc_begin writes the map header for 3 envelope keys + `fields` more, so
//  the caller must then write exactly `fields` key/value pairs, using
//  penc_key + msgpack_pack_* on penc_packer(), or the penc_kv_* shortcuts.
//  Round-trip tests decode every type's encoding against its schema.

//
//  Out of memory: a write that cannot get room is dropped and the encoder
//  remembers it until the next penc_begin: penc_ok says whether the frame
//  is whole. penc_init_alloc gives the buffer an allocator of the caller's
//  (libparley's, whose tests fail its Nth allocation).

typedef struct {
    msgpack_sbuffer buffer;
    msgpack_packer packer;
    void *(*realloc_fn) (void *, size_t);
    void (*free_fn) (void *);
    bool failed;
} penc_t;

void penc_init (penc_t *self);
void penc_init_alloc (penc_t *self, void *(*realloc_fn) (void *, size_t), void (*free_fn) (void *));
//  False when a write since penc_begin (or penc_reset) was dropped.
bool penc_ok (const penc_t *self);
void penc_fini (penc_t *self);
void penc_reset (penc_t *self);
void penc_begin (penc_t *self, pmsg_type_t type, uint64_t id, size_t fields);
msgpack_packer *penc_packer (penc_t *self);
const void *penc_data (const penc_t *self);
size_t penc_size (const penc_t *self);

void penc_cstr (penc_t *self, const char *text);                    //  value only
void penc_str (penc_t *self, const char *text, size_t len);         //  value only
//  The key/value writers with the key's length given; the inline
//  functions below pass strlen (key), which the compiler folds for a
//  literal key, so the hot encoders (MAIL records) never count bytes.
void penc_key_n (penc_t *self, const char *key, size_t key_len);
void penc_kv_str_n (penc_t *self, const char *key, size_t key_len,
                    const char *text, size_t len);
void penc_kv_bin_n (penc_t *self, const char *key, size_t key_len,
                    const void *data, size_t len);
void penc_kv_uint_n (penc_t *self, const char *key, size_t key_len, uint64_t value);

static inline void
penc_key (penc_t *self, const char *key)
{
    penc_key_n (self, key, strlen (key));
}

static inline void
penc_kv_str (penc_t *self, const char *key, const char *text, size_t len)
{
    penc_kv_str_n (self, key, strlen (key), text, len);
}

static inline void
penc_kv_cstr (penc_t *self, const char *key, const char *text)
{
    penc_kv_str_n (self, key, strlen (key), text, strlen (text));
}

static inline void
penc_kv_bin (penc_t *self, const char *key, const void *data, size_t len)
{
    penc_kv_bin_n (self, key, strlen (key), data, len);
}

static inline void
penc_kv_uint (penc_t *self, const char *key, uint64_t value)
{
    penc_kv_uint_n (self, key, strlen (key), value);
}
void penc_kv_int (penc_t *self, const char *key, int64_t value);
void penc_kv_num (penc_t *self, const char *key, double value);
void penc_kv_bool (penc_t *self, const char *key, bool value);
//  Copies an already-encoded msgpack value (e.g. a state value) verbatim.
void penc_kv_raw (penc_t *self, const char *key, const void *msgpack, size_t len);
void penc_raw (penc_t *self, const void *msgpack, size_t len);
//  Encodes a msgpack_object (from a decoded frame) as a value.
void penc_object (penc_t *self, const msgpack_object *object);

//  Convenience: the ERROR reply in one call (message is printf-style).
void penc_error (penc_t *self, uint64_t id, perr_t code, const char *format, ...)
    __attribute__ ((format (printf, 4, 5)));

#endif
