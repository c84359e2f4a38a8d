/*  vmemory - an agent's private vector memory: FAISS index + texts.
    See vmemory.h for the contract and the file layout.

    Honest costs: vmemory_save rewrites both files (O(entries)); at 100k
    entries of dim 256 that is ~100 MB of index. Call it every few steps
    and at exit, not after every add. An append-only log is left for later.
    Flat search is a linear scan: O(entries * dim) per query.
*/
#include "vmemory.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/index_factory_c.h>
#include <faiss/c_api/index_io_c.h>

#include "plog.h"

#define S_MAGIC "PMEMTXT"       //  8 bytes with its NUL
#define S_VERSION 1
#define S_FACTORY_MAX 64
//  magic 8, version 4, dim 4, count 8, payload bytes 8, payload fnv 8,
//  index bytes 8, index fnv 8, factory length 4, factory 64, header fnv 8.
#define S_HEADER_SIZE 132
#define S_INDEX_FILE "index.faiss"
#define S_TEXTS_FILE "texts.pmem"
#define S_LOCK_FILE "lock"

struct _vmemory_t {
    FaissIndex *index;
    char **texts;               //  texts [i] belongs to FAISS id i
    size_t count, cap;
    int dim;
    char *dir;                  //  NULL: RAM only
    char factory [S_FACTORY_MAX + 1];
    size_t max_text_bytes, max_entries;
    uint64_t truncated;
    bool dirty;
    int lock_fd;
};

typedef struct {                //  texts.pmem header, decoded
    uint32_t version, dim, factory_len;
    uint64_t count, payload_bytes, payload_fnv, index_bytes, index_fnv;
    char factory [S_FACTORY_MAX + 1];
} s_header_t;

static pthread_once_t s_threads_once = PTHREAD_ONCE_INIT;

static void
s_default_threads (void)
{
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
    opts->factory = "Flat";
    opts->max_text_bytes = VMEMORY_DEFAULT_MAX_TEXT;
    opts->max_entries = 10 * 1000 * 1000;
}

static uint64_t
s_fnv (uint64_t hash, const void *data, size_t len)
{
    const unsigned char *bytes = data;
    for (size_t i = 0; i < len; i++) {
        hash ^= bytes [i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}
#define S_FNV_INIT 0xcbf29ce484222325ull

static void
s_put32 (unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

static void
s_put64 (unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p [i] = (unsigned char) (v >> (8 * i));
}

static uint32_t
s_get32 (const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p [i];
    return v;
}

static uint64_t
s_get64 (const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p [i];
    return v;
}

static void
s_encode_header (const s_header_t *h, unsigned char *p)
{
    memset (p, 0, S_HEADER_SIZE);
    memcpy (p, S_MAGIC, 8);
    s_put32 (p + 8, h->version);
    s_put32 (p + 12, h->dim);
    s_put64 (p + 16, h->count);
    s_put64 (p + 24, h->payload_bytes);
    s_put64 (p + 32, h->payload_fnv);
    s_put64 (p + 40, h->index_bytes);
    s_put64 (p + 48, h->index_fnv);
    s_put32 (p + 56, h->factory_len);
    memcpy (p + 60, h->factory, h->factory_len);
    s_put64 (p + 124, s_fnv (S_FNV_INIT, p, 124));
}

static int
s_decode_header (const unsigned char *p, s_header_t *h, char *err, size_t err_size)
{
    if (memcmp (p, S_MAGIC, 8) != 0) {
        snprintf (err, err_size, "not a Parley memory file (bad magic)");
        return -1;
    }
    if (s_get64 (p + 124) != s_fnv (S_FNV_INIT, p, 124)) {
        snprintf (err, err_size, "header checksum mismatch (corrupt file)");
        return -1;
    }
    h->version = s_get32 (p + 8);
    h->dim = s_get32 (p + 12);
    h->count = s_get64 (p + 16);
    h->payload_bytes = s_get64 (p + 24);
    h->payload_fnv = s_get64 (p + 32);
    h->index_bytes = s_get64 (p + 40);
    h->index_fnv = s_get64 (p + 48);
    h->factory_len = s_get32 (p + 56);
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
static int
s_make_dir (const char *dir, char *err, size_t err_size)
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
    uint64_t hash = S_FNV_INIT;
    size_t n;
    while ((n = fread (buffer, 1, sizeof buffer, file)) > 0)
        hash = s_fnv (hash, buffer, n);
    bool failed = ferror (file);
    fclose (file);
    if (failed) {
        snprintf (err, err_size, "cannot read %s", path);
        return -1;
    }
    *fnv = hash;
    return 0;
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

//  Parses the length-prefixed records of a verified payload.
static int
s_load_records (vmemory_t *self, const unsigned char *payload, uint64_t bytes,
                uint64_t count, char *err, size_t err_size)
{
    if (s_grow (self, (size_t) count) != 0) {
        snprintf (err, err_size, "out of memory for %llu texts", (unsigned long long) count);
        return -1;
    }
    uint64_t pos = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (bytes - pos < 4) {
            snprintf (err, err_size, "texts file ends inside record %llu", (unsigned long long) i);
            return -1;
        }
        uint32_t len = s_get32 (payload + pos);
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
        self->texts [self->count++] = text;
        pos += len;
    }
    if (pos != bytes) {
        snprintf (err, err_size, "texts file has %llu bytes after the last record",
                  (unsigned long long) (bytes - pos));
        return -1;
    }
    return 0;
}

static int
s_load (vmemory_t *self, char *err, size_t err_size)
{
    int rc = -1;
    unsigned char *payload = NULL;
    char *texts_path = s_path (self->dir, S_TEXTS_FILE);
    char *index_path = s_path (self->dir, S_INDEX_FILE);
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
    if (h.dim != (uint32_t) self->dim) {
        snprintf (why, sizeof why, "holds vectors of dimension %u but the embedder gives %d",
                  h.dim, self->dim);
        goto fail;
    }
    //  Every claim is checked against the real size before allocating.
    if (h.payload_bytes != (uint64_t) st.st_size - S_HEADER_SIZE) {
        snprintf (why, sizeof why, "header says %llu bytes of texts, file has %lld",
                  (unsigned long long) h.payload_bytes, (long long) st.st_size - S_HEADER_SIZE);
        goto fail;
    }
    if (h.count > h.payload_bytes / 4 || h.count > VMEMORY_MAX_ENTRIES
    ||  h.count > self->max_entries) {
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
    if (s_fnv (S_FNV_INIT, payload, h.payload_bytes) != h.payload_fnv) {
        snprintf (why, sizeof why, "texts checksum mismatch (corrupt file)");
        goto fail;
    }
    if (s_load_records (self, payload, h.payload_bytes, h.count, why, sizeof why) != 0)
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
    if (faiss_read_index_fname (index_path, 0, &self->index) != 0) {
        snprintf (err, err_size, "FAISS cannot read %s: %s", index_path, faiss_get_last_error ());
        goto out;
    }
    if (faiss_Index_d (self->index) != self->dim
    ||  faiss_Index_ntotal (self->index) != (faiss_idx_t) self->count
    ||  faiss_Index_metric_type (self->index) != METRIC_INNER_PRODUCT) {
        snprintf (err, err_size, "%s does not match its texts (dim %d, %lld vectors, metric %d)",
                  index_path, faiss_Index_d (self->index),
                  (long long) faiss_Index_ntotal (self->index),
                  (int) faiss_Index_metric_type (self->index));
        goto out;
    }
    snprintf (self->factory, sizeof self->factory, "%s", h.factory);
    rc = 0;
    goto out;
fail:
    snprintf (err, err_size, "memory file %s: %s", texts_path ? texts_path : S_TEXTS_FILE, why);
out:
    if (file)
        fclose (file);
    free (payload);
    free (texts_path);
    free (index_path);
    return rc;
}

static bool
s_exists (const char *dir, const char *name)
{
    char *path = s_path (dir, name);
    bool exists = path && access (path, F_OK) == 0;
    free (path);
    return exists;
}

static int
s_lock (vmemory_t *self, char *err, size_t err_size)
{
    char *path = s_path (self->dir, S_LOCK_FILE);
    self->lock_fd = path ? open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600) : -1;
    free (path);
    if (self->lock_fd < 0) {
        snprintf (err, err_size, "cannot open the lock of memory dir %s: %s", self->dir, strerror (errno));
        return -1;
    }
    if (flock (self->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        snprintf (err, err_size, "memory dir %s is in use by another process "
                  "(two agents with the same id?)", self->dir);
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
    const char *factory = opts->factory && *opts->factory ? opts->factory : "Flat";
    if (self->dim <= 0 || strlen (factory) > S_FACTORY_MAX) {
        snprintf (err, err_size, "invalid memory options (dim %d, factory \"%s\")", self->dim, factory);
        goto err;
    }
    snprintf (self->factory, sizeof self->factory, "%s", factory);
    if (opts->dir) {
        self->dir = strdup (opts->dir);
        if (!self->dir || s_make_dir (self->dir, err, err_size) != 0 || s_lock (self, err, err_size) != 0)
            goto err;
        bool has_texts = s_exists (self->dir, S_TEXTS_FILE);
        bool has_index = s_exists (self->dir, S_INDEX_FILE);
        if (has_texts != has_index) {
            snprintf (err, err_size, "memory dir %s has %s but not %s", self->dir,
                      has_texts ? S_TEXTS_FILE : S_INDEX_FILE, has_texts ? S_INDEX_FILE : S_TEXTS_FILE);
            goto err;
        }
        if (has_texts)
            return s_load (self, err, err_size) == 0 ? self : (vmemory_destroy (&self), NULL);
    }
    if (faiss_index_factory (&self->index, self->dim, factory, METRIC_INNER_PRODUCT) != 0) {
        snprintf (err, err_size, "FAISS refuses index factory \"%s\": %s", factory, faiss_get_last_error ());
        goto err;
    }
    if (!faiss_Index_is_trained (self->index)) {
        snprintf (err, err_size, "index factory \"%s\" needs training, which vmemory does not do; "
                  "use Flat or HNSWn", factory);
        goto err;
    }
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
    if (self->index)
        faiss_Index_free (self->index);
    for (size_t i = 0; i < self->count; i++)
        free (self->texts [i]);
    free (self->texts);
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
        len = self->max_text_bytes;
        while (len > 0 && ((unsigned char) text [len] & 0xC0) == 0x80)
            len--;              //  do not cut a UTF-8 sequence in half
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
    if (faiss_Index_add (self->index, 1, vec) != 0) {
        free (copy);
        snprintf (err, err_size, "FAISS add failed: %s", faiss_get_last_error ());
        return -1;
    }
    self->texts [self->count++] = copy;
    self->dirty = true;
    return 0;
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

//  Opens DIR/NAME.tmp for writing, mode 0600.
static FILE *
s_create_tmp (const char *dir, const char *name, char **path_p)
{
    char *path = NULL;
    if (asprintf (&path, "%s/%s.tmp", dir, name) < 0)
        return NULL;
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *file = fd >= 0 ? fdopen (fd, "wb") : NULL;
    if (!file) {
        if (fd >= 0)
            close (fd);
        free (path);
        return NULL;
    }
    *path_p = path;
    return file;
}

//  fflush + fsync + fclose; -1 if any failed.
static int
s_close_synced (FILE *file)
{
    int rc = fflush (file) == 0 && fsync (fileno (file)) == 0 ? 0 : -1;
    return fclose (file) == 0 ? rc : -1;
}

static int
s_write_texts (vmemory_t *self, FILE *file, uint64_t index_bytes, uint64_t index_fnv)
{
    s_header_t h = { .version = S_VERSION, .dim = (uint32_t) self->dim,
                     .count = self->count, .index_bytes = index_bytes,
                     .index_fnv = index_fnv, .payload_fnv = S_FNV_INIT };
    h.factory_len = (uint32_t) strlen (self->factory);
    memcpy (h.factory, self->factory, h.factory_len + 1);
    for (size_t i = 0; i < self->count; i++) {
        unsigned char prefix [4];
        size_t len = strlen (self->texts [i]);
        s_put32 (prefix, (uint32_t) len);
        h.payload_fnv = s_fnv (h.payload_fnv, prefix, 4);
        h.payload_fnv = s_fnv (h.payload_fnv, self->texts [i], len);
        h.payload_bytes += 4 + len;
    }
    unsigned char raw [S_HEADER_SIZE];
    s_encode_header (&h, raw);
    if (fwrite (raw, 1, S_HEADER_SIZE, file) != S_HEADER_SIZE)
        return -1;
    for (size_t i = 0; i < self->count; i++) {
        unsigned char prefix [4];
        size_t len = strlen (self->texts [i]);
        s_put32 (prefix, (uint32_t) len);
        if (fwrite (prefix, 1, 4, file) != 4 || fwrite (self->texts [i], 1, len, file) != len)
            return -1;
    }
    return 0;
}

int
vmemory_save (vmemory_t *self, char *err, size_t err_size)
{
    assert (self);
    assert (err && err_size);
    if (!self->dir || !self->dirty)
        return 0;
    int rc = -1;
    char *index_tmp = NULL, *texts_tmp = NULL;
    char *index_path = s_path (self->dir, S_INDEX_FILE);
    char *texts_path = s_path (self->dir, S_TEXTS_FILE);
    FILE *file = index_path && texts_path ? s_create_tmp (self->dir, S_INDEX_FILE, &index_tmp) : NULL;
    if (!file) {
        snprintf (err, err_size, "cannot create a file in %s: %s", self->dir, strerror (errno));
        goto done;
    }
    int written = faiss_write_index (self->index, file);
    if (s_close_synced (file) != 0 || written != 0) {
        snprintf (err, err_size, "cannot write the index in %s: %s", self->dir,
                  written ? faiss_get_last_error () : strerror (errno));
        goto done;
    }
    struct stat st;
    uint64_t index_fnv;
    if (stat (index_tmp, &st) != 0
    ||  s_file_fnv (index_tmp, (uint64_t) st.st_size, &index_fnv, err, err_size) != 0)
        goto done;
    file = s_create_tmp (self->dir, S_TEXTS_FILE, &texts_tmp);
    if (!file) {
        snprintf (err, err_size, "cannot create a file in %s: %s", self->dir, strerror (errno));
        goto done;
    }
    written = s_write_texts (self, file, (uint64_t) st.st_size, index_fnv);
    if (s_close_synced (file) != 0 || written != 0) {
        snprintf (err, err_size, "cannot write the texts in %s: %s", self->dir, strerror (errno));
        goto done;
    }
    //  Index first, texts last: texts.pmem names the index it belongs to.
    if (rename (index_tmp, index_path) != 0 || rename (texts_tmp, texts_path) != 0) {
        snprintf (err, err_size, "cannot rename the memory files in %s: %s", self->dir, strerror (errno));
        goto done;
    }
    int dir_fd = open (self->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
        fsync (dir_fd);
        close (dir_fd);
    }
    self->dirty = false;
    rc = 0;
done:
    if (rc != 0) {
        if (index_tmp)
            unlink (index_tmp);
        if (texts_tmp)
            unlink (texts_tmp);
    }
    free (index_tmp);
    free (texts_tmp);
    free (index_path);
    free (texts_path);
    return rc;
}

size_t
vmemory_count (vmemory_t *self)
{
    assert (self);
    return self->count;
}

int
vmemory_dim (vmemory_t *self)
{
    assert (self);
    return self->dim;
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

uint64_t
vmemory_truncated (vmemory_t *self)
{
    assert (self);
    return self->truncated;
}

int
vmemory_move_aside (const char *dir, char *err, size_t err_size)
{
    assert (dir);
    const char *names [] = { S_INDEX_FILE, S_TEXTS_FILE, NULL };
    long long now = (long long) time (NULL);
    for (size_t i = 0; names [i]; i++) {
        char *from = s_path (dir, names [i]);
        char *to = NULL;
        if (!from || asprintf (&to, "%s.bad-%lld", from, now) < 0) {
            free (from);
            snprintf (err, err_size, "out of memory");
            return -1;
        }
        int rc = rename (from, to);
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
