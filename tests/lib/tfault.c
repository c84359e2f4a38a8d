// SPDX-License-Identifier: MIT
/*  tfault - drives the fault shim and cuts data directories; see tfault.h.
    What is slow: a cut reads the whole ledger (one line per sync), fine
    for a test's few thousand syncs.
*/
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tfault.h"
#include "tproc.h"

struct _tfault_t {
    char dir [PATH_MAX];
    bool owned;                 //  made by tfault_new: removed by destroy
    tfault_control_t *control;
    char *saved_preload, *saved_asan;
    bool env_set;
};

const char *
tfault_shim_path (void)
{
    static char path [PATH_MAX];
    const char *given = getenv ("PARLEY_FAULT_SHIM");
    if (given && *given)
        return given;
    char self [PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return "libparley_fault.so";
    self [n] = 0;
    snprintf (path, sizeof path, "%s/libparley_fault.so", dirname (self));
    return path;
}

//  The canonical form of `watch` (the shim compares what /proc/self/fd
//  links say): its parent resolved, its own name kept (it may not exist).
static void
s_canonical (const char *watch, char *out, size_t size)
{
    char copy [PATH_MAX], parent [PATH_MAX];
    snprintf (copy, sizeof copy, "%s", watch);
    char *base = basename (copy);
    char copy2 [PATH_MAX];
    snprintf (copy2, sizeof copy2, "%s", watch);
    int n = realpath (dirname (copy2), parent) ? snprintf (out, size, "%s/%s", parent, base) : -1;
    if (n < 0 || (size_t) n >= size)
        snprintf (out, size, "%s", watch);
}

static tfault_control_t *
s_map (const char *dir, bool create)
{
    char path [PATH_MAX + 16];
    snprintf (path, sizeof path, "%s/control", dir);
    int fd = open (path, O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0), 0600);
    if (fd < 0)
        return NULL;
    if (create && ftruncate (fd, sizeof (tfault_control_t)) != 0) {
        close (fd);
        return NULL;
    }
    void *map = mmap (NULL, sizeof (tfault_control_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close (fd);
    if (map == MAP_FAILED)
        return NULL;
    tfault_control_t *control = map;
    if (create)
        memcpy (control->magic, TFAULT_MAGIC, 8);
    return control;
}

static void
s_watch (tfault_t *self, const char *watch)
{
    char path [PATH_MAX + 16];
    snprintf (path, sizeof path, "%s/ledger", self->dir);
    unlink (path);
    self->control->fail_sync = 0;
    self->control->fail_write = 0;
    self->control->failed_syncs = 0;
    self->control->failed_writes = 0;
    self->control->realtime_offset = 0;
    char canonical [PATH_MAX] = "";
    if (*watch)
        s_canonical (watch, canonical, sizeof canonical);
    snprintf (self->control->watch, sizeof self->control->watch, "%s", canonical);
}

tfault_t *
tfault_new (const char *watch)
{
    tfault_t *self = calloc (1, sizeof (tfault_t));
    if (!self)
        return NULL;
    const char *tmp = getenv ("TMPDIR");
    snprintf (self->dir, sizeof self->dir, "%s/parley-fault-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (self->dir) || !(self->control = s_map (self->dir, true))) {
        free (self);
        return NULL;
    }
    self->owned = true;
    s_watch (self, watch);
    return self;
}

tfault_t *
tfault_attach (const char *watch)
{
    const char *dir = getenv ("PARLEY_FAULT_DIR");
    if (!dir || !*dir)
        return NULL;
    tfault_t *self = calloc (1, sizeof (tfault_t));
    if (!self)
        return NULL;
    snprintf (self->dir, sizeof self->dir, "%s", dir);
    if (!(self->control = s_map (self->dir, false))) {
        free (self);
        return NULL;
    }
    s_watch (self, watch);
    return self;
}

void
tfault_destroy (tfault_t **self_p)
{
    tfault_t *self = *self_p;
    if (!self)
        return;
    if (self->env_set)
        tfault_unsetenv (self);
    self->control->fail_sync = 0;
    self->control->fail_write = 0;
    self->control->realtime_offset = 0;
    self->control->watch [0] = 0;
    munmap ((void *) self->control, sizeof (tfault_control_t));
    if (self->owned)
        tproc_remove_tree (self->dir);
    free (self);
    *self_p = NULL;
}

const char *
tfault_dir (tfault_t *self)
{
    return self->dir;
}

static char *
s_dup_env (const char *name)
{
    const char *value = getenv (name);
    return value ? strdup (value) : NULL;
}

void
tfault_setenv (tfault_t *self)
{
    if (!self->env_set) {
        self->saved_preload = s_dup_env ("LD_PRELOAD");
        self->saved_asan = s_dup_env ("ASAN_OPTIONS");
        self->env_set = true;
    }
    char value [PATH_MAX * 2];
    snprintf (value, sizeof value, "%s%s%s", tfault_shim_path (),
              self->saved_preload ? " " : "", self->saved_preload ? self->saved_preload : "");
    setenv ("LD_PRELOAD", value, 1);
    setenv ("PARLEY_FAULT_DIR", self->dir, 1);
    //  A sanitizer build insists on its runtime coming first; the shim
    //  wraps nothing it intercepts.
    snprintf (value, sizeof value, "%s%sverify_asan_link_order=0",
              self->saved_asan ? self->saved_asan : "", self->saved_asan ? ":" : "");
    setenv ("ASAN_OPTIONS", value, 1);
}

void
tfault_unsetenv (tfault_t *self)
{
    if (!self->env_set)
        return;
    if (self->saved_preload)
        setenv ("LD_PRELOAD", self->saved_preload, 1);
    else
        unsetenv ("LD_PRELOAD");
    if (self->saved_asan)
        setenv ("ASAN_OPTIONS", self->saved_asan, 1);
    else
        unsetenv ("ASAN_OPTIONS");
    unsetenv ("PARLEY_FAULT_DIR");
    free (self->saved_preload);
    free (self->saved_asan);
    self->saved_preload = self->saved_asan = NULL;
    self->env_set = false;
}

void
tfault_fail_sync (tfault_t *self, int count)
{
    __atomic_store_n (&self->control->fail_sync, count, __ATOMIC_SEQ_CST);
}

void
tfault_fail_write (tfault_t *self, bool on)
{
    __atomic_store_n (&self->control->fail_write, on ? 1 : 0, __ATOMIC_SEQ_CST);
}

void
tfault_realtime_offset (tfault_t *self, int64_t seconds)
{
    __atomic_store_n (&self->control->realtime_offset, seconds, __ATOMIC_SEQ_CST);
}

int
tfault_failed_syncs (tfault_t *self)
{
    return __atomic_load_n (&self->control->failed_syncs, __ATOMIC_SEQ_CST);
}

int
tfault_failed_writes (tfault_t *self)
{
    return __atomic_load_n (&self->control->failed_writes, __ATOMIC_SEQ_CST);
}

//  ---------------------------------------------------------------------
//  The cut

typedef struct {
    char identity [128];
    long long synced;           //  -1: never
    long long lost [64][2];     //  ranges a failed sync may have dropped
    int lost_count;
} file_state_t;

typedef struct {
    file_state_t *files;
    size_t count, cap;
    char *listing;              //  the data directory's last D line
} ledger_t;

static file_state_t *
s_file (ledger_t *ledger, const char *identity)
{
    for (size_t i = 0; i < ledger->count; i++)
        if (strcmp (ledger->files [i].identity, identity) == 0)
            return &ledger->files [i];
    if (ledger->count == ledger->cap) {
        ledger->cap = ledger->cap ? 2 * ledger->cap : 64;
        file_state_t *grown = realloc (ledger->files, ledger->cap * sizeof (file_state_t));
        if (!grown)
            abort ();
        ledger->files = grown;
    }
    file_state_t *file = &ledger->files [ledger->count++];
    memset (file, 0, sizeof *file);
    snprintf (file->identity, sizeof file->identity, "%s", identity);
    file->synced = -1;
    return file;
}

static void
s_identity (const struct statx *st, char *buf, size_t size)
{
    long long birth = (st->stx_mask & STATX_BTIME) ? st->stx_btime.tv_sec : 0;
    unsigned birth_ns = (st->stx_mask & STATX_BTIME) ? st->stx_btime.tv_nsec : 0;
    snprintf (buf, size, "%llu %llu %lld %u",
              (unsigned long long) makedev (st->stx_dev_major, st->stx_dev_minor),
              (unsigned long long) st->stx_ino, birth, birth_ns);
}

static int
s_read_ledger (tfault_t *self, const char *dir_identity, ledger_t *ledger)
{
    char path [PATH_MAX + 16];
    snprintf (path, sizeof path, "%s/ledger", self->dir);
    FILE *file = fopen (path, "r");
    if (!file)
        return errno == ENOENT ? 0 : -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    size_t id_len = strlen (dir_identity);
    while ((len = getline (&line, &cap, file)) > 0) {
        if (line [len - 1] == '\n')
            line [--len] = 0;
        char kind = line [0];
        //  "<kind> <dev> <ino> <birth> <birth ns> ..."
        char identity [128];
        unsigned long long dev, ino, birth_ns;
        long long birth;
        int used = 0;
        if (sscanf (line + 2, "%llu %llu %lld %llu%n", &dev, &ino, &birth, &birth_ns, &used) != 4)
            continue;
        snprintf (identity, sizeof identity, "%llu %llu %lld %llu", dev, ino, birth, birth_ns);
        const char *rest = line + 2 + used;
        if (kind == 'S' || kind == 'F') {
            file_state_t *state = s_file (ledger, identity);
            long long size = atoll (rest);
            if (kind == 'S')
                state->synced = size;
            else
            if (size > (state->synced > 0 ? state->synced : 0) && state->lost_count < 64) {
                state->lost [state->lost_count][0] = state->synced > 0 ? state->synced : 0;
                state->lost [state->lost_count][1] = size;
                state->lost_count++;
            }
        }
        else
        if (kind == 'D' && strncmp (identity, dir_identity, id_len) == 0 && !identity [id_len]) {
            free (ledger->listing);
            ledger->listing = strdup (rest);
        }
    }
    free (line);
    fclose (file);
    return 0;
}

//  True when the listing holds `name` as the file `identity`.
static bool
s_listed (const char *listing, const char *name, const char *identity)
{
    if (!listing)
        return false;
    //  " <count> {<name> <dev> <ino> <birth> <ns>}"
    char needle [512];
    snprintf (needle, sizeof needle, " %s %s", name, identity);
    size_t len = strlen (needle);
    for (const char *at = strstr (listing, needle); at; at = strstr (at + 1, needle))
        if (at [len] == ' ' || at [len] == 0)
            return true;
    return false;
}

static int
s_write_tail (int fd, tfault_tail_t tail, size_t bytes)
{
    uint64_t state = 0x9E3779B97F4A7C15ull;
    char block [4096];
    while (bytes > 0) {
        size_t n = bytes < sizeof block ? bytes : sizeof block;
        for (size_t i = 0; i < n; i++) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            block [i] = tail == TFAULT_TAIL_ZEROS ? 0 : (char) (state | 1);
        }
        if (write (fd, block, n) != (ssize_t) n)
            return -1;
        bytes -= n;
    }
    return 0;
}

static int
s_zero (int fd, long long from, long long to)
{
    static const char zeros [4096];
    while (from < to) {
        size_t n = (size_t) (to - from) < sizeof zeros ? (size_t) (to - from) : sizeof zeros;
        if (pwrite (fd, zeros, n, from) != (ssize_t) n)
            return -1;
        from += (long long) n;
    }
    return 0;
}

int
tfault_cut (tfault_t *self, const char *data_dir, tfault_tail_t tail, size_t tail_bytes,
            char *why, size_t why_size)
{
    struct statx dir_st;
    if (statx (AT_FDCWD, data_dir, 0, STATX_BASIC_STATS | STATX_BTIME, &dir_st) != 0) {
        snprintf (why, why_size, "cannot stat %s: %s", data_dir, strerror (errno));
        return -1;
    }
    char dir_identity [128];
    s_identity (&dir_st, dir_identity, sizeof dir_identity);
    ledger_t ledger = { 0 };
    if (s_read_ledger (self, dir_identity, &ledger) != 0) {
        snprintf (why, why_size, "cannot read the ledger in %s: %s", self->dir, strerror (errno));
        return -1;
    }
    DIR *handle = opendir (data_dir);
    if (!handle) {
        snprintf (why, why_size, "cannot open %s: %s", data_dir, strerror (errno));
        free (ledger.files);
        free (ledger.listing);
        return -1;
    }
    int rc = 0;
    struct dirent *entry;
    while (rc == 0 && (entry = readdir (handle))) {
        if (entry->d_name [0] == '.')
            continue;
        char path [PATH_MAX * 2];
        snprintf (path, sizeof path, "%s/%s", data_dir, entry->d_name);
        struct statx st;
        if (statx (AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &st) != 0
        ||  !S_ISREG (st.stx_mode))
            continue;
        char identity [128];
        s_identity (&st, identity, sizeof identity);
        if (!s_listed (ledger.listing, entry->d_name, identity)) {
            //  Its name was never synced: a power cut may take it.
            if (unlink (path) != 0)
                rc = -1;
            continue;
        }
        file_state_t *state = s_file (&ledger, identity);
        long long size = (long long) st.stx_size;
        long long keep = state->synced < 0 ? 0 : state->synced < size ? state->synced : size;
        int fd = open (path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || ftruncate (fd, keep) != 0)
            rc = -1;
        for (int i = 0; rc == 0 && i < state->lost_count; i++) {
            long long from = state->lost [i][0], to = state->lost [i][1] < keep
                           ? state->lost [i][1] : keep;
            if (from < to && s_zero (fd, from, to) != 0)
                rc = -1;
        }
        if (rc == 0 && size > keep && tail != TFAULT_TAIL_NONE
        &&  (lseek (fd, 0, SEEK_END) < 0 || s_write_tail (fd, tail, tail_bytes) != 0))
            rc = -1;
        if (fd >= 0)
            close (fd);
        if (rc != 0)
            snprintf (why, why_size, "cannot cut %s: %s", path, strerror (errno));
    }
    closedir (handle);
    free (ledger.files);
    free (ledger.listing);
    return rc;
}

//  ---------------------------------------------------------------------
//  In-process

bool
tfault_loaded (void)
{
    return dlsym (RTLD_DEFAULT, "parley_fault_shim") != NULL;
}

void
tfault_reexec (char **argv)
{
    if (tfault_loaded ())
        return;
    if (getenv ("PARLEY_FAULT_DIR")) {
        fprintf (stderr, "tfault: %s did not load (LD_PRELOAD=%s)\n", tfault_shim_path (),
                 getenv ("LD_PRELOAD") ? getenv ("LD_PRELOAD") : "");
        exit (EXIT_FAILURE);
    }
    tfault_t *self = tfault_new ("");
    if (!self) {
        fprintf (stderr, "tfault: cannot make a control directory\n");
        exit (EXIT_FAILURE);
    }
    //  The binary by its name (under valgrind, /proc/self/exe is the tool;
    //  reading the link gives the program it runs).
    char exe [PATH_MAX];
    ssize_t len = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    snprintf (exe + (len > 0 ? len : 0), sizeof exe - (size_t) (len > 0 ? len : 0), "%s",
              len > 0 ? "" : argv [0]);
    fflush (NULL);
    pid_t pid = fork ();
    if (pid == 0) {
        tfault_setenv (self);
        execv (exe, argv);
        fprintf (stderr, "tfault: cannot run %s again: %s\n", argv [0], strerror (errno));
        _exit (127);
    }
    int status = 0;
    while (pid > 0 && waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    tfault_destroy (&self);
    exit (pid > 0 && WIFEXITED (status) ? WEXITSTATUS (status) : EXIT_FAILURE);
}
