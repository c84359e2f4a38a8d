// SPDX-License-Identifier: MIT
/*  testproto - decode what a test just encoded, the way the broker would:
    the real strict decoder (pmsg_decode) with the default limits. Shared
    by the proto suites (check_proto, check_proto_api).
*/
#ifndef PARLEY_TESTPROTO_H
#define PARLEY_TESTPROTO_H

#include "pmsg.h"

//  Decodes the frame in `enc`; NULL with *err and a reason in `why` (256
//  bytes) if it is refused. A decoded frame's id must equal the id the
//  decoder reported (checked: fails the running test otherwise).
pmsg_t *testproto_decode (const penc_t *enc, perr_t *err, char *why);

#endif
