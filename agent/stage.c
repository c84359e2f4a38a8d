// SPDX-License-Identifier: MIT
/*  stage - the agent's shared retry and fallback rule. See stage.h. */
#include <assert.h>
#include <stddef.h>
#include "plog.h"
#include "stage.h"

static const struct {
    const char *name;
    unsigned max_retries;
} s_stages [STAGE__COUNT] = {
    [STAGE_PERCEPTION]      = { "Perception", 2 },
    [STAGE_RETRIEVE_MEMORY] = { "RetrieveMemory", 1 },
    [STAGE_COMMUNICATION]   = { "Communication", 1 },
    [STAGE_DECISION]        = { "Decision", 1 },
    [STAGE_EXECUTION]       = { "Execution", 0 },
    [STAGE_UPDATE_MEMORY]   = { "UpdateMemory", 1 },
};

const char *
stage_name (stage_id_t id)
{
    return id < STAGE__COUNT? s_stages [id].name: "?";
}

unsigned
stage_max_retries (stage_id_t id)
{
    assert (id < STAGE__COUNT);
    return s_stages [id].max_retries;
}

stage_outcome_t
stage_attempt (stage_id_t id, stage_stats_t *stats,
               stage_try_fn *attempt, stage_fallback_fn *fallback, void *arg)
{
    assert (id < STAGE__COUNT);
    assert (attempt);
    stage_stats_t unused = { 0 };
    stage_stats_t *mine = stats? &stats [id]: &unused;
    unsigned max_retries = s_stages [id].max_retries;
    for (unsigned n = 0; n <= max_retries; n++) {
        mine->attempts++;
        if (n > 0)
            mine->retries++;
        stage_outcome_t outcome = attempt (arg);
        assert (outcome == STAGE_OK || outcome == STAGE_RETRY);
        if (outcome == STAGE_OK)
            return STAGE_OK;
        plog_debug ("stage %s: attempt %u of %u failed", s_stages [id].name, n + 1,
                    max_retries + 1);
    }
    if (fallback) {
        mine->fallbacks++;
        stage_outcome_t outcome = fallback (arg);
        assert (outcome == STAGE_FALLBACK || outcome == STAGE_FAILED);
        if (outcome == STAGE_FALLBACK)
            return STAGE_FALLBACK;
    }
    mine->errors++;
    plog_warn ("stage %s failed after %u attempt(s)", s_stages [id].name, max_retries + 1);
    return STAGE_FAILED;
}
