// SPDX-License-Identifier: MIT
/*  tap_replay - reads a parley-tap record file (format in tap_record.h).

    Strict: a bad magic, a record header cut short, a length of 0 or over
    TAP_RECORD_MAX, a length larger than the bytes left in the file (checked
    before anything is allocated), a payload cut short or a CRC mismatch all
    stop the replay with a sentence naming the byte offset. Frames read so far
    stay valid for the caller to print: nothing already shown is taken back.
*/
#ifndef PARLEY_TAP_REPLAY_H
#define PARLEY_TAP_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _tap_replay_t tap_replay_t;

//  Opens the file and checks the magic. NULL with `why` on failure.
tap_replay_t *tap_replay_new (const char *path, char *why, size_t why_size);
void tap_replay_destroy (tap_replay_t **self_p);

//  Next record: 1 and *data/*size (valid until the next call), 0 at a clean
//  end of file, -1 on a corrupt or truncated file (with `why`).
int tap_replay_next (tap_replay_t *self, const void **data, size_t *size,
                     char *why, size_t why_size);

#endif
