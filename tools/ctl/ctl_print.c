/*  ctl_print - parley-ctl's output: text for people, --json for scripts,
    and the common error paths of a request. */
#include "ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpjs.h"
#include "pconfig.h"

pmsg_t *
ctl_expect (pmsg_t *reply, pmsg_type_t type, const char *what, const char *err)
{
    if (!reply) {
        fprintf (stderr, "parley-ctl: %s: no reply: %s\n", what, err);
        return NULL;
    }
    if (pmsg_type (reply) == type)
        return reply;
    char message [PROTO_MAX_TEXT + 1] = "", name [64] = "";
    pmsg_strcpy (reply, "message", message, sizeof message);
    pmsg_strcpy (reply, "error", name, sizeof name);
    fprintf (stderr, "parley-ctl: %s: %s: %s\n", what, name [0] ? name : pmsg_type_name (pmsg_type (reply)),
             message);
    pmsg_destroy (&reply);
    return NULL;
}

bool
ctl_uint_arg (ctl_t *ctl, size_t index, const char *name, uint64_t *value)
{
    char *end = NULL;
    if (index >= ctl->arg_count) {
        fprintf (stderr, "parley-ctl: missing %s\n", name);
        return false;
    }
    const char *text = ctl->args [index];
    unsigned long long parsed = strtoull (text, &end, 10);
    if (!*text || *end || text [0] == '-') {
        fprintf (stderr, "parley-ctl: %s must be a number, not \"%s\"\n", name, text);
        return false;
    }
    *value = parsed;
    return true;
}

void
ctl_print_value (const msgpack_object *value)
{
    static const msgpack_object nil = { .type = MSGPACK_OBJECT_NIL };
    json_t *json = mpjs_to_json (value ? value : &nil);
    char *text = json ? json_dumps (json, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION (6))
                      : NULL;
    fputs (text ? text : "null", stdout);
    free (text);
    json_decref (json);
}

static void
s_print_json (const msgpack_object *object)
{
    ctl_print_value (object);
    putchar ('\n');
}

void
ctl_print_info (ctl_t *ctl, const pmsg_t *info)
{
    if (ctl->json) {
        s_print_json (pmsg_root (info));
        return;
    }
    char status [64], holder [80], agent [80], reason [PROTO_MAX_TEXT + 1] = "";
    pmsg_strcpy (info, "reason", reason, sizeof reason);
    printf ("status      %s\n", pmsg_strcpy (info, "status", status, sizeof status) ? status : "?");
    printf ("holder      %s%s\n", pmsg_strcpy (info, "holder", holder, sizeof holder) ? holder : "-",
            pmsg_bool (info, "paused", false) ? " (paused: waiting for a person)" : "");
    printf ("agent       %s\n", pmsg_strcpy (info, "agent", agent, sizeof agent) ? agent : "-");
    printf ("turn        %llu of at most %llu\n", (unsigned long long) pmsg_uint (info, "turn", 0),
            (unsigned long long) pmsg_uint (info, "max_turns", 0));
    printf ("revisions   %llu of at most %llu\n",
            (unsigned long long) pmsg_uint (info, "revisions", 0),
            (unsigned long long) pmsg_uint (info, "max_revisions", 0));
    printf ("checkpoint  %llu\n", (unsigned long long) pmsg_uint (info, "checkpoint", 0));
    if (reason [0])
        printf ("reason      %s\n", reason);
}

void
ctl_print_checkpoint (ctl_t *ctl, const msgpack_object *info)
{
    if (ctl->json) {
        s_print_json (info);
        return;
    }
    char status [64] = "", holder [80] = "";
    pobj_strcpy (info, "status", status, sizeof status);
    pobj_strcpy (info, "holder", holder, sizeof holder);
    printf ("%6llu  turn %-4llu %-12s holder %-20s revisions %llu  changed %llu keys, %llu bytes\n",
            (unsigned long long) pobj_uint (info, "number", 0),
            (unsigned long long) pobj_uint (info, "turn", 0), status, holder [0] ? holder : "-",
            (unsigned long long) pobj_uint (info, "revisions", 0),
            (unsigned long long) pobj_uint (info, "changed", 0),
            (unsigned long long) pobj_uint (info, "bytes", 0));
}

void
ctl_print_entries (ctl_t *ctl, const pmsg_t *state)
{
    if (ctl->json) {
        s_print_json (pmsg_root (state));
        return;
    }
    const msgpack_object *entries = pmsg_field (state, "entries");
    for (uint32_t i = 0; entries && i < entries->via.array.size; i++) {
        const msgpack_object *entry = &entries->via.array.ptr [i];
        size_t len = 0;
        const char *key = pobj_str (entry, "key", &len);
        if (pobj_bool (entry, "removed", false)) {
            printf ("- %.*s\n", (int) len, key);
            continue;
        }
        char reducer [32] = "";
        pobj_strcpy (entry, "reducer", reducer, sizeof reducer);
        printf ("%.*s (%s) = ", (int) len, key, reducer);
        ctl_print_value (pobj_get (entry, "value"));
        putchar ('\n');
    }
}
