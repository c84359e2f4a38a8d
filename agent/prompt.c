/*  prompt - the model's prompt. See prompt.h. */
#include <assert.h>
#include <czmq.h>
#include "answer.h"
#include "prompt.h"

#define GOAL "Explore the world together with your team until every object has been " \
             "seen. Prefer places nobody has explored yet, avoid where teammates say " \
             "they have been, and tell the team what you find."

char *
prompt_system (void)
{
    char *example = answer_format ("I saw new objects and should tell the others.", "forward",
                                   "Continue exploring new areas.",
                                   "I found chair and table at position 3.", NULL, 0);
    char *text = zsys_sprintf (
        "You are an exploration agent in a multi-agent team. %s\n\n"
        "Reply with exactly one fenced yaml block with the keys thinking, action, reason "
        "and (optionally) message_to_others, which goes to every other agent. Example:\n%s\n"
        "You may add directives after the block:\n"
        "<MessageTo(Name, '''text''')> sends text to one agent or to a channel.\n"
        "<ListenTo(Channel)> subscribes you to a channel.",
        GOAL, example? example: "");
    free (example);
    return text;
}

static void
s_cat (char **text, char *more)
{
    char *both = zsys_sprintf ("%s%s", *text, more);
    free (*text);
    free (more);
    *text = both;
}

static char *
s_join (const char *const *items, size_t count, const char *empty)
{
    if (count == 0)
        return strdup (empty);
    char *text = strdup ("");
    for (size_t i = 0; i < count; i++)
        s_cat (&text, zsys_sprintf ("%s%s", i? ", ": "", items[i]));
    return text;
}

char *
prompt_user (const policy_input_t *in)
{
    assert (in);
    char *team = s_join (in->teammates, in->teammate_count, "nobody else yet");
    char *actions = s_join (in->actions, in->action_count, "(none)");
    char *text = zsys_sprintf ("You are %s. Your teammates: %s.\n\n%s\n\nRelevant memories:",
                               in->agent_id, team, in->context? in->context: "");
    if (in->facts)      //  the team's map and claims (team_facts.h)
        s_cat (&text, team_facts_prompt (in->facts, in->world));
    if (in->memory_count == 0)
        s_cat (&text, strdup ("\nNo relevant memories yet."));
    for (size_t i = 0; i < in->memory_count; i++)
        s_cat (&text, zsys_sprintf ("\n- %s", in->memories[i]));
    s_cat (&text, zsys_sprintf (
        "\n\nGoal: %s\n\nThis is step %" PRIu64 " of at most %" PRIu64 ".\n"
        "Available actions: %s\n\n"
        "Reply with one fenced yaml block (thinking, action, reason, optional "
        "message_to_others), then any MessageTo / ListenTo directives.",
        GOAL, in->step, in->max_steps, actions));
    free (team);
    free (actions);
    return text;
}

char *
prompt_retry (const char *error)
{
    return zsys_sprintf ("Your previous answer could not be used: %s\n"
                         "Reply again with one fenced yaml block with thinking, action "
                         "(one of the available actions) and a non-empty reason.",
                         error? error: "it was not in the required format.");
}
