// SPDX-License-Identifier: MIT
/*  tap_text - human-readable lines for parley-tap.

    One line per frame:

        08:40:01.123 in  Agent1           SEND         id=7 to Agent2 "I found a key at 3"
        08:40:01.124 out Agent1           SENT         id=7 accepted 1/1
        08:40:01.124 pub mail.Agent2      MAIL_READY   Agent2 seq=42

    time (UTC, from the broker's stamp), direction, peer (agent id, hex
    connection id before HELLO, or the event topic), type and a summary of the
    fields a person looks for: message text (truncated), channel, action,
    state keys, error code names, batch counts. Everything printed from the
    wire is escaped (control bytes, invalid UTF-8), so a frame cannot corrupt
    the terminal. An undecodable body prints "!ERRNAME" as its type.
*/
#ifndef PARLEY_TAP_TEXT_H
#define PARLEY_TAP_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tap_frame.h"

//  Longest message text shown in a summary, in bytes, before "..."
//  (--full prints every body whole on lines of its own).
#define TAP_TEXT_MAX_BODY 60

//  The summary of a decoded frame (no time/dir/peer/type), into buf.
void tap_text_summary (const pmsg_t *msg, char *buf, size_t size);
//  The whole line, with a newline, on out.
void tap_text_print (FILE *out, const tap_frame_t *frame);
void tap_text_print_gap (FILE *out, uint64_t after_tseq, uint64_t before_tseq);
//  --full: after a SEND or MAIL line, every message of the frame on its own
//  indented line with its whole body, escaped but never cut:
//      [0] to Agent2: "the whole text"
//      [1] #42 from Agent1 #news: "..."          (MAIL: seq and sender)
//  Nothing for other frames.
void tap_text_print_bodies (FILE *out, const tap_frame_t *frame);

//  Appends `text` escaped and cut at `max` bytes (adds "..." when cut).
//  Shared with tap_json for the summary. `pos` is the current length.
void tap_text_escape (char *buf, size_t size, size_t *pos, const char *text,
                      size_t len, size_t max);

#endif
