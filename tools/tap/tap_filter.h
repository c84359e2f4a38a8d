// SPDX-License-Identifier: MIT
/*  tap_filter - which tap frames parley-tap shows.

    Three optional sets, each given as one or more comma lists:
      agents    the frame's peer is one of them (requests from and replies to
                that connection), or, for events, the event's `agent` field
                (MAIL_READY, AGENT_EVENT) names one of them;
      types     the inner frame's type (SEND, MAIL, ...); an undecodable
                frame never matches a type filter;
      channels  the frame names the channel: LISTEN/UNLISTEN `channel`, or a
                SEND/MAIL item posted to it.
    A frame is shown when it matches every set that was given. Filters only
    choose what is printed and counted as shown; --record keeps everything.
*/
#ifndef PARLEY_TAP_FILTER_H
#define PARLEY_TAP_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include "tap_frame.h"

typedef struct _tap_filter_t tap_filter_t;

tap_filter_t *tap_filter_new (void);
void tap_filter_destroy (tap_filter_t **self_p);

//  Each adds a comma-separated list; false with `why` on an empty item or
//  (types) a name that is no message type. Type names are case-insensitive.
bool tap_filter_add_agents (tap_filter_t *self, const char *list, char *why, size_t why_size);
bool tap_filter_add_types (tap_filter_t *self, const char *list, char *why, size_t why_size);
bool tap_filter_add_channels (tap_filter_t *self, const char *list, char *why, size_t why_size);

bool tap_filter_match (tap_filter_t *self, const tap_frame_t *frame);

#endif
