// SPDX-License-Identifier: MIT
/*  policy_workflow_llm - a workflow turn from a chat model. See
    policy_workflow_llm.h. */
#include "policy_workflow_llm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textbuf.h"

static char *
s_prompt (const role_t *role, const json_t *state)
{
    textbuf_t *buf = textbuf_new ();
    char *json = json_dumps (state, JSON_INDENT (1) | JSON_SORT_KEYS);
    textbuf_addf (buf, "Your role: %s. Goal: %s\n\n", role->name, role->goal);
    if (role->instructions)
        textbuf_addf (buf, "Instructions:\n%s\n", role->instructions);
    textbuf_addf (buf, "The shared state you read:\n%s\n\nYou may write:", json ? json : "{}");
    for (size_t i = 0; i < role->write_count; i++)
        textbuf_addf (buf, " %s (%s)", role->writes [i].key, role->writes [i].reducer);
    textbuf_addf (buf, "\nYou may hand the turn to:");
    for (size_t i = 0; i < role->handover_count; i++)
        textbuf_addf (buf, " %s", role->handover [i]);
    textbuf_addf (buf, "\n\nAnswer with ONE JSON object and nothing else: {\"ops\": [{\"op\": "
                  "\"update\", \"key\": KEY, \"value\": VALUE}], \"next\": ROLE, \"status\": "
                  "\"in_progress\" | \"revision\" | \"done\" | \"failed\", \"summary\": TEXT}. "
                  "Leave \"next\" out only with status done or failed.\n");
    free (json);
    return textbuf_detach (&buf);
}

int
wfllm_parse (const role_t *role, const char *answer, scene_turn_t *turn, char *err, size_t err_size)
{
    memset (turn, 0, sizeof *turn);
    const char *open = answer ? strchr (answer, '{') : NULL;
    const char *close = answer ? strrchr (answer, '}') : NULL;
    json_error_t error;
    json_t *root = open && close > open ? json_loadb (open, (size_t) (close - open + 1), 0, &error)
                                        : NULL;
    if (!json_is_object (root)) {
        snprintf (err, err_size, "the answer is not one JSON object");
        json_decref (root);
        return -1;
    }
    json_t *ops = json_object_get (root, "ops");
    const char *next = json_string_value (json_object_get (root, "next"));
    const char *status = json_string_value (json_object_get (root, "status"));
    const char *summary = json_string_value (json_object_get (root, "summary"));
    if (ops && !json_is_array (ops))
        snprintf (err, err_size, "\"ops\" must be an array");
    else
    if (!next && !(status && (strcmp (status, "done") == 0 || strcmp (status, "failed") == 0)))
        snprintf (err, err_size, "\"next\" (a role) is missing");
    else
        err [0] = 0;
    size_t i;
    json_t *op;
    json_array_foreach (ops, i, op) {
        const char *key = json_string_value (json_object_get (op, "key"));
        if (!err [0] && (!json_string_value (json_object_get (op, "op")) || !key))
            snprintf (err, err_size, "ops[%zu] needs \"op\" and \"key\"", i);
        else
        if (!err [0] && role->write_count && !role_write_of (role, key))
            snprintf (err, err_size, "ops[%zu]: you may not write \"%s\"", i, key);
    }
    if (err [0]) {
        json_decref (root);
        return -1;
    }
    turn->ops = ops ? json_incref (ops) : json_array ();
    snprintf (turn->next, sizeof turn->next, "%s", next ? next : "");
    snprintf (turn->status, sizeof turn->status, "%s", status && strcmp (status, "in_progress")
              ? status : "");
    snprintf (turn->summary, sizeof turn->summary, "%s", summary ? summary : "(model)");
    json_decref (root);
    return 0;
}

int
wfllm_decide (llm_t *llm, const role_t *role, const json_t *state, scene_turn_t *turn,
              char *err, size_t err_size)
{
    char *prompt = s_prompt (role, state);
    const char *system = "You are one member of a team that takes turns on a shared "
                         "blackboard. Answer only with the JSON object asked for.";
    char *answer = llm_complete (llm, system, prompt, err, err_size);
    int rc = -1;
    if (answer && (rc = wfllm_parse (role, answer, turn, err, err_size))) {
        char told [600];
        snprintf (told, sizeof told, "That answer was not usable: %s. Answer again with the "
                  "JSON object only.", err);
        llm_message_t messages [] = {
            { "system", system }, { "user", prompt }, { "assistant", answer }, { "user", told },
        };
        char *again = llm_chat (llm, messages, 4, err, err_size);
        rc = again ? wfllm_parse (role, again, turn, err, err_size) : -1;
        free (again);
    }
    free (answer);
    free (prompt);
    return rc;
}
