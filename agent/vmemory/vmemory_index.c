// SPDX-License-Identifier: MIT
/*  vmemory_index - index kinds, parameters and IVF training. See
    vmemory_index.h.
    IVF's training is in vmemory_train.c.
*/
#include "vmemory_index.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <faiss/c_api/AutoTune_c.h>
#include <faiss/c_api/IndexIVF_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/index_factory_c.h>

static const char *s_names [] = { "flat", "hnsw", "ivf" };

bool
vmemory_index_kind_parse (const char *name, vmemory_index_kind_t *kind)
{
    assert (kind);
    for (size_t i = 0; name && i < sizeof s_names / sizeof s_names [0]; i++)
        if (strcasecmp (name, s_names [i]) == 0) {
            *kind = (vmemory_index_kind_t) i;
            return true;
        }
    return false;
}

const char *
vmemory_index_kind_name (vmemory_index_kind_t kind)
{
    return (size_t) kind < sizeof s_names / sizeof s_names [0] ? s_names [kind] : "?";
}

//  Sets one FAISS parameter through ParameterSpace (the C API has no
//  HNSW class); only called for parameters the index has, since FAISS's C
//  API prints refused ones to stderr.
static int
s_set (FaissIndex *index, const char *name, double value, char *err, size_t err_size)
{
    FaissParameterSpace *space = NULL;
    int rc = faiss_ParameterSpace_new (&space);
    if (rc == 0)
        rc = faiss_ParameterSpace_set_index_parameter (space, index, name, value);
    if (rc != 0)
        snprintf (err, err_size, "FAISS cannot set %s: %s", name, faiss_get_last_error ());
    if (space)
        faiss_ParameterSpace_free (space);
    return rc == 0 ? 0 : -1;
}

static FaissIndex *
s_factory (int dim, const char *desc, char *err, size_t err_size)
{
    FaissIndex *index = NULL;
    if (faiss_index_factory (&index, dim, desc, METRIC_INNER_PRODUCT) != 0) {
        snprintf (err, err_size, "FAISS refuses index \"%s\": %s", desc, faiss_get_last_error ());
        return NULL;
    }
    return index;
}

FaissIndex *
vmemory_index_new (vmemory_index_kind_t kind, int dim, char *desc, char *err, size_t err_size)
{
    assert (desc);
    if (kind == VMEMORY_INDEX_HNSW)
        snprintf (desc, VMEMORY_INDEX_DESC_MAX + 1, "HNSW%d", VMEMORY_HNSW_M);
    else
        snprintf (desc, VMEMORY_INDEX_DESC_MAX + 1, "Flat");
    FaissIndex *index = s_factory (dim, desc, err, err_size);
    if (index && kind == VMEMORY_INDEX_HNSW
    &&  (s_set (index, "efConstruction", VMEMORY_HNSW_EF_CONSTRUCTION, err, err_size) != 0
    ||   vmemory_index_tune (index, kind, err, err_size) != 0)) {
        faiss_Index_free (index);
        return NULL;
    }
    return index;
}

bool
vmemory_index_fits (vmemory_index_kind_t kind, const char *desc)
{
    assert (desc);
    char hnsw [32];
    snprintf (hnsw, sizeof hnsw, "HNSW%d", VMEMORY_HNSW_M);
    switch (kind) {
        case VMEMORY_INDEX_FLAT:
            return strcmp (desc, "Flat") == 0;
        case VMEMORY_INDEX_HNSW:
            return strcmp (desc, hnsw) == 0;
        case VMEMORY_INDEX_IVF: {
            size_t len = strlen (desc);
            return strcmp (desc, "Flat") == 0
                || (strncmp (desc, "IVF", 3) == 0 && len > 8 && strcmp (desc + len - 5, ",Flat") == 0);
        }
    }
    return false;
}

size_t
vmemory_index_nlist (FaissIndex *index)
{
    FaissIndexIVF *ivf = faiss_IndexIVF_cast (index);
    return ivf ? faiss_IndexIVF_nlist (ivf) : 0;
}

int
vmemory_index_tune (FaissIndex *index, vmemory_index_kind_t kind, char *err, size_t err_size)
{
    assert (index);
    if (kind == VMEMORY_INDEX_HNSW)
        return s_set (index, "efSearch", VMEMORY_HNSW_EF_SEARCH, err, err_size);
    FaissIndexIVF *ivf = kind == VMEMORY_INDEX_IVF ? faiss_IndexIVF_cast (index) : NULL;
    if (ivf) {
        size_t nlist = faiss_IndexIVF_nlist (ivf);
        faiss_IndexIVF_set_nprobe (ivf, nlist / VMEMORY_IVF_NPROBE_DIVISOR > 8 ? nlist / VMEMORY_IVF_NPROBE_DIVISOR : 8);
        //  Reconstruction (the next retrain's input) needs the id map.
        if (faiss_IndexIVF_make_direct_map (ivf, 1) != 0) {
            snprintf (err, err_size, "FAISS cannot map the IVF ids: %s", faiss_get_last_error ());
            return -1;
        }
    }
    return 0;
}

size_t
vmemory_index_ivf_nlist (size_t count)
{
    if (count < VMEMORY_IVF_TRAIN_MIN)
        return 0;
    double want = 2.0 * sqrt ((double) count);
    double cap = (double) count / VMEMORY_IVF_POINTS_PER_LIST;
    if (cap < want)
        want = cap;
    size_t nlist = 1;
    while (nlist * 2 <= want && nlist * 2 <= VMEMORY_IVF_MAX_NLIST)
        nlist *= 2;
    return nlist;
}
