// SPDX-License-Identifier: MIT
/*  tap_frame - one frame from the broker's tap socket, decoded twice.

    The tap socket carries TAP maps {tseq, ts, dir, peer, body}; `body` is a
    Parley frame exactly as the broker received or sent it, so it is decoded
    again with pmsg_decode. Either decoding may fail (a peer sent garbage, or
    the file is from a newer broker): tap_frame_new always returns an object,
    and the caller asks what went wrong. Nothing here crashes on bad bytes.
*/
#ifndef PARLEY_TAP_FRAME_H
#define PARLEY_TAP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pmsg.h"

typedef enum { TAP_DIR_IN, TAP_DIR_OUT, TAP_DIR_PUB, TAP_DIR_UNKNOWN } tap_dir_t;

typedef struct _tap_frame_t tap_frame_t;

//  Copies nothing but what it needs: the decoded objects point into their own zones.
tap_frame_t *tap_frame_new (const void *data, size_t size);
void tap_frame_destroy (tap_frame_t **self_p);

//  The outer TAP map: false when it could not be decoded (then only
//  tap_frame_size, tap_frame_error and tap_frame_why are meaningful).
bool tap_frame_ok (const tap_frame_t *self);
perr_t tap_frame_error (const tap_frame_t *self);
const char *tap_frame_why (const tap_frame_t *self);
size_t tap_frame_size (const tap_frame_t *self);

uint64_t tap_frame_tseq (const tap_frame_t *self);
uint64_t tap_frame_ts (const tap_frame_t *self);          //  µs since the epoch
tap_dir_t tap_frame_dir (const tap_frame_t *self);
const char *tap_frame_dir_name (const tap_frame_t *self); //  "in", "out", "pub" or as sent
const char *tap_frame_peer (const tap_frame_t *self);     //  NUL-terminated, may be ""

//  The inner frame: NULL when it did not decode; then the error and why.
const pmsg_t *tap_frame_body (const tap_frame_t *self);
perr_t tap_frame_body_error (const tap_frame_t *self);
const char *tap_frame_body_why (const tap_frame_t *self);
size_t tap_frame_body_size (const tap_frame_t *self);
const void *tap_frame_body_data (const tap_frame_t *self);  //  raw bytes

//  The decode limits for whole TAP frames: a body of up to PROTO_MAX_FRAME
//  plus the TAP envelope.
const pwire_limits_t *tap_frame_limits (void);

#endif
