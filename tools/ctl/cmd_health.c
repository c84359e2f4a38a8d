// SPDX-License-Identifier: MIT
/*  parley-ctl health: an exit status for probes (compose healthchecks,
    systemd, monitoring). Fast and bounded: main connects with two HELLO
    attempts within --timeout-ms, then one STATS.

        0  healthy: the broker answered HELLO and STATS, and its journal
           (if it keeps one) can write and sync
        1  unhealthy: it answered, but refused HELLO or STATS (shutting
           down, a key not allowed that id, ...), or said its journal
           failed a write or sync (it refuses changes until it has
           rewritten the state from memory)
        2  usage error
        3  no answer: nothing listens, or no reply in time. A broker
           under --fsync always whose journal failed holds every answer
           until the journal heals, so a probe sees this, not 1.

    Prints one line ("healthy", or why not); --json: {"healthy": bool, ...}. */
#include <stdio.h>

#include "ctl.h"
#include "pconfig.h"

static int
s_report (ctl_t *ctl, int rc, const char *why, uint64_t uptime_ms)
{
    if (ctl->json)
        ctl_print_json (json_pack ("{s:b, s:i, s:s, s:s, s:I}", "healthy", rc == PARLEY_EXIT_OK,
                                   "exit", rc, "reason", why, "broker", ctl->broker,
                                   "uptime_ms", (json_int_t) uptime_ms));
    else
        printf ("%s%s%s\n", rc == PARLEY_EXIT_OK ? "healthy" : "unhealthy",
                *why ? ": " : "", why);
    return rc;
}

int
cmd_health (ctl_t *ctl)
{
    //  A refused HELLO (a wire error code, below the client's own) is an
    //  answer: the broker is there, it does not let this probe in.
    if (!ctl->connected && ctl->connect_error < PARLEY_ERR_TIMEOUT) {
        char why [640];
        snprintf (why, sizeof why, "HELLO refused: %s: %s", parley_strerror (ctl->connect_error),
                  ctl->connect_why);
        return s_report (ctl, CTL_EXIT_UNHEALTHY, why, 0);
    }
    if (!ctl->connected)
        return s_report (ctl, PARLEY_EXIT_NETWORK, parley_strerror (ctl->connect_error), 0);
    parley_stats_t *stats = NULL;
    parley_err_t rc = parley_client_stats (ctl->link, &stats);
    if (rc == PARLEY_ERR_TIMEOUT || rc == PARLEY_ERR_LOST || rc == PARLEY_ERR_SOCKET)
        return s_report (ctl, PARLEY_EXIT_NETWORK, parley_strerror (rc), 0);
    if (rc != PARLEY_OK)
        return s_report (ctl, CTL_EXIT_UNHEALTHY, parley_strerror (rc), 0);
    uint64_t uptime_ms = parley_stats_uint (stats, "uptime_ms");
    //  A broker without a journal has no such field: nothing to judge.
    const parley_stat_t *journal = parley_stats_find (stats, "journal_healthy");
    bool journal_failed = journal && parley_stat_uint (journal) == 0;
    char why [256] = "";
    if (journal_failed)
        snprintf (why, sizeof why, "the journal failed a write or sync (%llu write and %llu "
                  "sync errors so far); changes are refused until it is rewritten from memory",
                  (unsigned long long) parley_stats_uint (stats, "journal_write_errors"),
                  (unsigned long long) parley_stats_uint (stats, "journal_sync_errors"));
    parley_stats_destroy (&stats);
    return s_report (ctl, journal_failed ? CTL_EXIT_UNHEALTHY : PARLEY_EXIT_OK, why, uptime_ms);
}
