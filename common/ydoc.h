// SPDX-License-Identifier: MIT
/*  ydoc - a YAML file loaded whole (libyaml's document API), read through
    small typed checks that name the file, the line and the key on error.

    Scenario and role files are configuration a person writes by hand, so
    every mistake must say where it is:

        scenarios/scene/roles/critic.yaml:12: memory.top_k: expected an integer
        scenarios/scene/scenario.yaml:4: unknown key "wrokflow"

    Usage: describe a mapping's keys in a table, let ydoc_map() check the
    node against it (unknown keys, missing required keys, wrong kinds),
    then read each present value with the typed getters.

    Limits: a file of at most YDOC_MAX_FILE bytes; values converted to
    msgpack (ydoc_pack) at most YDOC_MAX_DEPTH deep and YDOC_MAX_NODES
    nodes in all, so an alias-heavy document cannot blow up in memory.
*/
#ifndef PARLEY_YDOC_H
#define PARLEY_YDOC_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#define YDOC_MAX_FILE   (1024 * 1024)
#define YDOC_MAX_DEPTH  32
#define YDOC_MAX_NODES  100000

typedef struct _ydoc_t ydoc_t;

typedef enum {
    YDOC_STR,           //  a scalar (any scalar reads as text)
    YDOC_INT,           //  a plain scalar that is a decimal integer
    YDOC_BOOL,          //  true/false/yes/no/on/off
    YDOC_STR_LIST,      //  a sequence of scalars
    YDOC_MAP,           //  a mapping
    YDOC_LIST,          //  a sequence of anything
    YDOC_ANY            //  anything (a state value)
} ydoc_kind_t;

typedef struct {
    const char *key;
    ydoc_kind_t kind;
    bool required;
} ydoc_field_t;

//  Loads and parses `path`. NULL with "path:line: sentence" in why.
ydoc_t *ydoc_load (const char *path, char *why, size_t why_size);
void ydoc_destroy (ydoc_t **self_p);

const char *ydoc_path (ydoc_t *self);
//  The root node (NULL for an empty file).
yaml_node_t *ydoc_root (ydoc_t *self);
//  1-based line of a node (1 for NULL: the file as a whole).
size_t ydoc_line (const yaml_node_t *node);

//  Checks that `node` is a mapping whose keys are all in `fields`, that the
//  required ones are there and each value has its kind. out[i] gets the
//  value node of fields[i], or NULL when absent. `where` names the mapping
//  in errors ("" for the root, "workflow" for a nested one). 0 or -1 with
//  the sentence in why.
int ydoc_map (ydoc_t *self, yaml_node_t *node, const char *where,
              const ydoc_field_t *fields, size_t count, yaml_node_t **out,
              char *why, size_t why_size);

//  Scalar text (NUL-terminated, owned by the document), NULL for a
//  non-scalar.
const char *ydoc_text (const yaml_node_t *node);
//  An integer in [min, max]; -1 with "file:line: key: ..." otherwise.
int ydoc_int (ydoc_t *self, const yaml_node_t *node, const char *key,
              int64_t min, int64_t max, int64_t *value, char *why, size_t why_size);
//  true/false/yes/no/on/off (a YDOC_BOOL-checked node never fails).
bool ydoc_bool (const yaml_node_t *node);
//  Sequence items and mapping pairs.
size_t ydoc_items (const yaml_node_t *node);
yaml_node_t *ydoc_item (ydoc_t *self, const yaml_node_t *node, size_t index);
yaml_node_t *ydoc_pair_key (ydoc_t *self, const yaml_node_t *node, size_t index);
yaml_node_t *ydoc_pair_value (ydoc_t *self, const yaml_node_t *node, size_t index);

//  Writes "file:line: key: sentence" into why; returns -1.
int ydoc_fail (ydoc_t *self, const yaml_node_t *node, const char *key,
               char *why, size_t why_size, const char *format, ...)
    __attribute__ ((format (printf, 6, 7)));

//  Packs a node as one msgpack value. Plain scalars follow YAML's core
//  schema (null, true/false, integers, floats, else str); quoted scalars
//  are str; mappings need scalar keys. -1 with why on depth/node limits.
int ydoc_pack (ydoc_t *self, const yaml_node_t *node, msgpack_packer *packer,
               char *why, size_t why_size);

#endif
