// SPDX-License-Identifier: MIT
/*  textbuf - a growing text buffer. See textbuf.h.

    Out of memory aborts (assert), like czmq's own allocations: a text
    cannot be half-built and used.
*/
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "textbuf.h"

struct _textbuf_t {
    char *data;
    size_t len, size;               //  size includes room for the NUL
};

textbuf_t *
textbuf_new (void)
{
    textbuf_t *self = (textbuf_t *) calloc (1, sizeof (textbuf_t));
    assert (self);
    self->size = 64;
    self->data = (char *) malloc (self->size);
    assert (self->data);
    self->data[0] = 0;
    return self;
}

void
textbuf_destroy (textbuf_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        free ((*self_p)->data);
        free (*self_p);
        *self_p = NULL;
    }
}

static void
s_reserve (textbuf_t *self, size_t more)
{
    if (self->len + more < self->size)
        return;
    size_t size = self->size;
    while (self->len + more >= size)
        size *= 2;
    self->data = (char *) realloc (self->data, size);
    assert (self->data);
    self->size = size;
}

void
textbuf_addn (textbuf_t *self, const char *text, size_t len)
{
    assert (self);
    s_reserve (self, len);
    memcpy (self->data + self->len, text, len);
    self->len += len;
    self->data[self->len] = 0;
}

void
textbuf_add (textbuf_t *self, const char *text)
{
    assert (text);
    textbuf_addn (self, text, strlen (text));
}

void
textbuf_addf (textbuf_t *self, const char *format, ...)
{
    assert (self);
    va_list args;
    va_start (args, format);
    int len = vsnprintf (self->data + self->len, self->size - self->len, format, args);
    va_end (args);
    assert (len >= 0);
    if ((size_t) len >= self->size - self->len) {
        s_reserve (self, (size_t) len);
        va_start (args, format);
        vsnprintf (self->data + self->len, self->size - self->len, format, args);
        va_end (args);
    }
    self->len += (size_t) len;
}

size_t
textbuf_len (const textbuf_t *self)
{
    assert (self);
    return self->len;
}

const char *
textbuf_text (const textbuf_t *self)
{
    assert (self);
    return self->data;
}

char *
textbuf_detach (textbuf_t **self_p)
{
    assert (self_p && *self_p);
    char *text = (*self_p)->data;
    free (*self_p);
    *self_p = NULL;
    return text;
}
