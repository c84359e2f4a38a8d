// SPDX-License-Identifier: MIT
/*  parley-ctl tail [TOPIC]...: the broker's events as they happen, by
    topic prefix (default agent., world., state., workflow.; "mail." adds
    the mail wake-ups). Through libparley's generic subscription. Runs
    until interrupted, --count events or --for-ms; exit 0.
    Text: time, topic, type, the event as JSON. --json: one object a line,
    {"ts_us", "topic", "type", "event"}. */
#include <stdio.h>
#include <time.h>

#include "ctl.h"
#include "mpjs.h"
#include "pclock.h"
#include "pconfig.h"

static const char *const s_default [] = { "agent.", "world.", "state.", "workflow." };

static void
s_print (ctl_t *ctl, const parley_event_t *event)
{
    json_t *body = mpjs_decode (parley_event_body (event), parley_event_body_size (event));
    uint64_t received_us = parley_event_received_us (event);
    if (body) {                 //  the envelope says nothing a reader needs
        json_object_del (body, "v");
        json_object_del (body, "t");
        json_object_del (body, "id");
    }
    if (ctl->json) {
        ctl_print_json (json_pack ("{s:I, s:s, s:s, s:o}", "ts_us", (json_int_t) received_us,
                                   "topic", parley_event_topic (event),
                                   "type", parley_event_type (event),
                                   "event", body ? body : json_null ()));
        fflush (stdout);
        return;
    }
    time_t secs = (time_t) (received_us / 1000000);
    struct tm tm;
    localtime_r (&secs, &tm);
    char *text = body ? json_dumps (body, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    printf ("%02d:%02d:%02d.%03d %-24s %-14s %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
            (int) (received_us / 1000 % 1000), parley_event_topic (event),
            parley_event_type (event), text ? text : "?");
    fflush (stdout);
    free (text);
    json_decref (body);
}

int
cmd_tail (ctl_t *ctl)
{
    size_t topics = ctl->arg_count;
    for (size_t i = 0; i < topics; i++)
        if (parley_client_subscribe (ctl->link, ctl->args [i]) != PARLEY_OK) {
            fprintf (stderr, "parley-ctl: tail: %s\n", parley_client_error_text (ctl->link));
            return PARLEY_EXIT_USAGE;
        }
    for (size_t i = 0; !topics && i < sizeof s_default / sizeof s_default [0]; i++)
        parley_client_subscribe (ctl->link, s_default [i]);
    //  A subscription takes a moment to reach the broker's PUB socket:
    //  say when it is in place, so a script knows what it will see.
    parley_client_wait (ctl->link, 200);
    fprintf (stderr, "parley-ctl: tailing\n");
    int64_t until = ctl->for_ms ? pclock_mono_ms () + ctl->for_ms : 0;
    uint64_t seen = 0;
    parley_event_t *event = NULL;
    while (!*ctl->stop && (!ctl->count || seen < ctl->count)) {
        if (parley_client_event (ctl->link, &event)) {
            s_print (ctl, event);
            seen++;
            continue;
        }
        int64_t left = until ? until - pclock_mono_ms () : 1000;
        if (left <= 0)
            break;
        parley_client_wait (ctl->link, left < 1000 ? left : 1000);
    }
    parley_event_destroy (&event);
    return PARLEY_EXIT_OK;
}
