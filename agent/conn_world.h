// SPDX-License-Identifier: MIT
/*  conn_world - the "world" connector: where the agent is and what it sees.

    Captures with PERCEIVE; Execution also feeds it the OBSERVATION that ACT
    returns, so the state after a move is known without another round trip.

    Diff (previous -> current) gives observations of these types:
      world.start     first view: "Started at position P. I see: a, b."
      world.moved     "Moved from position A to position B. I see: c."
      world.blocked   "Could not move: still at position P (edge)."
      world.found     "New objects here: c, d." (never seen by this agent)
      world.coverage  "Team coverage is now 40% (4 of 10 objects)."
      world.done      "Everything in the world has been explored."
*/
#ifndef PARLEY_CONN_WORLD_H
#define PARLEY_CONN_WORLD_H

#include <stdbool.h>
#include <stdint.h>
#include "parley/client.h"
#include "connector.h"
#include "pmsg.h"

#define WORLD_MAX_VISIBLE 16
#define WORLD_MAX_NAME PROTO_MAX_NAME

typedef struct {
    bool valid;                 //  false until the first capture or feed
    uint64_t position, x, y;
    char objects[WORLD_MAX_VISIBLE][WORLD_MAX_NAME + 1];
    size_t object_count;
    char outcome[16];           //  perceived, moved, edge, stayed
    uint64_t explored, objects_total;
    double coverage;
    bool done;
} world_view_t;

//  The image of the current position (OBSERVATION's optional image), owned
//  by the connector and valid until the next capture or feed.
#define WORLD_IMAGE_MAX (256 * 1024)
typedef struct {
    const uint8_t *data;
    size_t size;
    char type[8];               //  "png" or "jpeg"
    uint64_t id;                //  FNV-1a 64 of the bytes
} world_image_view_t;

//  `link` may be NULL: the connector is then fed only (tests).
connector_t *conn_world_new (parley_client_t *link);

//  Sets the world's shape as WELCOME reported it (for rendering).
void conn_world_set_shape (connector_t *self, const char *kind, uint64_t width, uint64_t height);
//  Replaces the current view.
void conn_world_feed (connector_t *self, const world_view_t *view);
//  Feeds the OBSERVATION an ACT returned.
void conn_world_feed_observation (connector_t *self, const parley_observation_t *obs);

const world_view_t *conn_world_view (connector_t *self);
//  "a, b, c" (or "nothing") into buf.
void world_view_objects_text (const world_view_t *view, char *buf, size_t size);
//  Objects this agent has seen anywhere, in first-seen order.
size_t conn_world_seen_count (connector_t *self);
const char *conn_world_seen_at (connector_t *self, size_t index);
uint64_t conn_world_width (connector_t *self);
uint64_t conn_world_height (connector_t *self);
//  "line" or "grid", as WELCOME said.
const char *conn_world_kind (connector_t *self);
//  The current position's image, or NULL when it has none. An image
//  observation ("world.image") is rendered only when the image changed
//  since the last one observed.
const world_image_view_t *conn_world_image (connector_t *self);
//  Feeds an image for the current view (tests; NULL: none).
void conn_world_feed_image (connector_t *self, const uint8_t *data, size_t size,
                            const char *type);

#endif
