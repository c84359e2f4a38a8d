// SPDX-License-Identifier: MIT
/*  testproto - decode helper of the proto suites; see testproto.h. */
#include <check.h>
#include "testproto.h"

pmsg_t *
testproto_decode (const penc_t *enc, perr_t *err, char *why)
{
    uint64_t id = 99;
    pmsg_t *msg = pmsg_decode (penc_data (enc), penc_size (enc), NULL, err, &id, why, 256);
    if (msg)
        ck_assert_uint_eq (id, pmsg_id (msg));
    return msg;
}
