// SPDX-License-Identifier: MIT
/*  vmemory - an agent's private vector memory: FAISS index + texts.
    See vmemory.h for the contract; the files are vmemory_log.h (the
    truth), vmemory_snap.h (index snapshot) and vmemory_migrate.h.

    Honest costs: vmemory_save appends the records added since the last
    save to the log and fdatasyncs (kilobytes). When the log's tail not in
    the snapshot passes a quarter of the memory, that save also rewrites
    the snapshot, O(entries) (~0.3-0.5 s at 100k Flat entries of dim 256),
    in the caller's thread: rare (every N/4 adds), but that one step is
    slow. Writing it from a background thread was left for later (the
    index would need copying or locking while the loop adds to it). Flat
    search is a linear scan: O(entries * dim) per query; hnsw and ivf
    (vmemory_index.h) are not. An ivf add that starts a (re)training
    copies the vectors (tens of ms at 100k); the k-means runs in a thread
    (vmemory_train.h), and the adds after it moves the newest vectors over,
    S_MOVES_PER_ADD at a time (a few ms). vmemory_destroy waits for a
    training under way.
*/
#include "vmemory.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/error_c.h>

#include "plog.h"
#include "vmemory_file.h"
#include "vmemory_log.h"
#include "vmemory_migrate.h"
#include "vmemory_snap.h"
#include "vmemory_train.h"

//  A snapshot is rewritten when the log records it does not cover reach
//  a quarter of the memory (and at least snapshot_min). Why a quarter: a
//  load re-adds at most that tail on top of the snapshot (cheap for Flat,
//  ~N/4 graph insertions for HNSW, still well under a full rebuild), and
//  since the memory grows by 4/3 between rewrites the snapshot bytes
//  written over a memory's life sum to about 4x its final index: an
//  amortised O(1) per add, against O(N) per save before.
#define S_SNAP_DIVISOR 4
#define S_SNAP_MIN_DEFAULT 1024
#define S_TRAIN_RETRY 1024
//  Vectors an add moves from the old index to a newly trained one: each
//  costs a search of the nlist centroids (~25 us at 512 lists of dim 256),
//  so 64 keep an add within a few ms and still catch up 63 per step.
#define S_MOVES_PER_ADD 64

struct _vmemory_t {
    FaissIndex *index;
    char **texts;               //  texts [i] belongs to FAISS id i
    size_t count, cap;
    int dim;
    char *dir;                  //  NULL: RAM only
    vmemory_index_kind_t kind;
    char factory [VMEMORY_FILE_FACTORY_MAX + 1];    //  descriptor of `index`
    uint64_t trainings;         //  IVF trainings since open
    vmemory_train_t *train;     //  an IVF training under way, or NULL
    size_t train_next;          //  after a failed training: no new one before this count
    bool snap_due;              //  the index changed kind: snapshot it at the next save
    size_t max_text_bytes, max_entries;
    uint64_t truncated;
    int lock_fd;
    vmemory_log_t *log;         //  NULL: RAM only
    uint64_t covered;           //  log records in the snapshot on disk
    uint64_t snap_next;         //  no snapshot attempt before this count
    size_t snap_min;
    uint64_t torn_bytes;
};

static pthread_once_t s_threads_once = PTHREAD_ONCE_INIT;

//  FAISS calls BLAS through the system's libblas, on Debian usually
//  OpenBLAS, which starts a worker thread per core at load time; idle, they
//  spin in sched_yield, a sixth of an agent's CPU in a profile, stolen from
//  the teammates on the same cores. One search at a time gains nothing from
//  them. Weak: another BLAS has no such function and keeps its default.
extern void openblas_set_num_threads (int threads) __attribute__ ((weak));

static void
s_default_threads (void)
{
    if (openblas_set_num_threads && !getenv ("OPENBLAS_NUM_THREADS"))
        openblas_set_num_threads (1);
    //  See vmemory.h: one thread unless the operator asked otherwise.
    const char *parley = getenv ("PARLEY_OMP_THREADS");
    if (parley && atoi (parley) > 0)
        omp_set_num_threads (atoi (parley));
    else
    if (!getenv ("OMP_NUM_THREADS"))
        omp_set_num_threads (1);
}

void
vmemory_set_threads (int threads)
{
    pthread_once (&s_threads_once, s_default_threads);
    if (threads > 0)
        omp_set_num_threads (threads);
}

void
vmemory_options_default (vmemory_options_t *opts)
{
    assert (opts);
    memset (opts, 0, sizeof *opts);
    opts->index = VMEMORY_INDEX_FLAT;
    opts->max_text_bytes = VMEMORY_DEFAULT_MAX_TEXT;
    opts->max_entries = 10 * 1000 * 1000;
}

static int
s_grow (vmemory_t *self, size_t need)
{
    if (need <= self->cap)
        return 0;
    size_t cap = self->cap ? self->cap : 64;
    while (cap < need)
        cap *= 2;
    char **texts = realloc (self->texts, cap * sizeof *texts);
    if (!texts)
        return -1;
    self->texts = texts;
    self->cap = cap;
    return 0;
}

static int
s_new_index (vmemory_t *self, char *err, size_t err_size)
{
    self->index = vmemory_index_new (self->kind, self->dim, self->factory, err, err_size);
    return self->index ? 0 : -1;
}

//  ivf: applies a finished training; starts one when the memory has
//  grown enough for it (vmemory_index.h). `background`: in a thread (an
//  add: the step must not wait), else now (open, vmemory_train_wait). A
//  failure is a warning: the old index still holds every vector, and the
//  next try is S_TRAIN_RETRY adds later.
static void
s_maybe_train (vmemory_t *self, bool background)
{
    if (self->kind != VMEMORY_INDEX_IVF)
        return;
    char err [256];
    if (self->train) {
        if (background && !vmemory_train_done (self->train))
            return;
        int rc = vmemory_train_catch_up (self->train, self->index,
                                         background ? S_MOVES_PER_ADD : SIZE_MAX, err, sizeof err);
        if (rc < 0) {
            plog_warn ("vmemory: IVF training failed (%s); searching with %s meanwhile", err,
                       self->factory);
            vmemory_train_destroy (&self->train);
            self->train_next = self->count + S_TRAIN_RETRY;
            return;
        }
        if (rc == 0)
            return;             //  the old index answers until the new one has it all
        FaissIndex *fresh = vmemory_train_take (&self->train, self->factory);
        faiss_Index_free (self->index);
        self->index = fresh;
        self->trainings++;
        self->snap_due = true;
        plog_info ("vmemory: %zu memories, now searched with %s", self->count, self->factory);
    }
    size_t nlist = vmemory_index_ivf_nlist (self->count);
    size_t have = vmemory_index_nlist (self->index);
    if (nlist == 0 || (have && nlist < 2 * have) || self->count < self->train_next)
        return;
    self->train = vmemory_train_start (self->index, nlist, background, err, sizeof err);
    if (!self->train) {
        plog_warn ("vmemory: cannot start an IVF training (%s)", err);
        self->train_next = self->count + S_TRAIN_RETRY;
    }
    else
    if (!background)
        s_maybe_train (self, false);
}

void
vmemory_train_wait (vmemory_t *self)
{
    assert (self);
    s_maybe_train (self, false);
}

//  Loads DIR from its log: the snapshot if it matches, plus the tail.
static int
s_load_log (vmemory_t *self, char *err, size_t err_size)
{
    vmemory_snap_info_t snap = { 0 };
    FaissIndex *index = NULL;
    char why [256] = "";
    bool has_snap = vmemory_file_exists (self->dir, VMEMORY_FILE_INDEX);
    if (has_snap
    &&  vmemory_snap_read (self->dir, self->dim, self->max_entries, &snap, &index, why, sizeof why) != 0)
        has_snap = false;
    vmemory_log_scan_t scan = { .want = snap.covered ? snap.covered - 1 : 0 };
    if (vmemory_log_load (self->dir, self->dim, self->max_entries, &self->log, &scan,
                          err, err_size) != 0) {
        if (index)
            faiss_Index_free (index);
        return -1;
    }
    self->texts = scan.texts;
    self->count = self->cap = scan.count;
    self->torn_bytes = scan.torn_bytes;
    if (has_snap) {
        if (snap.log_id != vmemory_log_id (self->log))
            snprintf (why, sizeof why, "it belongs to another log");
        else
        if (snap.covered > scan.count)
            snprintf (why, sizeof why, "it covers %llu records, the log has %zu",
                      (unsigned long long) snap.covered, scan.count);
        else
        if (snap.covered > 0 && scan.want_fnv != snap.last_fnv)
            snprintf (why, sizeof why, "its last record's checksum differs from the log's");
        else
            why [0] = 0;
        if (why [0]) {
            faiss_Index_free (index);
            index = NULL;
        }
    }
    if (index && !why [0] && !vmemory_index_fits (self->kind, snap.factory)) {
        plog_info ("vmemory: the snapshot in %s holds a %s index, this run asks for %s; "
                   "rebuilding the index from the log", self->dir, snap.factory,
                   vmemory_index_kind_name (self->kind));
        faiss_Index_free (index);
        index = NULL;
    }
    if (why [0])
        plog_warn ("vmemory: snapshot %s/%s not used (%s); rebuilding the index from the log",
                   self->dir, VMEMORY_FILE_INDEX, why);
    if (index) {
        self->index = index;
        self->covered = snap.covered;
        snprintf (self->factory, sizeof self->factory, "%s", snap.factory);
        if (vmemory_index_tune (self->index, self->kind, err, err_size) != 0)
            return -1;
    }
    else
    if (s_new_index (self, err, err_size) != 0)
        return -1;
    self->snap_next = self->covered;
    if (vmemory_log_add_vectors (self->log, self->covered, self->index, err, err_size) != 0)
        return -1;
    s_maybe_train (self, false);
    return 0;
}

//  Opens what DIR holds: the log, an old-format memory to migrate, or
//  nothing (a new log, written on the first save).
static int
s_open_dir (vmemory_t *self, char *err, size_t err_size)
{
    bool has_log = vmemory_file_exists (self->dir, VMEMORY_FILE_LOG);
    bool has_texts = vmemory_file_exists (self->dir, VMEMORY_FILE_TEXTS);
    bool has_index = vmemory_file_exists (self->dir, VMEMORY_FILE_INDEX);
    if (has_log) {
        if (has_texts && vmemory_migrate_finish (self->dir, err, err_size) != 0)
            return -1;
        return s_load_log (self, err, err_size);
    }
    if (has_texts != has_index) {
        snprintf (err, err_size, "memory dir %s has %s but not %s", self->dir,
                  has_texts ? VMEMORY_FILE_TEXTS : VMEMORY_FILE_INDEX,
                  has_texts ? VMEMORY_FILE_INDEX : (has_index ? VMEMORY_FILE_LOG : VMEMORY_FILE_TEXTS));
        return -1;
    }
    if (has_texts) {
        vmemory_file_loaded_t old;
        if (vmemory_migrate (self->dir, self->dim, self->max_entries, &self->log, &old,
                             err, err_size) != 0)
            return -1;
        self->texts = old.texts;
        self->count = self->cap = old.count;
        self->index = old.index;
        self->covered = self->snap_next = old.count;
        snprintf (self->factory, sizeof self->factory, "%s", old.factory);
        if (!vmemory_index_fits (self->kind, old.factory)) {
            //  Migrated as it was; this run asks for another kind.
            faiss_Index_free (self->index);
            self->index = NULL;
            self->covered = self->snap_next = 0;
            if (s_new_index (self, err, err_size) != 0
            ||  vmemory_log_add_vectors (self->log, 0, self->index, err, err_size) != 0)
                return -1;
        }
        else
        if (vmemory_index_tune (self->index, self->kind, err, err_size) != 0)
            return -1;
        s_maybe_train (self, false);
        return 0;
    }
    if (s_new_index (self, err, err_size) != 0)
        return -1;
    self->log = vmemory_log_new (self->dir, self->dim, self->factory);
    if (!self->log) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    return 0;
}

vmemory_t *
vmemory_open (const vmemory_options_t *opts, char *err, size_t err_size)
{
    assert (opts);
    assert (err && err_size);
    err [0] = 0;
    vmemory_set_threads (0);
    vmemory_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    self->lock_fd = -1;
    self->dim = opts->dim;
    self->max_text_bytes = opts->max_text_bytes ? opts->max_text_bytes : VMEMORY_DEFAULT_MAX_TEXT;
    if (self->max_text_bytes > VMEMORY_MAX_TEXT_LIMIT)
        self->max_text_bytes = VMEMORY_MAX_TEXT_LIMIT;
    self->max_entries = opts->max_entries ? opts->max_entries : 10 * 1000 * 1000;
    if (self->max_entries > VMEMORY_MAX_ENTRIES)
        self->max_entries = VMEMORY_MAX_ENTRIES;
    self->kind = opts->index;
    if (self->dim <= 0 || (unsigned) self->kind > VMEMORY_INDEX_IVF) {
        snprintf (err, err_size, "invalid memory options (dim %d, index kind %d)", self->dim,
                  (int) self->kind);
        goto err;
    }
    self->snap_min = opts->snapshot_min ? opts->snapshot_min : S_SNAP_MIN_DEFAULT;
    if (opts->dir) {
        self->dir = strdup (opts->dir);
        if (!self->dir || vmemory_file_make_dir (self->dir, err, err_size) != 0
        ||  vmemory_file_lock (self->dir, &self->lock_fd, err, err_size) != 0
        ||  s_open_dir (self, err, err_size) != 0)
            goto err;
        return self;
    }
    if (s_new_index (self, err, err_size) != 0)
        goto err;
    return self;
err:
    vmemory_destroy (&self);
    return NULL;
}

void
vmemory_destroy (vmemory_t **self_p)
{
    assert (self_p);
    vmemory_t *self = *self_p;
    if (!self)
        return;
    vmemory_train_destroy (&self->train);      //  waits for its thread
    if (self->index)
        faiss_Index_free (self->index);
    for (size_t i = 0; i < self->count; i++)
        free (self->texts [i]);
    free (self->texts);
    vmemory_log_destroy (&self->log);
    if (self->lock_fd >= 0)
        close (self->lock_fd);      //  releases the flock
    free (self->dir);
    free (self);
    *self_p = NULL;
}

int
vmemory_add (vmemory_t *self, const float *vec, const char *text, char *err, size_t err_size)
{
    assert (self);
    assert (vec);
    assert (err && err_size);
    if (!text)
        text = "";
    if (self->count >= self->max_entries) {
        snprintf (err, err_size, "memory is full (%zu entries)", self->max_entries);
        return -1;
    }
    for (int i = 0; i < self->dim; i++)
        if (!isfinite (vec [i])) {
            snprintf (err, err_size, "vector has a non-finite component at %d", i);
            return -1;
        }
    size_t len = strlen (text);
    if (len > self->max_text_bytes) {
        len = vmemory_text_fit (self, text, len);
        self->truncated++;
    }
    char *copy = malloc (len + 1);
    if (!copy || s_grow (self, self->count + 1) != 0) {
        free (copy);
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    memcpy (copy, text, len);
    copy [len] = 0;
    //  Buffered for the next save; the record carries the vector.
    if (self->log && vmemory_log_append (self->log, copy, len, vec, err, err_size) != 0) {
        free (copy);
        return -1;
    }
    if (faiss_Index_add (self->index, 1, vec) != 0) {
        free (copy);
        if (self->log)
            vmemory_log_drop_last (self->log);
        snprintf (err, err_size, "FAISS add failed: %s", faiss_get_last_error ());
        return -1;
    }
    self->texts [self->count++] = copy;
    s_maybe_train (self, true);
    return 0;
}

size_t
vmemory_max_text (vmemory_t *self)
{
    assert (self);
    return self->max_text_bytes;
}

size_t
vmemory_text_fit (vmemory_t *self, const char *text, size_t len)
{
    assert (self && text);
    if (len <= self->max_text_bytes)
        return len;
    len = self->max_text_bytes;
    while (len > 0 && ((unsigned char) text [len] & 0xC0) == 0x80)
        len--;                  //  do not cut a UTF-8 sequence in half
    return len;
}

int
vmemory_search (vmemory_t *self, const float *query, size_t top_k, vmemory_hit_t *hits,
                char *err, size_t err_size)
{
    assert (self);
    assert (query);
    assert (hits || top_k == 0);
    if (top_k > VMEMORY_MAX_TOP_K)
        top_k = VMEMORY_MAX_TOP_K;
    if (top_k > self->count)
        top_k = self->count;
    if (top_k == 0)
        return 0;
    float distances [VMEMORY_MAX_TOP_K];
    faiss_idx_t labels [VMEMORY_MAX_TOP_K];
    if (faiss_Index_search (self->index, 1, query, (faiss_idx_t) top_k, distances, labels) != 0) {
        snprintf (err, err_size, "FAISS search failed: %s", faiss_get_last_error ());
        return -1;
    }
    int found = 0;
    for (size_t i = 0; i < top_k; i++) {
        if (labels [i] < 0 || (size_t) labels [i] >= self->count)
            continue;           //  HNSW may return fewer than k
        hits [found].id = labels [i];
        hits [found].score = distances [i];
        hits [found].text = self->texts [labels [i]];
        found++;
    }
    return found;
}

//  Rewrites the snapshot when the uncovered tail is due (see the top).
//  A failure is only a warning: the log already holds every record.
static void
s_maybe_snapshot (vmemory_t *self)
{
    uint64_t tail = self->count - self->covered;
    bool due = tail >= self->snap_min && tail >= self->count / S_SNAP_DIVISOR
            && self->count >= self->snap_next;
    if (tail == 0 || (!due && !self->snap_due))
        return;
    vmemory_snap_info_t info = { .log_id = vmemory_log_id (self->log), .covered = self->count,
                                 .last_fnv = vmemory_log_last_fnv (self->log) };
    snprintf (info.factory, sizeof info.factory, "%s", self->factory);
    char why [256];
    if (vmemory_snap_write (self->dir, self->index, &info, why, sizeof why) != 0) {
        plog_warn ("vmemory: %s (the log is intact; next try after %zu more entries)", why,
                   self->snap_min);
        self->snap_next = self->count + self->snap_min;
        self->snap_due = false;
        return;
    }
    self->covered = self->count;
    self->snap_due = false;
}

int
vmemory_save (vmemory_t *self, char *err, size_t err_size)
{
    assert (self);
    assert (err && err_size);
    if (!self->log || vmemory_log_pending (self->log) == 0)
        return 0;
    if (vmemory_log_sync (self->log, err, err_size) != 0)
        return -1;
    s_maybe_snapshot (self);
    return 0;
}

uint64_t
vmemory_torn_bytes (vmemory_t *self)
{
    assert (self);
    return self->torn_bytes;
}

uint64_t
vmemory_snapshot_covers (vmemory_t *self)
{
    assert (self);
    return self->covered;
}

size_t
vmemory_count (vmemory_t *self)
{
    assert (self);
    return self->count;
}

const char *
vmemory_text (vmemory_t *self, size_t id)
{
    assert (self);
    return id < self->count ? self->texts [id] : NULL;
}

const char *
vmemory_factory (vmemory_t *self)
{
    assert (self);
    return self->factory;
}

vmemory_index_kind_t
vmemory_index_kind (vmemory_t *self)
{
    assert (self);
    return self->kind;
}

uint64_t
vmemory_trainings (vmemory_t *self)
{
    assert (self);
    return self->trainings;
}

uint64_t
vmemory_truncated (vmemory_t *self)
{
    assert (self);
    return self->truncated;
}
