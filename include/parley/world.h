// SPDX-License-Identifier: MIT
/*  parley/world.h - the world (PERCEIVE, ACT, WORLD_RESET) and STEP, an
    agent's whole step in one request. Included by parley/client.h.
*/
#ifndef PARLEY_API_WORLD_H
#define PARLEY_API_WORLD_H

#include "parley/base.h"

#ifdef __cplusplus
extern "C" {
#endif

parley_err_t parley_client_perceive (parley_client_t *self, parley_observation_t **result_p);
//  ACT with the caller's step number (0: none): a repeat of (agent, step)
//  is answered with the first OBSERVATION and does not move again.
parley_err_t parley_client_act (parley_client_t *self, const char *action, uint64_t step,
                                parley_observation_t **result_p);
//  WORLD_RESET; a seed of zero keeps the broker's choice.
parley_err_t parley_client_world_reset (parley_client_t *self, uint64_t seed);

//  OBSERVATION: where the agent is and what it sees.
void parley_observation_destroy (parley_observation_t **self_p);
uint64_t parley_observation_position (const parley_observation_t *self);
uint64_t parley_observation_x (const parley_observation_t *self);
uint64_t parley_observation_y (const parley_observation_t *self);
//  "perceived", "moved", "edge", "stayed".
const char *parley_observation_outcome (const parley_observation_t *self);
//  The objects at the position, and those this agent saw first.
size_t parley_observation_object_count (const parley_observation_t *self);
const char *parley_observation_object (const parley_observation_t *self, size_t index);
size_t parley_observation_new_count (const parley_observation_t *self);
const char *parley_observation_new_object (const parley_observation_t *self, size_t index);
uint64_t parley_observation_explored (const parley_observation_t *self);
uint64_t parley_observation_objects_total (const parley_observation_t *self);
double parley_observation_coverage (const parley_observation_t *self);
bool parley_observation_done (const parley_observation_t *self);
//  The position's image (PNG or JPEG bytes), or NULL; its type "png" or
//  "jpeg" with an image, else "".
const void *parley_observation_image (const parley_observation_t *self);
size_t parley_observation_image_size (const parley_observation_t *self);
const char *parley_observation_image_type (const parley_observation_t *self);

//  ---------------------------------------------------------------------
//  STEP: an agent's whole step in one request (PROTOCOL.md, STEP). The
//  broker applies, in this order: the ack, the messages (as SEND), the ops
//  (as WRITE: all or none), the action (as ACT; or, without one, a
//  PERCEIVE when asked), then reads up to `fetch` messages of mail. Every
//  part is optional. With a step number (non-zero) the request is
//  idempotent: the client resends it after a lost reply or a reconnect
//  and the broker answers a repeated step from memory without applying
//  anything twice (its mail is read afresh). A step of 0 sends none: the
//  STEP is always applied (and forgets the remembered one), so a resend
//  could apply messages and ops twice. Give a step number with those; a
//  run's first STEP goes without one, so that a number the previous run
//  used is not taken for a resend.

parley_step_t *parley_step_new (void);
void parley_step_destroy (parley_step_t **self_p);
//  Empties every part (its outbox and ops too), keeping the memory.
void parley_step_reset (parley_step_t *self);
//  The agent's step number; 0: none.
void parley_step_set_number (parley_step_t *self, uint64_t step);
//  Acknowledge everything up to `seq` first; 0: nothing.
void parley_step_set_ack (parley_step_t *self, uint64_t seq);
//  The step's own messages and ops, to fill as for SEND and WRITE.
parley_outbox_t *parley_step_messages (parley_step_t *self);
parley_ops_t *parley_step_ops (parley_step_t *self);
//  A move, as ACT's (copied); NULL: none. PARLEY_ERR_INVALID for "" or
//  one longer than the protocol allows.
parley_err_t parley_step_set_action (parley_step_t *self, const char *action);
//  Without an action: the observation of a PERCEIVE.
void parley_step_set_perceive (parley_step_t *self, bool perceive);
//  Return up to `max` messages of mail (0: none); `stream` continues
//  after the mail handed out before.
void parley_step_set_fetch (parley_step_t *self, size_t max, bool stream);

//  PARLEY_OK when the broker answered STEPPED (each part then says how it
//  went); an error code when the whole STEP was refused (nothing applied:
//  TOO_LARGE, STORAGE, ...) or not answered; PARLEY_ERR_INVALID for
//  a step refused before sending.
parley_err_t parley_client_step (parley_client_t *self, const parley_step_t *step,
                                 parley_stepped_t **result_p);

//  STEPPED. The parts belong to it (valid as long as it is).
void parley_stepped_destroy (parley_stepped_t **self_p);
uint64_t parley_stepped_step (const parley_stepped_t *self);
bool parley_stepped_replayed (const parley_stepped_t *self);     //  answered from memory
uint64_t parley_stepped_acked (const parley_stepped_t *self);    //  the position after the ack
//  The messages' result, as SEND's; NULL when the step had none.
const parley_sent_t *parley_stepped_sent (const parley_stepped_t *self);
//  The ops applied, as WRITE's; NULL when none were (see ops_code).
const parley_written_t *parley_stepped_written (const parley_stepped_t *self);
//  Why the ops were refused (none applied): a code and the broker's
//  sentence; 0 and "" when they were not.
int parley_stepped_ops_code (const parley_stepped_t *self);
const char *parley_stepped_ops_message (const parley_stepped_t *self);
//  The world after the action (or PERCEIVE); NULL without.
const parley_observation_t *parley_stepped_observation (const parley_stepped_t *self);
//  Why the action was refused (the other parts applied); 0 and "" when not.
int parley_stepped_action_code (const parley_stepped_t *self);
const char *parley_stepped_action_message (const parley_stepped_t *self);
//  With fetch: the mail, duplicates left out as FETCH does; NULL without.
const parley_mail_t *parley_stepped_mail (const parley_stepped_t *self);

#ifdef __cplusplus
}
#endif

#endif
