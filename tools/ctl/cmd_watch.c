/*  parley-ctl watch [KEY]...: follows a workflow turn by turn. For each
    WORKFLOW_EVENT it prints who acted, what their turn changed (the
    difference between the event's checkpoint and the one before) and who
    is next; when the run ends, the values of the KEYs given (e.g. the
    final report). Exit 0 when the workflow is done, 1 when it failed. */
#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "mpjs.h"
#include "pconfig.h"
#include "workflow_events.h"
#include "workflow_requests.h"

//  One line per changed key: arrays by length, the rest by value (cut).
static void
s_print_change (const msgpack_object *entry)
{
    size_t len = 0;
    const char *key = pobj_str (entry, "key", &len);
    const msgpack_object *value = pobj_get (entry, "value");
    if (pobj_bool (entry, "removed", false)) {
        printf ("      %.*s removed\n", (int) len, key);
        return;
    }
    if (value && value->type == MSGPACK_OBJECT_ARRAY) {
        printf ("      %.*s: %u items\n", (int) len, key, value->via.array.size);
        //  Items that describe themselves (issues) are worth reading.
        for (uint32_t i = 0; i < value->via.array.size && i < 8; i++) {
            const msgpack_object *item = &value->via.array.ptr [i];
            size_t size = 0;
            const char *text = item->type == MSGPACK_OBJECT_MAP
                             ? pobj_str (item, "description", &size) : NULL;
            char category [64] = "";
            if (text && pobj_strcpy (item, "category", category, sizeof category))
                printf ("        - [%s] %.*s\n", category, (int) size, text);
        }
        return;
    }
    static const msgpack_object nil = { .type = MSGPACK_OBJECT_NIL };
    json_t *json = mpjs_to_json (value ? value : &nil);
    char *text = json ? json_dumps (json, JSON_COMPACT | JSON_ENCODE_ANY
                                         | JSON_REAL_PRECISION (4)) : NULL;
    printf ("      %.*s = %.100s%s\n", (int) len, key, text ? text : "null",
            text && strlen (text) > 100 ? "..." : "");
    free (text);
    json_decref (json);
}

static void
s_print_turn (ctl_t *ctl, const pmsg_t *event, const char *previous)
{
    char name [32], holder [80], agent [80], status [32], reason [PROTO_MAX_TEXT + 1];
    wfreq_str (event, "event", name, sizeof name);
    wfreq_str (event, "holder", holder, sizeof holder);
    wfreq_str (event, "agent", agent, sizeof agent);
    wfreq_str (event, "status", status, sizeof status);
    wfreq_str (event, "reason", reason, sizeof reason);
    uint64_t checkpoint = pmsg_uint (event, "checkpoint", 0);
    printf ("turn %-3llu %-10s %s -> %s  [%s, revisions %llu]%s%s\n",
            (unsigned long long) pmsg_uint (event, "turn", 0), name,
            previous [0] ? previous : "(start)", holder [0] ? holder : "(end)", status,
            (unsigned long long) pmsg_uint (event, "revisions", 0),
            agent [0] ? "  agent " : "", agent);
    if (reason [0])
        printf ("      reason: %s\n", reason);
    if (checkpoint == 0 || strcmp (name, "resumed") == 0)
        return;
    char err [256];
    pmsg_t *diff = wfreq_checkpoint (ctl->link, checkpoint, (int64_t) checkpoint - 1,
                                     err, sizeof err);
    const msgpack_object *entries = diff && pmsg_type (diff) == PMSG_CHECKPOINT_STATE
                                  ? pmsg_field (diff, "entries") : NULL;
    for (uint32_t i = 0; entries && i < entries->via.array.size; i++)
        s_print_change (&entries->via.array.ptr [i]);
    pmsg_destroy (&diff);
}

int
cmd_watch (ctl_t *ctl)
{
    wfevents_t *events = wfevents_new (brokerlink_welcome (ctl->link)->pub);
    if (!events) {
        fprintf (stderr, "parley-ctl: cannot subscribe to %s\n", brokerlink_welcome (ctl->link)->pub);
        return PARLEY_EXIT_NETWORK;
    }
    char err [256] = "", status [32] = "", previous [80] = "";
    pmsg_t *info = ctl_expect (wfreq_info (ctl->link, err, sizeof err), PMSG_WORKFLOW_INFO,
                               "WORKFLOW", err);
    bool connected = info != NULL;
    if (info) {
        wfreq_str (info, "status", status, sizeof status);
        wfreq_str (info, "holder", previous, sizeof previous);
        if (strcmp (status, "pending") == 0)
            previous [0] = 0;           //  the first turn has no one before it
        printf ("workflow %s, %s holds turn %llu\n", status, previous [0] ? previous : "nobody",
                (unsigned long long) pmsg_uint (info, "turn", 0));
        pmsg_destroy (&info);
    }
    fflush (stdout);
    int rc = strcmp (status, "done") == 0 ? PARLEY_EXIT_OK
           : strcmp (status, "failed") == 0 ? PARLEY_EXIT_FAILURE : -1;
    while (rc < 0 && connected && !brokerlink_stopped (ctl->link)) {
        brokerlink_tick (ctl->link);
        pmsg_t *event = wfevents_next (events, 500);
        if (!event)
            continue;
        s_print_turn (ctl, event, previous);
        wfreq_str (event, "holder", previous, sizeof previous);
        wfreq_str (event, "status", status, sizeof status);
        if (strcmp (status, "done") == 0)
            rc = PARLEY_EXIT_OK;
        if (strcmp (status, "failed") == 0)
            rc = PARLEY_EXIT_FAILURE;
        pmsg_destroy (&event);
        fflush (stdout);
    }
    if (rc >= 0 && ctl->arg_count) {
        pmsg_t *state = wfreq_get (ctl->link, ctl->args, ctl->arg_count, err, sizeof err);
        const msgpack_object *entries = state && pmsg_type (state) == PMSG_STATE
                                      ? pmsg_field (state, "entries") : NULL;
        for (uint32_t i = 0; entries && i < entries->via.array.size; i++) {
            size_t len = 0;
            const char *key = pobj_str (&entries->via.array.ptr [i], "key", &len);
            const msgpack_object *value = pobj_get (&entries->via.array.ptr [i], "value");
            printf ("\n%.*s:\n", (int) len, key);
            if (value && value->type == MSGPACK_OBJECT_STR)
                printf ("%.*s\n", (int) value->via.str.size, value->via.str.ptr);
            else {
                ctl_print_value (value);
                putchar ('\n');
            }
        }
        pmsg_destroy (&state);
    }
    wfevents_destroy (&events);
    return rc < 0 ? PARLEY_EXIT_FAILURE : rc;
}
