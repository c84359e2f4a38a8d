// SPDX-License-Identifier: MIT
/*  stage_memory - the private vector memory stages: RetrieveMemory and
    UpdateMemory, plus the end-of-step bookkeeping.

    RetrieveMemory asks "What do I know about position P with what I see:
    a, b?" and keeps the top_k texts. UpdateMemory stores "At position P, I
    saw [a, b]. I decided to A. Reason: R" and the messages received that
    step, or the parts of it the role's memory.store names (observations:
    the position and what was seen; decisions: the action and its reason;
    messages: the mail); a step with none of them stores nothing. P and the
    objects are the ones the decision was made on (the view Perception took
    this step): the original paired the position after the move with the
    objects before it.

    UpdateMemory then prints the progress line and says whether the run goes
    on: STAGE_END on the end action, --max-steps, a fully explored world
    (--stop-when-explored) or a stop signal.
*/
#include <assert.h>
#include "agent_state.h"
#include "conn_mailbox.h"
#include "pclock.h"
#include "plog.h"
#include "textbuf.h"

// ---------------------------------------------------------------------------
//  RetrieveMemory

typedef struct {
    agent_parts_t *parts;
    const perceived_t *in;
    recalled_t *out;
} retrieve_t;

static stage_outcome_t
s_retrieve_try (void *arg)
{
    retrieve_t *self = (retrieve_t *) arg;
    agent_parts_t *p = self->parts;
    const perceived_t *in = self->in;
    recalled_t *out = self->out;
    out->count = 0;
    if (p->no_memory || !p->vmem || !p->embedder || vmemory_count (p->vmem) == 0)
        return STAGE_OK;
    char seen[1024], err[256];
    world_view_objects_text (&in->seen, seen, sizeof (seen));
    //  With a caption model, the query is the first source document's:
    //  what the agent sees, in the caption's words (visible_caption).
    char *query = in->visible_caption
        ? zsys_sprintf ("What do I know about position %" PRIu64 " with what I see: %s? "
                        "The view: %s", in->seen.position, seen, in->visible_caption)
        : zsys_sprintf ("What do I know about position %" PRIu64 " with what I see: %s?",
                        in->seen.position, seen);
    if (!query) {
        plog_warn ("memory search skipped: out of memory");
        return STAGE_RETRY;
    }
    int hits = -1;
    if (embedder_embed (p->embedder, query, p->vec, err, sizeof (err)) == 0)
        hits = vmemory_search (p->vmem, p->vec, p->top_k, out->hits, err, sizeof (err));
    free (query);
    if (hits < 0) {
        plog_warn ("memory search failed: %s", err);
        return STAGE_RETRY;
    }
    for (int i = 0; i < hits; i++)
        out->memories[i] = out->hits[i].text;
    out->count = (size_t) hits;
    return STAGE_OK;
}

static stage_outcome_t
s_retrieve_fallback (void *arg)
{
    ((retrieve_t *) arg)->out->count = 0;
    return STAGE_FALLBACK;
}

stage_outcome_t
stage_retrieve_memory (agent_parts_t *p, const perceived_t *in, recalled_t *out)
{
    assert (p && in && out);
    retrieve_t self = { p, in, out };
    return stage_attempt (STAGE_RETRIEVE_MEMORY, p->stats, s_retrieve_try,
                          s_retrieve_fallback, &self);
}

// ---------------------------------------------------------------------------
//  UpdateMemory

typedef struct {
    agent_parts_t *parts;
    const perceived_t *in;
    const heard_t *heard;
    const decided_t *decided;
    agent_counters_t *counts;
} update_t;

//  The step as the memory keeps it, in the parts memory.store names: NULL
//  when it names none this step has (or out of memory: *oom).
static char *
s_memory_text (const update_t *self, bool *oom)
{
    const perceived_t *in = self->in;
    unsigned store = self->parts->store;
    textbuf_t *buf = textbuf_new ();
    if (!buf) {
        *oom = true;
        return NULL;
    }
    if (store & AGENT_STORE_OBSERVATIONS) {
        char seen[1024];
        world_view_objects_text (&in->seen, seen, sizeof (seen));
        if (in->seen.object_count == 0)
            seen[0] = 0;
        textbuf_addf (buf, "At position %" PRIu64 ", I saw [%s]", in->seen.position, seen);
        if (in->visible_caption)
            textbuf_addf (buf, " (the view: %.*s)", CAPTIONER_MAX_TEXT, in->visible_caption);
    }
    if (store & AGENT_STORE_DECISIONS) {
        const answer_t *answer = self->decided->answer;
        const char *reason = answer? answer_reason (answer): NULL;
        textbuf_addf (buf, "%sI decided to %s. Reason: %s", textbuf_len (buf)? ". ": "",
                      self->decided->action, reason? reason: "none given");
    }
    if ((store & AGENT_STORE_MESSAGES) && self->heard->mail_text)
        textbuf_addf (buf, "%sMessages received: %s", textbuf_len (buf)? ". ": "",
                      self->heard->mail_text);
    bool empty = textbuf_len (buf) == 0;
    char *text = textbuf_detach (&buf);
    if (!text)
        *oom = true;
    if (empty)
        zstr_free (&text);
    return text;
}

static stage_outcome_t
s_update_try (void *arg)
{
    update_t *self = (update_t *) arg;
    agent_parts_t *p = self->parts;
    if (p->no_memory || !p->vmem || !p->embedder) {
        conn_mailbox_commit (p->mailbox);       //  no memory to wait for
        return STAGE_OK;
    }
    char err[256];
    bool oom = false;
    char *text = s_memory_text (self, &oom);
    if (oom) {
        plog_warn ("storing the step in memory failed: out of memory");
        return STAGE_RETRY;
    }
    if (!text) {                                //  memory.store keeps nothing of this step
        conn_mailbox_commit (p->mailbox);
        return STAGE_OK;
    }
    //  The vector is made of what the memory keeps: the text as the add
    //  will cut it (a big team's mail can be many times that long).
    text[vmemory_text_fit (p->vmem, text, strlen (text))] = 0;
    int rc = embedder_embed (p->embedder, text, p->vec, err, sizeof (err));
    if (rc == 0)
        rc = vmemory_add (p->vmem, p->vec, text, err, sizeof (err));
    free (text);
    if (rc != 0) {
        plog_warn ("storing the step in memory failed: %s", err);
        return STAGE_RETRY;
    }
    self->counts->memories_stored++;
    //  The step's mail is acknowledged (with the next FETCH) only once the
    //  memory holding it is saved: a kill before that gets it again.
    if (!p->memory_durable)
        conn_mailbox_commit (p->mailbox);
    else
    if (self->in->step % AGENT_SAVE_EVERY == 0) {
        if (vmemory_save (p->vmem, err, sizeof (err)) != 0)
            plog_warn ("saving memory failed: %s", err);
        else
            conn_mailbox_commit (p->mailbox);
    }
    return STAGE_OK;
}

static stage_outcome_t
s_update_fallback (void *arg)
{
    ((update_t *) arg)->counts->memory_errors++;
    return STAGE_FALLBACK;
}

static void
s_progress (const update_t *self)
{
    agent_parts_t *p = self->parts;
    if (!p->progress)
        return;
    const world_view_t *seen = &self->in->seen;
    char text[1024];
    world_view_objects_text (seen, text, sizeof (text));
    const world_view_t *now = conn_world_view (p->world);
    fprintf (p->progress, "[%s] step %" PRIu64 " pos %" PRIu64 " saw [%s] -> %s (coverage %.0f%%)%s\n",
             p->id, self->in->step, seen->position, seen->object_count? text: "",
             self->decided->action, now->coverage * 100,
             self->decided->by_fallback? " [fallback]": "");
    fflush (p->progress);
}

//  The step in one record for the prompt's history: the move the ACT
//  reported (the world connector holds its OBSERVATION until the next
//  Perception), from the position the decision was made at.
static void
s_log_step (const update_t *self)
{
    agent_parts_t *p = self->parts;
    if (!p->steps)
        return;
    const world_view_t *now = conn_world_view (p->world);
    steplog_entry_t entry;
    memset (&entry, 0, sizeof (entry));
    entry.step = self->in->step;
    snprintf (entry.action, sizeof (entry.action), "%s", self->decided->action);
    entry.from = self->in->seen.position;
    entry.to = now->position;
    snprintf (entry.outcome, sizeof (entry.outcome), "%s", now->outcome);
    if (now->object_count)
        world_view_objects_text (now, entry.seen, sizeof (entry.seen));
    snprintf (entry.note, sizeof (entry.note), "%s", self->decided->note);
    steplog_add (p->steps, &entry);
}

//  --step-delay-ms: the pause between steps, in slices of PAUSE_SLICE_MS.
//  After each the link takes the events that came meanwhile (state
//  updates, mail wake-ups, teammates joining) in one batch and sends a
//  HEARTBEAT when one is due. Waiting on the link instead woke the agent
//  for every event: in a team of N stepping agents, N state updates a
//  step and as many wake-ups, the cost of a big team's pause.
#define PAUSE_SLICE_MS 100

static void
s_pause (agent_parts_t *p, int64_t ms)
{
    int64_t until = pclock_mono_ms () + ms;
    for (int64_t left = ms; left > 0 && !(p->stop && *p->stop);
         left = until - pclock_mono_ms ()) {
        pclock_sleep_ms (left < PAUSE_SLICE_MS? left: PAUSE_SLICE_MS);
        parley_client_keepalive (p->link);
    }
}

static stage_outcome_t
s_finish (agent_ending_t *out, const char *why)
{
    snprintf (out->reason, sizeof (out->reason), "%s", why);
    out->finished = true;
    return STAGE_END;
}

stage_outcome_t
stage_update_memory (agent_parts_t *p, const perceived_t *in, const heard_t *heard,
                     const decided_t *decided, agent_counters_t *counts, agent_ending_t *out)
{
    assert (p && in && heard && decided && counts && out);
    update_t self = { p, in, heard, decided, counts };
    stage_outcome_t outcome = stage_attempt (STAGE_UPDATE_MEMORY, p->stats, s_update_try,
                                             s_update_fallback, &self);
    if (outcome == STAGE_FAILED)
        return outcome;
    counts->coverage = conn_world_view (p->world)->coverage;
    s_log_step (&self);
    if (in->start_us > 0) {
        int64_t took = pclock_mono_us () - in->start_us - decided->model_us;
        counts->step_us[counts->step_samples++ % AGENT_STEP_SAMPLES] = took > 0? took: 0;
    }
    s_progress (&self);
    if (p->stop && *p->stop)
        return s_finish (out, "stopped by a signal");
    if (streq (decided->action, "end"))
        return s_finish (out, "chose to end");
    if (p->stop_when_explored && conn_world_view (p->world)->done)
        return s_finish (out, "world fully explored");
    if (in->step >= p->max_steps)
        return s_finish (out, "reached --max-steps");
    if (p->step_delay_ms > 0 && p->link)
        s_pause (p, p->step_delay_ms);
    return outcome;
}
