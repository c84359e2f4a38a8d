// SPDX-License-Identifier: MIT
/*  web_feed - turns TAP frames into the hub's events.

    The same code reads the live tap socket and a parley-tap recording, so
    the page sees one vocabulary either way:

      msg     every frame: {tseq, ts, dir, peer, type, id, summary, size,
              agent, to: [names], action, step, error}; the full decoded
              frame is kept in the hub for /api/frame/<tseq>;
      state   a published STATE_UPDATE: {key, seq, value};
      world   a published WORLD_EVENT: {event, coverage, explored, objects_total};
      workflow_event
              a published WORKFLOW_EVENT: {event, status, turn, revisions,
              holder, agent, reason, checkpoint};
      dropped a gap in the tap sequence: {count, after_tseq, before_tseq}.

    A published AGENT_EVENT's msg also says {event, subject} (joined, left,
    forgotten...; the agent it is about) and a BYE with forget {forget:
    true}, so the page can drop a name once it is forgotten.

    `agent` is the peer of a request or reply (never an event topic); `to`
    lists the recipients of a SEND ('#name' is a channel) or the channel
    of LISTEN/UNLISTEN. Nothing here trusts the frame: anything missing or
    of the wrong type is simply left out.
*/
#ifndef PARLEY_WEB_FEED_H
#define PARLEY_WEB_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "web_hub.h"

typedef enum {
    WEB_FEED_FRAME,             //  an ordinary frame
    WEB_FEED_AGENTS,            //  the agent list may have changed (ask AGENT_LIST)
    WEB_FEED_WORKFLOW,          //  a WORKFLOW_EVENT: the workflow moved on
    WEB_FEED_GAP,               //  frames were dropped: the state may be stale
    WEB_FEED_BAD                //  the TAP frame itself did not decode
} web_feed_outcome_t;

typedef struct _web_feed_t web_feed_t;

web_feed_t *web_feed_new (web_hub_t *hub);
void web_feed_destroy (web_feed_t **self_p);

//  The view's own agent id (NULL: none): frames on its connection are
//  left out of the timeline.
void web_feed_set_own_name (web_feed_t *self, const char *name);
//  The view's operator (web_operator.h; NULL: none): the frames of its
//  reads, the connections whose HELLO carries WEB_FEED_READER_CAP, and the
//  AGENT_EVENTs about them are not shown either. Its actions are.
#define WEB_FEED_READER_CAP "web-reader"
void web_feed_hide_agent (web_feed_t *self, const char *name);
//  True once a GET of the key named like the view's own id was seen on
//  the tap: from then on its connection is known.
bool web_feed_knows_self (web_feed_t *self);
//  One TAP frame (the msgpack map as sent on the tap socket).
web_feed_outcome_t web_feed_frame (web_feed_t *self, const void *data, size_t size);
//  Frames seen, and frames whose TAP envelope did not decode.
uint64_t web_feed_frames (web_feed_t *self);
uint64_t web_feed_bad (web_feed_t *self);

//  A msgpack value (a state value from SNAPSHOT) as JSON; never NULL
//  (null when it does not decode).
json_t *web_feed_value (const void *data, size_t size);

#endif
