// SPDX-License-Identifier: MIT
/*  agent - one Parley agent. See agent.h.

    Owns every part the stages use (agent_state.h): this file creates and
    destroys them; the stages only use them. The loop is agent_step() until
    it says otherwise.
*/
#include <assert.h>
#include "agent.h"
#include "agent_state.h"
#include "agent_step.h"
#include "conn_mailbox.h"
#include "conn_state.h"
#include "conn_world.h"
#include "embedder_id.h"
#include "pclock.h"
#include "plog.h"
#include "sdnotify.h"
#include "textbuf.h"

struct _agent_t {
    agent_state_t state;
    agent_config_t config;
};

//  Retention of AgentMemory: what a prompt needs, not everything that happened.
static void
s_retention (agentmem_t *mem)
{
    agentmem_set_retention (mem, "thought", 5, true);
    agentmem_set_retention (mem, "world.moved", 6, false);
    agentmem_set_retention (mem, "world.blocked", 2, true);
    agentmem_set_retention (mem, "world.coverage", 1, false);
    agentmem_set_retention (mem, "mail.message", 10, true);
    agentmem_set_retention (mem, "mail.undelivered", 3, true);
    agentmem_set_retention (mem, "state." STATE_KEY_EXPLORED, 1, false);
    agentmem_set_retention (mem, "state." STATE_KEY_POSITIONS, 1, false);
}

//  http's tick: while a model or embedding call waits, keep the broker
//  session alive (HEARTBEAT, no waiting). The link does not exist yet
//  during the embedder's start-up probe; nothing is due then.
static void
s_keepalive (void *arg)
{
    agent_parts_t *a = (agent_parts_t *) arg;
    if (a->link)
        parley_client_keepalive (a->link);
}

//  http's cancel: a stop signal abandons a model or embedding call at once.
static bool
s_cancelled (void *arg)
{
    agent_parts_t *a = (agent_parts_t *) arg;
    return a->stop && *a->stop;
}

//  Opens the memory, in an order that never harms it: the embedder is
//  created and, when it is a server, probed (its dimension compared with
//  --embed-dim) before anything on disk is touched; then the memory's
//  record of its embedder is compared with this one, and a memory made by
//  another embedder is refused, as it is. Only then is the memory opened;
//  a corrupt one is moved aside (never overwriting) and a fresh one begun.
static int
s_open_memory (agent_t *self, char *err, size_t err_size)
{
    embedder_options_t eo;
    embedder_options_default (&eo);
    eo.http.tick = s_keepalive;
    eo.http.tick_arg = &self->state.parts;
    eo.http.cancel = s_cancelled;
    eo.url = self->config.embed_url && *self->config.embed_url? self->config.embed_url: NULL;
    eo.model = self->config.embed_model;
    if (eo.url)     //  a server's dimension: as told, or learnt with one probe
        eo.dim = (int) self->config.embed_dim;
    self->state.parts.embedder = embedder_new (&eo, err, err_size);
    if (!self->state.parts.embedder)
        return -1;
    if (eo.url && eo.dim > 0) {
        char why[400];
        if (embedder_probe (self->state.parts.embedder, why, sizeof (why)) != 0) {
            snprintf (err, err_size, "the embedding server does not fit --embed-dim %d: %s; "
                      "the memory was not touched", eo.dim, why);
            return -1;
        }
    }
    int dim = embedder_dim (self->state.parts.embedder);
    self->state.parts.vec = (float *) zmalloc (sizeof (float) * (size_t) dim);
    vmemory_options_t vo;
    vmemory_options_default (&vo);
    vo.dir = self->config.memory_dir && *self->config.memory_dir? self->config.memory_dir: NULL;
    vo.dim = dim;
    if (self->config.memory_index
    &&  !vmemory_index_kind_parse (self->config.memory_index, &vo.index)) {
        snprintf (err, err_size, "memory index \"%s\" is not an index kind (flat, hnsw or ivf)",
                  self->config.memory_index);
        return -1;
    }
    self->state.parts.memory_durable = vo.dir != NULL;
    char identity[EMBEDDER_ID_MAX];
    embedder_id_of (self->state.parts.embedder, identity, sizeof (identity));
    embedder_id_result_t id = vo.dir? embedder_id_check (vo.dir, identity, err, err_size)
                                    : EMBEDDER_ID_SAME;
    if (id == EMBEDDER_ID_DIFFERENT || id == EMBEDDER_ID_UNREADABLE)
        return -1;
    self->state.parts.vmem = vmemory_open (&vo, err, err_size);
    if (!self->state.parts.vmem && vo.dir) {
        //  A corrupt or foreign memory must not keep the agent down: keep
        //  the files for a post-mortem and start fresh.
        plog_error ("memory in %s unusable (%s); moving it aside", vo.dir, err);
        if (vmemory_move_aside (vo.dir, err, err_size) == 0) {
            self->state.parts.vmem = vmemory_open (&vo, err, err_size);
            id = EMBEDDER_ID_ABSENT;
        }
    }
    if (!self->state.parts.vmem)
        return -1;
    size_t count = vmemory_count (self->state.parts.vmem);
    if (id == EMBEDDER_ID_ABSENT) {
        if (count > 0)
            plog_warn ("memory in %s has no record of the embedder that made it (it predates "
                       "that record); assuming [%s], this run's", vo.dir, identity);
        if (embedder_id_write (vo.dir, identity, eo.url, err, err_size) != 0)
            return -1;
    }
    if (count > 0)
        plog_info ("resumed with %zu memories from %s", count, vo.dir);
    return 0;
}

static int
s_policies (agent_t *self, char *err, size_t err_size)
{
    agent_parts_t *a = &self->state.parts;
    a->heuristic = policy_heuristic_new (self->config.seed, a->id);
    const char *name = self->config.policy? self->config.policy: "heuristic";
    if (streq (name, "heuristic")) {
        a->policy = a->heuristic;
        return 0;
    }
    if (!streq (name, "llm")) {
        snprintf (err, err_size, "unknown policy '%s' (heuristic or llm)", name);
        return -1;
    }
    llm_options_t lo;
    llm_options_default (&lo);
    lo.http.tick = s_keepalive;
    lo.http.tick_arg = &self->state.parts;
    lo.http.cancel = s_cancelled;
    lo.url = self->config.llm_url;
    lo.model = self->config.llm_model;
    if (self->config.llm_timeout_ms > 0)
        lo.http.timeout_ms = self->config.llm_timeout_ms;
    llm_mode_t mode = LLM_MODE_AUTO;
    if (self->config.llm_mode && !llm_mode_parse (self->config.llm_mode, &mode)) {
        snprintf (err, err_size, "--llm-mode %s is not auto, tools, json-schema or text",
                  self->config.llm_mode);
        return -1;
    }
    llm_t *llm = llm_new (&lo, err, err_size);
    if (!llm)
        return -1;
    a->policy = policy_llm_new (llm, self->config.llm_breaker_ms);
    policy_llm_set_mode (a->policy, mode);
    a->llm_deadline_ms = self->config.llm_deadline_ms;
    if (self->config.llm_probe)
        policy_llm_probe (a->policy, 5000);
    return 0;
}

//  The caption model, when --caption-url is given.
static int
s_captioner (agent_t *self, char *err, size_t err_size)
{
    const char *url = self->config.caption_url;
    if (!url || !*url)
        return 0;
    llm_options_t lo;
    llm_options_default (&lo);
    lo.http.tick = s_keepalive;
    lo.http.tick_arg = &self->state.parts;
    lo.http.cancel = s_cancelled;
    lo.url = url;
    lo.model = self->config.caption_model;
    lo.max_tokens = 100;
    if (self->config.llm_timeout_ms > 0)
        lo.http.timeout_ms = self->config.llm_timeout_ms;
    llm_t *llm = llm_new (&lo, err, err_size);
    if (!llm) {
        char why[256];
        snprintf (why, sizeof (why), "%s", err);
        snprintf (err, err_size, "caption model: %s (--caption-url needs --caption-model)", why);
        return -1;
    }
    self->state.parts.captioner = captioner_new (llm);
    return 0;
}

static void
s_parts (agent_t *self)
{
    agent_parts_t *a = &self->state.parts;
    a->link = parley_client_new (self->config.broker, a->id);
    parley_client_add_cap (a->link, "explore");
    parley_client_add_cap (a->link, policy_name (a->policy));
    parley_client_set_timeout (a->link, self->config.request_timeout_ms, 0);
    char token_file[1100] = "";
    if (self->config.memory_dir && *self->config.memory_dir)
        snprintf (token_file, sizeof (token_file), "%s/broker-token", self->config.memory_dir);
    //  The key files were checked when the configuration was read.
    if (parley_client_set_security (a->link, self->config.curve_key, self->config.curve_server_key,
                                    token_file) != PARLEY_OK)
        plog_error ("%s", parley_client_error_text (a->link));
    a->world = conn_world_new (a->link);
    a->mailbox = conn_mailbox_new (a->link);
    //  The ablations take keys away here, so no policy can see them.
    const char *keys[4];
    size_t count = 0;
    keys[count++] = STATE_KEY_EXPLORED;
    if (!a->no_shared_positions)
        keys[count++] = STATE_KEY_POSITIONS;
    if (!a->no_messages) {
        keys[count++] = STATE_KEY_TEAM_VISITED;
        keys[count++] = STATE_KEY_TEAM_CLAIMS;
    }
    a->state = conn_state_new (a->link, keys, count);
    //  The explored names are shown only in the AgentMemory context: a
    //  policy that does not read it takes them once, at connect, and does
    //  not follow them. Every step that finds a name publishes the whole
    //  list (thousands of names) to every follower: with N agents that is
    //  N lists to each of them per round of steps.
    if (!policy_reads_context (a->policy))
        conn_state_read_once (a->state, STATE_KEY_EXPLORED);
    a->facts = team_facts_new (a->id);
    a->connectors[0] = a->world;
    a->connectors[1] = a->mailbox;
    a->connectors[2] = a->state;
    a->mem = agentmem_new ();
    s_retention (a->mem);
    a->steps = steplog_new ();
    a->map = teammap_new ();
}

agent_t *
agent_new (const agent_config_t *config, char *err, size_t err_size)
{
    assert (config && err);
    *err = 0;
    if (!config->broker || !config->id || !pmsg_name_valid (config->id, strlen (config->id))) {
        snprintf (err, err_size, "agent id '%s' is not a valid name "
                  "(1-64 of A-Z a-z 0-9 _ . : -, not starting with . or -)",
                  config->id? config->id: "");
        return NULL;
    }
    agent_t *self = (agent_t *) zmalloc (sizeof (agent_t));
    self->config = *config;
    agent_parts_t *a = &self->state.parts;
    snprintf (a->id, sizeof (a->id), "%s", config->id);
    a->max_steps = config->max_steps > 0? (uint64_t) config->max_steps: 20;
    a->top_k = config->top_k > 0? (size_t) config->top_k: VMEMORY_DEFAULT_TOP_K;
    if (a->top_k > VMEMORY_MAX_TOP_K)
        a->top_k = VMEMORY_MAX_TOP_K;
    a->stop_when_explored = config->stop_when_explored;
    a->no_messages = config->no_messages;
    a->no_shared_positions = config->no_shared_positions;
    a->no_memory = config->no_memory;
    a->team_size = config->team_size > 0? (uint64_t) config->team_size: 0;
    a->team_wait_ms = config->team_wait_ms;
    a->step_delay_ms = config->step_delay_ms;
    a->progress = config->progress;
    a->context_tokens = config->context_tokens > 0? (size_t) config->context_tokens: 0;
    a->llm_vision = config->llm_vision;
    a->store = config->memory_store_set? config->memory_store & AGENT_STORE_ALL: AGENT_STORE_ALL;
    if (s_open_memory (self, err, err_size) != 0 || s_policies (self, err, err_size) != 0
    ||  s_captioner (self, err, err_size) != 0) {
        agent_destroy (&self);
        return NULL;
    }
    s_parts (self);
    return self;
}

void
agent_destroy (agent_t **self_p)
{
    assert (self_p);
    agent_t *self = *self_p;
    if (!self)
        return;
    agent_parts_t *a = &self->state.parts;
    connector_destroy (&a->world);
    connector_destroy (&a->mailbox);
    connector_destroy (&a->state);
    team_facts_destroy (&a->facts);
    parley_client_destroy (&a->link);
    agentmem_destroy (&a->mem);
    steplog_destroy (&a->steps);
    teammap_destroy (&a->map);
    if (a->policy != a->heuristic)
        policy_destroy (&a->policy);
    policy_destroy (&a->heuristic);
    vmemory_destroy (&a->vmem);
    embedder_destroy (&a->embedder);
    free (a->vec);
    captioner_destroy (&a->captioner);
    agent_state_free_records (&self->state);
    free (self);
    *self_p = NULL;
}

int
agent_connect (agent_t *self, volatile sig_atomic_t *stop, char *err, size_t err_size)
{
    assert (self);
    agent_parts_t *a = &self->state.parts;
    a->stop = stop;
    parley_client_set_stop (a->link, stop);
    parley_err_t rc = parley_client_connect (a->link);
    if (rc != PARLEY_OK) {
        snprintf (err, err_size, "%s: %s", parley_strerror (rc),
                  parley_client_error_text (a->link));
        return -1;
    }
    a->connected_ms = pclock_mono_ms ();
    const parley_welcome_t *w = parley_client_welcome (a->link);
    const char *world_kind = parley_welcome_world_kind (w);
    uint64_t width = parley_welcome_world_width (w), height = parley_welcome_world_height (w);
    conn_world_set_shape (a->world, world_kind, width, height);
    team_facts_set_shape (a->facts, width, height? height: 1);
    bool grid = streq (world_kind, "grid");
    a->action_count = 0;
    a->actions[a->action_count++] = "forward";
    a->actions[a->action_count++] = "backward";
    if (grid) {
        a->actions[a->action_count++] = "left";
        a->actions[a->action_count++] = "right";
    }
    a->actions[a->action_count++] = "stay";
    a->actions[a->action_count++] = "end";
    //  The role's channels are joined before the first step, so their
    //  messages from now on are in the first FETCH (not with --no-messages:
    //  that ablation joins none).
    for (size_t i = 0; i < self->config.channel_count && !a->no_messages; i++)
        agent_team_listen (a, &self->state.team, self->config.channels[i]);
    //  What the steps read without asking: the state keys from a replica
    //  of just those keys (a SNAPSHOT each now, then their STATE_UPDATEs),
    //  and the team from AGENT_EVENTs. A step then makes one request, its
    //  STEP.
    if (conn_state_follow (a->state) == 0)
        conn_state_use_replica (a->state, true);
    else
        plog_warn ("no state replica (%s): the keys are read with GET each step",
                   parley_client_error_text (a->link));
    if (parley_client_subscribe (a->link, "agent.") != PARLEY_OK)
        plog_warn ("no agent events: %s", parley_client_error_text (a->link));
    plog_info ("connected to %s: %s world %" PRIu64 "x%" PRIu64 ", %" PRIu64 " objects, "
               "policy %s", self->config.broker, world_kind, width, height,
               parley_welcome_objects_total (w), policy_name (a->policy));
    //  A Type=notify unit is started once the broker has welcomed us.
    sdnotify_ready ("connected");
    return 0;
}

//  Why the model never answered, in words that tell a server that could
//  not be reached from one that answered with something that is not a
//  model's answer (an HTTP 501, an HTML page with 200).
static void
s_no_model (const policy_llm_report_t *r)
{
    const llm_totals_t *t = &r->totals;
    if (t->refused + t->bad_response > 0)
        plog_error ("the model server answered, but never with a model's answer: %" PRIu64
                    " requests refused (an HTTP error such as 400 or 501), %" PRIu64 " replies "
                    "that were not a chat completion (such as an HTML page), %" PRIu64
                    " calls unreachable; last: %s. Every step was decided by the heuristic",
                    t->refused, t->bad_response, t->unreachable, r->last_error);
    else
        plog_error ("the model server was never reached: %" PRIu64 " decisions got no answer, "
                    "%" PRIu64 " were not sent while the circuit was open; last: %s. Every "
                    "step was decided by the heuristic", r->unanswered, r->skipped,
                    *r->last_error? r->last_error: "no call made (see the probe at start)");
}

//  The mail the last STEP brought for a step that will not come. When the
//  memory keeps messages, the others' mail goes in as a step's mail would
//  ("Messages received after my last step: ...") and then all of it is
//  handed over like a step's (our own posts, echoed by the channels we
//  listen to, need no memory), so the commit below acknowledges it: a
//  clean exit leaves no mail it took at the broker, and the next start
//  does not receive it again. Mail not stored (no memory, memory.store
//  without messages, a failed embedding) stays for the next start.
static void
s_store_unread_mail (agent_t *self)
{
    agent_parts_t *a = &self->state.parts;
    size_t count = a->mailbox? conn_mailbox_staged (a->mailbox): 0;
    if (count == 0 || a->no_memory || !a->vmem || !a->embedder
    ||  !(a->store & AGENT_STORE_MESSAGES))
        return;
    textbuf_t *buf = textbuf_new ();
    if (!buf)
        return;
    textbuf_add (buf, "Messages received after my last step: ");
    size_t stored = 0;
    for (size_t i = 0; i < count; i++) {
        const mail_view_t *m = conn_mailbox_staged_at (a->mailbox, i);
        if ((m->seq && m->seq <= conn_mailbox_last_seq (a->mailbox)) || streq (m->from, a->id))
            continue;                   //  taken before, or our own post
        if (stored++)
            textbuf_add (buf, " | ");
        if (*m->channel)
            textbuf_addf (buf, "In %s, from %s: %s", m->channel, m->from, m->text);
        else
            textbuf_addf (buf, "From %s: %s", m->from, m->text);
    }
    char *text = textbuf_detach (&buf);
    char err[256] = "out of memory";
    int rc = stored? -1: 0;
    if (stored && text) {
        rc = embedder_embed (a->embedder, text, a->vec, err, sizeof (err));
        if (rc == 0)
            rc = vmemory_add (a->vmem, a->vec, text, err, sizeof (err));
    }
    free (text);
    if (rc != 0) {
        plog_warn ("%zu messages received after the last step not stored (%s): the next "
                   "start receives them", stored, err);
        return;
    }
    if (stored) {
        self->state.counts.memories_stored++;
        plog_info ("%zu messages received after the last step kept in memory", stored);
    }
    //  The staged mail becomes the mailbox's batch: its seqs now count as
    //  handed to a step, so the commit covers them.
    if (connector_capture (a->mailbox, err, sizeof (err)) != 0)
        plog_warn ("unread mail not taken: %s", err);
}

int
agent_run (agent_t *self)
{
    assert (self);
    agent_state_t *s = &self->state;
    agent_parts_t *a = &s->parts;
    stage_outcome_t result;
    do
        result = agent_step (s);
    while (result == STAGE_OK);
    sdnotify_stopping ();
    char err[256];
    //  The last words go out even after a stop signal, but once and
    //  briefly: a broker that is gone must not keep the agent from exiting.
    parley_client_set_stop (a->link, NULL);
    parley_client_set_attempts (a->link, 1);
    parley_client_set_connect_attempts (a->link, 1);
    parley_client_set_timeout (a->link, 1000, 0);
    //  Leaving releases the claim (and hands over the last visits).
    team_facts_set_own_claim (a->facts, TEAM_NO_CELL);
    agent_team_sync (a, s->perceived.step, true);
    s_store_unread_mail (self);
    //  Mail is acknowledged only once the memory holding it is on disk.
    if (vmemory_save (a->vmem, err, sizeof (err)) != 0)
        plog_warn ("saving memory failed: %s", err);
    else {
        conn_mailbox_commit (a->mailbox);
        if (conn_mailbox_committed (a->mailbox) > 0)
            parley_client_ack (a->link, conn_mailbox_committed (a->mailbox));
    }
    agent_report_model (a);
    parley_client_bye (a->link, false);
    if (result == STAGE_STOP || (a->stop && *a->stop)) {
        snprintf (s->ending.reason, sizeof (s->ending.reason), "stopped by a signal");
        return AGENT_STOPPED;
    }
    if (result == STAGE_END) {
        if (a->policy != a->heuristic) {
            policy_llm_report_t r;
            policy_llm_report (a->policy, &r);
            if (r.totals.ok == 0 && s->perceived.step > 0) {
                s_no_model (&r);
                return AGENT_NO_MODEL;
            }
        }
        return AGENT_DONE;
    }
    assert (result == STAGE_FAILED);
    snprintf (s->ending.reason, sizeof (s->ending.reason), "stage %s failed",
              stage_name (s->failed_stage));
    return AGENT_FAILED;
}

static int
s_cmp_int64 (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y? -1: x > y;
}

//  Median and p90 of the kept step times, in ms (0 when none).
static void
s_step_stats (const agent_counters_t *a, double *median_ms, double *p90_ms)
{
    *median_ms = *p90_ms = 0;
    size_t n = a->step_samples < AGENT_STEP_SAMPLES? (size_t) a->step_samples: AGENT_STEP_SAMPLES;
    if (n == 0)
        return;
    int64_t *sorted = (int64_t *) malloc (n * sizeof (int64_t));
    if (!sorted)
        return;
    memcpy (sorted, a->step_us, n * sizeof (int64_t));
    qsort (sorted, n, sizeof (int64_t), s_cmp_int64);
    *median_ms = sorted[(n - 1) / 2] / 1000.0;
    *p90_ms = sorted[(n * 9 + 9) / 10 - 1] / 1000.0;
    free (sorted);
}

void
agent_summary (agent_t *self, FILE *out)
{
    assert (self);
    if (!out)
        return;
    agent_parts_t *a = &self->state.parts;
    const agent_counters_t *c = &self->state.counts;
    const world_view_t *view = conn_world_view (a->world);
    size_t found = conn_world_seen_count (a->world);
    double median_ms, p90_ms;
    s_step_stats (c, &median_ms, &p90_ms);
    fprintf (out, "[%s] SUMMARY steps=%" PRIu64 " position=%" PRIu64 " coverage=%.0f%% "
             "objects=%zu memories=%zu sent=%" PRIu64 " received=%" PRIu64 " suppressed=%" PRIu64
             " invalid_answers=%" PRIu64 " fallbacks=%" PRIu64 " hellos=%" PRIu64
             " keepalives=%" PRIu64 " step_ms_median=%.2f step_ms_p90=%.2f end=\"%s\"\n",
             a->id, self->state.perceived.step, view->position, view->coverage * 100, found,
             vmemory_count (a->vmem), c->msgs_sent, c->msgs_received, c->msgs_suppressed,
             c->invalid_answers,
             a->heuristic != a->policy? c->fallbacks: 0,
             parley_client_counter (a->link, PARLEY_COUNTER_HELLOS),
             parley_client_counter (a->link, PARLEY_COUNTER_KEEPALIVES),
             median_ms, p90_ms, self->state.ending.reason);
    if (a->policy != a->heuristic) {
        policy_llm_report_t r;
        policy_llm_report (a->policy, &r);
        const llm_totals_t *t = &r.totals;
        fprintf (out, "[%s] MODEL calls=%" PRIu64 " ok=%" PRIu64 " failed=%" PRIu64
                 " skipped=%" PRIu64 " breaker_openings=%" PRIu64 " retries=%" PRIu64
                 " prompt_tokens=%" PRIu64 " completion_tokens=%" PRIu64
                 " calls_with_usage=%" PRIu64 " latency_ms_mean=%.1f latency_ms_max=%.1f"
                 " unreachable=%" PRIu64 " refused=%" PRIu64 " bad_response=%" PRIu64
                 " corrections=%" PRIu64 " mode=%s probe_calls=%" PRIu64 "\n",
                 a->id, t->calls, t->ok, t->failed, r.skipped, r.breaker_openings, t->retries,
                 t->prompt_tokens, t->completion_tokens, t->calls_with_usage,
                 t->calls? t->latency_us / 1000.0 / (double) t->calls: 0.0,
                 t->latency_max_us / 1000.0, t->unreachable, t->refused, t->bad_response,
                 c->invalid_answers, llm_mode_name (r.mode), r.probe_calls);
    }
    fprintf (out, "[%s] found:", a->id);
    for (size_t i = 0; i < found; i++)
        fprintf (out, "%s %s", i? ",": "", conn_world_seen_at (a->world, i));
    fprintf (out, "%s\n", found? "": " nothing");
    fflush (out);
}

uint64_t
agent_steps (agent_t *self)
{
    return self->state.perceived.step;
}

const char *
agent_end_reason (agent_t *self)
{
    return self->state.ending.reason;
}

bool
agent_stage_stats (agent_t *self, stage_id_t id, stage_stats_t *stats)
{
    assert (self && stats);
    if (id >= STAGE__COUNT)
        return false;
    *stats = self->state.stats [id];
    return true;
}

uint64_t
agent_stage_entries (agent_t *self)
{
    assert (self);
    return self->state.entries;
}

uint64_t
agent_memories_stored (agent_t *self)
{
    assert (self);
    return self->state.counts.memories_stored;
}

const char *
agent_memory_text (agent_t *self, size_t index)
{
    assert (self);
    vmemory_t *vmem = self->state.parts.vmem;
    return vmem && index < vmemory_count (vmem)? vmemory_text (vmem, index): NULL;
}

size_t
agent_channel_count (agent_t *self)
{
    assert (self);
    return self->state.team.channel_count;
}
