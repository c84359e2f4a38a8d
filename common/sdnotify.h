// SPDX-License-Identifier: MIT
/*  sdnotify - tells systemd how a Type=notify service is doing.

    A thin layer over libsystemd's sd_notify(3): READY=1 once the service
    serves (the broker: sockets bound and journal recovered; the agent: its
    first WELCOME), STOPPING=1 when it begins to shut down, and WATCHDOG=1
    from the event loop when the unit sets WatchdogSec=. Outside systemd
    (no $NOTIFY_SOCKET) every call is a cheap no-op, so callers need not
    ask first. Errors from sd_notify are logged once at debug level and
    otherwise ignored: a service must not stop because its manager went.
*/
#ifndef PARLEY_SDNOTIFY_H
#define PARLEY_SDNOTIFY_H

#include <stdint.h>

//  READY=1 with a STATUS= line (may be NULL) for `systemctl status`.
void sdnotify_ready (const char *status);
//  STOPPING=1.
void sdnotify_stopping (void);
//  How often to send WATCHDOG=1, in milliseconds: half of $WATCHDOG_USEC
//  (at least 1), or 0 when systemd asks for no watchdog for this process.
uint64_t sdnotify_watchdog_interval_ms (void);
//  WATCHDOG=1.
void sdnotify_watchdog (void);

#endif
