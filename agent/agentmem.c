// SPDX-License-Identifier: MIT
/*  agentmem - AgentMemory: thoughts, turns, retention, context.
    See agentmem.h.

    Retention runs when something is recorded, for the types it adds, by
    walking the history newest-first. That is O(history) per record; the
    history is capped at a few dozen entries, so it is cheap.
*/
#include <assert.h>
#include "agentmem.h"
#include "textbuf.h"

#define TYPE_THOUGHT "thought"

typedef struct {
    bool is_turn;
    uint64_t number;
    char *text;                 //  thought text, or the turn's action
    zlistx_t *observations;     //  turns only
} entry_t;

typedef struct {
    char type[OBSERVATION_MAX_ID + 1];
    size_t limit;
    bool dedupe;
} rule_t;

struct _agentmem_t {
    zlistx_t *entries;          //  entry_t *, oldest first
    rule_t rules[AGENTMEM_MAX_RULES];
    size_t rule_count;
    size_t max_entries;
    uint64_t next_number;
    uint64_t dropped;
};

static void
s_entry_destroy (entry_t **entry_p)
{
    entry_t *entry = *entry_p;
    if (entry) {
        free (entry->text);
        zlistx_destroy (&entry->observations);
        free (entry);
        *entry_p = NULL;
    }
}

agentmem_t *
agentmem_new (void)
{
    agentmem_t *self = (agentmem_t *) zmalloc (sizeof (agentmem_t));
    self->entries = zlistx_new ();
    zlistx_set_destructor (self->entries, (zlistx_destructor_fn *) s_entry_destroy);
    self->max_entries = AGENTMEM_DEFAULT_MAX_ENTRIES;
    self->next_number = 1;
    return self;
}

void
agentmem_destroy (agentmem_t **self_p)
{
    assert (self_p);
    agentmem_t *self = *self_p;
    if (self) {
        zlistx_destroy (&self->entries);
        free (self);
        *self_p = NULL;
    }
}

bool
agentmem_set_retention (agentmem_t *self, const char *type, size_t limit, bool dedupe)
{
    assert (self && type);
    rule_t *rule = NULL;
    for (size_t i = 0; i < self->rule_count && !rule; i++)
        if (streq (self->rules[i].type, type))
            rule = &self->rules[i];
    if (!rule) {
        if (self->rule_count >= AGENTMEM_MAX_RULES)
            return false;
        rule = &self->rules[self->rule_count++];
        snprintf (rule->type, sizeof (rule->type), "%s", type);
    }
    rule->limit = limit;
    rule->dedupe = dedupe;
    return true;
}

void
agentmem_set_max_entries (agentmem_t *self, size_t max_entries)
{
    assert (self);
    self->max_entries = max_entries > 0? max_entries: 1;
}

static const rule_t *
s_rule (agentmem_t *self, const char *type)
{
    for (size_t i = 0; i < self->rule_count; i++)
        if (streq (self->rules[i].type, type))
            return &self->rules[i];
    return NULL;
}

//  Decides whether an item of the rule's type, met newest-first, is kept.
//  `seen` holds the texts already kept (for dedupe), `kept` their count.
static bool
s_keep (const rule_t *rule, zhashx_t *seen, size_t *kept, const char *text)
{
    if (rule->dedupe && text) {
        if (zhashx_lookup (seen, text))
            return false;
        zhashx_insert (seen, text, (void *) "");
    }
    if (rule->limit && *kept >= rule->limit)
        return false;
    (*kept)++;
    return true;
}

static void
s_prune_turn (agentmem_t *self, entry_t *entry, const rule_t *rule, zhashx_t *seen, size_t *kept)
{
    zlistx_t *doomed = zlistx_new ();
    for (observation_t *obs = (observation_t *) zlistx_last (entry->observations); obs;
         obs = (observation_t *) zlistx_prev (entry->observations)) {
        if (!streq (observation_type (obs), rule->type))
            continue;
        char *text = observation_render (obs);
        if (!s_keep (rule, seen, kept, text))
            zlistx_add_end (doomed, zlistx_cursor (entry->observations));
        free (text);
    }
    for (void *handle = zlistx_first (doomed); handle; handle = zlistx_next (doomed)) {
        zlistx_delete (entry->observations, handle);
        self->dropped++;
    }
    zlistx_destroy (&doomed);
}

//  Applies the rule for `type` over the whole history, newest first.
static void
s_apply (agentmem_t *self, const char *type)
{
    const rule_t *rule = s_rule (self, type);
    if (!rule || (!rule->limit && !rule->dedupe))
        return;
    zhashx_t *seen = zhashx_new ();
    size_t kept = 0;
    bool thoughts = streq (type, TYPE_THOUGHT);
    zlistx_t *doomed = zlistx_new ();
    for (entry_t *entry = (entry_t *) zlistx_last (self->entries); entry;
         entry = (entry_t *) zlistx_prev (self->entries)) {
        if (entry->is_turn && !thoughts)
            s_prune_turn (self, entry, rule, seen, &kept);
        else
        if (!entry->is_turn && thoughts && !s_keep (rule, seen, &kept, entry->text))
            zlistx_add_end (doomed, zlistx_cursor (self->entries));
    }
    for (void *handle = zlistx_first (doomed); handle; handle = zlistx_next (doomed)) {
        zlistx_delete (self->entries, handle);
        self->dropped++;
    }
    zlistx_destroy (&doomed);
    zhashx_destroy (&seen);
}

static void
s_cap (agentmem_t *self)
{
    while (zlistx_size (self->entries) > self->max_entries) {
        zlistx_first (self->entries);
        zlistx_delete (self->entries, zlistx_cursor (self->entries));
        self->dropped++;
    }
}

void
agentmem_record_thought (agentmem_t *self, const char *text)
{
    assert (self && text);
    entry_t *entry = (entry_t *) zmalloc (sizeof (entry_t));
    entry->number = self->next_number++;
    entry->text = strdup (text);
    zlistx_add_end (self->entries, entry);
    s_apply (self, TYPE_THOUGHT);
    s_cap (self);
}

void
agentmem_record_turn (agentmem_t *self, const char *action, zlistx_t *observations)
{
    assert (self && action);
    entry_t *entry = (entry_t *) zmalloc (sizeof (entry_t));
    entry->is_turn = true;
    entry->number = self->next_number++;
    entry->text = strdup (action);
    entry->observations = connector_observation_list ();
    zlistx_t *types = zlistx_new ();
    zlistx_set_duplicator (types, (zlistx_duplicator_fn *) strdup);
    zlistx_set_destructor (types, (zlistx_destructor_fn *) zstr_free);
    zlistx_set_comparator (types, (zlistx_comparator_fn *) strcmp);
    if (observations) {
        observation_t *obs;
        while ((obs = (observation_t *) zlistx_detach (observations, NULL))) {
            if (!zlistx_find (types, (void *) observation_type (obs)))
                zlistx_add_end (types, (void *) observation_type (obs));
            zlistx_add_end (entry->observations, obs);
        }
    }
    zlistx_add_end (self->entries, entry);
    for (const char *type = zlistx_first (types); type; type = zlistx_next (types))
        s_apply (self, type);
    zlistx_destroy (&types);
    s_cap (self);
}

//  Renderings are built with a textbuf: appending with sprintf ("%s%s")
//  copied the whole text per line, quadratic in the context size.
char *
agentmem_render_history (agentmem_t *self)
{
    assert (self);
    textbuf_t *buf = textbuf_new ();
    textbuf_add (buf, "History:");
    if (zlistx_size (self->entries) == 0)
        textbuf_add (buf, "\n(nothing yet)");
    for (entry_t *entry = (entry_t *) zlistx_first (self->entries); entry;
         entry = (entry_t *) zlistx_next (self->entries)) {
        if (!entry->is_turn) {
            textbuf_addf (buf, "\n- Thought %" PRIu64 ": %s", entry->number, entry->text);
            continue;
        }
        textbuf_addf (buf, "\n- Turn %" PRIu64 ": %s", entry->number, entry->text);
        for (observation_t *obs = (observation_t *) zlistx_first (entry->observations); obs;
             obs = (observation_t *) zlistx_next (entry->observations)) {
            char *line = observation_render (obs);
            if (line)
                textbuf_addf (buf, "\n    %s", line);
            else
                textbuf_addf (buf, "\n    [Error: could not render an observation from %s]",
                              observation_source (obs));
            free (line);
        }
    }
    return textbuf_detach (&buf);
}

char *
agentmem_render_state (connector_t *const *connectors, size_t count)
{
    textbuf_t *buf = textbuf_new ();
    textbuf_add (buf, "Current state:");
    for (size_t i = 0; i < count; i++) {
        const char *id = connector_id (connectors[i]);
        char *state = connector_render (connectors[i]);
        if (!state)
            textbuf_addf (buf, "\n[%s]\n[Error: could not render state for %s]", id, id);
        else
        if (*state)
            textbuf_addf (buf, "\n[%s]\n%s", id, state);
        free (state);
    }
    return textbuf_detach (&buf);
}

char *
agentmem_build_context (agentmem_t *self, connector_t *const *connectors, size_t count)
{
    assert (self);
    char *history = agentmem_render_history (self);
    char *state = agentmem_render_state (connectors, count);
    //  Joined by hand: a printf of two long %s arguments copies them in
    //  small pieces (a tenth of a heuristic step's time in a profile).
    size_t history_len = strlen (history), state_len = strlen (state);
    char *text = (char *) malloc (history_len + state_len + 3);
    if (text) {
        memcpy (text, history, history_len);
        memcpy (text + history_len, "\n\n", 2);
        memcpy (text + history_len + 2, state, state_len + 1);
    }
    free (history);
    free (state);
    return text;
}

size_t
agentmem_entries (agentmem_t *self)
{
    return zlistx_size (self->entries);
}

static size_t
s_count (agentmem_t *self, bool turns)
{
    size_t count = 0;
    for (entry_t *entry = (entry_t *) zlistx_first (self->entries); entry;
         entry = (entry_t *) zlistx_next (self->entries))
        if (entry->is_turn == turns)
            count++;
    return count;
}

size_t
agentmem_thoughts (agentmem_t *self)
{
    return s_count (self, false);
}

size_t
agentmem_turns (agentmem_t *self)
{
    return s_count (self, true);
}

uint64_t
agentmem_dropped (agentmem_t *self)
{
    return self->dropped;
}
