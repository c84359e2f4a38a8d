// SPDX-License-Identifier: MIT
/*  team_report - the canonical team report, scanned. See team_report.h. */
#include <assert.h>
#include <string.h>
#include "team_report.h"

#define S_MAX_DIGITS 18             //  below 10^18: a JSON integer jansson takes

typedef struct {
    const char *at, *end;
} s_cursor_t;

//  Consumes `text` if the input continues with it.
static bool
s_literal (s_cursor_t *c, const char *text)
{
    size_t len = strlen (text);
    if ((size_t) (c->end - c->at) < len || memcmp (c->at, text, len) != 0)
        return false;
    c->at += len;
    return true;
}

//  An unsigned integer: "0", or 1-18 digits without a leading zero.
static bool
s_uint (s_cursor_t *c, uint64_t *out)
{
    const char *start = c->at;
    uint64_t value = 0;
    while (c->at < c->end && *c->at >= '0' && *c->at <= '9') {
        if (c->at - start == S_MAX_DIGITS)
            return false;
        value = value * 10 + (uint64_t) (*c->at - '0');
        c->at++;
    }
    size_t digits = (size_t) (c->at - start);
    if (digits == 0 || (digits > 1 && *start == '0'))
        return false;
    //  "1.5", "1e3" are numbers too, but not integers: not this form.
    if (c->at < c->end && (*c->at == '.' || *c->at == 'e' || *c->at == 'E'))
        return false;
    *out = value;
    return true;
}

//  A string of printable ASCII without escapes.
static bool
s_string (s_cursor_t *c)
{
    if (!s_literal (c, "\""))
        return false;
    while (c->at < c->end && *c->at != '"') {
        unsigned char byte = (unsigned char) *c->at;
        if (byte < 0x20 || byte > 0x7e || byte == '\\')
            return false;
        c->at++;
    }
    return s_literal (c, "\"");
}

bool
team_report_scan (const char *body, size_t len, team_report_t *out)
{
    assert (body && out);
    memset (out, 0, sizeof (*out));
    s_cursor_t c = { body, body + len };
    if (!s_literal (&c, "{\"team\":") || !s_uint (&c, &out->team)
    ||  !s_literal (&c, ",\"at\":") || !s_uint (&c, &out->at)
    ||  !s_literal (&c, ",\"claim\":"))
        return false;
    if (s_literal (&c, "null"))
        out->claim_null = true;
    else
    if (!s_uint (&c, &out->claim))
        return false;
    if (!s_literal (&c, ",\"visited\":["))
        return false;
    for (size_t n = 0; !s_literal (&c, "]"); n++) {
        uint64_t cell;
        if ((n > 0 && !s_literal (&c, ",")) || !s_uint (&c, &cell))
            return false;
        if (out->visited_count < TEAM_MAX_VISITED)
            out->visited[out->visited_count++] = cell;
    }
    if (!s_literal (&c, ",\"found\":["))
        return false;
    for (size_t n = 0; !s_literal (&c, "]"); n++) {
        if ((n > 0 && !s_literal (&c, ",")) || !s_string (&c))
            return false;
        if (out->found_count < TEAM_MAX_FOUND)
            out->found_count++;
    }
    return s_literal (&c, "}") && c.at == c.end;
}
