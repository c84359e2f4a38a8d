// SPDX-License-Identifier: MIT
/*  role_builtin - what each built-in policy needs of its scenario.

    The built-in policies (agent/policy_scene*.c) are written for one
    scenario: they write its keys and hand the turn to its roles by name.
    Used in another scenario they would be refused by the broker at their
    first hand-over, turn after turn, so scenario.c checks these needs at
    load time instead, and names the role file's `policy:` line.

    Keep the lists in step with agent/policy_scene.c and
    policy_scene_critic.c (tests/check_scene.c runs every one of them).
*/
#include "role.h"

#include <stddef.h>

#define S_END NULL

static const char *const s_orchestrator_writes [] = { "master_plan", "messages", S_END };
static const char *const s_orchestrator_next [] = {
    "librarian", "architect", "material_scientist", "cinematographer", S_END };
static const char *const s_librarian_writes [] = { "scene_objects", "errors", "messages", S_END };
static const char *const s_librarian_next [] = { "architect", S_END };
static const char *const s_architect_writes [] = { "scene_objects", "messages", S_END };
static const char *const s_architect_next [] = { "material_scientist", "critic", S_END };
static const char *const s_materials_next [] = { "cinematographer", "critic", S_END };
static const char *const s_cinematographer_writes [] = {
    "lighting_setup", "camera_setup", "messages", S_END };
static const char *const s_critic_next [] = { "orchestrator", S_END };
static const char *const s_critic_writes [] = {
    "validation_issues", "validation_passed", "final_report", "messages", S_END };
static const char *const s_to_critic [] = { "critic", S_END };

static const role_builtin_t s_builtins [] = {
    { ROLE_POLICY_SCENE_ORCHESTRATOR, "scene", s_orchestrator_writes, s_orchestrator_next },
    { ROLE_POLICY_SCENE_LIBRARIAN, "scene", s_librarian_writes, s_librarian_next },
    { ROLE_POLICY_SCENE_ARCHITECT, "scene", s_architect_writes, s_architect_next },
    { ROLE_POLICY_SCENE_MATERIALS, "scene", s_architect_writes, s_materials_next },
    { ROLE_POLICY_SCENE_CINEMATOGRAPHER, "scene", s_cinematographer_writes, s_to_critic },
    { ROLE_POLICY_SCENE_CRITIC, "scene", s_critic_writes, s_critic_next },
};

const role_builtin_t *
role_builtin (role_policy_t policy)
{
    for (size_t i = 0; i < sizeof s_builtins / sizeof s_builtins [0]; i++)
        if (s_builtins [i].policy == policy)
            return &s_builtins [i];
    return NULL;
}
