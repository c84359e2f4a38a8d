// SPDX-License-Identifier: MIT
/*  fuzz_answer - libFuzzer target for the LLM answer parser (agent/answer.c).

    Model answers are untrusted input: whatever bytes arrive, parsing,
    validation and formatting must not crash, hang, leak or read out of
    bounds. Built by scripts/fuzz.sh with clang -fsanitize=fuzzer,address,
    undefined and linked with agent/answer.c and libyaml. A seed corpus is
    in tests/answers/.  */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/answer.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static const char *actions [] = { "forward", "backward", "left", "right", "end" };
    answer_t *answer = answer_parse ((const char *) data, size);
    if (!answer)
        return 0;
    char err [512];
    answer_validate (answer, actions, 5, err, sizeof err);
    //  Whatever was parsed must format and parse back without trouble.
    answer_directive_t directives [ANSWER_MAX_DIRECTIVES];
    size_t count = answer_directive_count (answer);
    for (size_t i = 0; i < count; i++)
        directives [i] = *answer_directive (answer, i);
    char *text = answer_format (answer_thinking (answer), answer_action (answer),
                                answer_reason (answer), answer_message (answer),
                                directives, count);
    if (text) {
        answer_t *again = answer_parse (text, strlen (text));
        answer_destroy (&again);
        free (text);
    }
    answer_destroy (&answer);
    return 0;
}
