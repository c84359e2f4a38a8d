// SPDX-License-Identifier: MIT
/*  vmemory_log - the append-only memory log. See vmemory_log.h.

    Load maps the file (mmap, read-only) rather than reading it into a
    buffer: the check of 100 MB of records then costs no heap, and the
    pages are the kernel's to drop after munmap. We hold the directory's
    flock, so nobody truncates the file under the mapping.

    Honest costs: a load reads and checksums the whole log (FNV-1a, byte
    at a time: ~0.2 s per 100 MB on this machine) even when the snapshot
    covers it, because the texts live only here; a save is one pwrite of
    the new records + fdatasync.
*/
#include "vmemory_log.h"
#include "vmemory_record.h"
#include "vmemory_file.h"
#include "vmemory.h"             //  limits

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <faiss/c_api/error_c.h>

#include "plog.h"

#define S_BATCH 1024            //  vectors per faiss add at load

struct _vmemory_log_t {
    char *dir;
    int fd;                     //  -1 until the file exists
    int dim;
    uint64_t log_id;
    char factory [VMEMORY_FILE_FACTORY_MAX + 1];
    uint64_t size;              //  durable bytes in the file
    uint64_t count;             //  durable records
    uint64_t last_fnv;          //  checksum of the last durable record
    unsigned char *pending;     //  encoded records not yet written
    size_t pending_len, pending_cap;
    uint64_t pending_count, pending_last_fnv;
    size_t last_record;         //  size of the last buffered record
    uint64_t prev_last_fnv;     //  pending_last_fnv before it
    bool staged;                //  lives as memory.log.tmp until published
};

vmemory_log_t *
vmemory_log_new_staged (const char *dir, int dim, const char *factory)
{
    vmemory_log_t *self = vmemory_log_new (dir, dim, factory);
    if (self)
        self->staged = true;
    return self;
}

vmemory_log_t *
vmemory_log_new (const char *dir, int dim, const char *factory)
{
    assert (dir && dim > 0 && factory);
    assert (strlen (factory) <= VMEMORY_FILE_FACTORY_MAX);
    vmemory_log_t *self = calloc (1, sizeof *self);
    if (!self || !(self->dir = strdup (dir))) {
        free (self);
        return NULL;
    }
    self->fd = -1;
    self->dim = dim;
    snprintf (self->factory, sizeof self->factory, "%s", factory);
    //  Only needs to differ between logs, not to be secret.
    if (getrandom (&self->log_id, sizeof self->log_id, GRND_NONBLOCK) != sizeof self->log_id)
        self->log_id = (uint64_t) time (NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t) getpid ();
    return self;
}

void
vmemory_log_destroy (vmemory_log_t **self_p)
{
    assert (self_p);
    vmemory_log_t *self = *self_p;
    if (!self)
        return;
    if (self->fd >= 0)
        close (self->fd);
    free (self->pending);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

//  Copies the torn tail [off, size) aside, then truncates the log at off.
static int
s_cut_tail (vmemory_log_t *self, const unsigned char *base, uint64_t size, uint64_t off,
            char *err, size_t err_size)
{
    char name [128];
    snprintf (name, sizeof name, "%s.torn-%lld-%llu", VMEMORY_FILE_LOG,
              (long long) time (NULL), (unsigned long long) off);
    char *path = NULL;
    int fd = vmemory_file_create (self->dir, name, &path);
    if (fd < 0 || vmemory_file_write_all (fd, base + off, size - off, 0) != 0 || fsync (fd) != 0) {
        snprintf (err, err_size, "cannot copy the torn tail of %s/%s aside: %s", self->dir,
                  VMEMORY_FILE_LOG, strerror (errno));
        if (fd >= 0)
            close (fd);
        free (path);
        return -1;
    }
    close (fd);
    vmemory_file_sync_dir (self->dir);
    if (ftruncate (self->fd, (off_t) off) != 0 || fdatasync (self->fd) != 0) {
        snprintf (err, err_size, "cannot truncate %s/%s: %s", self->dir, VMEMORY_FILE_LOG,
                  strerror (errno));
        free (path);
        return -1;
    }
    plog_warn ("vmemory: %s/%s had a torn tail (a crash while appending?): %llu bytes after "
               "record %llu copied to %s and cut off; the records before it are intact",
               self->dir, VMEMORY_FILE_LOG, (unsigned long long) (size - off),
               (unsigned long long) self->count, path);
    free (path);
    return 0;
}

static int
s_push_text (vmemory_log_scan_t *scan, size_t *cap, const unsigned char *text, uint32_t len)
{
    if (scan->count == *cap) {
        size_t new_cap = *cap ? *cap * 2 : 1024;
        char **texts = realloc (scan->texts, new_cap * sizeof *texts);
        if (!texts)
            return -1;
        scan->texts = texts;
        *cap = new_cap;
    }
    char *copy = malloc ((size_t) len + 1);
    if (!copy)
        return -1;
    memcpy (copy, text, len);
    copy [len] = 0;
    scan->texts [scan->count++] = copy;
    return 0;
}

//  Walks the records of the mapped log: texts to `scan`, then handles the
//  first bad record (torn tail or corruption).
static int
s_scan (vmemory_log_t *self, const unsigned char *base, uint64_t size, size_t max_entries,
        vmemory_log_scan_t *scan, char *err, size_t err_size)
{
    size_t cap = 0;
    uint64_t off = VMEMORY_RECORD_HEADER_SIZE;
    while (off < size) {
        uint32_t len;
        uint64_t fnv;
        const char *why;
        if (vmemory_record_check (self->dim, base, size, off, self->count, &len, &fnv, &why) != 0) {
            if (vmemory_record_follows (self->dim, base, size, off, self->count)) {
                snprintf (err, err_size, "memory log %s/%s: record %llu at offset %llu: %s, "
                          "and valid records follow it: the log is corrupt in the middle",
                          self->dir, VMEMORY_FILE_LOG, (unsigned long long) self->count,
                          (unsigned long long) off, why);
                return -1;
            }
            if (s_cut_tail (self, base, size, off, err, err_size) != 0)
                return -1;
            scan->torn_bytes = size - off;
            break;
        }
        if (self->count >= max_entries) {
            snprintf (err, err_size, "memory log %s/%s holds more than the limit of %zu entries",
                      self->dir, VMEMORY_FILE_LOG, max_entries);
            return -1;
        }
        if (s_push_text (scan, &cap, base + off + VMEMORY_RECORD_TEXT_AT, len) != 0) {
            snprintf (err, err_size, "out of memory loading %s", self->dir);
            return -1;
        }
        if (self->count == scan->want)
            scan->want_fnv = fnv;
        self->last_fnv = fnv;
        self->count++;
        off += vmemory_record_size (self->dim, len);
    }
    self->size = off;
    return 0;
}

void
vmemory_log_scan_free (vmemory_log_scan_t *scan)
{
    assert (scan);
    for (size_t i = 0; i < scan->count; i++)
        free (scan->texts [i]);
    free (scan->texts);
    scan->texts = NULL;
    scan->count = 0;
}

//  Maps DIR/memory.log read-only (NULL base for an empty file).
static int
s_map (vmemory_log_t *self, const unsigned char **base_p, uint64_t *size_p, char *err,
       size_t err_size)
{
    struct stat st;
    if (fstat (self->fd, &st) != 0) {
        snprintf (err, err_size, "cannot stat %s/%s: %s", self->dir, VMEMORY_FILE_LOG,
                  strerror (errno));
        return -1;
    }
    *size_p = (uint64_t) st.st_size;
    *base_p = NULL;
    if (st.st_size == 0)
        return 0;
    void *map = mmap (NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, self->fd, 0);
    if (map == MAP_FAILED) {
        snprintf (err, err_size, "cannot map %s/%s: %s", self->dir, VMEMORY_FILE_LOG,
                  strerror (errno));
        return -1;
    }
    madvise (map, (size_t) st.st_size, MADV_SEQUENTIAL);
    *base_p = map;
    return 0;
}

int
vmemory_log_load (const char *dir, int dim, size_t max_entries, vmemory_log_t **self_p,
                  vmemory_log_scan_t *scan, char *err, size_t err_size)
{
    assert (dir && self_p && scan);
    scan->texts = NULL;
    scan->count = 0;
    scan->torn_bytes = 0;
    scan->want_fnv = 0;
    vmemory_log_t *self = vmemory_log_new (dir, dim, "Flat");
    const unsigned char *base = NULL;
    uint64_t size = 0;
    char why [200];
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    char *path = vmemory_file_path (dir, VMEMORY_FILE_LOG);
    self->fd = path ? open (path, O_RDWR | O_CLOEXEC) : -1;
    free (path);
    if (self->fd < 0) {
        snprintf (err, err_size, "cannot open %s/%s: %s", dir, VMEMORY_FILE_LOG, strerror (errno));
        goto fail;
    }
    if (s_map (self, &base, &size, err, err_size) != 0)
        goto fail;
    if (size < VMEMORY_RECORD_HEADER_SIZE) {
        snprintf (err, err_size, "memory log %s/%s: truncated (shorter than its header)", dir,
                  VMEMORY_FILE_LOG);
        goto fail;
    }
    if (vmemory_record_decode_header (base, dim, &self->log_id, self->factory, why,
                                      sizeof why) != 0) {
        snprintf (err, err_size, "memory log %s/%s: %s", dir, VMEMORY_FILE_LOG, why);
        goto fail;
    }
    if (s_scan (self, base, size, max_entries, scan, err, err_size) != 0)
        goto fail;
    munmap ((void *) base, (size_t) size);
    *self_p = self;
    return 0;
fail:
    if (base)
        munmap ((void *) base, (size_t) size);
    vmemory_log_scan_free (scan);
    vmemory_log_destroy (&self);
    return -1;
}

int
vmemory_log_add_vectors (vmemory_log_t *self, uint64_t from, FaissIndex *index,
                         char *err, size_t err_size)
{
    assert (self && index);
    if (from >= self->count)
        return 0;
    const unsigned char *base;
    uint64_t size;
    if (s_map (self, &base, &size, err, err_size) != 0)
        return -1;
    int rc = -1;
    float *batch = malloc (sizeof (float) * (size_t) self->dim * S_BATCH);
    if (!batch || size < self->size) {
        snprintf (err, err_size, "out of memory, or %s/%s shrank", self->dir, VMEMORY_FILE_LOG);
        goto done;
    }
    //  The records were checked by the scan; this walk only re-reads them.
    uint64_t off = VMEMORY_RECORD_HEADER_SIZE, in_batch = 0;
    for (uint64_t i = 0; i < self->count; i++) {
        uint32_t len = vmemory_file_get32 (base + off);
        if (i >= from)
            vmemory_record_vector (base + off, self->dim, batch + in_batch++ * (size_t) self->dim);
        if (in_batch == S_BATCH || (i + 1 == self->count && in_batch)) {
            if (faiss_Index_add (index, (faiss_idx_t) in_batch, batch) != 0) {
                snprintf (err, err_size, "FAISS add failed: %s", faiss_get_last_error ());
                goto done;
            }
            in_batch = 0;
        }
        off += vmemory_record_size (self->dim, len);
    }
    rc = 0;
done:
    free (batch);
    if (base)
        munmap ((void *) base, (size_t) size);
    return rc;
}

int
vmemory_log_append (vmemory_log_t *self, const char *text, size_t len, const float *vec,
                    char *err, size_t err_size)
{
    assert (self && text && vec);
    assert (len <= VMEMORY_MAX_TEXT_LIMIT);
    size_t record = (size_t) vmemory_record_size (self->dim, (uint32_t) len);
    if (self->pending_len + record > self->pending_cap) {
        size_t cap = self->pending_cap ? self->pending_cap : 4096;
        while (cap < self->pending_len + record)
            cap *= 2;
        unsigned char *pending = realloc (self->pending, cap);
        if (!pending) {
            snprintf (err, err_size, "out of memory");
            return -1;
        }
        self->pending = pending;
        self->pending_cap = cap;
    }
    //  The batch number is this save's first record.
    uint64_t fnv = vmemory_record_encode (self->pending + self->pending_len, self->dim,
                                          self->count + self->pending_count, self->count,
                                          text, len, vec);
    self->pending_len += record;
    self->pending_count++;
    self->prev_last_fnv = self->pending_last_fnv;
    self->pending_last_fnv = fnv;
    self->last_record = record;
    return 0;
}

void
vmemory_log_drop_last (vmemory_log_t *self)
{
    assert (self && self->pending_count > 0 && self->last_record > 0);
    self->pending_len -= self->last_record;
    self->pending_count--;
    self->pending_last_fnv = self->prev_last_fnv;
    self->last_record = 0;
}

static int
s_publish (vmemory_log_t *self, char *err, size_t err_size)
{
    char *tmp = vmemory_file_path (self->dir, VMEMORY_FILE_LOG ".tmp");
    char *path = vmemory_file_path (self->dir, VMEMORY_FILE_LOG);
    int rc = tmp && path && fsync (self->fd) == 0 && rename (tmp, path) == 0 ? 0 : -1;
    if (rc != 0)
        snprintf (err, err_size, "cannot create %s/%s: %s", self->dir, VMEMORY_FILE_LOG,
                  strerror (errno));
    else {
        vmemory_file_sync_dir (self->dir);
        self->staged = false;
    }
    free (tmp);
    free (path);
    return rc;
}

int
vmemory_log_publish (vmemory_log_t *self, char *err, size_t err_size)
{
    assert (self);
    if (vmemory_log_sync (self, err, err_size) != 0)
        return -1;
    return self->staged ? s_publish (self, err, err_size) : 0;
}

//  First sync of a new log: header + records to memory.log.tmp; unless
//  the log is staged, fsync, rename, fsync of the dir. Leaves self->fd
//  open on the log.
static int
s_create_file (vmemory_log_t *self, char *err, size_t err_size)
{
    unsigned char header [VMEMORY_RECORD_HEADER_SIZE];
    vmemory_record_encode_header (header, self->dim, self->log_id, self->factory);
    char *tmp = NULL, *path = vmemory_file_path (self->dir, VMEMORY_FILE_LOG);
    int fd = path ? vmemory_file_create (self->dir, VMEMORY_FILE_LOG ".tmp", &tmp) : -1;
    if (fd < 0
    ||  vmemory_file_write_all (fd, header, VMEMORY_RECORD_HEADER_SIZE, 0) != 0
    ||  vmemory_file_write_all (fd, self->pending, self->pending_len,
                                VMEMORY_RECORD_HEADER_SIZE) != 0
    ||  fdatasync (fd) != 0) {
        snprintf (err, err_size, "cannot create %s/%s: %s", self->dir, VMEMORY_FILE_LOG,
                  strerror (errno));
        if (fd >= 0) {
            close (fd);
            unlink (tmp);
        }
        free (tmp);
        free (path);
        return -1;
    }
    free (tmp);
    free (path);
    self->fd = fd;
    self->size = VMEMORY_RECORD_HEADER_SIZE + self->pending_len;
    return self->staged ? 0 : s_publish (self, err, err_size);
}

int
vmemory_log_sync (vmemory_log_t *self, char *err, size_t err_size)
{
    assert (self);
    if (self->fd < 0) {
        if (s_create_file (self, err, err_size) != 0) {
            if (self->fd >= 0) {
                close (self->fd);
                self->fd = -1;
            }
            return -1;
        }
    }
    else
    if (self->pending_len > 0) {
        if (vmemory_file_write_all (self->fd, self->pending, self->pending_len, self->size) != 0
        ||  fdatasync (self->fd) != 0) {
            snprintf (err, err_size, "cannot append to %s/%s: %s", self->dir, VMEMORY_FILE_LOG,
                      strerror (errno));
            //  Cut any partial write so the next append starts clean.
            if (ftruncate (self->fd, (off_t) self->size) != 0)
                plog_warn ("vmemory: cannot cut %s/%s back to %llu bytes: %s", self->dir,
                           VMEMORY_FILE_LOG, (unsigned long long) self->size, strerror (errno));
            return -1;
        }
        self->size += self->pending_len;
    }
    if (self->pending_count) {
        self->count += self->pending_count;
        self->last_fnv = self->pending_last_fnv;
    }
    self->pending_len = 0;
    self->pending_count = 0;
    //  Do not keep a big buffer (e.g. after a migration) for the next
    //  few kilobytes.
    if (self->pending_cap > 1024 * 1024) {
        free (self->pending);
        self->pending = NULL;
        self->pending_cap = 0;
    }
    return 0;
}

uint64_t
vmemory_log_pending (vmemory_log_t *self)
{
    assert (self);
    return self->pending_count;
}

uint64_t
vmemory_log_last_fnv (vmemory_log_t *self)
{
    assert (self);
    return self->last_fnv;
}

uint64_t
vmemory_log_id (vmemory_log_t *self)
{
    assert (self);
    return self->log_id;
}

const char *
vmemory_log_factory (vmemory_log_t *self)
{
    assert (self);
    return self->factory;
}
