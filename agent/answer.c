// SPDX-License-Identifier: MIT
/*  answer - parse an LLM answer: YAML fields + the channel directives.
    See answer.h for the format and the contract.

    Order of work, each step on a private NUL-terminated copy:
    1. directives are found anywhere and then blanked (spaces, newlines
       kept), so a <MessageTo(...)> line cannot break the YAML around it;
    2. the block: the first ``` fence whose body has an "action:" line,
       else the whole text;
    3. libyaml's event parser reads the root mapping (events, not the
       document loader: no recursion, aliases never expanded, and the event
       count is capped); only scalar values of known keys are kept;
    4. if that gave no action (libyaml rejects "reason: a: b", prose, ...),
       a line parser reads "key: rest of line", with | and > blocks and
       indented continuation lines.
*/
#include "answer.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define S_MAX_YAML_EVENTS 4096

typedef enum { F_THINKING, F_ACTION, F_REASON, F_MESSAGE, F_COUNT } s_field_t;

static const char *s_field_names [F_COUNT] = {
    "thinking", "action", "reason", "message_to_others"
};

struct _answer_t {
    char *fields [F_COUNT];
    answer_directive_t directives [ANSWER_MAX_DIRECTIVES];
    size_t directive_count;
    size_t directives_dropped;
    size_t fields_truncated;
    bool input_truncated;
    const char *method;
};

//  Which field a key names; -1 if none. Case-insensitive, ignores
//  markdown emphasis and spaces around ("**Action**").
static int
s_field_of (const char *key, size_t len)
{
    while (len && (*key == '*' || *key == '_' || *key == '"' || *key == '\'' || isspace ((unsigned char) *key))) {
        key++;
        len--;
    }
    while (len && (key [len - 1] == '*' || key [len - 1] == '"' || key [len - 1] == '\''
               ||  isspace ((unsigned char) key [len - 1])))
        len--;
    for (int f = 0; f < F_COUNT; f++)
        if (strlen (s_field_names [f]) == len && strncasecmp (s_field_names [f], key, len) == 0)
            return f;
    if (len == 7 && strncasecmp (key, "message", 7) == 0)
        return F_MESSAGE;
    return -1;
}

//  Copy of [text, text+len) trimmed, cut at `limit` (counted).
static char *
s_dup_trimmed (answer_t *self, const char *text, size_t len, size_t limit)
{
    while (len && isspace ((unsigned char) *text)) {
        text++;
        len--;
    }
    while (len && isspace ((unsigned char) text [len - 1]))
        len--;
    if (len > limit) {
        len = limit;
        while (len && ((unsigned char) text [len] & 0xC0) == 0x80)
            len--;
        self->fields_truncated++;
    }
    return strndup (text, len);
}

static void
s_set_field (answer_t *self, int field, const char *value, size_t len)
{
    if (field < 0 || self->fields [field])
        return;                 //  first occurrence wins
    self->fields [field] = s_dup_trimmed (self, value, len, ANSWER_MAX_FIELD_BYTES);
}

//  --------------------------------------------------------------------
//  Directives

//  Finds the end of a quoted directive text starting after `quote` at
//  `p`: the first closing quote followed by optional spaces, ')' and
//  optional spaces and '>'. Returns the closing quote position or NULL.
static const char *
s_find_close (const char *p, const char *quote, const char **after)
{
    size_t qlen = strlen (quote);
    for (const char *q = strstr (p, quote); q; q = strstr (q + 1, quote)) {
        const char *r = q + qlen;
        while (*r == ' ' || *r == '\t')
            r++;
        if (*r != ')')
            continue;
        r++;
        while (*r == ' ' || *r == '\t')
            r++;
        if (*r == '>') {
            *after = r + 1;
            return q;
        }
    }
    return NULL;
}

static void
s_add_directive (answer_t *self, answer_directive_kind_t kind, const char *name, size_t nlen,
                 const char *text, size_t tlen)
{
    if (self->directive_count == ANSWER_MAX_DIRECTIVES) {
        self->directives_dropped++;
        return;
    }
    char *target = s_dup_trimmed (self, name, nlen, ANSWER_MAX_NAME_BYTES);
    char *body = kind == ANSWER_MESSAGE_TO ? s_dup_trimmed (self, text, tlen, ANSWER_MAX_DIRECTIVE_TEXT) : NULL;
    if (!target || !*target || (kind == ANSWER_MESSAGE_TO && !body)) {
        free (target);
        free (body);
        return;
    }
    answer_directive_t *d = &self->directives [self->directive_count++];
    d->kind = kind;
    d->target = target;
    d->text = body;
}

//  Parses the directive whose '(' ends at `p`; returns the end of the
//  directive (one past '>') or NULL if it is not well formed.
static const char *
s_parse_message_to (answer_t *self, const char *p)
{
    const char *comma = p;
    while (*comma && *comma != ',' && *comma != '\n' && *comma != ')')
        comma++;
    if (*comma != ',')
        return NULL;
    const char *name = p;
    size_t nlen = (size_t) (comma - p);
    //  Names may be quoted: MessageTo('Agent2', ...)
    while (nlen && isspace ((unsigned char) *name)) { name++; nlen--; }
    while (nlen && isspace ((unsigned char) name [nlen - 1])) nlen--;
    if (nlen >= 2 && (*name == '\'' || *name == '"') && name [nlen - 1] == *name) {
        name++;
        nlen -= 2;
    }
    const char *t = comma + 1;
    while (isspace ((unsigned char) *t))
        t++;
    static const char *quotes [] = { "'''", "\"\"\"", "\"", "'" };
    for (size_t i = 0; i < 4; i++) {
        size_t qlen = strlen (quotes [i]);
        if (strncmp (t, quotes [i], qlen) != 0)
            continue;
        const char *after;
        const char *close = s_find_close (t + qlen, quotes [i], &after);
        if (!close)
            continue;           //  "'''" failing may still be a "'"-quoted text
        s_add_directive (self, ANSWER_MESSAGE_TO, name, nlen, t + qlen, (size_t) (close - t - qlen));
        return after;
    }
    //  Unquoted: up to the first ")>".
    const char *end = strstr (t, ")>");
    if (!end)
        return NULL;
    s_add_directive (self, ANSWER_MESSAGE_TO, name, nlen, t, (size_t) (end - t));
    return end + 2;
}

static const char *
s_parse_listen_to (answer_t *self, const char *p)
{
    const char *close = p;
    while (*close && *close != ')' && *close != '\n')
        close++;
    if (*close != ')')
        return NULL;
    const char *end = close + 1;
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end != '>')
        return NULL;
    const char *name = p;
    size_t nlen = (size_t) (close - p);
    while (nlen && isspace ((unsigned char) *name)) { name++; nlen--; }
    while (nlen && isspace ((unsigned char) name [nlen - 1])) nlen--;
    if (nlen >= 2 && (*name == '\'' || *name == '"') && name [nlen - 1] == *name) {
        name++;
        nlen -= 2;
    }
    s_add_directive (self, ANSWER_LISTEN_TO, name, nlen, NULL, 0);
    return end + 1;
}

//  Finds every directive in `text` and blanks it (newlines kept).
static void
s_scan_directives (answer_t *self, char *text)
{
    for (char *p = strchr (text, '<'); p; p = strchr (p + 1, '<')) {
        const char *end = NULL;
        char *q = p + 1;
        while (*q == ' ')
            q++;
        if (strncasecmp (q, "MessageTo", 9) == 0 || strncasecmp (q, "ListenTo", 8) == 0) {
            bool message = strncasecmp (q, "MessageTo", 9) == 0;
            q += message ? 9 : 8;
            while (*q == ' ')
                q++;
            if (*q == '(')
                end = message ? s_parse_message_to (self, q + 1) : s_parse_listen_to (self, q + 1);
        }
        if (!end)
            continue;
        for (char *b = p; b < end; b++)
            if (*b != '\n')
                *b = ' ';
        p = (char *) end - 1;
    }
}

//  --------------------------------------------------------------------
//  The block

static bool
s_has_action_line (const char *start, const char *end)
{
    for (const char *line = start; line < end; ) {
        const char *p = line;
        while (p < end && (*p == ' ' || *p == '\t' || *p == '-' || *p == '*'))
            p++;
        if (end - p >= 7 && strncasecmp (p, "action", 6) == 0) {
            const char *c = p + 6;
            while (c < end && (*c == '*' || *c == ' '))
                c++;
            if (c < end && *c == ':')
                return true;
        }
        const char *nl = memchr (line, '\n', (size_t) (end - line));
        line = nl ? nl + 1 : end;
    }
    return false;
}

//  Narrows [*start, *end) to the body of the first fence holding an
//  action line; leaves it as is when there is none.
static void
s_find_block (char *text, char **start, char **end)
{
    char *p = strstr (text, "```");
    while (p) {
        char *body = strchr (p + 3, '\n');
        if (!body)
            return;
        body++;
        char *close = strstr (body, "```");
        char *stop = close ? close : body + strlen (body);
        if (s_has_action_line (body, stop)) {
            *start = body;
            *end = stop;
            return;
        }
        p = close ? strstr (close + 3, "```") : NULL;
    }
}

//  --------------------------------------------------------------------
//  YAML, then lines

static bool
s_parse_yaml (answer_t *self, const char *block, size_t len)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize (&parser))
        return false;
    yaml_parser_set_input_string (&parser, (const unsigned char *) block, len);
    int depth = 0;              //  collections open; the root mapping is 1
    bool root_is_map = false, expect_key = true;
    int key_field = -1;
    bool ok = false;
    for (int n = 0; n < S_MAX_YAML_EVENTS; n++) {
        yaml_event_t event;
        if (!yaml_parser_parse (&parser, &event))
            break;              //  syntax error: the line parser takes over
        yaml_event_type_t type = event.type;
        if (type == YAML_SCALAR_EVENT && depth == 1 && root_is_map) {
            const char *value = (const char *) event.data.scalar.value;
            size_t vlen = event.data.scalar.length;
            if (expect_key)
                key_field = s_field_of (value, vlen);
            else
                s_set_field (self, key_field, value, vlen);
            expect_key = !expect_key;
        }
        else
        if (type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT) {
            if (depth == 0)
                root_is_map = type == YAML_MAPPING_START_EVENT;
            else
            if (depth == 1 && !expect_key)
                expect_key = true;      //  a nested value is skipped
            depth++;
        }
        else
        if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT)
            depth--;
        yaml_event_delete (&event);
        if (type == YAML_DOCUMENT_END_EVENT || type == YAML_STREAM_END_EVENT) {
            ok = root_is_map;
            break;
        }
    }
    yaml_parser_delete (&parser);
    return ok && self->fields [F_ACTION];
}

static void
s_strip_quotes (const char **value, size_t *len)
{
    if (*len >= 2 && (**value == '"' || **value == '\'') && (*value) [*len - 1] == **value) {
        (*value)++;
        *len -= 2;
    }
    else
    if (*len >= 1 && (**value == '"' || **value == '\'')
    &&  !memchr (*value + 1, **value, *len - 1)) {
        (*value)++;             //  unclosed: the answer was cut off
        (*len)--;
    }
}

//  "key: rest of line"; a value of "|", ">" or nothing takes the following
//  more-indented lines; any line not starting a known key continues the
//  previous value only if it is indented.
static bool
s_parse_lines (answer_t *self, const char *block, size_t len)
{
    const char *end = block + len;
    const char *line = block;
    while (line < end) {
        const char *nl = memchr (line, '\n', (size_t) (end - line));
        const char *eol = nl ? nl : end;
        const char *p = line;
        while (p < eol && (*p == ' ' || *p == '\t' || *p == '-' || *p == '#'))
            p++;
        size_t indent = (size_t) (p - line);
        const char *colon = memchr (p, ':', (size_t) (eol - p));
        int field = colon ? s_field_of (p, (size_t) (colon - p)) : -1;
        line = nl ? nl + 1 : end;
        if (field < 0 || self->fields [field])
            continue;
        const char *value = colon + 1;
        while (value < eol && (*value == ' ' || *value == '\t' || *value == '*'))
            value++;
        size_t vlen = (size_t) (eol - value);
        while (vlen && isspace ((unsigned char) value [vlen - 1]))
            vlen--;
        bool block_scalar = vlen == 0 || ((*value == '|' || *value == '>') && vlen <= 2);
        if (!block_scalar) {
            s_strip_quotes (&value, &vlen);
            s_set_field (self, field, value, vlen);
            continue;
        }
        //  Block: following lines indented deeper than the key.
        const char *body = line, *body_end = line;
        while (line < end) {
            const char *next = memchr (line, '\n', (size_t) (end - line));
            const char *e = next ? next : end;
            size_t ind = 0;
            while (line + ind < e && (line [ind] == ' ' || line [ind] == '\t'))
                ind++;
            if (line + ind < e && ind <= indent)
                break;
            body_end = e;
            line = next ? next + 1 : end;
        }
        s_set_field (self, field, body, (size_t) (body_end - body));
    }
    return self->fields [F_ACTION] != NULL;
}

//  action: lowercase, no quotes, backticks, asterisks or trailing dot.
static void
s_normalise_action (char *action)
{
    size_t len = strlen (action);
    size_t start = 0;
    while (start < len && strchr ("\"'`* ", action [start]))
        start++;
    while (len > start && strchr ("\"'`*. ", action [len - 1]))
        len--;
    memmove (action, action + start, len - start);
    action [len - start] = 0;
    for (char *c = action; *c; c++)
        *c = (char) tolower ((unsigned char) *c);
}

answer_t *
answer_parse (const char *text, size_t len)
{
    answer_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->method = "none";
    if (!text)
        len = 0;
    if (len > ANSWER_MAX_BYTES) {
        len = ANSWER_MAX_BYTES;
        self->input_truncated = true;
    }
    char *copy = malloc (len + 1);
    if (!copy) {
        free (self);
        return NULL;
    }
    for (size_t i = 0; i < len; i++)
        copy [i] = text [i] ? text [i] : ' ';
    copy [len] = 0;
    s_scan_directives (self, copy);
    char *start = copy, *end = copy + len;
    s_find_block (copy, &start, &end);
    if (s_parse_yaml (self, start, (size_t) (end - start)))
        self->method = "yaml";
    else {
        for (int f = 0; f < F_COUNT; f++) {
            free (self->fields [f]);
            self->fields [f] = NULL;
        }
        if (s_parse_lines (self, start, (size_t) (end - start)))
            self->method = "lines";
    }
    free (copy);
    if (self->fields [F_ACTION])
        s_normalise_action (self->fields [F_ACTION]);
    char *message = self->fields [F_MESSAGE];
    if (message && (!*message || !strcasecmp (message, "none") || !strcasecmp (message, "null")
                ||  !strcmp (message, "~") || !strcmp (message, "\"\""))) {
        free (message);
        self->fields [F_MESSAGE] = NULL;
    }
    return self;
}

void
answer_destroy (answer_t **self_p)
{
    assert (self_p);
    answer_t *self = *self_p;
    if (!self)
        return;
    for (int f = 0; f < F_COUNT; f++)
        free (self->fields [f]);
    for (size_t i = 0; i < self->directive_count; i++) {
        free ((char *) self->directives [i].target);
        free ((char *) self->directives [i].text);
    }
    free (self);
    *self_p = NULL;
}

const char *answer_thinking (const answer_t *self) { assert (self); return self->fields [F_THINKING]; }
const char *answer_action (const answer_t *self)   { assert (self); return self->fields [F_ACTION]; }
const char *answer_reason (const answer_t *self)   { assert (self); return self->fields [F_REASON]; }
const char *answer_message (const answer_t *self)  { assert (self); return self->fields [F_MESSAGE]; }
const char *answer_method (const answer_t *self)   { assert (self); return self->method; }
bool answer_input_truncated (const answer_t *self) { assert (self); return self->input_truncated; }
size_t answer_directives_dropped (const answer_t *self) { assert (self); return self->directives_dropped; }
size_t answer_fields_truncated (const answer_t *self) { assert (self); return self->fields_truncated; }
size_t answer_directive_count (const answer_t *self) { assert (self); return self->directive_count; }

const answer_directive_t *
answer_directive (const answer_t *self, size_t index)
{
    assert (self);
    return index < self->directive_count ? &self->directives [index] : NULL;
}

static const char s_reply_again [] =
    " Reply again with one ```yaml block holding thinking, action, reason and optionally "
    "message_to_others.";

bool
answer_validate (const answer_t *self, const char *const *allowed, size_t count,
                 char *err, size_t err_size)
{
    assert (self);
    assert (allowed || count == 0);
    assert (err && err_size);
    err [0] = 0;
    char list [512] = "";
    for (size_t i = 0, used = 0; i < count && used < sizeof list; i++)
        used += (size_t) snprintf (list + used, sizeof list - used, "%s%s", i ? ", " : "", allowed [i]);
    const char *action = self->fields [F_ACTION];
    if (!action || !*action) {
        snprintf (err, err_size, "Your answer has no action; it must be one of: %s.%s", list, s_reply_again);
        return false;
    }
    bool known = false;
    for (size_t i = 0; i < count && !known; i++)
        known = strcasecmp (allowed [i], action) == 0;
    if (!known) {
        snprintf (err, err_size, "Your answer has action \"%.64s\", which is not one of: %s.%s",
                  action, list, s_reply_again);
        return false;
    }
    const char *reason = self->fields [F_REASON];
    if (!reason || !*reason) {
        snprintf (err, err_size, "Your answer has no reason; give one in one sentence.%s", s_reply_again);
        return false;
    }
    return true;
}

//  YAML double-quoted scalar: escapes \, " and control characters.
static void
s_put_quoted (FILE *out, const char *text)
{
    fputc ('"', out);
    for (const unsigned char *c = (const unsigned char *) text; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf (out, "\\%c", *c);
        else
        if (*c == '\n')
            fputs ("\\n", out);
        else
        if (*c == '\t')
            fputs ("\\t", out);
        else
        if (*c < 0x20 || *c == 0x7f)
            fprintf (out, "\\x%02x", *c);
        else
            fputc (*c, out);
    }
    fputc ('"', out);
}

char *
answer_format (const char *thinking, const char *action, const char *reason,
               const char *message, const answer_directive_t *directives, size_t count)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    if (!out)
        return NULL;
    fputs ("```yaml\n", out);
    if (thinking) {
        fputs ("thinking: ", out);
        s_put_quoted (out, thinking);
        fputc ('\n', out);
    }
    fputs ("action: ", out);
    s_put_quoted (out, action ? action : "");
    fputs ("\nreason: ", out);
    s_put_quoted (out, reason ? reason : "");
    fputc ('\n', out);
    if (message && *message) {
        fputs ("message_to_others: ", out);
        s_put_quoted (out, message);
        fputc ('\n', out);
    }
    fputs ("```\n", out);
    for (size_t i = 0; i < count; i++) {
        const answer_directive_t *d = &directives [i];
        if (d->kind == ANSWER_LISTEN_TO) {
            fprintf (out, "<ListenTo(%s)>\n", d->target);
            continue;
        }
        //  ''' cannot appear inside '''...''': it is written as '' '.
        fprintf (out, "<MessageTo(%s, '''", d->target);
        for (const char *c = d->text ? d->text : ""; *c; c++) {
            if (strncmp (c, "'''", 3) == 0) {
                fputs ("'' '", out);
                c += 2;
            }
            else
                fputc (*c, out);
        }
        fputs ("''')>\n", out);
    }
    if (fclose (out) != 0) {
        free (text);
        return NULL;
    }
    return text;
}
