// SPDX-License-Identifier: MIT
/*  parley-agent - one agent process.

    Needs only the broker's request endpoint and an id; everything else has
    a default or comes from WELCOME. See --help.
*/
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <czmq.h>
#include "agent.h"
#include "agent_role.h"
#include "vmemory/vmemory_index.h"
#include "pconfig.h"
#include "pcurve.h"
#include "plog.h"

static const pconfig_option_t s_options[] = {
    { "broker", 'b', PCONFIG_STR, "PARLEY_BROKER", "tcp://127.0.0.1:5555", 0, 0, "ENDPOINT",
      "broker request endpoint (tcp://HOST:PORT or ipc://PATH)" },
    { "id", 'i', PCONFIG_STR, "PARLEY_AGENT_ID", NULL, 0, 0, "NAME",
      "agent id (default: the hostname, so scaled containers get distinct ids)" },
    { "role", 'r', PCONFIG_STR, "PARLEY_ROLE", NULL, 0, 0, "FILE",
      "a role file (scenarios/<name>/roles/<role>.yaml, docs/SCENARIOS.md): its policy and "
      "memory settings where no flag sets them; plays its turns when the broker runs a workflow" },
    { "policy", 'p', PCONFIG_STR, "PARLEY_POLICY", "heuristic", 0, 0, "NAME",
      "decision policy: heuristic (no server) or llm" },
    { "llm-url", 0, PCONFIG_STR, "PARLEY_LLM_URL", NULL, 0, 0, "URL",
      "OpenAI-compatible base URL for --policy llm, e.g. http://127.0.0.1:11434/v1 "
      "(key from PARLEY_LLM_API_KEY or OPENAI_API_KEY)" },
    { "llm-model", 0, PCONFIG_STR, "PARLEY_LLM_MODEL", NULL, 0, 0, "MODEL",
      "chat model name for --policy llm" },
    { "llm-mode", 0, PCONFIG_STR, "PARLEY_LLM_MODE", "auto", 0, 0, "MODE",
      "how the model answers: tools (function calling), json-schema (response_format), "
      "text (a format in the prompt), or auto: a probe of at most two small calls at the "
      "first decision picks the first the server supports (docs/MODEL.md)" },
    { "llm-timeout-ms", 0, PCONFIG_INT, "PARLEY_LLM_TIMEOUT_MS", "60000", 100, 3600000, "MS",
      "timeout of one model call attempt" },
    { "embed-url", 0, PCONFIG_STR, "PARLEY_EMBED_URL", NULL, 0, 0, "URL",
      "OpenAI-compatible embeddings base URL (default: built-in embedder, no server; "
      "key from PARLEY_EMBED_API_KEY or OPENAI_API_KEY)" },
    { "embed-model", 0, PCONFIG_STR, "PARLEY_EMBED_MODEL", NULL, 0, 0, "MODEL",
      "embedding model name, with --embed-url" },
    { "embed-dim", 0, PCONFIG_INT, "PARLEY_EMBED_DIM", "0", 0, 8192, "N",
      "embedding dimension of the --embed-url model (0: learnt with one probe request)" },
    { "memory-dir", 'm', PCONFIG_STR, "PARLEY_MEMORY_DIR", NULL, 0, 0, "DIR",
      "private memory directory (default ./parley-memory/<id>); \"none\" keeps it in RAM" },
    { "memory-index", 0, PCONFIG_STR, "PARLEY_MEMORY_INDEX", "flat", 0, 0, "KIND",
      "the memory's FAISS index: flat (exact), hnsw or ivf (approximate, for 10,000s of "
      "memories and more; docs/MEMORY.md)" },
    { "top-k", 'k', PCONFIG_INT, "PARLEY_TOP_K", "3", 1, 256, "N",
      "memories retrieved per step" },
    { "max-steps", 'n', PCONFIG_INT, "PARLEY_MAX_STEPS", "20", 1, 1000000, "N",
      "stop after this many steps" },
    { "stop-when-explored", 0, PCONFIG_BOOL, "PARLEY_STOP_WHEN_EXPLORED", "true", 0, 0, "BOOL",
      "stop when the world reports everything explored" },
    { "seed", 's', PCONFIG_INT, "PARLEY_SEED", "1", 0, 9.2e18, "N",
      "seed of the heuristic policy (mixed with the id)" },
    { "step-delay-ms", 0, PCONFIG_INT, "PARLEY_STEP_DELAY_MS", "0", 0, 3600000, "MS",
      "pause between steps (heartbeats and mail wake-ups continue)" },
    { "request-timeout-ms", 0, PCONFIG_INT, "PARLEY_REQUEST_TIMEOUT_MS", "3000", 100, 600000, "MS",
      "broker reply timeout; then the agent reconnects and retries" },
    { "curve-key", 0, PCONFIG_STR, "PARLEY_CURVE_KEY", NULL, 0, 0, "FILE",
      "own CURVE key pair (parley-keygen; FILE and FILE_secret), with --curve-server-key" },
    { "curve-server-key", 0, PCONFIG_STR, "PARLEY_CURVE_SERVER_KEY", NULL, 0, 0, "FILE",
      "the broker's public certificate: CURVE to the broker (docs/SECURITY.md)" },
    //  The model's failure budget (see docs/MODEL.md, "When the model fails").
    { "llm-deadline-ms", 0, PCONFIG_INT, "PARLEY_LLM_DEADLINE_MS", "120000", 0, 3600000, "MS",
      "one decision's whole budget: every model call, retry and backoff (0: none)" },
    { "llm-breaker-ms", 0, PCONFIG_INT, "PARLEY_LLM_BREAKER_MS", "30000", 0, 3600000, "MS",
      "after 3 failed model calls in a row, do not call the server for this long "
      "(doubling up to 5 min while it keeps failing; 0: always call)" },
    { "context-tokens", 0, PCONFIG_INT, "PARLEY_CONTEXT_TOKENS", "4096", 0, 10000000, "N",
      "the model's context window in tokens: the prompt keeps to it (about 3 characters "
      "a token, 512 kept for the answer), oldest history first (0: no limit)" },
    { "llm-vision", 0, PCONFIG_BOOL, "PARLEY_LLM_VISION", "false", 0, 0, "BOOL",
      "the model is multimodal: show it the view's image (from a world file with "
      "images) as an image_url content part" },
    { "caption-url", 0, PCONFIG_STR, "PARLEY_CAPTION_URL", NULL, 0, 0, "URL",
      "OpenAI-compatible multimodal model that captions the view's image; the caption "
      "(visible_caption) joins the memory query, the stored memory and the prompt "
      "(key from PARLEY_LLM_API_KEY or OPENAI_API_KEY)" },
    { "caption-model", 0, PCONFIG_STR, "PARLEY_CAPTION_MODEL", NULL, 0, 0, "MODEL",
      "model name for --caption-url" },
    { "llm-probe", 0, PCONFIG_BOOL, "PARLEY_LLM_PROBE", "true", 0, 0, "BOOL",
      "ask GET <llm-url>/models at start and say clearly if the server is not there" },
    { "no-messages", 0, PCONFIG_BOOL, "PARLEY_NO_MESSAGES", "false", 0, 0, NULL,
      "ablation: send no message, join no channel, read no mail, neither write nor read "
      "the team.* state (claims, visits); every policy (docs/TEAM.md)" },
    { "no-shared-positions", 0, PCONFIG_BOOL, "PARLEY_NO_SHARED_POSITIONS", "false", 0, 0, NULL,
      "ablation: do not read world.agent_positions (where teammates stand)" },
    { "no-memory", 0, PCONFIG_BOOL, "PARLEY_NO_MEMORY", "false", 0, 0, NULL,
      "ablation: retrieve no memories and store none" },
    { "team-size", 0, PCONFIG_INT, "PARLEY_TEAM_SIZE", "0", 0, 4096, "N",
      "before the first step, wait until N agents (this one included) are online, "
      "so a team starts together (see --team-wait-ms; a signal stops it); 0 = do not wait" },
    { "team-wait-ms", 0, PCONFIG_INT, "PARLEY_TEAM_WAIT_MS", "120000", 0, 86400000, "MS",
      "with --team-size: start anyway after this long, with a warning naming who came "
      "(any registered id counts, tools that say HELLO as agents too); 0 = wait as long as it takes" },
    { "quiet", 'q', PCONFIG_BOOL, "PARLEY_QUIET", "false", 0, 0, NULL,
      "no progress lines on stdout (the summary is still printed)" },
};

static const char *s_epilogue =
    "Output: one progress line per step on stdout, e.g.\n"
    "  [Agent1] step 3 pos 4 saw [lamp, desk] -> forward (coverage 40%)\n"
    "then a summary ([ID] SUMMARY ... and [ID] found: ...). Logs go to stderr.\n"
    "The loop ends on the end action, --max-steps, or a fully explored world.\n"
    "A lost broker is waited for (with backoff), never a reason to exit.\n"
    "SIGINT/SIGTERM stop after the current stage, save the memory and exit 0.\n"
    "Exit code 4: --policy llm ran to its end but its model never answered once\n"
    "(every step was decided by the heuristic). The log's last error says which:\n"
    "the server was never reached, or it answered with something that is not a\n"
    "model's answer (an HTTP error such as 501, an HTML page); see the MODEL line.";

static volatile sig_atomic_t s_stop = 0;

static void
s_on_signal (int signum)
{
    (void) signum;
    s_stop = 1;
}

//  CZMQ's first socket installs its own SIGINT/SIGTERM handler over ours,
//  which only sets zsys_interrupted (a flag this loop never reads), so the
//  agent would ignore both signals. Turn CZMQ's handling off before any
//  socket exists, then install ours.
static void
s_signals (void)
{
    zsys_handler_set (NULL);
    struct sigaction sa;
    memset (&sa, 0, sizeof (sa));
    sa.sa_handler = s_on_signal;
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    signal (SIGPIPE, SIG_IGN);
}

static void
s_fill (pconfig_t *config, agent_config_t *c, const char *id, const char *memory_dir)
{
    memset (c, 0, sizeof (*c));
    c->broker = pconfig_str (config, "broker");
    c->id = id;
    c->policy = pconfig_str (config, "policy");
    c->llm_url = pconfig_str (config, "llm-url");
    c->llm_model = pconfig_str (config, "llm-model");
    c->llm_mode = pconfig_str (config, "llm-mode");
    c->llm_timeout_ms = pconfig_int (config, "llm-timeout-ms");
    c->embed_url = pconfig_str (config, "embed-url");
    c->embed_model = pconfig_str (config, "embed-model");
    c->embed_dim = pconfig_int (config, "embed-dim");
    c->memory_dir = memory_dir;
    c->memory_index = pconfig_str (config, "memory-index");
    c->top_k = pconfig_int (config, "top-k");
    c->max_steps = pconfig_int (config, "max-steps");
    c->stop_when_explored = pconfig_bool (config, "stop-when-explored");
    c->seed = (uint64_t) pconfig_int (config, "seed");
    c->step_delay_ms = pconfig_int (config, "step-delay-ms");
    c->request_timeout_ms = pconfig_int (config, "request-timeout-ms");
    c->curve_key = pconfig_str (config, "curve-key");
    c->curve_server_key = pconfig_str (config, "curve-server-key");
    c->progress = stdout;
    c->llm_deadline_ms = pconfig_int (config, "llm-deadline-ms");
    c->llm_breaker_ms = pconfig_int (config, "llm-breaker-ms");
    c->llm_probe = pconfig_bool (config, "llm-probe");
    c->context_tokens = pconfig_int (config, "context-tokens");
    c->llm_vision = pconfig_bool (config, "llm-vision");
    c->caption_url = pconfig_str (config, "caption-url");
    c->caption_model = pconfig_str (config, "caption-model");
    c->no_messages = pconfig_bool (config, "no-messages");
    c->no_shared_positions = pconfig_bool (config, "no-shared-positions");
    c->no_memory = pconfig_bool (config, "no-memory");
    c->team_size = pconfig_int (config, "team-size");
    c->team_wait_ms = pconfig_int (config, "team-wait-ms");
}

int
main (int argc, char **argv)
{
    plog_init ("parley-agent", NULL);
    s_signals ();
    pconfig_t *config = pconfig_new ("parley-agent", "parley-agent [OPTIONS]",
        "One Parley agent: explores the broker's world with the step Perception -> "
        "RetrieveMemory -> Communication -> Decision -> Execution -> UpdateMemory, "
        "keeps a private FAISS memory and talks to its team through the broker.",
        s_epilogue, s_options, sizeof (s_options) / sizeof (s_options[0]));
    int ended = PARLEY_EXIT_OK;
    if (pconfig_ends (pconfig_parse (config, argc, argv, false), &ended)) {
        pconfig_destroy (&config);
        return ended;
    }
    char host[256] = "agent";
    const char *id = pconfig_str (config, "id");
    if (!id || !*id) {
        if (gethostname (host, sizeof (host)) != 0)
            snprintf (host, sizeof (host), "agent");
        host[sizeof (host) - 1] = 0;
        id = host;
    }
    plog_set_agent (id);
    char memory_dir[1024];
    const char *dir = pconfig_str (config, "memory-dir");
    if (!dir)
        snprintf (memory_dir, sizeof (memory_dir), "./parley-memory/%s", id);
    else
        snprintf (memory_dir, sizeof (memory_dir), "%s", streq (dir, "none")? "": dir);
    if (!dir)
        mkdir ("./parley-memory", 0700);

    agent_config_t c;
    s_fill (config, &c, id, memory_dir);
    vmemory_index_kind_t kind;
    if (!vmemory_index_kind_parse (c.memory_index, &kind)) {
        plog_error ("--memory-index \"%s\" (from the %s) is not an index kind: flat, hnsw or ivf",
                    c.memory_index, pconfig_source (config, "memory-index"));
        pconfig_destroy (&config);
        return PARLEY_EXIT_USAGE;
    }
    //  Bad key files are a usage error now, not a reconnect loop later.
    zsock_t *probe = zsock_new (ZMQ_DEALER);
    char why[512];
    int keys = pcurve_client (probe, c.curve_key, c.curve_server_key, why, sizeof (why));
    zsock_destroy (&probe);
    if (keys != 0) {
        plog_error ("%s", why);
        pconfig_destroy (&config);
        return PARLEY_EXIT_USAGE;
    }
    if (pconfig_bool (config, "quiet"))
        c.progress = NULL;
    char err[512];
    int status = PARLEY_EXIT_OK;
    role_t *role = NULL;
    if (pconfig_str (config, "role")) {
        s_signals ();
        if (agent_role_run (config, &c, &role, &s_stop, &status) == AGENT_ROLE_EXIT) {
            role_destroy (&role);
            pconfig_destroy (&config);
            return status;
        }
    }
    agent_t *agent = agent_new (&c, err, sizeof (err));
    if (!agent) {
        plog_error ("%s", err);
        role_destroy (&role);
        pconfig_destroy (&config);
        return PARLEY_EXIT_USAGE;
    }
    if (agent_connect (agent, &s_stop, err, sizeof (err)) != 0) {
        if (!s_stop)
            plog_error ("broker refused us: %s", err);
        status = s_stop? PARLEY_EXIT_OK: PARLEY_EXIT_NETWORK;
    }
    else {
        int rc = agent_run (agent);
        agent_summary (agent, stdout);
        status = rc == AGENT_FAILED? PARLEY_EXIT_FAILURE
               : rc == AGENT_NO_MODEL? AGENT_EXIT_NO_MODEL: PARLEY_EXIT_OK;
    }
    agent_destroy (&agent);
    role_destroy (&role);
    pconfig_destroy (&config);
    return status;
}
