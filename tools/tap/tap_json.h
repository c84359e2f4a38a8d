// SPDX-License-Identifier: MIT
/*  tap_json - JSON lines for `parley-tap --json`, one object per line.

    Every line has "kind":
      {"kind":"frame","tseq":12,"ts":1763714401123456,"time":"2026-11-21T08:40:01.123Z",
       "dir":"in","peer":"Agent1","type":"SEND","id":7,"summary":"...","size":57,
       "msg":{"v":1,"t":"SEND","id":7,"messages":[{"to":"Agent2","body":"..."}]}}
      an undecodable body: "type":null,"error":"MALFORMED","why":"...", no "msg";
      an undecodable TAP frame: {"kind":"bad_tap","error":...,"why":...,"size":N}
      {"kind":"dropped","count":3,"after_tseq":11,"before_tseq":15}

    "msg" is the whole decoded frame. msgpack maps with non-string keys get
    the key's printed form; str/bin that is valid UTF-8 becomes a JSON string,
    anything else {"base64":"..."}; integers beyond int64 become decimal
    strings; NaN and infinities become null. So jq can read every line.
*/
#ifndef PARLEY_TAP_JSON_H
#define PARLEY_TAP_JSON_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include "tap_frame.h"

//  A new JSON value for a msgpack object (never NULL).
json_t *tap_json_from_msgpack (const msgpack_object *object);
void tap_json_print (FILE *out, const tap_frame_t *frame);
void tap_json_print_gap (FILE *out, uint64_t after_tseq, uint64_t before_tseq);

#endif
