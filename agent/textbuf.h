// SPDX-License-Identifier: MIT
/*  textbuf - a growing text buffer, for renderings built piece by piece.

    Building a long text with repeated sprintf ("%s%s", text, more) copies
    the whole text at every piece: quadratic. With 50 agents the team's
    explored list reaches thousands of names, and that copying was a quarter
    of every agent's CPU (perf, bench_agents). textbuf appends in amortised
    O(piece) by doubling its capacity.

        textbuf_t *buf = textbuf_new ();
        textbuf_add (buf, "Explored: ");
        textbuf_addf (buf, "%s at %d", name, n);
        char *text = textbuf_detach (&buf);     //  caller frees text
*/
#ifndef PARLEY_TEXTBUF_H
#define PARLEY_TEXTBUF_H

#include <stddef.h>

typedef struct _textbuf_t textbuf_t;

textbuf_t *textbuf_new (void);
void textbuf_destroy (textbuf_t **self_p);
void textbuf_add (textbuf_t *self, const char *text);
void textbuf_addn (textbuf_t *self, const char *text, size_t len);
void textbuf_addf (textbuf_t *self, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
size_t textbuf_len (const textbuf_t *self);
const char *textbuf_text (const textbuf_t *self);
//  Returns the text (caller frees) and destroys the buffer.
char *textbuf_detach (textbuf_t **self_p);

#endif
