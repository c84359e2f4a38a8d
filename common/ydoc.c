// SPDX-License-Identifier: MIT
/*  ydoc - a YAML file read through typed checks. See ydoc.h.

    The whole file is read first (bounded by YDOC_MAX_FILE) and handed to
    yaml_parser_load, so a parse error and a schema error both come back as
    "file:line: sentence". libyaml's loader shares aliased nodes instead of
    copying them; ydoc_pack counts every node it visits, so a document
    built from aliases of aliases stops at YDOC_MAX_NODES instead of
    packing an exponential value.
*/
#include "ydoc.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _ydoc_t {
    char *path;
    yaml_document_t doc;
    bool loaded;
};

static char *
s_read_file (const char *path, size_t *size, char *why, size_t why_size)
{
    FILE *file = fopen (path, "rb");
    if (!file) {
        snprintf (why, why_size, "%s: cannot open: %s", path, strerror (errno));
        return NULL;
    }
    char *data = malloc (YDOC_MAX_FILE + 1);
    size_t got = data ? fread (data, 1, YDOC_MAX_FILE + 1, file) : 0;
    bool failed = data && ferror (file);
    fclose (file);
    if (!data) {
        snprintf (why, why_size, "%s: out of memory", path);
        return NULL;
    }
    if (failed || got > YDOC_MAX_FILE) {
        snprintf (why, why_size, failed ? "%s: read error" : "%s: larger than %d bytes",
                  path, YDOC_MAX_FILE);
        free (data);
        return NULL;
    }
    *size = got;
    return data;
}

ydoc_t *
ydoc_load (const char *path, char *why, size_t why_size)
{
    assert (path);
    size_t size = 0;
    char *data = s_read_file (path, &size, why, why_size);
    if (!data)
        return NULL;
    ydoc_t *self = calloc (1, sizeof (ydoc_t));
    yaml_parser_t parser;
    if (!self || !yaml_parser_initialize (&parser)) {
        snprintf (why, why_size, "%s: out of memory", path);
        free (self);
        free (data);
        return NULL;
    }
    self->path = strdup (path);
    yaml_parser_set_input_string (&parser, (const unsigned char *) data, size);
    if (!yaml_parser_load (&parser, &self->doc)) {
        snprintf (why, why_size, "%s:%zu: %s%s%s", path, parser.problem_mark.line + 1,
                  parser.problem ? parser.problem : "not valid YAML",
                  parser.context ? " " : "", parser.context ? parser.context : "");
        yaml_parser_delete (&parser);
        free (data);
        free (self->path);
        free (self);
        return NULL;
    }
    self->loaded = true;
    yaml_parser_delete (&parser);
    free (data);
    if (!self->path) {
        snprintf (why, why_size, "%s: out of memory", path);
        ydoc_destroy (&self);
    }
    return self;
}

void
ydoc_destroy (ydoc_t **self_p)
{
    assert (self_p);
    ydoc_t *self = *self_p;
    if (self) {
        if (self->loaded)
            yaml_document_delete (&self->doc);
        free (self->path);
        free (self);
        *self_p = NULL;
    }
}

const char *
ydoc_path (ydoc_t *self)
{
    assert (self);
    return self->path;
}

yaml_node_t *
ydoc_root (ydoc_t *self)
{
    assert (self);
    return yaml_document_get_root_node (&self->doc);
}

size_t
ydoc_line (const yaml_node_t *node)
{
    return node ? node->start_mark.line + 1 : 1;
}

int
ydoc_fail (ydoc_t *self, const yaml_node_t *node, const char *key,
           char *why, size_t why_size, const char *format, ...)
{
    char text [512];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    if (key && *key)
        snprintf (why, why_size, "%s:%zu: %s: %s", self->path, ydoc_line (node), key, text);
    else
        snprintf (why, why_size, "%s:%zu: %s", self->path, ydoc_line (node), text);
    return -1;
}

const char *
ydoc_text (const yaml_node_t *node)
{
    if (!node || node->type != YAML_SCALAR_NODE)
        return NULL;
    return (const char *) node->data.scalar.value;
}

static bool
s_plain (const yaml_node_t *node)
{
    return node->type == YAML_SCALAR_NODE
        && (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
        ||  node->data.scalar.style == YAML_ANY_SCALAR_STYLE);
}

static bool
s_parse_int (const char *text, int64_t *value)
{
    if (!text || !*text)
        return false;
    errno = 0;
    char *end = NULL;
    long long parsed = strtoll (text, &end, 10);
    if (errno || *end)
        return false;
    *value = parsed;
    return true;
}

static const char *s_true_words [] = { "true", "True", "TRUE", "yes", "Yes", "on", "On" };
static const char *s_false_words [] = { "false", "False", "FALSE", "no", "No", "off", "Off" };

static bool
s_is_word (const char *text, const char **words, size_t count)
{
    for (size_t i = 0; text && i < count; i++)
        if (strcmp (text, words [i]) == 0)
            return true;
    return false;
}

static bool
s_is_bool (const yaml_node_t *node, bool *value)
{
    if (!s_plain (node))
        return false;
    const char *text = ydoc_text (node);
    if (s_is_word (text, s_true_words, sizeof s_true_words / sizeof *s_true_words)) {
        *value = true;
        return true;
    }
    if (s_is_word (text, s_false_words, sizeof s_false_words / sizeof *s_false_words)) {
        *value = false;
        return true;
    }
    return false;
}

bool
ydoc_bool (const yaml_node_t *node)
{
    bool value = false;
    return node && s_is_bool (node, &value) && value;
}

size_t
ydoc_items (const yaml_node_t *node)
{
    if (node && node->type == YAML_SEQUENCE_NODE)
        return (size_t) (node->data.sequence.items.top - node->data.sequence.items.start);
    if (node && node->type == YAML_MAPPING_NODE)
        return (size_t) (node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    return 0;
}

yaml_node_t *
ydoc_item (ydoc_t *self, const yaml_node_t *node, size_t index)
{
    if (!node || node->type != YAML_SEQUENCE_NODE || index >= ydoc_items (node))
        return NULL;
    return yaml_document_get_node (&self->doc, node->data.sequence.items.start [index]);
}

yaml_node_t *
ydoc_pair_key (ydoc_t *self, const yaml_node_t *node, size_t index)
{
    if (!node || node->type != YAML_MAPPING_NODE || index >= ydoc_items (node))
        return NULL;
    return yaml_document_get_node (&self->doc, node->data.mapping.pairs.start [index].key);
}

yaml_node_t *
ydoc_pair_value (ydoc_t *self, const yaml_node_t *node, size_t index)
{
    if (!node || node->type != YAML_MAPPING_NODE || index >= ydoc_items (node))
        return NULL;
    return yaml_document_get_node (&self->doc, node->data.mapping.pairs.start [index].value);
}

static const char *
s_kind_name (ydoc_kind_t kind)
{
    switch (kind) {
        case YDOC_STR:      return "a string";
        case YDOC_INT:      return "an integer";
        case YDOC_BOOL:     return "true or false";
        case YDOC_STR_LIST: return "a list of strings";
        case YDOC_MAP:      return "a mapping";
        case YDOC_LIST:     return "a list";
        case YDOC_ANY:      return "a value";
    }
    return "a value";
}

static bool
s_has_kind (ydoc_t *self, const yaml_node_t *node, ydoc_kind_t kind)
{
    int64_t number;
    bool flag;
    switch (kind) {
        case YDOC_STR:
            return node->type == YAML_SCALAR_NODE;
        case YDOC_INT:
            return s_plain (node) && s_parse_int (ydoc_text (node), &number);
        case YDOC_BOOL:
            return s_is_bool (node, &flag);
        case YDOC_MAP:
            return node->type == YAML_MAPPING_NODE;
        case YDOC_LIST:
            return node->type == YAML_SEQUENCE_NODE;
        case YDOC_STR_LIST:
            if (node->type != YAML_SEQUENCE_NODE)
                return false;
            for (size_t i = 0; i < ydoc_items (node); i++)
                if (ydoc_item (self, node, i)->type != YAML_SCALAR_NODE)
                    return false;
            return true;
        case YDOC_ANY:
            return true;
    }
    return false;
}

static void
s_key_path (char *buf, size_t size, const char *where, const char *key)
{
    if (where && *where)
        snprintf (buf, size, "%s.%s", where, key);
    else
        snprintf (buf, size, "%s", key);
}

int
ydoc_map (ydoc_t *self, yaml_node_t *node, const char *where,
          const ydoc_field_t *fields, size_t count, yaml_node_t **out,
          char *why, size_t why_size)
{
    assert (self);
    assert (fields || count == 0);
    for (size_t i = 0; i < count; i++)
        out [i] = NULL;
    if (!node)
        return ydoc_fail (self, NULL, where, why, why_size, "the file is empty");
    if (node->type != YAML_MAPPING_NODE)
        return ydoc_fail (self, node, where, why, why_size, "expected a mapping of keys");
    char path [300];
    for (size_t p = 0; p < ydoc_items (node); p++) {
        yaml_node_t *key = ydoc_pair_key (self, node, p);
        yaml_node_t *value = ydoc_pair_value (self, node, p);
        const char *name = ydoc_text (key);
        if (!name)
            return ydoc_fail (self, key, where, why, why_size, "a key must be a plain word");
        size_t f = 0;
        while (f < count && strcmp (fields [f].key, name) != 0)
            f++;
        s_key_path (path, sizeof path, where, name);
        if (f == count)
            return ydoc_fail (self, key, NULL, why, why_size, "unknown key \"%s\"", path);
        if (out [f])
            return ydoc_fail (self, key, NULL, why, why_size, "key \"%s\" given twice", path);
        if (!s_has_kind (self, value, fields [f].kind))
            return ydoc_fail (self, value, path, why, why_size, "expected %s",
                              s_kind_name (fields [f].kind));
        out [f] = value;
    }
    for (size_t f = 0; f < count; f++)
        if (fields [f].required && !out [f]) {
            s_key_path (path, sizeof path, where, fields [f].key);
            return ydoc_fail (self, node, NULL, why, why_size,
                              "missing required key \"%s\"", path);
        }
    return 0;
}

int
ydoc_int (ydoc_t *self, const yaml_node_t *node, const char *key,
          int64_t min, int64_t max, int64_t *value, char *why, size_t why_size)
{
    int64_t parsed = 0;
    if (!node || !s_plain (node) || !s_parse_int (ydoc_text (node), &parsed))
        return ydoc_fail (self, node, key, why, why_size, "expected an integer");
    if (parsed < min || parsed > max)
        return ydoc_fail (self, node, key, why, why_size,
                          "%lld is out of range %lld..%lld", (long long) parsed,
                          (long long) min, (long long) max);
    *value = parsed;
    return 0;
}

// ---------------------------------------------------------------------------
//  YAML -> msgpack

typedef struct {
    ydoc_t *doc;
    msgpack_packer *packer;
    size_t nodes;
    char *why;
    size_t why_size;
} s_pack_t;

static bool
s_is_null (const char *text)
{
    return !*text || strcmp (text, "~") == 0 || strcmp (text, "null") == 0
        || strcmp (text, "Null") == 0 || strcmp (text, "NULL") == 0;
}

static void
s_pack_scalar (s_pack_t *pack, const yaml_node_t *node)
{
    const char *text = ydoc_text (node);
    size_t len = node->data.scalar.length;
    if (s_plain (node)) {
        int64_t number;
        bool flag;
        char *end = NULL;
        if (s_is_null (text)) {
            msgpack_pack_nil (pack->packer);
            return;
        }
        if (s_is_bool (node, &flag)) {
            if (flag)
                msgpack_pack_true (pack->packer);
            else
                msgpack_pack_false (pack->packer);
            return;
        }
        if (s_parse_int (text, &number)) {
            msgpack_pack_int64 (pack->packer, number);
            return;
        }
        errno = 0;
        double real = strtod (text, &end);
        if (!errno && end && !*end && isfinite (real) && strpbrk (text, "0123456789")) {
            msgpack_pack_double (pack->packer, real);
            return;
        }
    }
    msgpack_pack_str (pack->packer, len);
    msgpack_pack_str_body (pack->packer, text, len);
}

static int
s_pack_node (s_pack_t *pack, const yaml_node_t *node, int depth)
{
    if (++pack->nodes > YDOC_MAX_NODES)
        return ydoc_fail (pack->doc, node, NULL, pack->why, pack->why_size,
                          "value has more than %d nodes", YDOC_MAX_NODES);
    if (depth > YDOC_MAX_DEPTH)
        return ydoc_fail (pack->doc, node, NULL, pack->why, pack->why_size,
                          "value nested deeper than %d", YDOC_MAX_DEPTH);
    size_t items = ydoc_items (node);
    switch (node->type) {
        case YAML_SCALAR_NODE:
            s_pack_scalar (pack, node);
            return 0;
        case YAML_SEQUENCE_NODE:
            msgpack_pack_array (pack->packer, items);
            for (size_t i = 0; i < items; i++)
                if (s_pack_node (pack, ydoc_item (pack->doc, node, i), depth + 1))
                    return -1;
            return 0;
        case YAML_MAPPING_NODE:
            msgpack_pack_map (pack->packer, items);
            for (size_t i = 0; i < items; i++) {
                yaml_node_t *key = ydoc_pair_key (pack->doc, node, i);
                if (key->type != YAML_SCALAR_NODE)
                    return ydoc_fail (pack->doc, key, NULL, pack->why, pack->why_size,
                                      "a mapping key inside a value must be a scalar");
                msgpack_pack_str (pack->packer, key->data.scalar.length);
                msgpack_pack_str_body (pack->packer, key->data.scalar.value,
                                       key->data.scalar.length);
                if (s_pack_node (pack, ydoc_pair_value (pack->doc, node, i), depth + 1))
                    return -1;
            }
            return 0;
        default:
            return ydoc_fail (pack->doc, node, NULL, pack->why, pack->why_size, "empty node");
    }
}

int
ydoc_pack (ydoc_t *self, const yaml_node_t *node, msgpack_packer *packer,
           char *why, size_t why_size)
{
    assert (self);
    assert (node);
    assert (packer);
    s_pack_t pack = { self, packer, 0, why, why_size };
    return s_pack_node (&pack, node, 1);
}
