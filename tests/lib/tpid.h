// SPDX-License-Identifier: MIT
/*  tpid - test helpers: what /proc says about a process the test did not
    start itself (a compaction child forked by a journal or a broker).

    Tests that kill a "broker" check that its compaction child holds no
    descriptor of it and dies with it: they need the child's open
    descriptors and whether it is gone, without being its parent (so
    without waitpid).
*/
#ifndef PARLEY_TPID_H
#define PARLEY_TPID_H

#include <stdbool.h>
#include <sys/types.h>

//  True when `pid` is gone, or a zombie nobody reaped yet.
bool tpid_dead (pid_t pid);
//  How many descriptors /proc shows open in `pid` (-1 if it cannot be
//  read); the first `max` of their numbers in `fds` (which may be NULL
//  when `max` is 0).
int tpid_fds (pid_t pid, int *fds, int max);

#endif
