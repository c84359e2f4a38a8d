// SPDX-License-Identifier: MIT
/*  mailroom_int - the mailroom's fields, shared by its two files:
    mailroom.c (posting, bounds, channels, restore) and mailroom_fetch.c
    (ack, FETCH and push selection). Not used outside them.
*/
#ifndef PARLEY_BROKER_MAILROOM_INT_H
#define PARLEY_BROKER_MAILROOM_INT_H

#include "mailroom.h"

struct _mailroom_t {
    agents_t *agents;           //  not owned
    channels_t *channels;
    mailroom_limits_t limits;
    mailroom_counters_t counters;
    size_t tombstones;          //  mail dropped by its channel but still
                                //  in some inbox (FETCH skips them)
    mail_error_t *errors;       //  item errors of the current SEND
    size_t error_count, error_cap;
    agent_t **wake;             //  agents with wake_pending, in marking order
    size_t wake_count, wake_next, wake_cap;
    agent_t **push;             //  consumers with push_pending, in marking order
    size_t push_count, push_next, push_cap;
    int64_t now_us;             //  the time of the operation being applied
    uint64_t fetch_through;     //  the last seq the last commit handed out (0: none)
    //  The FETCH (or push) being encoded: entries [fetch_pos, fetch_scan)
    //  of fetch_agent's inbox hold fetch_left live messages; fetch_bytes
    //  is their body bytes, tombstones included (what the out counts add).
    agent_t *fetch_agent;
    size_t fetch_pos, fetch_scan, fetch_left;
    size_t fetch_start, fetch_live;
    uint64_t fetch_bytes;
};

//  Drops one reference; the last one frees the message.
void mailroom_release (mailroom_t *self, mail_t *mail);

//  Pops the head of the agent's inbox, keeping out_count/out_bytes (the
//  entries with seq <= cursor) right. Every pop of an inbox goes here.
static inline mail_t *
mailroom_pop (agent_t *agent)
{
    mail_t *mail = mailbox_pop (agent->inbox);
    if (mail && mail->seq <= agent->cursor) {
        agent->out_count--;
        agent->out_bytes -= mail->body_len;
    }
    return mail;
}

#endif
