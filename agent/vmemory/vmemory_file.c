// SPDX-License-Identifier: MIT
/*  vmemory_file - shared file helpers of the vector memory and the reader
    of the old (version 1) texts.pmem + index.faiss format, kept only to
    migrate such memories to the log (vmemory_migrate.c). See
    vmemory_file.h. The writer of that format is gone from the library; the
    migration test keeps its own copy to make old-format directories.
*/
#include "vmemory_file.h"
#include "vmemory.h"             //  limits, vmemory_move_aside

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/index_io_c.h>

#include "plog.h"

#define S_MAGIC "PMEMTXT"       //  8 bytes with its NUL
#define S_VERSION 1
#define S_FACTORY_MAX VMEMORY_FILE_FACTORY_MAX
//  magic 8, version 4, dim 4, count 8, payload bytes 8, payload fnv 8,
//  index bytes 8, index fnv 8, factory length 4, factory 64, header fnv 8.
#define S_HEADER_SIZE 132
#define S_INDEX_FILE VMEMORY_FILE_INDEX
#define S_TEXTS_FILE VMEMORY_FILE_TEXTS
#define S_LOCK_FILE "lock"


typedef struct {                //  texts.pmem header, decoded
    uint32_t version, dim, factory_len;
    uint64_t count, payload_bytes, payload_fnv, index_bytes, index_fnv;
    char factory [S_FACTORY_MAX + 1];
} s_header_t;

uint64_t
vmemory_file_fnv (uint64_t hash, const void *data, size_t len)
{
    const unsigned char *bytes = data;
    for (size_t i = 0; i < len; i++) {
        hash ^= bytes [i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

void
vmemory_file_put32 (unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

void
vmemory_file_put64 (unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

uint32_t
vmemory_file_get32 (const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p [i];
    return v;
}

uint64_t
vmemory_file_get64 (const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p [i];
    return v;
}

static int
s_decode_header (const unsigned char *p, s_header_t *h, char *err, size_t err_size)
{
    if (memcmp (p, S_MAGIC, 8) != 0) {
        snprintf (err, err_size, "not a Parley memory file (bad magic)");
        return -1;
    }
    if (vmemory_file_get64 (p + 124) != vmemory_file_fnv (VMEMORY_FILE_FNV_INIT, p, 124)) {
        snprintf (err, err_size, "header checksum mismatch (corrupt file)");
        return -1;
    }
    h->version = vmemory_file_get32 (p + 8);
    h->dim = vmemory_file_get32 (p + 12);
    h->count = vmemory_file_get64 (p + 16);
    h->payload_bytes = vmemory_file_get64 (p + 24);
    h->payload_fnv = vmemory_file_get64 (p + 32);
    h->index_bytes = vmemory_file_get64 (p + 40);
    h->index_fnv = vmemory_file_get64 (p + 48);
    h->factory_len = vmemory_file_get32 (p + 56);
    if (h->version != S_VERSION) {
        snprintf (err, err_size, "unsupported memory file version %u", h->version);
        return -1;
    }
    if (h->factory_len == 0 || h->factory_len > S_FACTORY_MAX) {
        snprintf (err, err_size, "invalid factory string length %u", h->factory_len);
        return -1;
    }
    memcpy (h->factory, p + 60, h->factory_len);
    h->factory [h->factory_len] = 0;
    return 0;
}

static char *
s_path (const char *dir, const char *name)
{
    char *path = NULL;
    if (asprintf (&path, "%s/%s", dir, name) < 0)
        return NULL;
    return path;
}

//  mkdir -p with 0700 for what we create; warns when DIR is wider.
int
vmemory_file_make_dir (const char *dir, char *err, size_t err_size)
{
    char *copy = strdup (dir);
    if (!copy) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    for (char *slash = strchr (copy + 1, '/'); ; slash = strchr (slash + 1, '/')) {
        if (slash)
            *slash = 0;
        if (mkdir (copy, 0700) != 0 && errno != EEXIST) {
            snprintf (err, err_size, "cannot create memory dir %s: %s", copy, strerror (errno));
            free (copy);
            return -1;
        }
        if (!slash)
            break;
        *slash = '/';
    }
    free (copy);
    struct stat st;
    if (stat (dir, &st) != 0 || !S_ISDIR (st.st_mode)) {
        snprintf (err, err_size, "memory dir %s is not a directory", dir);
        return -1;
    }
    if (st.st_mode & 077)
        plog_warn ("vmemory: %s is readable by others (mode %03o); memory should be private",
                   dir, (unsigned) (st.st_mode & 0777));
    return 0;
}

//  FNV-1a of a whole file, streamed; size checked against `expect`.
static int
s_file_fnv (const char *path, uint64_t expect_size, uint64_t *fnv, char *err, size_t err_size)
{
    FILE *file = fopen (path, "rb");
    if (!file) {
        snprintf (err, err_size, "cannot open %s: %s", path, strerror (errno));
        return -1;
    }
    struct stat st;
    if (fstat (fileno (file), &st) != 0 || (uint64_t) st.st_size != expect_size) {
        snprintf (err, err_size, "%s has %lld bytes, the texts file expects %llu "
                  "(truncated, or index and texts from different saves)", path,
                  (long long) st.st_size, (unsigned long long) expect_size);
        fclose (file);
        return -1;
    }
    unsigned char buffer [65536];
    uint64_t hash = VMEMORY_FILE_FNV_INIT;
    size_t n;
    while ((n = fread (buffer, 1, sizeof buffer, file)) > 0)
        hash = vmemory_file_fnv (hash, buffer, n);
    bool failed = ferror (file);
    fclose (file);
    if (failed) {
        snprintf (err, err_size, "cannot read %s", path);
        return -1;
    }
    *fnv = hash;
    return 0;
}

void
vmemory_file_loaded_free (vmemory_file_loaded_t *loaded)
{
    assert (loaded);
    for (size_t i = 0; i < loaded->count; i++)
        free (loaded->texts [i]);
    free (loaded->texts);
    if (loaded->index)
        faiss_Index_free (loaded->index);
    memset (loaded, 0, sizeof *loaded);
}

//  Parses the length-prefixed records of a verified payload.
static int
s_load_records (vmemory_file_loaded_t *out, const unsigned char *payload, uint64_t bytes,
                uint64_t count, char *err, size_t err_size)
{
    out->texts = (char **) calloc (count? (size_t) count: 1, sizeof (char *));
    if (!out->texts) {
        snprintf (err, err_size, "out of memory for %llu texts", (unsigned long long) count);
        return -1;
    }
    uint64_t pos = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (bytes - pos < 4) {
            snprintf (err, err_size, "texts file ends inside record %llu", (unsigned long long) i);
            return -1;
        }
        uint32_t len = vmemory_file_get32 (payload + pos);
        pos += 4;
        if (len > VMEMORY_MAX_TEXT_LIMIT || len > bytes - pos) {
            snprintf (err, err_size, "record %llu claims %u bytes, more than the file holds",
                      (unsigned long long) i, len);
            return -1;
        }
        char *text = malloc (len + 1);
        if (!text) {
            snprintf (err, err_size, "out of memory");
            return -1;
        }
        memcpy (text, payload + pos, len);
        text [len] = 0;
        out->texts [out->count++] = text;
        pos += len;
    }
    if (pos != bytes) {
        snprintf (err, err_size, "texts file has %llu bytes after the last record",
                  (unsigned long long) (bytes - pos));
        return -1;
    }
    return 0;
}

int
vmemory_file_load (const char *dir, int dim, size_t max_entries, vmemory_file_loaded_t *out,
                   char *err, size_t err_size)
{
    assert (dir && out);
    memset (out, 0, sizeof *out);
    int rc = -1;
    unsigned char *payload = NULL;
    char *texts_path = s_path (dir, S_TEXTS_FILE);
    char *index_path = s_path (dir, S_INDEX_FILE);
    FILE *file = texts_path ? fopen (texts_path, "rb") : NULL;
    char why [256];
    s_header_t h;
    if (!file) {
        snprintf (why, sizeof why, "cannot open: %s", strerror (errno));
        goto fail;
    }
    struct stat st;
    unsigned char raw [S_HEADER_SIZE];
    if (fstat (fileno (file), &st) != 0 || st.st_size < S_HEADER_SIZE
    ||  fread (raw, 1, S_HEADER_SIZE, file) != S_HEADER_SIZE) {
        snprintf (why, sizeof why, "truncated (shorter than its header)");
        goto fail;
    }
    if (s_decode_header (raw, &h, why, sizeof why) != 0)
        goto fail;
    if (h.dim != (uint32_t) dim) {
        snprintf (why, sizeof why, "holds vectors of dimension %u but the embedder gives %d",
                  h.dim, dim);
        goto fail;
    }
    //  Every claim is checked against the real size before allocating.
    if (h.payload_bytes != (uint64_t) st.st_size - S_HEADER_SIZE) {
        snprintf (why, sizeof why, "header says %llu bytes of texts, file has %lld",
                  (unsigned long long) h.payload_bytes, (long long) st.st_size - S_HEADER_SIZE);
        goto fail;
    }
    if (h.count > h.payload_bytes / 4 || h.count > VMEMORY_MAX_ENTRIES
    ||  h.count > max_entries) {
        snprintf (why, sizeof why, "header claims %llu entries, impossible for its size or limits",
                  (unsigned long long) h.count);
        goto fail;
    }
    payload = malloc (h.payload_bytes ? h.payload_bytes : 1);
    if (!payload || fread (payload, 1, h.payload_bytes, file) != h.payload_bytes) {
        snprintf (why, sizeof why, "cannot read its %llu bytes of texts",
                  (unsigned long long) h.payload_bytes);
        goto fail;
    }
    if (vmemory_file_fnv (VMEMORY_FILE_FNV_INIT, payload, h.payload_bytes) != h.payload_fnv) {
        snprintf (why, sizeof why, "texts checksum mismatch (corrupt file)");
        goto fail;
    }
    if (s_load_records (out, payload, h.payload_bytes, h.count, why, sizeof why) != 0)
        goto fail;
    //  The index is only handed to FAISS once its bytes are known good:
    //  FAISS trusts the sizes inside its files.
    uint64_t index_fnv;
    if (s_file_fnv (index_path, h.index_bytes, &index_fnv, err, err_size) != 0)
        goto out;
    if (index_fnv != h.index_fnv) {
        snprintf (err, err_size, "%s checksum mismatch (corrupt, or from another save)", index_path);
        goto out;
    }
    if (faiss_read_index_fname (index_path, 0, &out->index) != 0) {
        snprintf (err, err_size, "FAISS cannot read %s: %s", index_path, faiss_get_last_error ());
        goto out;
    }
    if (faiss_Index_d (out->index) != dim
    ||  faiss_Index_ntotal (out->index) != (faiss_idx_t) out->count
    ||  faiss_Index_metric_type (out->index) != METRIC_INNER_PRODUCT) {
        snprintf (err, err_size, "%s does not match its texts (dim %d, %lld vectors, metric %d)",
                  index_path, faiss_Index_d (out->index),
                  (long long) faiss_Index_ntotal (out->index),
                  (int) faiss_Index_metric_type (out->index));
        goto out;
    }
    snprintf (out->factory, sizeof out->factory, "%s", h.factory);
    rc = 0;
    goto out;
fail:
    snprintf (err, err_size, "memory file %s: %s", texts_path ? texts_path : S_TEXTS_FILE, why);
out:
    if (rc != 0)
        vmemory_file_loaded_free (out);
    if (file)
        fclose (file);
    free (payload);
    free (texts_path);
    free (index_path);
    return rc;
}

bool
vmemory_file_exists (const char *dir, const char *name)
{
    char *path = s_path (dir, name);
    bool exists = path && access (path, F_OK) == 0;
    free (path);
    return exists;
}

int
vmemory_file_lock (const char *dir, int *fd_p, char *err, size_t err_size)
{
    char *path = s_path (dir, S_LOCK_FILE);
    *fd_p = path ? open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600) : -1;
    free (path);
    if (*fd_p < 0) {
        snprintf (err, err_size, "cannot open the lock of memory dir %s: %s", dir, strerror (errno));
        return -1;
    }
    if (flock (*fd_p, LOCK_EX | LOCK_NB) != 0) {
        snprintf (err, err_size, "memory dir %s is in use by another process "
                  "(two agents with the same id?)", dir);
        return -1;
    }
    return 0;
}

//  Opens DIR/NAME for writing (created/truncated), mode 0600.
int
vmemory_file_create (const char *dir, const char *name, char **path_p)
{
    char *path = s_path (dir, name);
    int fd = path ? open (path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    if (fd < 0) {
        free (path);
        return -1;
    }
    *path_p = path;
    return fd;
}

int
vmemory_file_write_all (int fd, const void *data, size_t size, uint64_t offset)
{
    const unsigned char *bytes = data;
    while (size > 0) {
        ssize_t n = pwrite (fd, bytes, size, (off_t) offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        bytes += n;
        size -= (size_t) n;
        offset += (uint64_t) n;
    }
    return 0;
}

void
vmemory_file_sync_dir (const char *dir)
{
    int dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
        if (fsync (dir_fd) != 0)
            plog_warn ("vmemory: fsync of %s failed: %s", dir, strerror (errno));
        close (dir_fd);
    }
}

char *
vmemory_file_path (const char *dir, const char *name)
{
    return s_path (dir, name);
}

//  rename() that never replaces `to`: renameat2 with RENAME_NOREPLACE,
//  or link + unlink where the filesystem does not know that flag. Either
//  way an existing `to` fails with EEXIST.
static int
s_rename_noreplace (const char *from, const char *to)
{
    if (renameat2 (AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    if (link (from, to) != 0)
        return -1;
    return unlink (from);
}

//  True if DIR/NAME.SUFFIX exists for any of `names`.
static bool
s_any_exists (const char *dir, const char *const *names, const char *suffix)
{
    for (size_t i = 0; names [i]; i++) {
        char *path = NULL;
        if (asprintf (&path, "%s/%s.%s", dir, names [i], suffix) < 0)
            return true;
        bool exists = access (path, F_OK) == 0 || errno != ENOENT;
        free (path);
        if (exists)
            return true;
    }
    return false;
}

int
vmemory_move_aside (const char *dir, char *err, size_t err_size)
{
    assert (dir);
    const char *names [] = { VMEMORY_FILE_LOG, S_INDEX_FILE, S_TEXTS_FILE,
                             VMEMORY_FILE_EMBEDDER, NULL };
    //  One suffix for the whole set, free for every file of it: a second
    //  move in the same second gets "-2", and so on. Nothing is replaced.
    long long now = (long long) time (NULL);
    char suffix [64];
    snprintf (suffix, sizeof suffix, "bad-%lld", now);
    for (int n = 2; s_any_exists (dir, names, suffix); n++) {
        if (n > 1000) {
            snprintf (err, err_size, "cannot move the memory in %s aside: too many "
                      "*.bad-%lld files", dir, now);
            return -1;
        }
        snprintf (suffix, sizeof suffix, "bad-%lld-%d", now, n);
    }
    for (size_t i = 0; names [i]; i++) {
        char *from = s_path (dir, names [i]);
        char *to = NULL;
        if (!from || asprintf (&to, "%s.%s", from, suffix) < 0) {
            free (from);
            snprintf (err, err_size, "out of memory");
            return -1;
        }
        int rc = s_rename_noreplace (from, to);
        int saved = errno;
        free (from);
        free (to);
        if (rc != 0 && saved != ENOENT) {
            snprintf (err, err_size, "cannot move %s/%s aside: %s", dir, names [i], strerror (saved));
            return -1;
        }
    }
    return 0;
}
