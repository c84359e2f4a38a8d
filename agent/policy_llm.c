/*  policy_llm - decisions by an OpenAI-compatible chat model.

    One call per decision: system + user (prompt.c). On a retry the
    conversation also carries the model's previous answer and a user
    message saying what was wrong with it, so the model can correct itself.
    Validation and the fallback to the heuristic happen in the Decision
    node (through the flow engine's retry and fallback), so this file only
    talks to the model.
*/
#include <assert.h>
#include <czmq.h>
#include "plog.h"
#include "policy.h"
#include "prompt.h"

typedef struct {
    llm_t *llm;
    uint64_t calls, failures;
} llm_policy_t;

static char *
s_decide (void *impl, const policy_input_t *in, char *err, size_t err_size)
{
    llm_policy_t *self = (llm_policy_t *) impl;
    char *system = prompt_system ();
    char *user = prompt_user (in);
    char *retry = in->previous_error? prompt_retry (in->previous_error): NULL;
    llm_message_t messages[4] = {
        { "system", system },
        { "user", user },
        { "assistant", in->previous_answer? in->previous_answer: "" },
        { "user", retry }
    };
    size_t count = retry? 4: 2;
    self->calls++;
    char *answer = llm_chat (self->llm, messages, count, err, err_size);
    if (!answer) {
        self->failures++;
        plog_warn ("model call failed: %s", err);
    }
    free (system);
    free (user);
    free (retry);
    return answer;
}

static void
s_destroy (void *impl)
{
    llm_policy_t *self = (llm_policy_t *) impl;
    llm_destroy (&self->llm);
    free (self);
}

static const policy_ops_t s_ops = { .decide = s_decide, .destroy = s_destroy };

policy_t *
policy_llm_new (llm_t *llm)
{
    assert (llm);
    llm_policy_t *self = (llm_policy_t *) zmalloc (sizeof (llm_policy_t));
    self->llm = llm;
    return policy_new ("llm", &s_ops, self);
}

void
policy_llm_counts (policy_t *self, uint64_t *calls, uint64_t *failures)
{
    llm_policy_t *impl = (llm_policy_t *) policy_impl (self);
    *calls = impl->calls;
    *failures = impl->failures;
}
