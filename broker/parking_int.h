// SPDX-License-Identifier: MIT
/*  parking_int - what parking.c and parking_fit.c share (not an API).

    The records of parked SENDs and held requests (parking.c), and the
    scratch arrays of the check whether a SEND would wait (parking_fit.c).
*/
#ifndef PARLEY_BROKER_PARKING_INT_H
#define PARLEY_BROKER_PARKING_INT_H

#include <czmq.h>
#include "parking.h"

typedef struct _held_t {
    struct _held_t *next;
    bool envelope;
    bool parked;                //  this SEND has been parked before (counted once)
    uint64_t park_seq;          //  and its place in the queue of parked SENDs
    uint64_t serial;
    char key [41];
    int conn_fd;
    int64_t arrived_ms;
    size_t extra;
    size_t size;
    char data [];
} held_t;

typedef struct {
    conn_id_t conn;             //  the key in by_conn
    held_t *send;               //  the parked SEND; NULL when only held requests remain
    agent_t *sender;
    agent_t *blocked_on;        //  the recipient waited for (NULL: retry at once)
    int64_t deadline_ms;
    bool ready;                 //  retry at the end of this turn
    held_t *head, *tail;        //  held behind it, oldest first
    size_t held;
    size_t held_bytes;
} parked_t;

struct _parking_t {
    zhashx_t *by_conn;          //  conn_id_t * -> parked_t (not owned)
    parked_t **list;            //  every record, oldest first (owned)
    size_t count, cap;
    size_t waiting;             //  records with a SEND
    size_t held;                //  held requests, all records
    uint64_t held_bytes;
    bool any_ready;
    bool forced;
    uint64_t park_seq;          //  parks so far: orders the parked SENDs, oldest first
    parked_t *current_rec;      //  the held frame being handled, and its record
    held_t *current;
    int timer_id;               //  -1: no timer
    size_t budget;              //  requests parking_run may still hand on this turn
    //  parking_blocked's scratch, indexed by agent->index
    uint64_t *need_count, *need_bytes;
    uint32_t *stamp;
    size_t scratch_cap;
    uint32_t epoch;
    agent_t **touched;
};

#endif
