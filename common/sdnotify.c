// SPDX-License-Identifier: MIT
/*  sdnotify - systemd readiness, stopping and watchdog notices; see
    sdnotify.h. sd_notify sends one datagram to $NOTIFY_SOCKET per call
    (a few microseconds); the watchdog is fed at most a few times a second.
*/
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "plog.h"
#include "sdnotify.h"

static void
s_notify (const char *state)
{
    static bool s_warned;
    int rc = sd_notify (0, state);
    if (rc < 0 && !s_warned) {
        s_warned = true;
        plog_debug ("cannot notify systemd (%s): %s", state, strerror (-rc));
    }
}

void
sdnotify_ready (const char *status)
{
    char text [512];
    if (status && *status)
        snprintf (text, sizeof text, "READY=1\nSTATUS=%s", status);
    else
        snprintf (text, sizeof text, "READY=1");
    s_notify (text);
}

void
sdnotify_stopping (void)
{
    s_notify ("STOPPING=1");
}

uint64_t
sdnotify_watchdog_interval_ms (void)
{
    uint64_t usec = 0;
    //  > 0 only when $WATCHDOG_USEC is set and $WATCHDOG_PID (if set) is us.
    if (sd_watchdog_enabled (0, &usec) <= 0 || usec == 0)
        return 0;
    uint64_t ms = usec / 2000;
    return ms ? ms : 1;
}

void
sdnotify_watchdog (void)
{
    s_notify ("WATCHDOG=1");
}
