// SPDX-License-Identifier: MIT
/*  vmemory_migrate - old texts.pmem memories to the log. See the header.

    Honest costs: one-off, O(memory): the old files are read and checked,
    every vector reconstructed and written once more into the log, and the
    old index written again as the snapshot (~0.5-1 s at 100k memories).
*/
#include "vmemory_migrate.h"
#include "vmemory_snap.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <faiss/c_api/error_c.h>

#include "plog.h"

#define S_CHUNK 4096            //  records per write while migrating

static int
s_rename_old (const char *dir, const char *name, char *err, size_t err_size)
{
    char *from = vmemory_file_path (dir, name);
    char *to = NULL;
    int rc = from && asprintf (&to, "%s.migrated", from) >= 0 ? 0 : -1;
    if (rc == 0 && rename (from, to) != 0 && errno != ENOENT) {
        snprintf (err, err_size, "cannot rename %s to %s: %s", from, to, strerror (errno));
        rc = -1;
    }
    free (from);
    free (to);
    return rc;
}

int
vmemory_migrate_finish (const char *dir, char *err, size_t err_size)
{
    //  Index first: while texts.pmem exists, index.faiss is the old one.
    if (s_rename_old (dir, VMEMORY_FILE_INDEX, err, err_size) != 0
    ||  s_rename_old (dir, VMEMORY_FILE_TEXTS, err, err_size) != 0)
        return -1;
    vmemory_file_sync_dir (dir);
    return 0;
}

//  Step 2: all records into a staged log, published when complete.
static int
s_write_log (const char *dir, int dim, vmemory_file_loaded_t *old, vmemory_log_t *log,
             char *err, size_t err_size)
{
    float *vectors = malloc (sizeof (float) * (size_t) dim * S_CHUNK);
    if (!vectors) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i0 = 0; i0 < old->count && rc == 0; i0 += S_CHUNK) {
        size_t n = old->count - i0 < S_CHUNK ? old->count - i0 : S_CHUNK;
        if (faiss_Index_reconstruct_n (old->index, (faiss_idx_t) i0, (faiss_idx_t) n, vectors) != 0) {
            snprintf (err, err_size, "cannot migrate %s: its \"%s\" index cannot give back its "
                      "vectors (%s), and vmemory cannot re-embed; old files left as they are",
                      dir, old->factory, faiss_get_last_error ());
            rc = -1;
            break;
        }
        for (size_t k = 0; k < n && rc == 0; k++) {
            const char *text = old->texts [i0 + k];
            rc = vmemory_log_append (log, text, strlen (text), vectors + k * (size_t) dim,
                                     err, err_size);
        }
        if (rc == 0)
            rc = vmemory_log_sync (log, err, err_size);
    }
    free (vectors);
    return rc == 0 ? vmemory_log_publish (log, err, err_size) : -1;
}

int
vmemory_migrate (const char *dir, int dim, size_t max_entries, vmemory_log_t **log_p,
                 vmemory_file_loaded_t *old, char *err, size_t err_size)
{
    assert (dir && log_p && old);
    if (vmemory_file_load (dir, dim, max_entries, old, err, err_size) != 0)
        return -1;
    vmemory_log_t *log = vmemory_log_new_staged (dir, dim, old->factory);
    if (!log) {
        snprintf (err, err_size, "out of memory");
        goto fail;
    }
    if (s_write_log (dir, dim, old, log, err, err_size) != 0
    ||  vmemory_migrate_finish (dir, err, err_size) != 0)
        goto fail;
    vmemory_snap_info_t info = { .log_id = vmemory_log_id (log), .covered = old->count,
                                 .last_fnv = vmemory_log_last_fnv (log) };
    snprintf (info.factory, sizeof info.factory, "%s", old->factory);
    char why [256];
    if (old->count > 0 && vmemory_snap_write (dir, old->index, &info, why, sizeof why) != 0)
        plog_warn ("vmemory: %s (the next load rebuilds the index from the log)", why);
    plog_info ("vmemory: migrated %zu memories in %s to %s; the old files are kept as *.migrated",
               old->count, dir, VMEMORY_FILE_LOG);
    *log_p = log;
    return 0;
fail:
    //  A staged log never got the real name; drop its temp file.
    if (log) {
        char *tmp = vmemory_file_path (dir, VMEMORY_FILE_LOG ".tmp");
        if (tmp && !vmemory_file_exists (dir, VMEMORY_FILE_LOG))
            remove (tmp);
        free (tmp);
    }
    vmemory_log_destroy (&log);
    vmemory_file_loaded_free (old);
    return -1;
}
