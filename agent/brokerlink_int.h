/*  brokerlink_int - the brokerlink_t internals shared by brokerlink.c
    (requests, events, keepalive) and brokerlink_session.c (HELLO and
    reconnects). Not for use outside those two files.
*/
#ifndef PARLEY_BROKERLINK_INT_H
#define PARLEY_BROKERLINK_INT_H

#include <czmq.h>
#include "brokerlink.h"

#define MAX_CAPS 8
#define MAX_RESENDS 5           //  per request, with a live session each time
#define POLL_SLICE_MS 100       //  how often waits look at the stop flag

struct _brokerlink_t {
    char endpoint[256];
    char agent[PROTO_MAX_NAME + 1];
    char *caps[MAX_CAPS];
    size_t cap_count;
    zsock_t *dealer;
    zsock_t *sub;
    char sub_endpoint[256];
    bool session;
    uint64_t next_id;
    uint64_t next_batch;        //  SEND batch ids, see brokerlink_new
    uint64_t enc_id, aux_id, keepalive_id;
    penc_t enc, aux, hello, keepalive;
    bool busy;                  //  inside s_exchange: keepalive stays out
    int64_t request_ms, backoff_max_ms;
    int64_t last_send_ms;
    volatile sig_atomic_t *stop;
    brokerlink_welcome_t welcome;
    uint64_t epoch;
    char channels[BROKERLINK_MAX_CHANNELS][PROTO_MAX_NAME + 1];
    size_t channel_count;
    bool mail_flag;
    bool lost;                  //  the last request failed with no broker
    brokerlink_stats_t stats;
    char *curve_key, *curve_server_key;     //  NULL: plain
    char *token_file;                       //  NULL: token in memory only
    char token[PROTO_MAX_NAME + 1];         //  resume token, "" none yet
};

//  Closes the DEALER (dropping anything queued on it); no session after.
void brokerlink_close_dealer (brokerlink_t *self);
//  One send and the matching reply. 0 ok, -1 timeout or socket error,
//  -2 stopped. Replies with another id (late ones) are dropped.
int brokerlink_exchange (brokerlink_t *self, penc_t *enc, uint64_t id, pmsg_t **reply_p);
//  One reply frame from the DEALER, decoded; NULL if none or undecodable.
pmsg_t *brokerlink_recv_reply (brokerlink_t *self, bool nowait);
//  HELLO until it works, with exponential backoff. 0, -2 stopped, -3 refused.
int brokerlink_ensure_session (brokerlink_t *self, char *err, size_t err_size);

#endif
