// SPDX-License-Identifier: MIT
/*  prompt - the model's prompt. See prompt.h.

    The user message is built in parts: the parts that are never cut
    (header, map, targets, actions, reminder) first, then the parts that
    may be cut are taken in priority order while they fit the budget, and
    everything is joined in reading order at the end.
*/
#include <assert.h>
#include <czmq.h>
#include "answer.h"
#include "conn_mailbox.h"
#include "conn_state.h"
#include "conn_world.h"
#include "prompt.h"
#include "textbuf.h"

#define S_MAX_RANGES 12         //  visited / not visited ranges on the map line
#define S_MAX_MAIL 64           //  messages considered (conn_mailbox's batch cap)

size_t
prompt_budget_chars (size_t context_tokens)
{
    if (context_tokens == 0)
        return 0;
    size_t tokens = context_tokens > PROMPT_ANSWER_TOKENS? context_tokens - PROMPT_ANSWER_TOKENS
                                                         : context_tokens / 2;
    return tokens * PROMPT_CHARS_PER_TOKEN;
}

size_t
prompt_user_budget (size_t context_tokens, size_t system_chars)
{
    size_t budget = prompt_budget_chars (context_tokens);
    if (budget == 0)
        return 0;
    return budget > system_chars? budget - system_chars: 1;
}

//  The sections of a mode: format, reminder, retry.
static prompt_section_t
s_section (llm_mode_t mode, prompt_section_t text_section)
{
    bool tools = mode == LLM_MODE_TOOLS, json = mode == LLM_MODE_JSON_SCHEMA;
    switch (text_section) {
        case PROMPT_FORMAT:   return tools ? PROMPT_FORMAT_TOOLS : json ? PROMPT_FORMAT_JSON : PROMPT_FORMAT;
        case PROMPT_REMINDER: return tools ? PROMPT_REMINDER_TOOLS : json ? PROMPT_REMINDER_JSON : PROMPT_REMINDER;
        case PROMPT_RETRY:    return tools ? PROMPT_RETRY_TOOLS : json ? PROMPT_RETRY_JSON : PROMPT_RETRY;
        default:              return text_section;
    }
}

char *
prompt_system_for (const prompt_template_t *tpl, llm_mode_t mode)
{
    if (mode != LLM_MODE_TOOLS && mode != LLM_MODE_JSON_SCHEMA)
        return prompt_system (tpl);
    //  The schema carries the format: no yaml example, no directives.
    return zsys_sprintf ("%s\n%s\n\n%s\n\n%s", prompt_template_text (tpl, PROMPT_ROLE),
                         prompt_template_text (tpl, PROMPT_GOAL),
                         prompt_template_text (tpl, s_section (mode, PROMPT_FORMAT)),
                         prompt_template_text (tpl, PROMPT_END));
}

char *
prompt_system (const prompt_template_t *tpl)
{
    answer_directive_t directive = { ANSWER_MESSAGE_TO, "Agent2",
                                     "I take the positions after 5; you take the ones before." };
    char *example = answer_format ("Nobody has been past position 5 yet, so I go there.",
                                   "forward", "Position 6 is not visited yet.",
                                   "I found chair and table at position 3.", &directive, 1);
    char *text = zsys_sprintf ("%s\n%s\n\n%s\n%s\nExample answer:\n%s\n%s",
                               prompt_template_text (tpl, PROMPT_ROLE),
                               prompt_template_text (tpl, PROMPT_GOAL),
                               prompt_template_text (tpl, PROMPT_FORMAT),
                               prompt_template_text (tpl, PROMPT_DIRECTIVES),
                               example? example: "",
                               prompt_template_text (tpl, PROMPT_END));
    free (example);
    return text;
}

char *
prompt_retry (const prompt_template_t *tpl, const char *error)
{
    return prompt_retry_for (tpl, error, LLM_MODE_TEXT);
}

char *
prompt_retry_for (const prompt_template_t *tpl, const char *error, llm_mode_t mode)
{
    const char *text = prompt_template_text (tpl, s_section (mode, PROMPT_RETRY));
    const char *mark = strstr (text, "{error}");
    if (!error)
        error = "it was not in the required format.";
    //  The validation's own "reply again with a yaml block" is the text
    //  mode's; the structured modes say how to answer in their section.
    const char *yaml = mode == LLM_MODE_TOOLS || mode == LLM_MODE_JSON_SCHEMA
                     ? strstr (error, " Reply again with one ```yaml") : NULL;
    int error_len = yaml ? (int) (yaml - error) : (int) strlen (error);
    if (!mark)
        return zsys_sprintf ("%s\n%.*s", text, error_len, error);
    return zsys_sprintf ("%.*s%.*s%s", (int) (mark - text), text, error_len, error,
                         mark + strlen ("{error}"));
}

// ---------------------------------------------------------------------------
//  The parts of the user message

static void
s_join (textbuf_t *buf, const char *const *items, size_t count)
{
    for (size_t i = 0; i < count; i++)
        textbuf_addf (buf, "%s%s", i? ", ": "", items[i]);
}

static void
s_header (textbuf_t *buf, const policy_input_t *in)
{
    textbuf_addf (buf, "You are %s. This is step %" PRIu64 " of at most %" PRIu64 ".\n",
                  in->agent_id, in->step, in->max_steps);
}

//  Map: size, which way each action goes, where we are, visited or not.
static void
s_map (textbuf_t *buf, const policy_input_t *in)
{
    if (!in->world)
        return;
    uint64_t width = conn_world_width (in->world), height = conn_world_height (in->world);
    if (height == 0)
        height = 1;
    if (streq (conn_world_kind (in->world), "grid"))
        textbuf_addf (buf, "Map: a grid of %" PRIu64 " x %" PRIu64 " cells, position = y * %"
                      PRIu64 " + x (0 to %" PRIu64 "). forward: x+1, backward: x-1, "
                      "right: y+1, left: y-1, stay: no move.\n",
                      width, height, width, width * height - 1);
    else
    if (width > 0)
        textbuf_addf (buf, "Map: a line of %" PRIu64 " positions (0 to %" PRIu64 "). "
                      "forward: +1, backward: -1, stay: no move.\n", width, width - 1);
    const world_view_t *view = conn_world_view (in->world);
    if (view->valid) {
        char seen[1024];
        world_view_objects_text (view, seen, sizeof (seen));
        textbuf_addf (buf, "You are at position %" PRIu64 " and see: %s.\n", view->position, seen);
        if (in->visible_caption && *in->visible_caption)
            textbuf_addf (buf, "The view: %s\n", in->visible_caption);
    }
    if (in->map && teammap_tracked (in->map)) {
        char *visited = teammap_ranges (in->map, true, S_MAX_RANGES);
        char *open = teammap_ranges (in->map, false, S_MAX_RANGES);
        textbuf_addf (buf, "Visited by the team: %s. Not yet visited: %s.\n", visited, open);
        free (visited);
        free (open);
    }
    //  The team's facts (team_facts.h): known cells and claims, one line.
    if (in->facts && view->valid) {
        char *line = team_facts_line (in->facts, view->position);
        if (line)
            textbuf_addf (buf, "%s\n", line);
        free (line);
    }
    if (view->valid && view->objects_total > 0)
        textbuf_addf (buf, "Team coverage: %.0f%% (%" PRIu64 " of %" PRIu64 " objects explored).%s\n",
                      view->coverage * 100, view->explored, view->objects_total,
                      view->done? " The world is fully explored.": "");
}

static void
s_targets (textbuf_t *buf, const policy_input_t *in)
{
    textbuf_add (buf, "Message targets: ");
    if (in->teammate_count) {
        textbuf_add (buf, "teammates ");
        s_join (buf, in->teammates, in->teammate_count);
    }
    else
        textbuf_add (buf, "no teammates known yet");
    if (in->channel_count) {
        textbuf_add (buf, "; channels ");
        s_join (buf, in->channels, in->channel_count);
    }
    else
        textbuf_add (buf, "; no channels");
    textbuf_add (buf, ".\n");
    textbuf_add (buf, "Available actions: ");
    s_join (buf, in->actions, in->action_count);
    bool has_end = false;
    for (size_t i = 0; i < in->action_count; i++)
        has_end = has_end || streq (in->actions[i], "end");
    textbuf_add (buf, has_end? " (end is final).\n": ".\n");
}

//  `text` with every line after the first indented by `indent`.
static void
s_indented (textbuf_t *buf, const char *text, const char *indent)
{
    for (const char *p = text; *p; p++) {
        char c[2] = { *p, 0 };
        textbuf_add (buf, c);
        if (*p == '\n' && p[1])
            textbuf_add (buf, indent);
    }
}

//  One message in the communication block's shape (without its title).
static char *
s_mail_item (const mail_view_t *m)
{
    textbuf_t *buf = textbuf_new ();
    if (*m->channel) {
        textbuf_addf (buf, "From %s:\n    From %s: ", m->channel, m->from);
        s_indented (buf, m->text? m->text: "", "        ");
    }
    else {
        textbuf_addf (buf, "From %s:\n    ", m->from);
        s_indented (buf, m->text? m->text: "", "    ");
    }
    textbuf_add (buf, "\n");
    return textbuf_detach (&buf);
}

//  A memory without its "Messages received" part: mail has its own block.
static char *
s_memory_item (const char *memory)
{
    const char *mail = strstr (memory, ". Messages received: ");
    size_t len = mail? (size_t) (mail - memory): strlen (memory);
    return zsys_sprintf ("- %.*s\n", (int) len, memory);
}

// ---------------------------------------------------------------------------
//  Assembly under a budget

typedef struct {
    char *text;
    bool keep;
} s_part_t;

typedef struct {
    s_part_t *parts;
    size_t count;
    size_t used;                //  chars taken so far
    size_t budget;              //  0: no limit
} s_pool_t;

static s_pool_t
s_pool (size_t count, size_t used, size_t budget)
{
    s_pool_t pool = { (s_part_t *) zmalloc ((count? count: 1) * sizeof (s_part_t)), count,
                      used, budget };
    return pool;
}

static void
s_pool_free (s_pool_t *pool)
{
    for (size_t i = 0; i < pool->count; i++)
        free (pool->parts[i].text);
    free (pool->parts);
}

//  Takes part `i` if it fits; `extra` is the heading that comes with the
//  first part taken from a section. Returns true if taken.
static bool
s_take (s_pool_t *pool, size_t i, size_t *used, size_t budget, size_t extra)
{
    size_t need = strlen (pool->parts[i].text) + extra;
    if (budget && *used + need > budget)
        return false;
    pool->parts[i].keep = true;
    *used += need;
    return true;
}

static size_t
s_kept (const s_pool_t *pool)
{
    size_t n = 0;
    for (size_t i = 0; i < pool->count; i++)
        n += pool->parts[i].keep;
    return n;
}

char *
prompt_user (const prompt_template_t *tpl, const policy_input_t *in, size_t budget,
             prompt_cut_t *cut)
{
    return prompt_user_for (tpl, in, budget, cut, LLM_MODE_TEXT);
}

char *
prompt_user_for (const prompt_template_t *tpl, const policy_input_t *in, size_t budget,
                 prompt_cut_t *cut, llm_mode_t mode)
{
    assert (in);
    prompt_cut_t local;
    if (!cut)
        cut = &local;
    memset (cut, 0, sizeof (*cut));

    //  The parts never cut.
    textbuf_t *head = textbuf_new ();
    s_header (head, in);
    s_map (head, in);
    textbuf_t *tail = textbuf_new ();
    s_targets (tail, in);
    textbuf_add (tail, prompt_template_text (tpl, s_section (mode, PROMPT_REMINDER)));
    size_t used = textbuf_len (head) + textbuf_len (tail);

    //  The parts that may be cut, each with the heading it brings.
    static const char history_title[] = "\nYour recent steps:\n";
    static const char history_none[] = "\nYour recent steps: none yet.\n";
    static const char mail_title[] = "\nCommunication information:\n";
    static const char memory_title[] = "\nMemories that may help:\n";
    static const char dropped_line[] = "(99999 older steps left out)\n";
    size_t steps = in->steps? steplog_count (in->steps): 0;
    s_pool_t history = s_pool (steps, 0, budget);
    for (size_t i = 0; i < steps; i++)
    {
        char *line = steplog_line (steplog_at (in->steps, i));
        history.parts[i].text = zsys_sprintf ("%s\n", line);
        free (line);
    }
    size_t mails = 0;
    const mail_view_t *mail[S_MAX_MAIL];
    for (size_t i = 0; in->mailbox && i < conn_mailbox_count (in->mailbox) && mails < S_MAX_MAIL; i++) {
        const mail_view_t *m = conn_mailbox_at (in->mailbox, i);
        if (!streq (m->from, in->agent_id))         //  our own posts: left out
            mail[mails++] = m;
    }
    s_pool_t mailbox = s_pool (mails, 0, budget);
    for (size_t i = 0; i < mails; i++)
        mailbox.parts[i].text = s_mail_item (mail[i]);
    s_pool_t memories = s_pool (in->memory_count, 0, budget);
    for (size_t i = 0; i < in->memory_count; i++)
        memories.parts[i].text = s_memory_item (in->memories[i]);
    used += steps? strlen (history_title) + strlen (dropped_line): strlen (history_none);

    //  Priority: the newest steps, the newest mail, the best memories, then
    //  older steps. Mail is taken newest first but shown in order.
    for (size_t k = 0; k < steps && k < PROMPT_HISTORY_KEEP; k++)
        s_take (&history, steps - 1 - k, &used, budget, 0);
    for (size_t k = 0; k < mails; k++)
        if (!s_take (&mailbox, mails - 1 - k, &used, budget,
                     s_kept (&mailbox)? 0: strlen (mail_title)))
            break;
    for (size_t k = 0; k < in->memory_count; k++)
        if (!s_take (&memories, k, &used, budget, s_kept (&memories)? 0: strlen (memory_title)))
            break;
    for (size_t k = PROMPT_HISTORY_KEEP; k < steps; k++)
        if (!s_take (&history, steps - 1 - k, &used, budget, 0))
            break;
    cut->history_dropped = steps - s_kept (&history);
    cut->mail_dropped = mails - s_kept (&mailbox);
    cut->memories_dropped = in->memory_count - s_kept (&memories);

    //  Reading order.
    textbuf_t *buf = textbuf_new ();
    textbuf_add (buf, textbuf_text (head));
    if (steps == 0)
        textbuf_add (buf, history_none);
    else {
        textbuf_add (buf, history_title);
        if (cut->history_dropped)
            textbuf_addf (buf, "(%zu older steps left out)\n", cut->history_dropped);
        for (size_t i = 0; i < steps; i++)
            if (history.parts[i].keep)
                textbuf_add (buf, history.parts[i].text);
    }
    if (s_kept (&mailbox)) {
        textbuf_add (buf, mail_title);
        for (size_t i = 0; i < mails; i++)
            if (mailbox.parts[i].keep)
                textbuf_add (buf, mailbox.parts[i].text);
    }
    if (s_kept (&memories)) {
        textbuf_add (buf, memory_title);
        for (size_t i = 0; i < in->memory_count; i++)
            if (memories.parts[i].keep)
                textbuf_add (buf, memories.parts[i].text);
    }
    textbuf_add (buf, "\n");
    textbuf_add (buf, textbuf_text (tail));
    cut->over_budget = budget && textbuf_len (buf) > budget;
    cut->chars = textbuf_len (buf);
    s_pool_free (&history);
    s_pool_free (&mailbox);
    s_pool_free (&memories);
    textbuf_destroy (&head);
    textbuf_destroy (&tail);
    return textbuf_detach (&buf);
}
