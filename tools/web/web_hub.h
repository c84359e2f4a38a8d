// SPDX-License-Identifier: MIT
/*  web_hub - what parley-web knows, and the stream of changes to it.

    One writer (the feed: the broker's tap and replica, or a recording)
    and many readers (one HTTP thread per Server-Sent Events stream). The
    hub keeps, under one mutex:

      - a model, sent whole to a new stream as its first event ("init"):
        the page's settings, every state key with its seq, the agent list,
        the latest world event, the most recent messages, each agent's
        trail (the positions world.agent_positions has shown it at) and
        the workflow's overview (web_workflow.h);
      - a ring of the last `capacity` events as ready SSE text, each with a
        hub seq; a stream follows the ring from where its model ended, so
        nothing between the two is lost or doubled;
      - the full JSON of the last `capacity` tap frames, for
        /api/frame/<tseq> (bodies on demand).

    A reader that falls behind the ring (its events were overwritten) gets
    one "reset" event and the page opens the stream again. In replay mode
    the model holds only the settings and a new stream starts at the
    oldest event, so the page sees the recording from its beginning.
*/
#ifndef PARLEY_WEB_HUB_H
#define PARLEY_WEB_HUB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _web_hub_t web_hub_t;

//  Most recent messages kept in the model for a new page.
#define WEB_HUB_RECENT 500
//  Positions kept per agent for the trails, and agents with a trail.
#define WEB_HUB_TRAIL  2000

web_hub_t *web_hub_new (size_t capacity, bool replay);
void web_hub_destroy (web_hub_t **self_p);

//  The page's settings (mode, broker, world size, allow_actions...); the
//  object is stolen. Published as a "info" event too.
void web_hub_set_info (web_hub_t *self, json_t *info);
//  A state key changed (value NULL: deleted). Ignored when `seq` is not
//  newer than the seq the model has for the key (the tap may repeat what
//  a snapshot already had). The value is stolen. True when applied.
bool web_hub_state (web_hub_t *self, const char *key, uint64_t seq, json_t *value);
//  The agent list from AGENT_LIST (stolen); published only when it changed.
void web_hub_agents (web_hub_t *self, json_t *agents);
//  A tap frame: `summary` (stolen) goes to the stream and the model's
//  recent list; `full` (stolen) is kept for /api/frame/<tseq>.
void web_hub_message (web_hub_t *self, uint64_t tseq, json_t *summary, json_t *full);
//  The workflow's overview (stolen); published as "workflow" when it
//  changed, and part of the model.
void web_hub_workflow (web_hub_t *self, json_t *workflow);
//  Any other event (world, dropped, end): stolen, published as is.
void web_hub_event (web_hub_t *self, const char *name, json_t *data);

//  The full frame as JSON text (caller frees), or NULL when unknown or
//  no longer kept.
char *web_hub_frame (web_hub_t *self, uint64_t tseq);

//  The model as one JSON document (what "init" carries; caller frees).
char *web_hub_model (web_hub_t *self);
//  A new stream: the "init" event as SSE text (caller frees); *cursor is
//  where web_hub_next continues.
char *web_hub_start (web_hub_t *self, uint64_t *cursor);
//  Waits up to `timeout_ms` for events after *cursor. Returns SSE text
//  (caller frees) and advances *cursor; NULL on timeout or when the hub
//  stopped (then *stopped is true).
char *web_hub_next (web_hub_t *self, uint64_t *cursor, int timeout_ms, bool *stopped);
//  Wakes every waiting stream and ends them.
void web_hub_stop (web_hub_t *self);
//  Events published so far, and streams open now (for tests and logs).
uint64_t web_hub_published (web_hub_t *self);
size_t web_hub_streams (web_hub_t *self);
void web_hub_stream_closed (web_hub_t *self);

#endif
