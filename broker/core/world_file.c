// SPDX-License-Identifier: MIT
/*  world_file - loading a world from a JSON file, strictly.

        {
          "kind": "line",              "line" or "grid"
          "width": 4,                  1..4096
          "height": 1,                 line: absent or 1; grid: 1..4096
          "objects": [                 exactly width * height arrays,
            ["chair", "lamp"],         row-major: position = y * width + x,
            ["desk"],                  0..16 distinct names each, a name
            [],                        1..64 printable bytes
            ["chair"]
          ],
          "images": [                  optional: width * height entries,
            "images/chair.png",        a PNG or JPEG file (path relative
            null, ...                  to the world file) or null
          ],
          "comment": "optional free text"
        }

    width * height is at most WORLD_MAX_CELLS, the file at most 4 MiB, and
    the world must hold at least one object. Unknown keys, duplicate keys,
    wrong types and trailing garbage are errors; every error names the file
    and the place. jansson checks UTF-8 and rejects NUL in strings.
    An image is at most WORLD_IMAGE_MAX bytes and must start with the PNG
    or JPEG signature; all of them together at most WORLD_IMAGES_MAX. They
    are read once, at load, and sent in OBSERVATION (PROTOCOL.md).
*/
#include "world_int.h"
#include <jansson.h>
#include <sys/stat.h>

#define WORLD_FILE_MAX (4 * 1024 * 1024)

static bool
s_get_side (json_t *root, const char *key, bool required, uint32_t *side,
          char *why, size_t why_size)
{
    json_t *value = json_object_get (root, key);
    if (!value) {
        if (required)
            snprintf (why, why_size, "'%s' is missing", key);
        return !required;
    }
    if (!json_is_integer (value) || json_integer_value (value) < 1
    ||  json_integer_value (value) > WORLD_MAX_SIDE) {
        snprintf (why, why_size, "'%s' must be an integer 1-%d", key, WORLD_MAX_SIDE);
        return false;
    }
    *side = (uint32_t) json_integer_value (value);
    return true;
}

static bool
s_check_keys (json_t *root, char *why, size_t why_size)
{
    const char *key;
    json_t *value;
    json_object_foreach (root, key, value) {
        if (!streq (key, "kind") && !streq (key, "width") && !streq (key, "height")
        &&  !streq (key, "objects") && !streq (key, "comment") && !streq (key, "images")) {
            snprintf (why, why_size, "unknown key '%.64s'", key);
            return false;
        }
    }
    return true;
}

static bool
s_get_shape (json_t *root, world_kind_t *kind, uint32_t *width, uint32_t *height,
           char *why, size_t why_size)
{
    if (!json_is_object (root)) {
        snprintf (why, why_size, "the top level must be an object");
        return false;
    }
    if (!s_check_keys (root, why, why_size))
        return false;
    const char *name = json_string_value (json_object_get (root, "kind"));
    if (!name || (!streq (name, "line") && !streq (name, "grid"))) {
        snprintf (why, why_size, "'kind' must be \"line\" or \"grid\"");
        return false;
    }
    *kind = streq (name, "line")? WORLD_LINE: WORLD_GRID;
    *height = 1;
    if (!s_get_side (root, "width", true, width, why, why_size)
    ||  !s_get_side (root, "height", *kind == WORLD_GRID, height, why, why_size))
        return false;
    if (*kind == WORLD_LINE && *height != 1) {
        snprintf (why, why_size, "a line has height 1");
        return false;
    }
    if ((size_t) *width * *height > WORLD_MAX_CELLS) {
        snprintf (why, why_size, "width * height is %zu, over the limit of %d",
                  (size_t) *width * *height, WORLD_MAX_CELLS);
        return false;
    }
    return true;
}

static wmap_t *
s_get_objects (json_t *root, uint32_t width, uint32_t height, char *why, size_t why_size)
{
    json_t *objects = json_object_get (root, "objects");
    size_t cells = (size_t) width * height;
    if (!json_is_array (objects) || json_array_size (objects) != cells) {
        snprintf (why, why_size, "'objects' must be an array of %zu arrays (one per "
                  "position)", cells);
        return NULL;
    }
    wmap_t *map = wmap_new (width, height);
    char reason [128];
    for (size_t cell = 0; cell < cells; cell++) {
        json_t *list = json_array_get (objects, cell);
        if (!json_is_array (list)) {
            snprintf (why, why_size, "objects[%zu] must be an array of names", cell);
            goto err;
        }
        for (size_t i = 0; i < json_array_size (list); i++) {
            json_t *name = json_array_get (list, i);
            if (!json_is_string (name)) {
                snprintf (why, why_size, "objects[%zu][%zu] must be a string", cell, i);
                goto err;
            }
            if (wmap_add (map, (uint32_t) cell, json_string_value (name),
                          json_string_length (name), reason, sizeof (reason))) {
                snprintf (why, why_size, "objects[%zu][%zu]: %s", cell, i, reason);
                goto err;
            }
        }
    }
    wmap_finish (map);
    if (map->name_count == 0) {
        snprintf (why, why_size, "the world has no objects");
        goto err;
    }
    return map;
err:
    wmap_destroy (&map);
    return NULL;
}

//  Reads one image file (bounded) and checks its signature.
static bool
s_get_image (const char *path, world_image_t *image, size_t *total, char *why, size_t why_size)
{
    struct stat st;
    if (stat (path, &st) != 0 || !S_ISREG (st.st_mode)) {
        snprintf (why, why_size, "image %.200s: cannot read it (missing or not a file)", path);
        return false;
    }
    if (st.st_size < 8 || st.st_size > WORLD_IMAGE_MAX
    ||  *total + (size_t) st.st_size > WORLD_IMAGES_MAX) {
        snprintf (why, why_size, "image %.200s: %lld bytes; an image has 8 to %d bytes and "
                  "all together at most %d", path, (long long) st.st_size, WORLD_IMAGE_MAX,
                  WORLD_IMAGES_MAX);
        return false;
    }
    FILE *file = fopen (path, "rb");
    uint8_t *data = file ? (uint8_t *) malloc ((size_t) st.st_size) : NULL;
    size_t got = data ? fread (data, 1, (size_t) st.st_size, file) : 0;
    if (file)
        fclose (file);
    if (!data || got != (size_t) st.st_size) {
        free (data);
        snprintf (why, why_size, "image %.200s: cannot read it", path);
        return false;
    }
    static const uint8_t png [8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    if (memcmp (data, png, 8) == 0)
        image->type = "png";
    else
    if (data [0] == 0xFF && data [1] == 0xD8 && data [2] == 0xFF)
        image->type = "jpeg";
    else {
        free (data);
        snprintf (why, why_size, "image %.200s is neither PNG nor JPEG", path);
        return false;
    }
    image->data = data;
    image->size = got;
    *total += got;
    return true;
}

//  The optional "images" array, paths relative to the world file's folder.
static bool
s_get_images (json_t *root, const char *path, wmap_t *map, char *why, size_t why_size)
{
    json_t *images = json_object_get (root, "images");
    if (!images)
        return true;
    if (!json_is_array (images) || json_array_size (images) != map->cells) {
        snprintf (why, why_size, "'images' must be an array of %zu paths or nulls (one per "
                  "position)", map->cells);
        return false;
    }
    map->images = (world_image_t *) zmalloc (map->cells * sizeof (world_image_t));
    const char *slash = strrchr (path, '/');
    int dir_len = slash ? (int) (slash - path) : 1;
    const char *dir = slash ? path : ".";
    size_t total = 0;
    for (size_t cell = 0; cell < map->cells; cell++) {
        json_t *entry = json_array_get (images, cell);
        if (json_is_null (entry))
            continue;
        const char *name = json_string_value (entry);
        if (!name || !*name || strlen (name) > 1024) {
            snprintf (why, why_size, "images[%zu] must be a path or null", cell);
            return false;
        }
        char *full = name [0] == '/' ? strdup (name)
                                     : zsys_sprintf ("%.*s/%s", dir_len, dir, name);
        char reason [300];
        bool ok = full && s_get_image (full, &map->images [cell], &total, reason, sizeof (reason));
        free (full);
        if (!ok) {
            snprintf (why, why_size, "images[%zu]: %.200s", cell, reason);
            return false;
        }
    }
    return true;
}

wmap_t *
wmap_load (const char *path, world_kind_t *kind, char *why, size_t why_size)
{
    assert (path && kind);
    char reason [256] = "";
    wmap_t *map = NULL;
    json_t *root = NULL;
    struct stat st;
    if (stat (path, &st) != 0 || !S_ISREG (st.st_mode))
        snprintf (reason, sizeof (reason), "cannot read it (missing or not a file)");
    else
    if (st.st_size > WORLD_FILE_MAX)
        snprintf (reason, sizeof (reason), "%lld bytes, over the limit of %d",
                  (long long) st.st_size, WORLD_FILE_MAX);
    else {
        json_error_t error;
        root = json_load_file (path, JSON_REJECT_DUPLICATES, &error);
        if (!root)
            snprintf (reason, sizeof (reason), "line %d: %s", error.line, error.text);
    }
    uint32_t width = 0, height = 0;
    if (root && s_get_shape (root, kind, &width, &height, reason, sizeof (reason)))
        map = s_get_objects (root, width, height, reason, sizeof (reason));
    if (map && !s_get_images (root, path, map, reason, sizeof (reason)))
        wmap_destroy (&map);
    json_decref (root);
    if (!map)
        snprintf (why, why_size, "world file %s: %s", path, reason);
    return map;
}
