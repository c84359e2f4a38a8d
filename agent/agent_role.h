// SPDX-License-Identifier: MIT
/*  agent_role - parley-agent's --role: a role file instead of the compiled
    in explorer.

    The file's settings apply where no flag (or PARLEY_* variable) set
    them: --policy, --top-k, --memory-index; and always its memory.store (what
    the memory keeps of a step) and channels (joined at start). Then, when the broker runs a workflow
    the agent plays its turns (agent_workflow.h); when it does not, the
    usual step loop runs with those settings.
*/
#ifndef PARLEY_AGENT_ROLE_H
#define PARLEY_AGENT_ROLE_H

#include <signal.h>
#include "agent.h"
#include "pconfig.h"
#include "role.h"

//  What main() should do next.
typedef enum {
    AGENT_ROLE_EXIT = 0,        //  done: exit with *exit_code
    AGENT_ROLE_STEP_LOOP        //  no workflow: run the step loop with `c`
} agent_role_next_t;

//  Loads --role into *role (kept for `c`'s strings; caller destroys) and
//  runs the workflow when the broker has one. A bad file or policy name:
//  AGENT_ROLE_EXIT with PARLEY_EXIT_USAGE, the error on stderr.
agent_role_next_t agent_role_run (pconfig_t *config, agent_config_t *c, role_t **role,
                                  volatile sig_atomic_t *stop, int *exit_code);

#endif
