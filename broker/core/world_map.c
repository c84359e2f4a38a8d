// SPDX-License-Identifier: MIT
/*  world_map - building a world's object layout: interning names, cells,
    and generating one from a seed.

    Generation uses splitmix64 (Vigna), not rand(): the same seed gives the
    same world on every platform and libc, and nothing else in the process
    can disturb the sequence. Each cell gets 1..3 DISTINCT names from the
    pool; the same name may appear in several cells (that is what makes
    "unique names" differ from "slots").
*/
#include "world_int.h"
#include <string.h>

static const char *s_pool [] = {
    "chair", "table", "desk", "lamp", "bookshelf", "sofa", "bed", "wardrobe",
    "mirror", "rug", "plant", "clock", "painting", "vase", "television",
    "radio", "laptop", "keyboard", "monitor", "printer", "phone", "stapler",
    "notebook", "pen", "calculator", "whiteboard", "projector",
    "filing_cabinet", "coffee_mug", "kettle", "toaster", "microwave",
    "fridge", "sink", "umbrella", "backpack", "headphones", "scissors",
    "trash_can", "fan"
};
#define POOL_SIZE (sizeof (s_pool) / sizeof (s_pool [0]))

static uint64_t
s_splitmix64 (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

wmap_t *
wmap_new (uint32_t width, uint32_t height)
{
    assert (width >= 1 && height >= 1);
    assert ((size_t) width * height <= WORLD_MAX_CELLS);
    wmap_t *self = (wmap_t *) zmalloc (sizeof (wmap_t));
    assert (self);
    self->width = width;
    self->height = height;
    self->cells = (size_t) width * height;
    self->start = (uint32_t *) calloc (self->cells + 1, sizeof (uint32_t));
    self->intern = zhashx_new ();
    assert (self->start && self->intern);
    return self;
}

void
wmap_destroy (wmap_t **self_p)
{
    assert (self_p);
    wmap_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->name_count; i++)
        free (self->names [i]);
    free (self->names);
    zhashx_destroy (&self->intern);
    free (self->ids);
    free (self->start);
    free (self->cell_names);
    for (size_t i = 0; self->images && i < self->cells; i++)
        free (self->images [i].data);
    free (self->images);
    free (self);
    *self_p = NULL;
}

static int
s_grow (void **array, size_t *cap, size_t need, size_t item)
{
    if (need <= *cap)
        return 0;
    size_t cap2 = *cap? *cap * 2: 64;
    while (cap2 < need)
        cap2 *= 2;
    void *bigger = realloc (*array, cap2 * item);
    if (!bigger)
        return -1;
    *array = bigger;
    *cap = cap2;
    return 0;
}

//  Index of the name, interning it on first sight; -1 out of memory.
static int64_t
s_intern (wmap_t *self, const char *name)
{
    uintptr_t at = (uintptr_t) zhashx_lookup (self->intern, name);
    if (at)
        return (int64_t) at - 1;
    if (s_grow ((void **) &self->names, &self->name_cap, self->name_count + 1, sizeof (char *)))
        return -1;
    char *copy = strdup (name);
    if (!copy)
        return -1;
    self->names [self->name_count++] = copy;
    zhashx_insert (self->intern, copy, (void *) (uintptr_t) self->name_count);
    return (int64_t) self->name_count - 1;
}

//  Printable UTF-8 (jansson already checked the encoding), no control bytes.
static bool
s_name_ok (const char *name, size_t len)
{
    if (len == 0 || len > WORLD_MAX_NAME)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) name [i];
        if (c < 0x20 || c == 0x7f)
            return false;
    }
    return true;
}

int
wmap_add (wmap_t *self, uint32_t cell, const char *name, size_t len,
          char *why, size_t why_size)
{
    assert (cell < self->cells && cell + 1 >= self->next_cell);
    if (!s_name_ok (name, len)) {
        snprintf (why, why_size, "an object name must be 1-%d printable bytes",
                  WORLD_MAX_NAME);
        return -1;
    }
    while (self->next_cell <= cell)
        self->start [self->next_cell++] = (uint32_t) self->object_count;
    size_t first = self->start [cell];
    if (self->object_count - first >= WORLD_MAX_PER_CELL) {
        snprintf (why, why_size, "at most %d objects per position", WORLD_MAX_PER_CELL);
        return -1;
    }
    char text [WORLD_MAX_NAME + 1];
    memcpy (text, name, len);
    text [len] = 0;
    int64_t id = s_intern (self, text);
    if (id < 0
    ||  s_grow ((void **) &self->ids, &self->object_cap, self->object_count + 1, sizeof (uint32_t))) {
        snprintf (why, why_size, "out of memory");
        return -1;
    }
    for (size_t i = first; i < self->object_count; i++)
        if (self->ids [i] == (uint32_t) id) {
            snprintf (why, why_size, "'%s' appears twice at one position", text);
            return -1;
        }
    self->ids [self->object_count++] = (uint32_t) id;
    return 0;
}

void
wmap_finish (wmap_t *self)
{
    while (self->next_cell <= self->cells)
        self->start [self->next_cell++] = (uint32_t) self->object_count;
    self->cell_names = (const char **) calloc (self->object_count + 1, sizeof (char *));
    assert (self->cell_names);
    for (size_t i = 0; i < self->object_count; i++)
        self->cell_names [i] = self->names [self->ids [i]];
}

wmap_t *
wmap_generate (uint32_t width, uint32_t height, uint64_t seed)
{
    wmap_t *self = wmap_new (width, height);
    uint64_t rng = seed;
    char why [128];
    for (uint32_t cell = 0; cell < self->cells; cell++) {
        //  partial Fisher-Yates over the pool: k distinct names
        uint32_t order [POOL_SIZE];
        for (uint32_t i = 0; i < POOL_SIZE; i++)
            order [i] = i;
        uint32_t k = 1 + (uint32_t) (s_splitmix64 (&rng) % 3);
        for (uint32_t i = 0; i < k; i++) {
            uint32_t j = i + (uint32_t) (s_splitmix64 (&rng) % (POOL_SIZE - i));
            uint32_t swap = order [i];
            order [i] = order [j];
            order [j] = swap;
            const char *name = s_pool [order [i]];
            if (wmap_add (self, cell, name, strlen (name), why, sizeof (why))) {
                wmap_destroy (&self);       //  out of memory only
                return NULL;
            }
        }
    }
    wmap_finish (self);
    return self;
}
