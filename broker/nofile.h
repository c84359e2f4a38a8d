// SPDX-License-Identifier: MIT
/*  nofile - the broker's descriptor limit.

    Every client connection is a descriptor; at the usual soft limit of
    1024 the 1025th client cannot connect (libzmq's accept fails and
    retries). The hard limit is what the administrator allows (systemd:
    LimitNOFILE=), so the broker raises the soft limit to it at start and
    logs both, so an operator sees the real ceiling.
*/
#ifndef PARLEY_BROKER_NOFILE_H
#define PARLEY_BROKER_NOFILE_H

#include <stdint.h>

//  Raises RLIMIT_NOFILE's soft limit to the hard limit and logs the
//  outcome. Returns the soft limit now in force (0 if unknown).
uint64_t nofile_raise (void);

#endif
