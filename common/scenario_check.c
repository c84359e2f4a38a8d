// SPDX-License-Identifier: MIT
/*  scenario_check - the scenario and its role files, checked against each
    other once all are loaded (scenario.h).

    Every error names the file and the line of the mistake itself, not of
    the file that happened to notice it: a hand-over to "editor" that
    fails because roles/editor.yaml says `role: editr` is reported at that
    `role:` line. The rules:

      - workflow.entry and every actions.handover target is a role;
      - every key a role reads (connectors.state) or writes
        (actions.writes) is declared in state, is one of the workflow's
        keys (reads only), or is the broker's world.* / the agents'
        team.* (reads only);
      - writes use the reducer the scenario declares;
      - a built-in policy (role_builtin.c) finds the roles it hands the
        turn to and the keys it writes, and its role file allows them;
      - the fallback's role is a human role, and every model-driven role
        (policy llm) may hand the turn to the fallback's role and write
        its note, so the fallback hand-over itself is never refused.
*/
#include "scenario.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

//  The role file that claims to be `name` by its file name, when its
//  `role:` says something else (the usual cause of a missing role).
static const role_t *
s_misnamed (const scenario_t *self, const char *name)
{
    char path [4096];
    snprintf (path, sizeof path, "%s/roles/%s.yaml", self->dir, name);
    for (size_t i = 0; i < self->role_count; i++)
        if (strcmp (self->roles [i]->path, path) == 0)
            return self->roles [i];
    return NULL;
}

//  A reference `where` (file:line: key) to `name`, which is not a role.
static int
s_no_role (const scenario_t *self, const char *where, const char *name, char *why,
           size_t why_size)
{
    const role_t *file = s_misnamed (self, name);
    if (file)
        snprintf (why, why_size, "%s:%zu: role: \"%s\" is not \"%s\", the name of its file, "
                  "which %s names", file->path, file->line, file->name, name, where);
    else
        snprintf (why, why_size, "%s: \"%s\" is not a role of this scenario", where, name);
    return -1;
}

bool
scenario_knows_key (const scenario_t *self, const char *key)
{
    if (!key)
        return false;
    if (scenario_key (self, key) || strncmp (key, "world.", 6) == 0
    ||  strncmp (key, "team.", 5) == 0)
        return true;
    const scenario_workflow_t *flow = &self->workflow;
    return flow->enabled && (strcmp (key, flow->holder_key) == 0
                         ||  strcmp (key, flow->status_key) == 0
                         ||  strcmp (key, flow->revisions_key) == 0
                         ||  strcmp (key, flow->turn_key) == 0);
}

static bool
s_listed (char *const *list, size_t count, const char *name)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp (list [i], name) == 0)
            return true;
    return false;
}

static int
s_keys (const scenario_t *self, const role_t *role, char *why, size_t why_size)
{
    for (size_t i = 0; i < role->read_count; i++)
        if (!scenario_knows_key (self, role->reads [i])) {
            snprintf (why, why_size, "%s:%zu: connectors.state: \"%s\" is not a key of %s "
                      "(its state, the workflow's keys, world.* or team.*)", role->path,
                      role->read_lines [i], role->reads [i], self->path);
            return -1;
        }
    for (size_t w = 0; w < role->write_count; w++) {
        const role_write_t *write = &role->writes [w];
        const scenario_key_t *key = scenario_key (self, write->key);
        if (!key) {
            snprintf (why, why_size, "%s:%zu: actions.writes: \"%s\" is not a key of the state "
                      "in %s", role->path, write->line, write->key, self->path);
            return -1;
        }
        if (strcmp (key->reducer, write->reducer) != 0) {
            snprintf (why, why_size, "%s:%zu: actions.writes: \"%s\" is declared %s in %s:%zu, "
                      "not %s", role->path, write->line, write->key, key->reducer,
                      self->path, key->line, write->reducer);
            return -1;
        }
    }
    return 0;
}

//  A built-in policy in a scenario it was not written for.
static int
s_builtin (const scenario_t *self, const role_t *role, char *why, size_t why_size)
{
    const role_builtin_t *needs = role_builtin (role->policy);
    if (!needs)
        return 0;
    const char *policy = role_policy_name (role->policy);
    for (size_t i = 0; needs->hands_to [i]; i++)
        if (!scenario_role (self, needs->hands_to [i])) {
            snprintf (why, why_size, "%s:%zu: policy: %s is written for the %s scenario and "
                      "hands the turn to \"%s\", which is not a role here", role->path,
                      role->policy_line, policy, needs->scenario, needs->hands_to [i]);
            return -1;
        }
    for (size_t i = 0; needs->writes [i]; i++)
        if (!scenario_key (self, needs->writes [i])
        ||  (role->write_count && !role_write_of (role, needs->writes [i]))) {
            snprintf (why, why_size, "%s:%zu: policy: %s is written for the %s scenario and "
                      "writes \"%s\", which %s", role->path, role->policy_line, policy,
                      needs->scenario, needs->writes [i], scenario_key (self, needs->writes [i])
                      ? "this role file's actions.writes does not allow"
                      : "is not a key of the state here");
            return -1;
        }
    return 0;
}

static int
s_handovers (const scenario_t *self, const role_t *role, char *why, size_t why_size)
{
    for (size_t h = 0; h < role->handover_count; h++)
        if (!scenario_role (self, role->handover [h])) {
            char where [4200];
            snprintf (where, sizeof where, "%s:%zu: actions.handover", role->path,
                      role->handover_lines [h]);
            return s_no_role (self, where, role->handover [h], why, why_size);
        }
    return 0;
}

//  The fallback hand-over must pass the broker's own checks for every
//  role whose model may need it.
static int
s_fallback (const scenario_t *self, char *why, size_t why_size)
{
    const scenario_workflow_t *flow = &self->workflow;
    const char *target = flow->fallback == SCENARIO_FALLBACK_ENTRY ? flow->entry
                       : flow->fallback == SCENARIO_FALLBACK_HUMAN ? flow->fallback_role : NULL;
    if (!target)
        return 0;
    const role_t *to = scenario_role (self, target);
    if (!to) {
        char where [4200];
        snprintf (where, sizeof where, "%s:%zu: workflow.fallback", self->path,
                  flow->fallback_line);
        return s_no_role (self, where, target, why, why_size);
    }
    if (flow->fallback == SCENARIO_FALLBACK_HUMAN && !to->human) {
        snprintf (why, why_size, "%s:%zu: workflow.fallback: \"%s\" is not a human role "
                  "(human: true in %s); use entry for the entry role", self->path,
                  flow->fallback_line, target, to->path);
        return -1;
    }
    const char *note = flow->fallback_note;
    if (flow->fallback == SCENARIO_FALLBACK_ENTRY && to->read_count
    &&  !s_listed (to->reads, to->read_count, note)) {
        snprintf (why, why_size, "%s:%zu: workflow.fallback_note: \"%s\" is not read by the "
                  "entry role %s (connectors.state in %s), which gets the turn back",
                  self->path, flow->note_line, note, to->name, to->path);
        return -1;
    }
    for (size_t r = 0; r < self->role_count; r++) {
        const role_t *role = self->roles [r];
        if (role->policy != ROLE_POLICY_LLM || role->human || role == to)
            continue;
        if (role->handover_count && !s_listed (role->handover, role->handover_count, target)) {
            snprintf (why, why_size, "%s:%zu: actions.handover: leaves out %s, the workflow's "
                      "fallback (%s:%zu), so the fallback hand-over would be refused",
                      role->path, role->handover_line, target, self->path, flow->fallback_line);
            return -1;
        }
        if (note && role->write_count && !role_write_of (role, note)) {
            snprintf (why, why_size, "%s:%zu: actions.writes: leaves out %s, the workflow's "
                      "fallback_note (%s:%zu), so the fallback hand-over would be refused",
                      role->path, role->writes_line, note, self->path, flow->note_line);
            return -1;
        }
    }
    return 0;
}

int
scenario_check (const scenario_t *self, char *why, size_t why_size)
{
    const scenario_workflow_t *flow = &self->workflow;
    if (flow->enabled && !scenario_role (self, flow->entry)) {
        char where [4200];
        snprintf (where, sizeof where, "%s:%zu: workflow.entry", self->path, flow->entry_line);
        return s_no_role (self, where, flow->entry, why, why_size);
    }
    for (size_t r = 0; r < self->role_count; r++) {
        const role_t *role = self->roles [r];
        if (s_handovers (self, role, why, why_size) || s_keys (self, role, why, why_size)
        ||  s_builtin (self, role, why, why_size))
            return -1;
    }
    return flow->enabled ? s_fallback (self, why, why_size) : 0;
}
