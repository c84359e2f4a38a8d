// SPDX-License-Identifier: MIT
/*  nofile - raise RLIMIT_NOFILE to the hard limit; see nofile.h. */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "nofile.h"
#include "plog.h"

uint64_t
nofile_raise (void)
{
    struct rlimit limit;
    if (getrlimit (RLIMIT_NOFILE, &limit) != 0) {
        plog_warn ("cannot read the descriptor limit: %s", strerror (errno));
        return 0;
    }
    rlim_t before = limit.rlim_cur;
    if (limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        if (setrlimit (RLIMIT_NOFILE, &limit) != 0) {
            plog_warn ("cannot raise the descriptor limit from %llu to %llu: %s",
                       (unsigned long long) before, (unsigned long long) limit.rlim_max,
                       strerror (errno));
            return (uint64_t) before;
        }
    }
    plog_info ("descriptor limit %llu (was %llu; hard limit %llu): about that many clients",
               (unsigned long long) limit.rlim_cur, (unsigned long long) before,
               (unsigned long long) limit.rlim_max);
    return (uint64_t) limit.rlim_cur;
}
