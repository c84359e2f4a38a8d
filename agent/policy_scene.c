// SPDX-License-Identifier: MIT
/*  policy_scene - the scene director's roles but the critic. See
    policy_scene.h; every table below is the whole of a role's knowledge.
*/
#include "policy_scene.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define N(array) (sizeof (array) / sizeof ((array) [0]))

// ---------------------------------------------------------------------------
//  Tables

//  Issue category -> the role that fixes it (the source document's table).
static const struct { const char *category; const char *role; } s_routes [] = {
    { "clipping", "architect" }, { "floating", "architect" }, { "placement", "architect" },
    { "material", "material_scientist" }, { "texture", "material_scientist" },
    { "color", "material_scientist" },
    { "lighting", "cinematographer" }, { "exposure", "cinematographer" },
    { "camera", "cinematographer" },
    { "missing_asset", "librarian" },
};

//  Prompt words -> objects (singular and plural).
static const struct { const char *word; const char *object; } s_object_words [] = {
    { "bed", "bed" }, { "beds", "bed" }, { "desk", "desk" }, { "desks", "desk" },
    { "lamp", "lamp" }, { "lamps", "lamp" }, { "chair", "chair" }, { "chairs", "chair" },
    { "sofa", "sofa" }, { "couch", "sofa" }, { "table", "table" }, { "rug", "rug" },
    { "carpet", "rug" }, { "bookshelf", "bookshelf" }, { "shelf", "bookshelf" },
    { "plant", "plant" }, { "plants", "plant" }, { "wardrobe", "wardrobe" },
    { "nightstand", "nightstand" }, { "throne", "throne" },
};

//  Prompt words -> mood, and the light it wants.
static const struct { const char *word; const char *mood; bool warm; } s_moods [] = {
    { "cozy", "cozy, warm, intimate", true }, { "warm", "warm, inviting", true },
    { "romantic", "romantic, soft", true }, { "modern", "clean, modern", false },
    { "minimal", "minimal, airy", false }, { "bright", "bright, fresh", false },
    { "office", "focused, neutral", false },
};

//  Colour and finish words the prompt may put before an object.
static const char *s_colors [] = { "white", "black", "oak", "walnut", "grey", "gray", "red",
                                   "blue", "green", "brass", "warm" };

//  Object -> the material it is made of (style, finish).
static const struct { const char *object; const char *style; const char *finish; } s_materials [] = {
    { "bed", "fabric", "soft" }, { "desk", "wood", "satin" }, { "lamp", "brushed metal", "matte" },
    { "chair", "wood", "satin" }, { "sofa", "fabric", "soft" }, { "table", "wood", "satin" },
    { "rug", "wool", "soft" }, { "bookshelf", "wood", "matte" }, { "plant", "organic", "natural" },
    { "wardrobe", "wood", "satin" }, { "nightstand", "wood", "satin" },
};

const char *
scene_route (const char *category)
{
    for (size_t i = 0; category && i < N (s_routes); i++)
        if (strcmp (s_routes [i].category, category) == 0)
            return s_routes [i].role;
    return NULL;
}

// ---------------------------------------------------------------------------
//  Helpers

void
scene_op_update (scene_turn_t *turn, const char *key, json_t *value)
{
    json_array_append_new (turn->ops, json_pack ("{s:s, s:s, s:o}", "op", "update", "key", key,
                                                 "value", value ? value : json_null ()));
}

void
scene_op_message (scene_turn_t *turn, const char *role, const char *text)
{
    scene_op_update (turn, "messages", json_pack ("[{s:s, s:s}]", "from", role, "text", text));
}

json_t *
scene_objects_latest (const json_t *objects)
{
    json_t *merged = json_array ();
    json_t *by_id = json_object ();
    size_t i;
    json_t *object;
    json_array_foreach (objects, i, object) {
        const char *id = json_string_value (json_object_get (object, "id"));
        if (!id || !json_is_object (object))
            continue;
        json_t *seen = json_object_get (by_id, id);
        if (seen)
            json_object_update (seen, object);
        else {
            json_t *copy = json_deep_copy (object);
            json_object_set (by_id, id, copy);
            json_array_append_new (merged, copy);
        }
    }
    json_decref (by_id);
    return merged;
}

static const char *
s_state_str (const scene_input_t *input, const char *key)
{
    return json_string_value (json_object_get (input->state, key));
}

static bool
s_revision (const scene_input_t *input)
{
    const char *status = s_state_str (input, "workflow_status");
    return status && strcmp (status, "revision") == 0;
}

//  Lower-case words of the prompt, in order.
static size_t
s_words (const char *text, char words [][32], size_t room)
{
    size_t count = 0, len = 0;
    for (const char *p = text; p && count < room; p++) {
        char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            if (len < 31)
                words [count][len++] = (char) (c | 0x20);
        }
        else
        if (len) {
            words [count++][len] = 0;
            len = 0;
        }
        if (!c)
            break;
    }
    return count;
}

// ---------------------------------------------------------------------------
//  Orchestrator

static void
s_plan (const scene_input_t *input, scene_turn_t *turn)
{
    const char *prompt = s_state_str (input, "user_prompt");
    char words [128][32];
    size_t count = s_words (prompt ? prompt : "", words, N (words));
    json_t *objects = json_array ();
    json_t *materials = json_object ();
    const char *mood = "neutral, balanced";
    bool warm = false, mood_set = false;
    const char *time = "day";
    for (size_t w = 0; w < count; w++) {
        for (size_t m = 0; m < N (s_moods) && !mood_set; m++)
            if (strcmp (words [w], s_moods [m].word) == 0) {
                mood = s_moods [m].mood;
                warm = s_moods [m].warm;
                mood_set = true;
            }
        if (strcmp (words [w], "morning") == 0 || strcmp (words [w], "sunny") == 0)
            time = "morning";
        if (strcmp (words [w], "evening") == 0 || strcmp (words [w], "night") == 0)
            time = "evening";
        for (size_t o = 0; o < N (s_object_words); o++) {
            if (strcmp (words [w], s_object_words [o].word) != 0)
                continue;
            const char *object = s_object_words [o].object;
            bool listed = false;
            size_t i;
            json_t *item;
            json_array_foreach (objects, i, item)
                listed |= strcmp (json_string_value (item), object) == 0;
            if (!listed)
                json_array_append_new (objects, json_string (object));
            for (size_t c = 0; w > 0 && c < N (s_colors); c++)
                if (strcmp (words [w - 1], s_colors [c]) == 0)
                    json_object_set_new (materials, object, json_pack ("{s:s}", "color",
                                                                       s_colors [c]));
        }
    }
    json_t *plan = json_pack ("{s:s, s:s, s:o, s:o, s:{s:s, s:s}, s:{s:{s:f, s:f}},"
                              " s:[s, s, s, s]}",
                              "original_prompt", prompt ? prompt : "",
                              "interpreted_mood", mood,
                              "required_objects", objects,
                              "material_requirements", materials,
                              "lighting_requirements", "time_of_day", time,
                              "mood", warm ? "warm" : "neutral",
                              "spatial_requirements", "room", "width", 6.0, "depth", 5.0,
                              "execution_order", "librarian", "architect", "material_scientist",
                              "cinematographer");
    snprintf (turn->summary, sizeof turn->summary, "plan: %zu objects, mood \"%s\", %s light",
              json_array_size (objects), mood, warm ? "warm" : "neutral");
    scene_op_update (turn, "master_plan", json_pack ("o", plan));
    scene_op_message (turn, "orchestrator", turn->summary);
    snprintf (turn->next, sizeof turn->next, "librarian");
}

static int
s_orchestrator (const scene_input_t *input, scene_turn_t *turn, char *err, size_t err_size)
{
    if (!s_revision (input)) {
        s_plan (input, turn);
        return 0;
    }
    //  A revision: the first issue whose category someone fixes decides.
    json_t *issues = json_object_get (input->state, "validation_issues");
    size_t i;
    json_t *issue;
    json_array_foreach (issues, i, issue) {
        const char *category = json_string_value (json_object_get (issue, "category"));
        const char *role = scene_route (category);
        if (!role)
            continue;
        snprintf (turn->next, sizeof turn->next, "%s", role);
        snprintf (turn->summary, sizeof turn->summary, "revision: %zu issues, the first is %s",
                  json_array_size (issues), category);
        scene_op_message (turn, "orchestrator", turn->summary);
        return 0;
    }
    snprintf (err, err_size, "a revision with no issue any role can fix (%zu issues)",
              json_array_size (issues));
    return -1;
}

// ---------------------------------------------------------------------------
//  Librarian

static int
s_librarian (const scene_input_t *input, scene_turn_t *turn, char *err, size_t err_size)
{
    json_error_t error;
    json_t *catalogue = json_load_file (input->catalogue, 0, &error);
    if (!catalogue) {
        snprintf (err, err_size, "catalogue %s: %s (line %d)", input->catalogue, error.text,
                  error.line);
        return -1;
    }
    json_t *plan = json_object_get (input->state, "master_plan");
    json_t *have = scene_objects_latest (json_object_get (input->state, "scene_objects"));
    json_t *fetched = json_array ();
    json_t *missing = json_array ();
    size_t i, j;
    json_t *wanted, *asset, *object;
    json_array_foreach (json_object_get (plan, "required_objects"), i, wanted) {
        const char *name = json_string_value (wanted);
        bool present = false;
        json_array_foreach (have, j, object)
            present |= name && strcmp (json_string_value (json_object_get (object, "name")) ?: "",
                                       name) == 0;
        json_t *found = NULL;
        json_array_foreach (json_object_get (catalogue, "assets"), j, asset)
            if (name && strcmp (json_string_value (json_object_get (asset, "name")) ?: "", name) == 0)
                found = asset;
        if (present)
            continue;
        if (!found) {
            json_array_append_new (missing, json_sprintf ("no asset for \"%s\" in the catalogue",
                                                          name ? name : "?"));
            continue;
        }
        json_t *copy = json_deep_copy (found);
        json_object_set_new (copy, "id", json_sprintf ("obj-%s", name));
        json_object_set_new (copy, "status", json_string ("fetched"));
        json_array_append_new (fetched, copy);
    }
    snprintf (turn->summary, sizeof turn->summary, "fetched %zu assets, %zu not in the catalogue",
              json_array_size (fetched), json_array_size (missing));
    if (json_array_size (fetched))
        scene_op_update (turn, "scene_objects", fetched);
    else
        json_decref (fetched);
    if (json_array_size (missing))
        scene_op_update (turn, "errors", missing);
    else
        json_decref (missing);
    scene_op_message (turn, "librarian", turn->summary);
    snprintf (turn->next, sizeof turn->next, "architect");
    json_decref (have);
    json_decref (catalogue);
    return 0;
}

// ---------------------------------------------------------------------------
//  Architect

static double
s_box (const json_t *object, const char *side)
{
    return json_number_value (json_object_get (json_object_get (object, "bounding_box"), side));
}

//  First pass: along the back wall at a fixed 1 m pitch, things that rest
//  on something on top of it. On a revision: the same order, spaced by the
//  real widths plus a 0.3 m gap, which is what the critic's overlaps ask.
static int
s_architect (const scene_input_t *input, scene_turn_t *turn, char *err, size_t err_size)
{
    json_t *objects = scene_objects_latest (json_object_get (input->state, "scene_objects"));
    bool careful = s_revision (input);
    json_t *placed = json_array ();
    double cursor = 0;
    size_t i, j;
    json_t *object, *other;
    json_array_foreach (objects, i, object) {
        const char *rests_on = json_string_value (json_object_get (object, "rests_on"));
        double x = 0, y = 0, z = 0;
        json_t *support = NULL;
        json_array_foreach (objects, j, other)
            if (rests_on && strcmp (json_string_value (json_object_get (other, "name")) ?: "",
                                    rests_on) == 0)
                support = other;
        json_t *support_placed = NULL;
        json_array_foreach (placed, j, other)
            if (support && strcmp (json_string_value (json_object_get (other, "id")),
                                   json_string_value (json_object_get (support, "id"))) == 0)
                support_placed = other;
        if (support_placed) {
            json_t *at = json_object_get (support_placed, "position");
            x = json_number_value (json_object_get (at, "x"));
            y = json_number_value (json_object_get (at, "y"));
            z = s_box (support, "height");
        }
        else {
            double width = s_box (object, "width");
            x = careful ? cursor + width / 2 : cursor;
            y = s_box (object, "depth") / 2;
            cursor += careful ? width + 0.3 : 1.0;
        }
        json_array_append_new (placed, json_pack ("{s:O, s:O, s:O, s:{s:f, s:f, s:f},"
                                                  " s:{s:f, s:f, s:f}, s:s}",
                                                  "id", json_object_get (object, "id"),
                                                  "name", json_object_get (object, "name"),
                                                  "bounding_box", json_object_get (object, "bounding_box"),
                                                  "position", "x", x, "y", y, "z", z,
                                                  "rotation", "x", 0.0, "y", 0.0, "z", 0.0,
                                                  "status", "placed"));
    }
    json_decref (objects);
    if (!json_array_size (placed)) {
        json_decref (placed);
        snprintf (err, err_size, "no scene objects to place");
        return -1;
    }
    snprintf (turn->summary, sizeof turn->summary, "placed %zu objects (%s)",
              json_array_size (placed), careful ? "spaced by their bounding boxes"
                                                : "first layout, 1 m pitch");
    scene_op_update (turn, "scene_objects", placed);
    scene_op_message (turn, "architect", turn->summary);
    snprintf (turn->next, sizeof turn->next, "%s", careful ? "critic" : "material_scientist");
    return 0;
}

// ---------------------------------------------------------------------------
//  Material scientist

static int
s_material_scientist (const scene_input_t *input, scene_turn_t *turn, char *err, size_t err_size)
{
    json_t *objects = scene_objects_latest (json_object_get (input->state, "scene_objects"));
    json_t *plan = json_object_get (input->state, "master_plan");
    json_t *wanted = json_object_get (plan, "material_requirements");
    const char *mood = json_string_value (json_object_get (plan, "interpreted_mood"));
    json_t *textured = json_array ();
    size_t i;
    json_t *object;
    json_array_foreach (objects, i, object) {
        const char *name = json_string_value (json_object_get (object, "name"));
        for (size_t m = 0; name && m < N (s_materials); m++) {
            if (strcmp (s_materials [m].object, name) != 0)
                continue;
            const char *color = json_string_value (json_object_get (json_object_get (wanted, name),
                                                                    "color"));
            bool warm = mood && strstr (mood, "warm");
            json_array_append_new (textured, json_pack (
                "{s:O, s:{s:s, s:s, s:s}, s:s}", "id", json_object_get (object, "id"),
                "material", "style", s_materials [m].style, "finish", s_materials [m].finish,
                "color", color ? color : warm ? "warm natural" : "neutral",
                "status", "textured"));
        }
    }
    json_decref (objects);
    snprintf (turn->summary, sizeof turn->summary, "materials for %zu objects",
              json_array_size (textured));
    scene_op_update (turn, "scene_objects", textured);
    scene_op_message (turn, "material_scientist", turn->summary);
    snprintf (turn->next, sizeof turn->next, "%s", s_revision (input) ? "critic" : "cinematographer");
    (void) err;
    (void) err_size;
    return 0;
}

// ---------------------------------------------------------------------------
//  Cinematographer

static int
s_cinematographer (const scene_input_t *input, scene_turn_t *turn, char *err, size_t err_size)
{
    json_t *objects = scene_objects_latest (json_object_get (input->state, "scene_objects"));
    json_t *wants = json_object_get (json_object_get (input->state, "master_plan"),
                                     "lighting_requirements");
    const char *mood = json_string_value (json_object_get (wants, "mood"));
    const char *time = json_string_value (json_object_get (wants, "time_of_day"));
    bool warm = mood && strcmp (mood, "warm") == 0;
    double min_x = 0, max_x = 0, max_y = 0;
    size_t i;
    json_t *object;
    json_array_foreach (objects, i, object) {
        json_t *at = json_object_get (object, "position");
        double x = json_number_value (json_object_get (at, "x"));
        double half = s_box (object, "width") / 2;
        min_x = i == 0 || x - half < min_x ? x - half : min_x;
        max_x = i == 0 || x + half > max_x ? x + half : max_x;
        double y = json_number_value (json_object_get (at, "y")) + s_box (object, "depth") / 2;
        max_y = y > max_y ? y : max_y;
    }
    json_decref (objects);
    double center = (min_x + max_x) / 2, span = max_x - min_x;
    json_t *lighting = json_pack ("{s:s, s:{s:s, s:i, s:f}, s:{s:s, s:i, s:f}, s:f}",
                                  "time_of_day", time ? time : "day",
                                  "key_light", "type", "area", "color_temperature", warm ? 2700 : 5500,
                                  "intensity", warm ? 600.0 : 900.0,
                                  "fill_light", "type", "point", "color_temperature", warm ? 3000 : 6000,
                                  "intensity", 200.0, "ambient", 0.15);
    json_t *camera = json_pack ("{s:{s:f, s:f, s:f}, s:{s:f, s:f, s:f}, s:i}",
                                "position", "x", center, "y", max_y + span + 1.0, "z", 1.6,
                                "look_at", "x", center, "y", 0.5, "z", 0.6, "focal_length", 35);
    snprintf (turn->summary, sizeof turn->summary, "%s lighting (%d K), camera at %.1f m",
              warm ? "warm" : "daylight", warm ? 2700 : 5500, max_y + span + 1.0);
    scene_op_update (turn, "lighting_setup", lighting);
    scene_op_update (turn, "camera_setup", camera);
    scene_op_message (turn, "cinematographer", turn->summary);
    snprintf (turn->next, sizeof turn->next, "critic");
    (void) err;
    (void) err_size;
    return 0;
}

int
scene_decide (role_policy_t policy, const scene_input_t *input, scene_turn_t *turn,
              char *err, size_t err_size)
{
    memset (turn, 0, sizeof *turn);
    turn->ops = json_array ();
    if (!turn->ops) {
        snprintf (err, err_size, "out of memory");
        return -1;
    }
    switch (policy) {
        case ROLE_POLICY_SCENE_ORCHESTRATOR:    return s_orchestrator (input, turn, err, err_size);
        case ROLE_POLICY_SCENE_LIBRARIAN:       return s_librarian (input, turn, err, err_size);
        case ROLE_POLICY_SCENE_ARCHITECT:       return s_architect (input, turn, err, err_size);
        case ROLE_POLICY_SCENE_MATERIALS:       return s_material_scientist (input, turn, err, err_size);
        case ROLE_POLICY_SCENE_CINEMATOGRAPHER: return s_cinematographer (input, turn, err, err_size);
        case ROLE_POLICY_SCENE_CRITIC:          return scene_critic (input, turn, err, err_size);
        default:
            snprintf (err, err_size, "policy %s is not a scene policy", role_policy_name (policy));
            return -1;
    }
}
