// SPDX-License-Identifier: MIT
/*  team_report - a team report read in the one form the agents write it,
    without building a JSON tree.

    team_facts_report writes a report with jansson, compact and in key
    order (docs/TEAM.md):

        {"team":1,"at":12,"claim":40,"visited":[10,11,12],"found":["lamp"]}

    A team of N reads N of them a step, and a JSON tree per report (a hash
    table per object, a node per number) was most of what reading the team
    channel cost. team_report_scan reads exactly that form: the five keys
    in that order, no space, unsigned integers of at most 18 digits without
    a leading zero, `claim` an integer or null, strings of printable ASCII
    without escapes. Anything else (another order, spaces, escapes,
    non-ASCII names, a model's free text) is not scanned: the caller hands
    it to a JSON parser, which decides, so what a report means never
    depends on which reader read it.
*/
#ifndef PARLEY_TEAM_REPORT_H
#define PARLEY_TEAM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "team_facts.h"

typedef struct {
    uint64_t team;                      //  the format version
    uint64_t at;
    bool claim_null;                    //  "claim":null
    uint64_t claim;                     //  else the claimed cell
    uint64_t visited[TEAM_MAX_VISITED]; //  the first TEAM_MAX_VISITED positions
    size_t visited_count;
    size_t found_count;                 //  names, at most TEAM_MAX_FOUND counted
} team_report_t;

//  True when `body` (`len` bytes) is a report in the form above, read into
//  `out`; false when it is not (the caller parses it as JSON).
bool team_report_scan (const char *body, size_t len, team_report_t *out);

#endif
