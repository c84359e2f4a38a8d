// SPDX-License-Identifier: MIT
/*  vmemory_file - files of an agent's vector memory: shared helpers and
    the reader of the old format.

    Used by vmemory*.c only. A memory directory DIR holds:
        memory.log    the source of truth, append-only (vmemory_log.h):
                      header + one record per memory (text AND vector)
        index.faiss   a snapshot of the FAISS index covering the first N
                      log records (vmemory_snap.h); optional
        lock          flock()ed while open: one process per memory dir
        *.torn-*      a torn tail cut from the log on load, kept to look at
        *.bad-*       files moved aside by vmemory_move_aside
        *.migrated    the old-format files after their migration
    Files are 0600, the directory 0700.

    The old format (version 1, before the log): texts.pmem (header with
    FNV-1a checksums of its payload and of index.faiss, then
    length-prefixed texts) beside a raw faiss_write_index index.faiss,
    both rewritten in full on every save (100 MB at 100k memories: the
    reason for the log). vmemory_file_load still reads it, for the
    migration only (vmemory_migrate.h).
*/
#ifndef PARLEY_VMEMORY_FILE_H
#define PARLEY_VMEMORY_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <faiss/c_api/Index_c.h>

#define VMEMORY_FILE_FACTORY_MAX 64
#define VMEMORY_FILE_LOG "memory.log"
#define VMEMORY_FILE_INDEX "index.faiss"
#define VMEMORY_FILE_TEXTS "texts.pmem"
//  Written by the agent, not by vmemory: which embedder made the vectors.
//  Moved aside with the memory, since it describes it.
#define VMEMORY_FILE_EMBEDDER "embedder.id"
#define VMEMORY_FILE_FNV_INIT 0xcbf29ce484222325ull

//  FNV-1a 64 of `len` bytes, continuing from `hash` (start with _INIT).
uint64_t vmemory_file_fnv (uint64_t hash, const void *data, size_t len);
//  Little-endian integers.
void vmemory_file_put32 (unsigned char *p, uint32_t v);
void vmemory_file_put64 (unsigned char *p, uint64_t v);
uint32_t vmemory_file_get32 (const unsigned char *p);
uint64_t vmemory_file_get64 (const unsigned char *p);

//  "DIR/NAME", malloced (NULL when out of memory).
char *vmemory_file_path (const char *dir, const char *name);
//  mkdir -p DIR with mode 0700 for what it creates (warns if DIR is wider).
int vmemory_file_make_dir (const char *dir, char *err, size_t err_size);
//  Opens and flock()s DIR/lock; *fd_p is the descriptor (close releases it).
int vmemory_file_lock (const char *dir, int *fd_p, char *err, size_t err_size);
//  True if DIR/NAME exists.
bool vmemory_file_exists (const char *dir, const char *name);
//  Creates (truncates) DIR/NAME 0600 for reading and writing; the fd, or -1 (errno).
//  *path_p gets the malloced path.
int vmemory_file_create (const char *dir, const char *name, char **path_p);
//  pwrite all of `data` at `offset`; -1 (errno) on failure.
int vmemory_file_write_all (int fd, const void *data, size_t size, uint64_t offset);
//  fsync of DIR itself, so renames and new files are durable.
void vmemory_file_sync_dir (const char *dir);

//  What an old-format load gives back; the caller takes ownership (or
//  frees it with vmemory_file_loaded_free).
typedef struct {
    char **texts;               //  texts [i] belongs to FAISS id i
    size_t count;
    FaissIndex *index;
    char factory [VMEMORY_FILE_FACTORY_MAX + 1];
} vmemory_file_loaded_t;

//  Loads an old-format DIR (texts.pmem + index.faiss must exist),
//  validating every count against the file size and both checksums before
//  FAISS reads a byte. 0, or -1 with `err` filled and nothing allocated.
int vmemory_file_load (const char *dir, int dim, size_t max_entries,
                       vmemory_file_loaded_t *out, char *err, size_t err_size);
void vmemory_file_loaded_free (vmemory_file_loaded_t *loaded);

#endif
