// SPDX-License-Identifier: MIT
/*  embedder_id - which embedder made a memory's vectors, kept beside it.

    Vectors of two embedders live in two unrelated spaces: a memory built
    with one and searched with another returns noise, silently, even when
    the dimensions agree. So the agent writes the embedder's identity into
    DIR/embedder.id when a memory is created, and compares it at every
    start, BEFORE the memory is opened (nothing on disk is touched when
    they differ). The file has two lines:

        identity: kind=http model=nomic-embed-text dim=768
        url: http://127.0.0.1:11434/v1/embeddings

    Only the identity line is compared: the same model served from another
    host makes the same vectors. The builtin embedder's identity names its
    algorithm version, so a future change of its hashing is a change of
    identity too. The file is written atomically (temporary file, fsync,
    rename) with mode 0600, like the memory.
*/
#ifndef PARLEY_EMBEDDER_ID_H
#define PARLEY_EMBEDDER_ID_H

#include <stdbool.h>
#include <stddef.h>
#include "embedder.h"

#define EMBEDDER_ID_MAX 512

typedef enum {
    EMBEDDER_ID_SAME,           //  the file names this embedder
    EMBEDDER_ID_ABSENT,         //  no file: a new memory, or one made before the file existed
    EMBEDDER_ID_DIFFERENT,      //  another embedder made this memory (`err` says which)
    EMBEDDER_ID_UNREADABLE      //  the file exists but cannot be read or parsed
} embedder_id_result_t;

//  The identity line of `embedder` (without "identity: "), into `buf`.
void embedder_id_of (embedder_t *embedder, char *buf, size_t size);

//  Compares DIR/embedder.id with `identity`. On DIFFERENT and UNREADABLE
//  `err` is a sentence for the operator.
embedder_id_result_t embedder_id_check (const char *dir, const char *identity,
                                        char *err, size_t err_size);

//  Writes DIR/embedder.id (atomically). 0, or -1 with `err` filled.
int embedder_id_write (const char *dir, const char *identity, const char *url,
                       char *err, size_t err_size);

#endif
