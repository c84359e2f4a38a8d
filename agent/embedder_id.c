// SPDX-License-Identifier: MIT
/*  embedder_id - the embedder's identity beside the memory; see embedder_id.h.
*/
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "embedder_id.h"
#include "vmemory/vmemory_file.h"

//  Version of the builtin embedder's hashing (embedder.c): bump it when the
//  features or the hash change, so old memories are refused, not mixed.
#define S_BUILTIN_VERSION "fnv1a-ngram-v1"
#define S_PREFIX "identity: "

void
embedder_id_of (embedder_t *embedder, char *buf, size_t size)
{
    assert (embedder && buf && size);
    const char *model = embedder_model (embedder);
    if (!model)
        snprintf (buf, size, "kind=builtin algorithm=%s dim=%d", S_BUILTIN_VERSION,
                  embedder_dim (embedder));
    else
        snprintf (buf, size, "kind=http model=%s dim=%d", model, embedder_dim (embedder));
}

static char *
s_path (const char *dir)
{
    char *path = NULL;
    if (asprintf (&path, "%s/%s", dir, VMEMORY_FILE_EMBEDDER) < 0)
        return NULL;
    return path;
}

embedder_id_result_t
embedder_id_check (const char *dir, const char *identity, char *err, size_t err_size)
{
    assert (dir && identity && err && err_size);
    err[0] = 0;
    char *path = s_path (dir);
    if (!path) {
        snprintf (err, err_size, "out of memory");
        return EMBEDDER_ID_UNREADABLE;
    }
    FILE *file = fopen (path, "r");
    if (!file) {
        int saved = errno;
        embedder_id_result_t result = EMBEDDER_ID_ABSENT;
        if (saved != ENOENT) {
            snprintf (err, err_size, "cannot read %s: %s", path, strerror (saved));
            result = EMBEDDER_ID_UNREADABLE;
        }
        free (path);
        return result;
    }
    //  One bounded line: a file that claims more is not ours.
    char line[EMBEDDER_ID_MAX + 16];
    embedder_id_result_t result = EMBEDDER_ID_UNREADABLE;
    if (!fgets (line, sizeof (line), file) || strncmp (line, S_PREFIX, strlen (S_PREFIX)) != 0)
        snprintf (err, err_size, "%s does not start with \"%s\"; move it away if it is not "
                  "the memory's record of its embedder", path, S_PREFIX);
    else {
        char *stored = line + strlen (S_PREFIX);
        stored[strcspn (stored, "\n")] = 0;
        if (strcmp (stored, identity) == 0)
            result = EMBEDDER_ID_SAME;
        else {
            result = EMBEDDER_ID_DIFFERENT;
            snprintf (err, err_size, "the memory in %s was made by the embedder [%s], and this "
                      "run uses [%s]: vectors of two embedders cannot be compared, so the "
                      "memory is left as it is. Use the same embedder, another --memory-dir, "
                      "or move %s away to start a fresh memory there", dir, stored, identity, dir);
        }
    }
    fclose (file);
    free (path);
    return result;
}

int
embedder_id_write (const char *dir, const char *identity, const char *url,
                   char *err, size_t err_size)
{
    assert (dir && identity && err && err_size);
    char *path = s_path (dir);
    char *tmp = NULL;
    if (!path || asprintf (&tmp, "%s.tmp", path) < 0) {
        free (path);
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    int rc = -1;
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *file = fd >= 0? fdopen (fd, "w"): NULL;
    if (!file) {
        snprintf (err, err_size, "cannot write %s: %s", tmp, strerror (errno));
        if (fd >= 0)
            close (fd);
        goto done;
    }
    fprintf (file, "%s%s\nurl: %s\n", S_PREFIX, identity, url && *url? url: "-");
    bool ok = fflush (file) == 0 && fsync (fileno (file)) == 0;
    if (fclose (file) != 0 || !ok) {
        snprintf (err, err_size, "cannot write %s: %s", tmp, strerror (errno));
        unlink (tmp);
        goto done;
    }
    if (rename (tmp, path) != 0) {
        snprintf (err, err_size, "cannot rename %s: %s", tmp, strerror (errno));
        unlink (tmp);
        goto done;
    }
    vmemory_file_sync_dir (dir);
    rc = 0;
done:
    free (tmp);
    free (path);
    return rc;
}
