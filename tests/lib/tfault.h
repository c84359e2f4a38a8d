// SPDX-License-Identifier: MIT
/*  tfault - power cuts and failing disks, for tests of the journal and of
    the broker above it.

    Two halves. The shim (tests/shim/fault_shim.c, built by the Makefile
    as $(BUILD)/tests/libparley_fault.so) is loaded into a process with
    LD_PRELOAD and wraps fsync, fdatasync, write and clock_gettime. For every file or
    directory under a watched path (the data directory) it records, in a
    ledger, what a power cut would keep:
        - a successful fsync/fdatasync of a file: its size just before the
          sync began (bytes written after that point are not covered);
        - a successful fsync of a directory: the names it held, each with
          its file's identity (device, inode, birth time), so a file whose
          name was never synced is known to be at risk;
        - a sync made to fail (below): the range of unsynced bytes the
          kernel may drop ("fsyncgate": a later sync reports success
          without them).
    It can also make syncs or writes of watched files fail with EIO on
    demand, for fault injection. The test half (this file) drives it
    through a small control file the shim maps (so a change is seen at the
    next call, in every process, without a system call), and "cuts" a data
    directory to what a power cut would have left: every file truncated to
    its last synced size (and the dropped ranges zeroed), files whose name
    was never synced removed, and a chosen tail appended to the files that
    had unsynced bytes (nothing, zeros as some file systems leave, or
    garbage).

    A broker under it:
        tfault_t *fault = tfault_new (data_dir);
        tfault_setenv (fault);             //  children started from now on load the shim
        testbroker_t *broker = testbroker_start (args);    //  --data-dir data_dir
        ... acknowledged writes ...
        testbroker_signal (broker, SIGKILL); ...
        tfault_unsetenv (fault);
        tfault_cut (fault, data_dir, TFAULT_TAIL_ZEROS, 4096, why, sizeof why);
        ... start a broker on data_dir: every acknowledged write is there ...
    Failing syncs: tfault_fail_sync (fault, 1) fails the next sync of a
    watched file or directory (-1: all of them until 0), and
    tfault_failed_syncs counts what it failed.

    In-process tests (the journal itself): tfault_reexec (argv) at the top
    of main () runs the test binary again under the shim, once, with the
    control directory in PARLEY_FAULT_DIR; a test then calls
    tfault_attach (data_dir) for its own watched path and ledger. (Under
    valgrind, whose child processes run untraced, the tests then run
    outside it.)

    The wall clock: tfault_realtime_offset (fault, s) makes every
    clock_gettime (CLOCK_REALTIME) in the shimmed processes read s seconds
    off, as after an operator or NTP set the clock (a wait computed on the
    wall clock then lasts s seconds longer or ends at once; one on the
    monotonic clock is unaffected).

    Limits: only write, fsync, fdatasync and clock_gettime are wrapped (not pwrite,
    writev, sync_file_range, msync or O_SYNC/O_DIRECT files: the journal
    uses none of them); the model of a power cut is the pessimistic one
    (exactly the synced bytes, and only synced names), which real file
    systems may better.
*/
#ifndef PARLEY_TFAULT_H
#define PARLEY_TFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  The control file the shim maps: "<dir>/control".
#define TFAULT_MAGIC "PFAULT1"
typedef struct {
    char magic [8];
    volatile int32_t fail_sync;         //  >0: fail that many more; -1: all; 0: none
    volatile int32_t fail_write;        //  1: writes of watched files fail (EIO)
    volatile int32_t failed_syncs;      //  syncs the shim failed (it counts)
    volatile int32_t failed_writes;     //  writes the shim failed
    char watch [1024];                  //  watched path prefix ("" watches nothing)
    volatile int64_t realtime_offset;   //  seconds added to CLOCK_REALTIME readings
} tfault_control_t;

typedef enum {
    TFAULT_TAIL_NONE = 0,       //  exactly the synced bytes
    TFAULT_TAIL_ZEROS,          //  then zeros
    TFAULT_TAIL_GARBAGE         //  then bytes that hold no record
} tfault_tail_t;

typedef struct _tfault_t tfault_t;

//  A control directory (under $TMPDIR) watching `watch` (a data
//  directory, which need not exist yet). NULL if it cannot be made.
tfault_t *tfault_new (const char *watch);
void tfault_destroy (tfault_t **self_p);
const char *tfault_dir (tfault_t *self);
//  The shim's path: $PARLEY_FAULT_SHIM, else libparley_fault.so next to
//  the test binary.
const char *tfault_shim_path (void);
//  LD_PRELOAD (with the shim added) and PARLEY_FAULT_DIR set in this
//  process's environment, for the children it starts; and taken away.
void tfault_setenv (tfault_t *self);
void tfault_unsetenv (tfault_t *self);
//  Fail the next `count` syncs of watched files and directories (-1:
//  every one until called with 0).
void tfault_fail_sync (tfault_t *self, int count);
//  Writes of watched files fail with EIO while on.
void tfault_fail_write (tfault_t *self, bool on);
int tfault_failed_syncs (tfault_t *self);
//  CLOCK_REALTIME reads `seconds` off from now on (0: right again).
void tfault_realtime_offset (tfault_t *self, int64_t seconds);
int tfault_failed_writes (tfault_t *self);
//  Cuts `data_dir` to what a power cut would leave (see above), with
//  `tail_bytes` of `tail` after each file that had unsynced bytes. No
//  process may use the directory meanwhile. 0, or -1 with why.
int tfault_cut (tfault_t *self, const char *data_dir, tfault_tail_t tail, size_t tail_bytes,
                char *why, size_t why_size);

//  In-process use. Runs this test binary again with the shim loaded and
//  a fresh control directory in PARLEY_FAULT_DIR (first thing in main;
//  returns at once when already under it). Exits if it cannot.
void tfault_reexec (char **argv);
//  True when the shim is loaded in this process.
bool tfault_loaded (void);
//  The control directory of this process's shim (PARLEY_FAULT_DIR),
//  watching `watch` from now on, its ledger and flags cleared.
tfault_t *tfault_attach (const char *watch);

#endif
