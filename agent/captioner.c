// SPDX-License-Identifier: MIT
/*  captioner - image -> visible_caption, cached; see captioner.h. */
#include <assert.h>
#include <czmq.h>
#include "captioner.h"
#include "pclock.h"
#include "plog.h"

struct _captioner_t {
    llm_t *llm;
    zhashx_t *cache;            //  "%016llx" image id -> caption (owned)
    uint64_t requests, hits;
    int64_t paused_until_ms;    //  0: not paused (pclock_mono_ms)
};

captioner_t *
captioner_new (llm_t *llm)
{
    assert (llm);
    captioner_t *self = (captioner_t *) zmalloc (sizeof (captioner_t));
    self->llm = llm;
    self->cache = zhashx_new ();
    zhashx_set_destructor (self->cache, (zhashx_destructor_fn *) zstr_free);
    return self;
}

void
captioner_destroy (captioner_t **self_p)
{
    assert (self_p);
    captioner_t *self = *self_p;
    if (!self)
        return;
    llm_destroy (&self->llm);
    zhashx_destroy (&self->cache);
    free (self);
    *self_p = NULL;
}

//  One line, at most CAPTIONER_MAX_TEXT bytes, cut at a UTF-8 boundary.
static char *
s_clean (const char *text)
{
    size_t len = strlen (text);
    while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\n'))
        len--;
    while (len > 0 && (*text == ' ' || *text == '\n')) {
        text++;
        len--;
    }
    if (len > CAPTIONER_MAX_TEXT) {
        len = CAPTIONER_MAX_TEXT;
        while (len > 0 && ((unsigned char) text[len] & 0xC0) == 0x80)
            len--;
    }
    char *line = strndup (text, len);
    for (char *p = line; p && *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    return line;
}

const char *
captioner_caption (captioner_t *self, const world_image_view_t *image, char *err,
                   size_t err_size)
{
    assert (self && image && err);
    char key[32];
    snprintf (key, sizeof (key), "%016llx", (unsigned long long) image->id);
    const char *cached = (const char *) zhashx_lookup (self->cache, key);
    if (cached) {
        self->hits++;
        return cached;
    }
    if (self->paused_until_ms && pclock_mono_ms () < self->paused_until_ms) {
        snprintf (err, err_size, "caption server paused after a failure");
        return NULL;
    }
    char *url = llm_image_data_url (image->data, image->size, image->type);
    if (!url) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    llm_message_t message = { .role = "user", .content = CAPTIONER_INSTRUCTION };
    const char *images[1] = { url };
    self->requests++;
    char *answer = llm_chat_images (self->llm, &message, 1, images, err, err_size);
    free (url);
    if (!answer) {
        plog_warn ("caption failed (%s); no captions for %d s", err, CAPTIONER_PAUSE_MS / 1000);
        self->paused_until_ms = pclock_mono_ms () + CAPTIONER_PAUSE_MS;
        return NULL;
    }
    self->paused_until_ms = 0;
    char *caption = s_clean (answer);
    free (answer);
    if (!caption || !*caption) {
        free (caption);
        snprintf (err, err_size, "the caption model answered nothing");
        return NULL;
    }
    if (zhashx_size (self->cache) >= CAPTIONER_CACHE)
        zhashx_purge (self->cache);
    zhashx_insert (self->cache, key, caption);
    return caption;
}

void
captioner_counts (captioner_t *self, uint64_t *requests, uint64_t *hits)
{
    assert (self);
    *requests = self->requests;
    *hits = self->hits;
}
