// SPDX-License-Identifier: MIT
/*  parley/mail.h - mail: SEND (blocking and pipelined), FETCH, ACK,
    LISTEN, and pushed mail (CONSUME). Included by parley/client.h.

        parley_outbox_t *out = parley_outbox_new ();
        parley_outbox_to (out, "Beta", "hi", 2);
        parley_outbox_channel (out, "team", "at 5", 4);
        parley_sent_t *sent = NULL;
        if (parley_client_send (client, out, &sent) == PARLEY_OK)
            ...                     //  parley_sent_accepted (sent), _seq (sent, i)
        parley_sent_destroy (&sent);
        parley_outbox_destroy (&out);
*/
#ifndef PARLEY_API_MAIL_H
#define PARLEY_API_MAIL_H

#include "parley/base.h"

#ifdef __cplusplus
extern "C" {
#endif

//  ---------------------------------------------------------------------
//  The messages of one SEND (or STEP), built by the caller. The outbox
//  refers to the caller's strings and bodies (nothing is copied) until it
//  is reset or destroyed, or the next message is added: keep them alive
//  until the request that takes the outbox returned.

parley_outbox_t *parley_outbox_new (void);
void parley_outbox_destroy (parley_outbox_t **self_p);
//  Empties the outbox (and forgets a refusal), keeping its memory.
void parley_outbox_reset (parley_outbox_t *self);
//  To an agent, or "all".
parley_err_t parley_outbox_to (parley_outbox_t *self, const char *agent, const void *body,
                               size_t body_size);
//  A post to a channel.
parley_err_t parley_outbox_channel (parley_outbox_t *self, const char *channel, const void *body,
                                    size_t body_size);
//  To a name the broker resolves (one a model wrote): a registered agent
//  gets it as direct mail, a channel someone listens to as a post;
//  anything else is refused for that message with
//  PARLEY_ERR_NO_SUCH_TARGET (in the SENT's failures).
parley_err_t parley_outbox_resolve (parley_outbox_t *self, const char *name, const void *body,
                                    size_t body_size);
size_t parley_outbox_count (const parley_outbox_t *self);

//  ---------------------------------------------------------------------
//  SEND. Bodies longer than WELCOME's max_body are cut at a UTF-8
//  character boundary. PARLEY_ERR_INVALID for an empty outbox or one of
//  more than max_batch messages. `result_p` may be NULL.
parley_err_t parley_client_send (parley_client_t *self, const parley_outbox_t *messages,
                                 parley_sent_t **result_p);

//  SENT.
void parley_sent_destroy (parley_sent_t **self_p);
uint64_t parley_sent_batch (const parley_sent_t *self);     //  the batch id the SEND carried
size_t parley_sent_count (const parley_sent_t *self);       //  messages sent
size_t parley_sent_accepted (const parley_sent_t *self);
//  The seq message `index` got; 0 when it was refused (or out of range).
uint64_t parley_sent_seq (const parley_sent_t *self, size_t index);
//  The messages refused (a fan-out to "all" may miss several recipients).
size_t parley_sent_error_count (const parley_sent_t *self);
const parley_failure_t *parley_sent_error_at (const parley_sent_t *self, size_t index);

//  A message (or a whole SEND) the broker refused.
void parley_failure_destroy (parley_failure_t **self_p);
//  The pipelined post's ticket (parley_client_send_pipelined); 0 for SENT's.
parley_ticket_t parley_failure_ticket (const parley_failure_t *self);
//  The whole SEND was refused (`index` is then 0).
bool parley_failure_whole (const parley_failure_t *self);
size_t parley_failure_index (const parley_failure_t *self);    //  the message in its SEND
int parley_failure_code (const parley_failure_t *self);        //  parley_err_t
const char *parley_failure_agent (const parley_failure_t *self);   //  a fan-out's recipient, or ""
const char *parley_failure_message (const parley_failure_t *self); //  the broker's sentence

//  ---------------------------------------------------------------------
//  FETCH: acknowledges everything up to `ack` (0: nothing), then takes at
//  most `max` (0: the broker's default). `stream` continues after what
//  earlier FETCHes handed out. Messages whose seq this client has handed
//  out before in this process (a redelivery after a lost reply or a
//  broker restart) are left out: see parley_client_dedup. So a plain FETCH
//  that acknowledges nothing returns the same head again and comes back
//  empty while `pending` says there is more: acknowledge what you took,
//  or fetch with `stream`.
parley_err_t parley_client_fetch (parley_client_t *self, uint64_t ack, size_t max,
                                  bool stream, parley_mail_t **result_p);
//  Turns the duplicate filter of FETCH (and pushes, and STEP) on (default) or off.
void parley_client_dedup (parley_client_t *self, bool on);
//  ACK: acknowledges everything up to seq.
parley_err_t parley_client_ack (parley_client_t *self, uint64_t seq);
//  ACK without waiting for the reply (cumulative: everything up to seq).
//  An ack lost with a connection is sent again with the next HELLO. To a
//  broker whose WELCOME lists "send_ack" it rides on the next SEND
//  instead, within the linger (see "Acknowledgements riding on SEND").
parley_err_t parley_client_ack_nowait (parley_client_t *self, uint64_t seq);

//  MAIL: a batch of messages, oldest first.
void parley_mail_destroy (parley_mail_t **self_p);
size_t parley_mail_count (const parley_mail_t *self);
const parley_message_t *parley_mail_at (const parley_mail_t *self, size_t index);
uint64_t parley_mail_pending (const parley_mail_t *self);  //  still queued after these
uint64_t parley_mail_acked (const parley_mail_t *self);    //  the acknowledged position
//  The highest seq in the batch (0 when empty): what to acknowledge.
uint64_t parley_mail_last_seq (const parley_mail_t *self);

//  One message.
uint64_t parley_message_seq (const parley_message_t *self);
uint64_t parley_message_ts (const parley_message_t *self);  //  microseconds, broker clock
const char *parley_message_from (const parley_message_t *self);
const char *parley_message_to (const parley_message_t *self);      //  agent, "all", or ""
const char *parley_message_channel (const parley_message_t *self); //  "" for point-to-point
//  The body: body_size bytes, not NUL-terminated.
const void *parley_message_body (const parley_message_t *self);
size_t parley_message_body_size (const parley_message_t *self);

//  LISTEN / UNLISTEN; a channel listened to is listened to again after
//  every reconnect (at most PARLEY_MAX_CHANNELS).
#define PARLEY_MAX_CHANNELS 16
parley_err_t parley_client_listen (parley_client_t *self, const char *channel);
parley_err_t parley_client_unlisten (parley_client_t *self, const char *channel);

//  ---------------------------------------------------------------------
//  Pushed mail (PROTOCOL.md, CONSUME): instead of FETCH after a wake-up,
//  the broker pushes the agent's mail on the request connection as it is
//  queued, while what it pushed and nobody acknowledged stays within a
//  window of `credit` messages and `credit_bytes` body bytes (0: the
//  broker's default, 8 MiB). Acknowledging returns credit. credit 0 stops
//  the pushes. The subscription is opened again after every reconnect
//  (the mail pushed and not acknowledged then comes again; the duplicate
//  filter leaves out what was taken before).
//
//  Pushed mail wakes parley_client_wait (it returns at once), makes
//  parley_client_process and _take_mail return true, and fires
//  parley_client_fd. Take it with parley_client_take_pushed, one pushed
//  frame at a time, until it returns false.
#define PARLEY_MAX_CREDIT 65536

typedef enum {
    PARLEY_ACK_EXPLICIT = 0,    //  the caller acknowledges (parley_client_ack,
                                //  _ack_nowait, a FETCH's ack): the default
    PARLEY_ACK_ON_TAKE          //  each take acknowledges everything the takes
                                //  before it handed out (cumulative, no round trip)
} parley_ack_policy_t;

//  CONSUME. PARLEY_ERR_INVALID for credit over PARLEY_MAX_CREDIT; the
//  broker's BAD_FIELD for a credit_bytes over its limit (64 MiB).
parley_err_t parley_client_consume (parley_client_t *self, uint32_t credit,
                                    uint64_t credit_bytes);
void parley_client_ack_policy (parley_client_t *self, parley_ack_policy_t policy);
//  The oldest pushed mail not yet taken, without waiting, into *result_p
//  (made when NULL, else filled again); false when none (or when memory
//  for it ran out: the frame stays queued). Under PARLEY_ACK_ON_TAKE it
//  first acknowledges what earlier takes handed out, so call it again
//  after processing a batch, even when you expect nothing: that returns
//  the credit.
bool parley_client_take_pushed (parley_client_t *self, parley_mail_t **result_p);

//  ---------------------------------------------------------------------
//  Pipelined SENDs with cumulative confirms (docs/CLIENT.md).
//
//  parley_client_send_pipelined posts a SEND that gets no SENT: the
//  broker confirms the pipelined SENDs of a connection together (CONFIRM,
//  proto/PROTOCOL.md), naming only the messages that failed. The client
//  keeps a window of SENDs in flight, bounded in messages and in bytes;
//  a post that would pass it blocks the caller, taking confirms, until
//  there is room: that is the backpressure a slow receiver puts on a
//  fast sender (the broker also parks a SEND whose recipient's inbox is
//  full, up to the SEND's wait, below).
//
//  Coalescing (2.1). A post made while earlier SENDs are still in flight
//  is held and goes with the posts after it as one multi-item SEND frame:
//  one message per call then costs what a batch costs. What is held goes
//  when nothing is in flight any more, when it is full (see
//  parley_client_set_coalesce), when its oldest post has waited the
//  linger, when the caller waits or polls (parley_client_wait, _process,
//  a parley_client_take_pushed that finds nothing; parley_client_fd
//  fires for the linger's end), flushes, makes any
//  other request (held posts go first: the broker sees requests in the
//  order they were made) or destroys the client (sent, with up to a
//  second to leave the socket, but neither confirmed nor sent again:
//  call parley_client_send_flush first to know). A post to an idle pipe
//  goes at once.
//  Each post keeps its own ticket; its failures name that ticket and the
//  message's index in that post, and a frame refused whole fails each of
//  its posts whole. Order, confirms and resends are as without it.
//
//  Delivery is at-least-once: after a reconnect (no confirm within the
//  request timeout, or the broker forgot the session) every SEND not yet
//  confirmed is sent again, in order, on the new session; some may have
//  been applied already. A SEND still unconfirmed after `attempts` rounds
//  fails with its messages as PARLEY_ERR_TIMEOUT failures.
//
//  Failures (a refused SEND, a message that could not be queued) are kept
//  in a queue of PARLEY_SEND_FAILURES (older ones beyond are dropped and
//  counted) and taken with parley_client_send_failure. Counters:
//  PARLEY_COUNTER_POSTED and the ones after it, PARLEY_COUNTER_SEND_FRAMES
//  and the flush counters after it.
//
//  Acknowledgements riding on SEND (2.1). When WELCOME lists the feature
//  "send_ack" (parley_welcome_feature), an acknowledgement made without
//  waiting (parley_client_ack_nowait, the takes of PARLEY_ACK_ON_TAKE) is
//  held and carried by the next SEND the client sends (pipelined or not)
//  instead of an ACK frame and its OK; when none goes within the linger,
//  or the caller waits, polls (as above) or makes another request, it
//  goes as an ACK frame. A broker without the feature gets an ACK frame at once, as in
//  2.0. PARLEY_COUNTER_ACKS_RIDDEN and _ACKS_SENT count them.
#define PARLEY_SEND_FAILURES 1024

//  Posts one pipelined SEND (checked as parley_client_send does), held or
//  sent as above. Blocks while the window has no room for what must go
//  first. `ticket`, if not NULL, gets the post's ticket, which its
//  failures name. PARLEY_OK once taken; PARLEY_ERR_INVALID, _STOPPED,
//  _TIMEOUT (the broker stopped confirming: see above), _LOST, _NOMEM
//  (the post was not taken).
parley_err_t parley_client_send_pipelined (parley_client_t *self, const parley_outbox_t *messages,
                                           parley_ticket_t *ticket);
//  Sends what is held and waits until every pipelined SEND is confirmed.
//  PARLEY_OK, or as above.
parley_err_t parley_client_send_flush (parley_client_t *self);
//  The window: at most `messages` messages and `bytes` frame bytes in
//  unconfirmed SENDs (one SEND always goes, whatever its size). Defaults
//  16384 messages and 16 MiB, within what the broker holds behind a
//  parked SEND (16384 requests, 32 MiB).
void parley_client_set_send_window (parley_client_t *self, size_t messages, size_t bytes);
//  Coalescing (2.1): a frame of held posts goes at `messages` messages or
//  `bytes` bytes of messages (defaults 1024 and 256 KiB; within the
//  window, WELCOME's max_batch and half the frame limit), or when its
//  oldest post has been held `linger_us` microseconds (default 1000).
//  A linger of 0 turns coalescing off: every post is its own SEND, sent
//  at once (as in 2.0).
void parley_client_set_coalesce (parley_client_t *self, size_t messages, size_t bytes,
                                 int64_t linger_us);
//  How long a SEND (pipelined or not) may wait in the broker for room in
//  an online recipient's full inbox, sent as its wait_ms. Always at most
//  three quarters of the request timeout, so the reply comes before the
//  client gives up; that is also the default. 0: INBOX_FULL at once.
void parley_client_set_send_wait (parley_client_t *self, int64_t wait_ms);
//  The oldest failure not yet taken, into *failure_p (made when NULL,
//  else filled again); false when none.
bool parley_client_send_failure (parley_client_t *self, parley_failure_t **failure_p);

#ifdef __cplusplus
}
#endif

#endif
