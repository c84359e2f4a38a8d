/*  agent_flow - the agent's wiring, in one place:

        Perception -> RetrieveMemory -> Communication -> Decision
            ^                                               |
            |                                               v
        UpdateMemory <------------- Execution <-------------+
            |
            +-- continue (loop) / end (stop)

    "end" (and "error", "stopped") has no transition, so flow_run returns
    with it. Nodes handle their own failures with retries and fallbacks, so
    "error" only happens when a fallback itself fails.
*/
#include "agent_shared.h"

int
agent_flow_build (flow_t *flow)
{
    static const char *const order[] = {
        "Perception", "RetrieveMemory", "Communication", "Decision", "Execution", "UpdateMemory"
    };
    const flow_node_ops_t *ops[] = {
        node_perception (), node_retrieve_memory (), node_communication (),
        node_decision (), node_execution (), node_update_memory ()
    };
    for (size_t i = 0; i < 6; i++)
        if (flow_add (flow, order[i], ops[i], NULL) < 0)
            return -1;
    for (size_t i = 0; i + 1 < 6; i++)
        if (flow_connect (flow, order[i], "default", order[i + 1]) != 0)
            return -1;
    return flow_connect (flow, "UpdateMemory", "continue", "Perception");
}
