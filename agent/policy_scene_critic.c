// SPDX-License-Identifier: MIT
/*  policy_scene_critic - validates the scene and either ends the run with
    a final report or sends it back for a revision.

    Checks, each an issue with the category the orchestrator routes by:
      clipping       two objects whose footprints overlap by more than
                     SCENE_TOLERANCE on both axes while their heights meet
      floating       an object above the floor that nothing holds up
      placement      an object with no position
      material       an object with no material
      lighting       no lighting, or daylight for a warm mood
      camera         no camera
      missing_asset  an object the plan asks for that is not in the scene
*/
#include "policy_scene.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double
s_num (const json_t *object, const char *group, const char *field)
{
    return json_number_value (json_object_get (json_object_get (object, group), field));
}

static const char *
s_name (const json_t *object)
{
    const char *name = json_string_value (json_object_get (object, "name"));
    return name ? name : "?";
}

static void
s_issue (json_t *issues, const char *severity, const char *category, const json_t *object,
         const char *fix, const char *format, ...)
    __attribute__ ((format (printf, 6, 7)));

static void
s_issue (json_t *issues, const char *severity, const char *category, const json_t *object,
         const char *fix, const char *format, ...)
{
    char text [256];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    json_t *issue = json_pack ("{s:s, s:s, s:s, s:s}", "severity", severity, "category", category,
                               "description", text, "suggested_fix", fix);
    if (object && json_object_get (object, "id"))
        json_object_set (issue, "affected_object_id", json_object_get (object, "id"));
    json_array_append_new (issues, issue);
}

//  Overlap of [a - wa/2, a + wa/2] and [b - wb/2, b + wb/2].
static double
s_overlap (double a, double wa, double b, double wb)
{
    double low = fmax (a - wa / 2, b - wb / 2);
    double high = fmin (a + wa / 2, b + wb / 2);
    return high - low;
}

static void
s_check_pair (json_t *issues, const json_t *a, const json_t *b)
{
    double az = s_num (a, "position", "z"), bz = s_num (b, "position", "z");
    double ah = s_num (a, "bounding_box", "height"), bh = s_num (b, "bounding_box", "height");
    //  Stacked (one rests on the other's top) is not clipping.
    if (az >= bz + bh - SCENE_TOLERANCE || bz >= az + ah - SCENE_TOLERANCE)
        return;
    double dx = s_overlap (s_num (a, "position", "x"), s_num (a, "bounding_box", "width"),
                           s_num (b, "position", "x"), s_num (b, "bounding_box", "width"));
    double dy = s_overlap (s_num (a, "position", "y"), s_num (a, "bounding_box", "depth"),
                           s_num (b, "position", "y"), s_num (b, "bounding_box", "depth"));
    //  Inclusive, with room for the rounding of positions in binary.
    if (dx > SCENE_TOLERANCE + 1e-9 && dy > SCENE_TOLERANCE + 1e-9)
        s_issue (issues, "error", "clipping", b, "move it clear of the other by its bounding box",
                 "'%s' intersects with '%s' by %.2f m", s_name (b), s_name (a), dx);
}

static bool
s_supported (const json_t *objects, const json_t *object)
{
    double z = s_num (object, "position", "z");
    if (z <= SCENE_TOLERANCE)
        return true;
    size_t i;
    json_t *under;
    json_array_foreach (objects, i, under) {
        if (under == object)
            continue;
        double top = s_num (under, "position", "z") + s_num (under, "bounding_box", "height");
        double dx = fabs (s_num (object, "position", "x") - s_num (under, "position", "x"));
        double dy = fabs (s_num (object, "position", "y") - s_num (under, "position", "y"));
        if (fabs (top - z) <= SCENE_TOLERANCE && dx <= s_num (under, "bounding_box", "width") / 2
        &&  dy <= s_num (under, "bounding_box", "depth") / 2)
            return true;
    }
    return false;
}

static void
s_check_objects (json_t *issues, const json_t *objects)
{
    size_t i, j;
    json_t *a, *b;
    json_array_foreach (objects, i, a) {
        if (!json_object_get (a, "position")) {
            s_issue (issues, "error", "placement", a, "place it", "'%s' has no position", s_name (a));
            continue;
        }
        if (!json_object_get (a, "material"))
            s_issue (issues, "warning", "material", a, "give it a material",
                     "'%s' has no material", s_name (a));
        if (!s_supported (objects, a))
            s_issue (issues, "error", "floating", a, "put it on the floor or on a surface",
                     "'%s' floats %.2f m above the floor", s_name (a), s_num (a, "position", "z"));
        json_array_foreach (objects, j, b)
            if (j > i && json_object_get (b, "position"))
                s_check_pair (issues, a, b);
    }
}

static void
s_check_scene (const scene_input_t *input, json_t *issues, const json_t *objects)
{
    json_t *plan = json_object_get (input->state, "master_plan");
    json_t *lighting = json_object_get (input->state, "lighting_setup");
    const char *mood = json_string_value (json_object_get (json_object_get (plan,
                                                           "lighting_requirements"), "mood"));
    if (!json_is_object (lighting))
        s_issue (issues, "error", "lighting", NULL, "light the scene", "the scene has no lighting");
    else
    if (mood && strcmp (mood, "warm") == 0
    &&  s_num (lighting, "key_light", "color_temperature") > 4000)
        s_issue (issues, "warning", "lighting", NULL, "use a key light below 4000 K",
                 "daylight key light (%.0f K) for a warm mood",
                 s_num (lighting, "key_light", "color_temperature"));
    if (!json_is_object (json_object_get (input->state, "camera_setup")))
        s_issue (issues, "error", "camera", NULL, "frame the scene", "the scene has no camera");
    size_t i, j;
    json_t *wanted, *object;
    json_array_foreach (json_object_get (plan, "required_objects"), i, wanted) {
        bool present = false;
        json_array_foreach (objects, j, object)
            present |= strcmp (s_name (object), json_string_value (wanted) ?: "") == 0;
        if (!present)
            s_issue (issues, "error", "missing_asset", NULL, "fetch an asset for it",
                     "the prompt asks for '%s' and the scene has none",
                     json_string_value (wanted) ?: "?");
    }
}

static char *
s_report (const json_t *objects, const scene_input_t *input)
{
    char text [4096];
    size_t used = (size_t) snprintf (text, sizeof text, "Scene for \"%s\": %zu objects.\n",
        json_string_value (json_object_get (input->state, "user_prompt")) ?: "",
        json_array_size (objects));
    size_t i;
    json_t *object;
    json_array_foreach (objects, i, object) {
        if (used >= sizeof text)
            break;
        used += (size_t) snprintf (text + used, sizeof text - used,
            "  %-10s at (%.2f, %.2f, %.2f), %s %s, %s\n", s_name (object),
            s_num (object, "position", "x"), s_num (object, "position", "y"),
            s_num (object, "position", "z"),
            json_string_value (json_object_get (json_object_get (object, "material"), "color")) ?: "",
            json_string_value (json_object_get (json_object_get (object, "material"), "style")) ?: "",
            json_string_value (json_object_get (object, "asset_path")) ?: "");
    }
    json_t *lighting = json_object_get (input->state, "lighting_setup");
    if (used < sizeof text)
        snprintf (text + used, sizeof text - used, "  lighting: key %.0f K, %s; camera focal %.0f mm",
                  s_num (lighting, "key_light", "color_temperature"),
                  json_string_value (json_object_get (lighting, "time_of_day")) ?: "day",
                  json_number_value (json_object_get (json_object_get (input->state, "camera_setup"),
                                                      "focal_length")));
    return strdup (text);
}

int
scene_critic (const scene_input_t *input, scene_turn_t *turn, char *err, size_t err_size)
{
    json_t *objects = scene_objects_latest (json_object_get (input->state, "scene_objects"));
    json_t *issues = json_array ();
    s_check_objects (issues, objects);
    s_check_scene (input, issues, objects);
    size_t count = json_array_size (issues);
    if (count == 0) {
        char *report = s_report (objects, input);
        scene_op_update (turn, "validation_passed", json_true ());
        scene_op_update (turn, "final_report", json_string (report));
        snprintf (turn->status, sizeof turn->status, "done");
        snprintf (turn->summary, sizeof turn->summary, "passed: %zu objects, no issue",
                  json_array_size (objects));
        free (report);
        json_decref (issues);
    }
    else {
        const char *first = json_string_value (json_object_get (json_array_get (issues, 0),
                                                                "description"));
        snprintf (turn->summary, sizeof turn->summary, "%zu issue%s, first: %s", count,
                  count > 1 ? "s" : "", first ? first : "?");
        scene_op_update (turn, "validation_issues", issues);
        scene_op_update (turn, "validation_passed", json_false ());
        snprintf (turn->status, sizeof turn->status, "revision");
        snprintf (turn->next, sizeof turn->next, "orchestrator");
    }
    scene_op_message (turn, "critic", turn->summary);
    json_decref (objects);
    (void) err;
    (void) err_size;
    return 0;
}
