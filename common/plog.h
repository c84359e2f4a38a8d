// SPDX-License-Identifier: MIT
/*  plog - leveled logging to stderr.

    Every line carries an ISO-8601 UTC timestamp with milliseconds, the level,
    the program name, the pid and (once known) the agent id, so journald and
    `docker logs` capture useful lines without any extra configuration:

        2026-11-21T08:40:01.123Z INFO  parley-broker[412] agent=Agent1: text

    Under systemd the line starts with the level's syslog priority, "<6>"
    here, which journald strips and stores as the entry's PRIORITY.

    The level comes from --log-level or PARLEY_LOG (trace, debug, info, warn,
    error). plog_limited() is for messages that a peer can trigger at will
    (bad frames, say): at most `burst` lines per second per call site, the
    rest counted and reported in the next line that gets through.
*/
#ifndef PARLEY_PLOG_H
#define PARLEY_PLOG_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    PLOG_TRACE = 0,
    PLOG_DEBUG,
    PLOG_INFO,
    PLOG_WARN,
    PLOG_ERROR,
    PLOG_OFF
} plog_level_t;

//  Rate-limit state for one call site; zero-initialise it (static).
typedef struct {
    int64_t window_start_ms;
    uint32_t in_window;
    uint64_t suppressed;
} plog_limit_t;

//  Program name (e.g. "parley-broker") and agent id (may be NULL).
void plog_init (const char *program, const char *agent_id);
void plog_set_agent (const char *agent_id);
void plog_set_level (plog_level_t level);
plog_level_t plog_get_level (void);
bool plog_enabled (plog_level_t level);
//  Where lines go; 2 (stderr) unless changed. Tests point it at a pipe.
//  Also re-checks whether that descriptor is journald's stream.
void plog_set_fd (int fd);
//  True when lines carry journald priority prefixes ("<3>" for errors,
//  "<4>" warnings, "<6>" info, "<7>" debug and trace): the log descriptor
//  is the stream $JOURNAL_STREAM names (set by systemd for its services).
bool plog_journal (void);
//  Parses "trace|debug|info|warn|error|off" (case-insensitive); false if not.
bool plog_level_parse (const char *text, plog_level_t *level);
const char *plog_level_name (plog_level_t level);

void plog (plog_level_t level, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
//  As plog, but at most `burst` lines per second for this `limit`.
void plog_limited (plog_limit_t *limit, uint32_t burst, plog_level_t level,
                   const char *format, ...)
    __attribute__ ((format (printf, 4, 5)));

#define plog_trace(...) plog (PLOG_TRACE, __VA_ARGS__)
#define plog_debug(...) plog (PLOG_DEBUG, __VA_ARGS__)
#define plog_info(...)  plog (PLOG_INFO, __VA_ARGS__)
#define plog_warn(...)  plog (PLOG_WARN, __VA_ARGS__)
#define plog_error(...) plog (PLOG_ERROR, __VA_ARGS__)

#endif
