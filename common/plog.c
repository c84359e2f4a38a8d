// SPDX-License-Identifier: MIT
/*  plog - leveled logging to stderr.

    One line per call, built in a stack buffer and handed to the kernel in a
    single write(). Lines up to PIPE_BUF (4096) bytes are atomic on a pipe, so
    a broker and agents sharing one stderr (make demo, docker compose,
    journald) never interleave halves of lines. Longer messages are cut and
    end in "..." rather than split across writes.

    The level is a process-wide setting read without a lock: a racing reader
    sees either the old or the new level, which is fine for logging. The
    program name and agent id are copied under a mutex because they are
    strings. When stderr is journald's stream ($JOURNAL_STREAM names its
    device and inode, sd-daemon(3)), each line starts with "<N>", the
    syslog priority of its level, so `journalctl -p warning` and the
    journal's colours work; the prefix is not shown by journalctl. The
    check is a getenv and an fstat, done at plog_init and plog_set_fd, so
    it needs no libsystemd (this file is part of libparley). plog_limited() state belongs to one call site and is not
    thread-safe: give each thread its own plog_limit_t if several threads
    share a call site.
*/
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pclock.h"
#include "plog.h"

#define PLOG_LINE_MAX  4096     //  = PIPE_BUF on Linux: one atomic write
#define PLOG_NAME_MAX  64

static pthread_mutex_t s_mutex = PTHREAD_MUTEX_INITIALIZER;
static char s_program [PLOG_NAME_MAX] = "parley";
static char s_agent [PLOG_NAME_MAX] = "";
static volatile int s_level = PLOG_INFO;
static volatile int s_fd = 2;
static volatile int s_journal = 0;      //  1: lines go to journald; prefix "<N>"

static const char *s_names [] = { "trace", "debug", "info", "warn", "error", "off" };
//  Upper-case and padded to five columns so messages line up.
static const char *s_tags [] = { "TRACE", "DEBUG", "INFO ", "WARN ", "ERROR", "OFF  " };

//  syslog priorities (LOG_DEBUG, LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR).
static const char *s_priorities [] = { "<7>", "<7>", "<6>", "<4>", "<3>", "<7>" };

static void
s_copy_name (char *dest, const char *src)
{
    snprintf (dest, PLOG_NAME_MAX, "%s", src ? src : "");
}

//  True when $JOURNAL_STREAM is "<device>:<inode>" of `fd`: systemd
//  connected it to journald. A child that inherits the variable but has
//  its stderr redirected elsewhere does not match, so gets plain lines.
static bool
s_fd_is_journal (int fd)
{
    const char *stream = getenv ("JOURNAL_STREAM");
    if (!stream || !*stream)
        return false;
    unsigned long long device, inode;
    char tail;
    if (sscanf (stream, "%llu:%llu%c", &device, &inode, &tail) != 2)
        return false;
    struct stat st;
    if (fstat (fd, &st) != 0)
        return false;
    return (unsigned long long) st.st_dev == device && (unsigned long long) st.st_ino == inode;
}

void
plog_init (const char *program, const char *agent_id)
{
    pthread_mutex_lock (&s_mutex);
    s_copy_name (s_program, program ? program : "parley");
    s_copy_name (s_agent, agent_id);
    pthread_mutex_unlock (&s_mutex);
    s_journal = s_fd_is_journal (s_fd);
}

void
plog_set_agent (const char *agent_id)
{
    pthread_mutex_lock (&s_mutex);
    s_copy_name (s_agent, agent_id);
    pthread_mutex_unlock (&s_mutex);
}

void
plog_set_level (plog_level_t level)
{
    assert (level >= PLOG_TRACE && level <= PLOG_OFF);
    s_level = level;
}

plog_level_t
plog_get_level (void)
{
    return (plog_level_t) s_level;
}

bool
plog_enabled (plog_level_t level)
{
    return level >= PLOG_TRACE && level < PLOG_OFF && (int) level >= s_level;
}

void
plog_set_fd (int fd)
{
    assert (fd >= 0);
    s_fd = fd;
    s_journal = s_fd_is_journal (fd);
}

bool
plog_journal (void)
{
    return s_journal;
}

bool
plog_level_parse (const char *text, plog_level_t *level)
{
    assert (level);
    if (!text)
        return false;
    for (int i = PLOG_TRACE; i <= PLOG_OFF; i++) {
        if (strcasecmp (text, s_names [i]) == 0) {
            *level = (plog_level_t) i;
            return true;
        }
    }
    //  "warning" is what people type; accept it rather than fail a service.
    if (strcasecmp (text, "warning") == 0) {
        *level = PLOG_WARN;
        return true;
    }
    return false;
}

const char *
plog_level_name (plog_level_t level)
{
    if (level < PLOG_TRACE || level > PLOG_OFF)
        return "?";
    return s_names [level];
}

//  Writes the whole buffer, retrying on EINTR and short writes. A short
//  write only happens on a full non-pipe fd; there is nobody to tell if the
//  log itself fails, so errors are dropped.
static void
s_write_all (int fd, const char *data, size_t size)
{
    while (size > 0) {
        ssize_t rc = write (fd, data, size);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        data += rc;
        size -= (size_t) rc;
    }
}

static void
s_vlog (plog_level_t level, uint64_t suppressed, const char *format, va_list args)
{
    char line [PLOG_LINE_MAX];
    char stamp [32];
    pclock_iso8601 (pclock_wall_us (), stamp, sizeof stamp);

    const char *priority = s_journal ? s_priorities [level] : "";
    pthread_mutex_lock (&s_mutex);
    int n;
    if (s_agent [0])
        n = snprintf (line, sizeof line, "%s%s %s %s[%d] agent=%s: ", priority, stamp,
                      s_tags [level], s_program, (int) getpid (), s_agent);
    else
        n = snprintf (line, sizeof line, "%s%s %s %s[%d]: ", priority, stamp,
                      s_tags [level], s_program, (int) getpid ());
    pthread_mutex_unlock (&s_mutex);

    size_t used = (size_t) n;
    //  Room for the message, the suppression note and the newline.
    char tail [64] = "";
    if (suppressed)
        snprintf (tail, sizeof tail, " (%llu similar lines suppressed)",
                  (unsigned long long) suppressed);
    size_t reserve = strlen (tail) + 1;
    size_t room = sizeof line - used - reserve;
    int m = vsnprintf (line + used, room, format, args);
    if (m < 0)
        m = 0;
    if ((size_t) m >= room) {
        //  Cut: mark it so nobody mistakes a prefix for the whole message.
        used += room - 1;
        memcpy (line + used - 3, "...", 3);
    }
    else
        used += (size_t) m;
    //  Messages are one line each; a stray newline in peer-supplied text
    //  must not forge a second log line.
    for (size_t i = (size_t) n; i < used; i++)
        if (line [i] == '\n' || line [i] == '\r')
            line [i] = ' ';
    memcpy (line + used, tail, strlen (tail));
    used += strlen (tail);
    line [used++] = '\n';
    s_write_all (s_fd, line, used);
}

void
plog (plog_level_t level, const char *format, ...)
{
    assert (format);
    if (!plog_enabled (level))
        return;
    va_list args;
    va_start (args, format);
    s_vlog (level, 0, format, args);
    va_end (args);
}

void
plog_limited (plog_limit_t *limit, uint32_t burst, plog_level_t level,
              const char *format, ...)
{
    assert (limit);
    assert (format);
    if (!plog_enabled (level))
        return;
    int64_t now = pclock_mono_ms ();
    if (limit->window_start_ms == 0 || now - limit->window_start_ms >= 1000) {
        limit->window_start_ms = now ? now : 1;
        limit->in_window = 0;
    }
    if (limit->in_window >= burst) {
        limit->suppressed++;
        return;
    }
    limit->in_window++;
    uint64_t suppressed = limit->suppressed;
    limit->suppressed = 0;
    va_list args;
    va_start (args, format);
    s_vlog (level, suppressed, format, args);
    va_end (args);
}
