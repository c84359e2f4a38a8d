// SPDX-License-Identifier: MIT
/*  vmemory_snap - the index snapshot file. See vmemory_snap.h.

    Honest costs: writing a snapshot is O(index): ~100 MB at 100k Flat
    vectors of dim 256, written, read back for its checksum and fsynced
    (~0.3-0.5 s here). vmemory.c writes one only when the log's uncovered
    tail passes a quarter of the memory, so it is rare and amortised.
*/
#include "vmemory_snap.h"
#include "vmemory.h"             //  limits

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <faiss/c_api/error_c.h>
#include <faiss/c_api/index_io_c.h>

#define S_MAGIC "PMEMIDX"       //  8 bytes with its NUL
#define S_VERSION 1
#define S_HEADER_SIZE 132

static void
s_encode (const vmemory_snap_info_t *info, int dim, uint64_t bytes, uint64_t fnv,
          unsigned char *p)
{
    memset (p, 0, S_HEADER_SIZE);
    memcpy (p, S_MAGIC, 8);
    vmemory_file_put32 (p + 8, S_VERSION);
    vmemory_file_put32 (p + 12, (uint32_t) dim);
    vmemory_file_put64 (p + 16, info->log_id);
    vmemory_file_put64 (p + 24, info->covered);
    vmemory_file_put64 (p + 32, info->last_fnv);
    vmemory_file_put64 (p + 40, bytes);
    vmemory_file_put64 (p + 48, fnv);
    size_t flen = strlen (info->factory);
    vmemory_file_put32 (p + 56, (uint32_t) flen);
    memcpy (p + 60, info->factory, flen);
    vmemory_file_put64 (p + 124, vmemory_file_fnv (VMEMORY_FILE_FNV_INIT, p, 124));
}

//  FNV-1a of the bytes of `fd` from `offset` to its end, and their count.
static int
s_fd_fnv (int fd, uint64_t offset, uint64_t *bytes_p, uint64_t *fnv_p)
{
    unsigned char buffer [65536];
    uint64_t hash = VMEMORY_FILE_FNV_INIT, total = 0;
    for (;;) {
        ssize_t n = pread (fd, buffer, sizeof buffer, (off_t) (offset + total));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        hash = vmemory_file_fnv (hash, buffer, (size_t) n);
        total += (uint64_t) n;
    }
    *bytes_p = total;
    *fnv_p = hash;
    return 0;
}

int
vmemory_snap_write (const char *dir, FaissIndex *index, const vmemory_snap_info_t *info,
                    char *err, size_t err_size)
{
    assert (dir && index && info);
    int rc = -1;
    char *tmp = NULL, *path = vmemory_file_path (dir, VMEMORY_FILE_INDEX);
    int fd = path ? vmemory_file_create (dir, VMEMORY_FILE_INDEX ".tmp", &tmp) : -1;
    FILE *file = fd >= 0 ? fdopen (dup (fd), "wb") : NULL;
    const char *what = strerror (errno);
    if (!file)
        goto done;
    unsigned char header [S_HEADER_SIZE] = { 0 };
    int written = fseek (file, S_HEADER_SIZE, SEEK_SET) == 0 ? faiss_write_index (index, file) : -1;
    int closed = fclose (file);
    if (written != 0 || closed != 0) {
        what = written ? faiss_get_last_error () : strerror (errno);
        goto done;
    }
    uint64_t bytes, fnv;
    if (s_fd_fnv (fd, S_HEADER_SIZE, &bytes, &fnv) != 0)
        goto errno_done;
    s_encode (info, faiss_Index_d (index), bytes, fnv, header);
    if (vmemory_file_write_all (fd, header, S_HEADER_SIZE, 0) != 0 || fsync (fd) != 0
    ||  rename (tmp, path) != 0)
        goto errno_done;
    vmemory_file_sync_dir (dir);
    rc = 0;
    goto done;
errno_done:
    what = strerror (errno);
done:
    if (rc != 0) {
        snprintf (err, err_size, "cannot write the index snapshot %s/%s: %s", dir,
                  VMEMORY_FILE_INDEX, what ? what : "?");
        if (tmp)
            unlink (tmp);
    }
    if (fd >= 0)
        close (fd);
    free (tmp);
    free (path);
    return rc;
}

static int
s_decode (const unsigned char *p, int dim, size_t max_entries, vmemory_snap_info_t *info,
          uint64_t *bytes_p, uint64_t *fnv_p, char *err, size_t err_size)
{
    if (memcmp (p, S_MAGIC, 8) != 0) {
        snprintf (err, err_size, "not a snapshot (bad magic)");
        return -1;
    }
    if (vmemory_file_get64 (p + 124) != vmemory_file_fnv (VMEMORY_FILE_FNV_INIT, p, 124)) {
        snprintf (err, err_size, "header checksum mismatch");
        return -1;
    }
    uint32_t flen = vmemory_file_get32 (p + 56);
    if (vmemory_file_get32 (p + 8) != S_VERSION || vmemory_file_get32 (p + 12) != (uint32_t) dim
    ||  flen == 0 || flen > VMEMORY_FILE_FACTORY_MAX) {
        snprintf (err, err_size, "version, dimension or factory do not fit");
        return -1;
    }
    info->log_id = vmemory_file_get64 (p + 16);
    info->covered = vmemory_file_get64 (p + 24);
    info->last_fnv = vmemory_file_get64 (p + 32);
    *bytes_p = vmemory_file_get64 (p + 40);
    *fnv_p = vmemory_file_get64 (p + 48);
    memcpy (info->factory, p + 60, flen);
    info->factory [flen] = 0;
    if (info->covered > max_entries || info->covered > VMEMORY_MAX_ENTRIES) {
        snprintf (err, err_size, "claims %llu entries, over the limit",
                  (unsigned long long) info->covered);
        return -1;
    }
    return 0;
}

int
vmemory_snap_read (const char *dir, int dim, size_t max_entries, vmemory_snap_info_t *info,
                   FaissIndex **index_p, char *err, size_t err_size)
{
    assert (dir && info && index_p);
    *index_p = NULL;
    char *path = vmemory_file_path (dir, VMEMORY_FILE_INDEX);
    FILE *file = path ? fopen (path, "rb") : NULL;
    free (path);
    if (!file) {
        snprintf (err, err_size, "cannot open: %s", strerror (errno));
        return -1;
    }
    int rc = -1;
    struct stat st;
    unsigned char header [S_HEADER_SIZE];
    uint64_t bytes, fnv, real_bytes, real_fnv;
    if (fstat (fileno (file), &st) != 0 || st.st_size < S_HEADER_SIZE
    ||  fread (header, 1, S_HEADER_SIZE, file) != S_HEADER_SIZE) {
        snprintf (err, err_size, "truncated (shorter than its header)");
        goto done;
    }
    if (s_decode (header, dim, max_entries, info, &bytes, &fnv, err, err_size) != 0)
        goto done;
    //  Size first, so a lying header costs no read; then every byte.
    if (bytes != (uint64_t) st.st_size - S_HEADER_SIZE
    ||  s_fd_fnv (fileno (file), S_HEADER_SIZE, &real_bytes, &real_fnv) != 0
    ||  real_bytes != bytes || real_fnv != fnv) {
        snprintf (err, err_size, "index bytes do not match the header (truncated or corrupt)");
        goto done;
    }
    if (faiss_read_index (file, 0, index_p) != 0) {
        snprintf (err, err_size, "FAISS cannot read it: %s", faiss_get_last_error ());
        goto done;
    }
    if (faiss_Index_d (*index_p) != dim
    ||  faiss_Index_ntotal (*index_p) != (faiss_idx_t) info->covered
    ||  faiss_Index_metric_type (*index_p) != METRIC_INNER_PRODUCT) {
        snprintf (err, err_size, "index does not match its header (dim %d, %lld vectors)",
                  faiss_Index_d (*index_p), (long long) faiss_Index_ntotal (*index_p));
        goto done;
    }
    rc = 0;
done:
    if (rc != 0 && *index_p) {
        faiss_Index_free (*index_p);
        *index_p = NULL;
    }
    fclose (file);
    return rc;
}
