/*  nodes_memory - the private vector memory nodes: RetrieveMemory and
    UpdateMemory, plus the end-of-step bookkeeping.

    RetrieveMemory asks "What do I know about position P with what I see:
    a, b?" and keeps the top_k texts. UpdateMemory stores "At position P, I
    saw [a, b]. I decided to A. Reason: R" and the messages received that
    step. P and the objects are the ones the decision was made on (the
    view Perception took this step): the original paired the position after
    the move with the objects before it.

    UpdateMemory's post also prints the progress line and picks the loop's
    transition: "continue", or "end" on the end action, --max-steps, a
    fully explored world (--stop-when-explored) or a stop signal.
*/
#include <assert.h>
#include "agent_shared.h"
#include "conn_mailbox.h"
#include "pclock.h"
#include "plog.h"

// ---------------------------------------------------------------------------
//  RetrieveMemory

static int
s_retrieve_exec (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    a->memory_count = 0;
    if (a->no_memory || !a->vmem || !a->embedder || vmemory_count (a->vmem) == 0)
        return 0;
    char seen[1024], err[256];
    world_view_objects_text (&a->seen, seen, sizeof (seen));
    //  With a caption model, the query is the first source document's:
    //  what the agent sees, in the caption's words (visible_caption).
    char *query = a->visible_caption
        ? zsys_sprintf ("What do I know about position %" PRIu64 " with what I see: %s? "
                        "The view: %s", a->seen.position, seen, a->visible_caption)
        : zsys_sprintf ("What do I know about position %" PRIu64 " with what I see: %s?",
                        a->seen.position, seen);
    if (!query) {
        plog_warn ("memory search skipped: out of memory");
        return -1;
    }
    int hits = -1;
    if (embedder_embed (a->embedder, query, a->vec, err, sizeof (err)) == 0)
        hits = vmemory_search (a->vmem, a->vec, a->top_k, a->hits, err, sizeof (err));
    free (query);
    if (hits < 0) {
        plog_warn ("memory search failed: %s", err);
        return -1;
    }
    for (int i = 0; i < hits; i++)
        a->memories[i] = a->hits[i].text;
    a->memory_count = (size_t) hits;
    return 0;
}

static int
s_retrieve_fallback (void *shared, void *ctx)
{
    ((agent_shared_t *) shared)->memory_count = 0;
    return 0;
}

static const flow_node_ops_t s_retrieve = {
    .exec = s_retrieve_exec, .fallback = s_retrieve_fallback, .max_retries = 1
};

const flow_node_ops_t *
node_retrieve_memory (void)
{
    return &s_retrieve;
}

// ---------------------------------------------------------------------------
//  UpdateMemory

static char *
s_memory_text (agent_shared_t *a)
{
    char seen[1024];
    world_view_objects_text (&a->seen, seen, sizeof (seen));
    if (a->seen.object_count == 0)
        seen[0] = 0;
    const char *reason = a->answer? answer_reason (a->answer): NULL;
    char view[CAPTIONER_MAX_TEXT + 16] = "";
    if (a->visible_caption)
        snprintf (view, sizeof (view), " (the view: %s)", a->visible_caption);
    char *text = zsys_sprintf ("At position %" PRIu64 ", I saw [%s]%s. I decided to %s. "
                               "Reason: %s", a->seen.position, seen, view, a->action,
                               reason? reason: "none given");
    //  NULL (out of memory) is the caller's to handle; without the mail
    //  part the memory is still worth keeping.
    if (text && a->mail_text) {
        char *more = zsys_sprintf ("%s. Messages received: %s", text, a->mail_text);
        if (more) {
            free (text);
            text = more;
        }
    }
    return text;
}

static int
s_update_exec (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    if (a->no_memory || !a->vmem || !a->embedder) {
        conn_mailbox_commit (a->mailbox);       //  no memory to wait for
        return 0;
    }
    char err[256];
    char *text = s_memory_text (a);
    if (!text) {
        plog_warn ("storing the step in memory failed: out of memory");
        return -1;
    }
    int rc = embedder_embed (a->embedder, text, a->vec, err, sizeof (err));
    if (rc == 0)
        rc = vmemory_add (a->vmem, a->vec, text, err, sizeof (err));
    free (text);
    if (rc != 0) {
        plog_warn ("storing the step in memory failed: %s", err);
        return -1;
    }
    a->memories_stored++;
    //  The step's mail is acknowledged (with the next FETCH) only once the
    //  memory holding it is saved: a kill before that gets it again.
    if (!a->memory_durable)
        conn_mailbox_commit (a->mailbox);
    else
    if (a->step % AGENT_SAVE_EVERY == 0) {
        if (vmemory_save (a->vmem, err, sizeof (err)) != 0)
            plog_warn ("saving memory failed: %s", err);
        else
            conn_mailbox_commit (a->mailbox);
    }
    return 0;
}

static int
s_update_fallback (void *shared, void *ctx)
{
    ((agent_shared_t *) shared)->memory_errors++;
    return 0;
}

static void
s_progress (agent_shared_t *a)
{
    if (!a->progress)
        return;
    char seen[1024];
    world_view_objects_text (&a->seen, seen, sizeof (seen));
    const world_view_t *now = conn_world_view (a->world);
    fprintf (a->progress, "[%s] step %" PRIu64 " pos %" PRIu64 " saw [%s] -> %s (coverage %.0f%%)%s\n",
             a->id, a->step, a->seen.position, a->seen.object_count? seen: "", a->action,
             now->coverage * 100, a->by_fallback? " [fallback]": "");
    fflush (a->progress);
}

//  The step in one record for the prompt's history: the move the ACT
//  reported (the world connector holds its OBSERVATION until the next
//  Perception), from the position the decision was made at.
static void
s_log_step (agent_shared_t *a)
{
    if (!a->steps)
        return;
    const world_view_t *now = conn_world_view (a->world);
    steplog_entry_t entry;
    memset (&entry, 0, sizeof (entry));
    entry.step = a->step;
    snprintf (entry.action, sizeof (entry.action), "%s", a->action);
    entry.from = a->seen.position;
    entry.to = now->position;
    snprintf (entry.outcome, sizeof (entry.outcome), "%s", now->outcome);
    if (now->object_count)
        world_view_objects_text (now, entry.seen, sizeof (entry.seen));
    snprintf (entry.note, sizeof (entry.note), "%s", a->step_note);
    steplog_add (a->steps, &entry);
}

static const char *
s_finish (agent_shared_t *a, const char *why)
{
    snprintf (a->end_reason, sizeof (a->end_reason), "%s", why);
    a->finished = true;
    return "end";
}

static const char *
s_update_post (void *shared, void *ctx)
{
    agent_shared_t *a = (agent_shared_t *) shared;
    a->coverage = conn_world_view (a->world)->coverage;
    s_log_step (a);
    if (a->step_start_us > 0) {
        int64_t took = pclock_mono_us () - a->step_start_us - a->model_us;
        a->step_us[a->step_samples++ % AGENT_STEP_SAMPLES] = took > 0? took: 0;
    }
    s_progress (a);
    if (a->stop && *a->stop)
        return s_finish (a, "stopped by a signal");
    if (streq (a->action, "end"))
        return s_finish (a, "chose to end");
    if (a->stop_when_explored && conn_world_view (a->world)->done)
        return s_finish (a, "world fully explored");
    if (a->step >= a->max_steps)
        return s_finish (a, "reached --max-steps");
    if (a->step_delay_ms > 0 && a->link)
        parley_client_wait (a->link, a->step_delay_ms);
    return "continue";
}

static const flow_node_ops_t s_update = {
    .exec = s_update_exec, .fallback = s_update_fallback, .post = s_update_post,
    .max_retries = 1
};

const flow_node_ops_t *
node_update_memory (void)
{
    return &s_update;
}
