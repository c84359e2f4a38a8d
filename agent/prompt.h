/*  prompt - the text a model sees (the prompt, built from the
    AgentMemory context).

    System message: the role, the goal and the reply format (with an example
    rendered by answer_format, so the example always parses). User message:
    identity and team, the context (history, then the current state of every
    connector: world, mailbox -- i.e. the messages -- and shared state), the
    relevant memories, the goal again, the step budget, the available
    actions and the reply format reminder.

    A retry adds the model's bad answer and prompt_retry()'s correction.
*/
#ifndef PARLEY_PROMPT_H
#define PARLEY_PROMPT_H

#include "policy.h"

//  Each returns a new string (caller frees).
char *prompt_system (void);
char *prompt_user (const policy_input_t *input);
char *prompt_retry (const char *error);

#endif
