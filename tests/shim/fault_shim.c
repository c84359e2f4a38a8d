// SPDX-License-Identifier: MIT
/*  fault_shim - LD_PRELOAD library for tests: records what a power cut
    would keep of the watched files and makes their syncs or writes fail
    on demand. The interface and the ledger it writes are described in
    tests/lib/tfault.h, which drives it.

    Ledger lines ("<dir>/ledger", appended with one write each, so the
    broker, its compaction child and its threads can share it), where a
    file is named by "<dev> <ino> <birth s> <birth ns>" (an inode number
    alone is reused once a file is removed):
        S <file> <size>                  synced up to size
        F <file> <size>                  a sync failed with size bytes written
        D <file> <count> {<name> <file>} a directory synced with these names
    And the wall clock: clock_gettime (CLOCK_REALTIME) reads the control's
    offset off.
    Built without sanitizers: it is loaded into processes that may or may
    not have them.
*/
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../lib/tfault.h"

//  tfault_loaded () looks for this symbol.
int parley_fault_shim = 1;

typedef ssize_t (write_fn) (int, const void *, size_t);
typedef int (sync_fn) (int);
typedef int (clock_fn) (clockid_t, struct timespec *);

static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static write_fn *s_write;
static sync_fn *s_fsync, *s_fdatasync;
static clock_fn *s_clock_gettime;
static tfault_control_t *s_control;
static char s_ledger [PATH_MAX];

static void
s_init (void)
{
    s_write = (write_fn *) dlsym (RTLD_NEXT, "write");
    s_fsync = (sync_fn *) dlsym (RTLD_NEXT, "fsync");
    s_fdatasync = (sync_fn *) dlsym (RTLD_NEXT, "fdatasync");
    s_clock_gettime = (clock_fn *) dlsym (RTLD_NEXT, "clock_gettime");
    const char *dir = getenv ("PARLEY_FAULT_DIR");
    if (!dir || !*dir)
        return;
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/control", dir);
    snprintf (s_ledger, sizeof s_ledger, "%s/ledger", dir);
    int fd = open (path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return;
    void *map = mmap (NULL, sizeof (tfault_control_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close (fd);
    if (map != MAP_FAILED && memcmp (((tfault_control_t *) map)->magic, TFAULT_MAGIC, 8) == 0)
        s_control = map;
}

//  The path of `fd` if it is under the watched prefix (into path).
static bool
s_watched (int fd, char *path, size_t size)
{
    if (!s_control || !s_control->watch [0])
        return false;
    char link [64];
    snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink (link, path, size - 1);
    if (n <= 0)
        return false;
    path [n] = 0;
    size_t len = strnlen (s_control->watch, sizeof s_control->watch);
    return strncmp (path, s_control->watch, len) == 0 && (path [len] == 0 || path [len] == '/');
}

static int
s_identity (const struct statx *st, char *buf, size_t size)
{
    long long birth = (st->stx_mask & STATX_BTIME) ? st->stx_btime.tv_sec : 0;
    unsigned birth_ns = (st->stx_mask & STATX_BTIME) ? st->stx_btime.tv_nsec : 0;
    return snprintf (buf, size, "%llu %llu %lld %u",
                     (unsigned long long) makedev (st->stx_dev_major, st->stx_dev_minor),
                     (unsigned long long) st->stx_ino, birth, birth_ns);
}

static void
s_ledger_line (const char *line, size_t len)
{
    int fd = open (s_ledger, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    (void) s_write (fd, line, len);
    close (fd);
}

//  A directory's names with their files, as one D line.
static void
s_record_dir (int fd, const char *path, const struct statx *st)
{
    DIR *handle = opendir (path);
    if (!handle)
        return;
    size_t cap = 4096, used = 0;
    char *names = malloc (cap);
    int count = 0;
    struct dirent *entry;
    while (names && (entry = readdir (handle))) {
        struct statx child;
        if (entry->d_name [0] == '.' || statx (fd, entry->d_name, AT_SYMLINK_NOFOLLOW,
                                                STATX_BASIC_STATS | STATX_BTIME, &child) != 0)
            continue;
        char identity [128];
        s_identity (&child, identity, sizeof identity);
        size_t need = strlen (entry->d_name) + strlen (identity) + 3;
        if (used + need >= cap) {
            char *grown = realloc (names, cap * 2 + need);
            if (!grown) {
                free (names);
                names = NULL;
                break;
            }
            names = grown;
            cap = cap * 2 + need;
        }
        used += (size_t) snprintf (names + used, cap - used, " %s %s", entry->d_name, identity);
        count++;
    }
    closedir (handle);
    if (!names)
        return;
    char identity [128];
    s_identity (st, identity, sizeof identity);
    size_t size = used + 256;
    char *line = malloc (size);
    if (line) {
        int n = snprintf (line, size, "D %s %d%s\n", identity, count, used ? names : "");
        s_ledger_line (line, (size_t) n);
    }
    free (line);
    free (names);
}

//  Whether to fail this sync (counts it down).
static bool
s_fail_sync (void)
{
    int32_t left = __atomic_load_n (&s_control->fail_sync, __ATOMIC_SEQ_CST);
    while (left != 0) {
        if (left < 0)
            return true;
        if (__atomic_compare_exchange_n (&s_control->fail_sync, &left, left - 1, false,
                                         __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            return true;
    }
    return false;
}

static int
s_sync (int fd, sync_fn *real)
{
    char path [PATH_MAX];
    if (!s_watched (fd, path, sizeof path))
        return real (fd);
    //  What was written before the sync began is what it covers.
    struct statx before;
    if (statx (fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &before) != 0)
        return real (fd);
    char identity [128], line [256];
    s_identity (&before, identity, sizeof identity);
    if (s_fail_sync ()) {
        __atomic_add_fetch (&s_control->failed_syncs, 1, __ATOMIC_SEQ_CST);
        if (S_ISREG (before.stx_mode)) {
            int n = snprintf (line, sizeof line, "F %s %llu\n", identity,
                              (unsigned long long) before.stx_size);
            s_ledger_line (line, (size_t) n);
        }
        errno = EIO;
        return -1;
    }
    int rc = real (fd);
    if (rc != 0)
        return rc;
    int error = errno;
    if (S_ISDIR (before.stx_mode))
        s_record_dir (fd, path, &before);
    else
    if (S_ISREG (before.stx_mode)) {
        int n = snprintf (line, sizeof line, "S %s %llu\n", identity,
                          (unsigned long long) before.stx_size);
        s_ledger_line (line, (size_t) n);
    }
    errno = error;
    return 0;
}

int
fsync (int fd)
{
    pthread_once (&s_once, s_init);
    return s_sync (fd, s_fsync);
}

int
fdatasync (int fd)
{
    pthread_once (&s_once, s_init);
    return s_sync (fd, s_fdatasync);
}

ssize_t
write (int fd, const void *buf, size_t size)
{
    pthread_once (&s_once, s_init);
    if (s_control && s_control->fail_write) {
        char path [PATH_MAX];
        struct stat st;
        if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && s_watched (fd, path, sizeof path)) {
            __atomic_add_fetch (&s_control->failed_writes, 1, __ATOMIC_SEQ_CST);
            errno = EIO;
            return -1;
        }
    }
    return s_write (fd, buf, size);
}

int
clock_gettime (clockid_t id, struct timespec *ts)
{
    pthread_once (&s_once, s_init);
    int rc = s_clock_gettime (id, ts);
    if (rc == 0 && s_control && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
        ts->tv_sec += (time_t) __atomic_load_n (&s_control->realtime_offset, __ATOMIC_RELAXED);
    return rc;
}
