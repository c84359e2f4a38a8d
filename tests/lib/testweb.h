// SPDX-License-Identifier: MIT
/*  testweb - HTTP, event streams and ready files for parley-web's suites.
    Each helper fails the running Check test when something is wrong.
*/
#ifndef PARLEY_TESTWEB_H
#define PARLEY_TESTWEB_H

#include <stddef.h>
#include <stdint.h>
#include "tproc.h"

typedef struct {
    long status;
    char *body;
    size_t size;
    char allow [64];
    char type [128];
} testweb_reply_t;

//  One request (`type` NULL: no Content-Type; `body` NULL: none). The
//  caller frees reply.body (never NULL).
testweb_reply_t testweb_http (uint16_t port, const char *method, const char *path,
                              const char *type, const char *body, size_t body_size);
//  A request without a body must get `status` (and the Allow header
//  `allow` when not NULL); errors must be JSON.
void testweb_expect (uint16_t port, const char *method, const char *path, long status,
                     const char *allow);

typedef struct {
    int fd;
    char buf [256 * 1024];
    size_t size;
} testweb_stream_t;

testweb_stream_t *testweb_stream_open (uint16_t port, const char *path);
//  Reads until `needle` is in what was received; false at the deadline.
bool testweb_stream_wait (testweb_stream_t *stream, const char *needle, int timeout_ms);
void testweb_stream_close (testweb_stream_t **stream_p);

//  The URL from parley-web's --ready-file (caller frees); fails the test
//  if parley-web exits or writes none within a minute.
char *testweb_wait_url (const char *ready, tproc_t *web);
//  The port of "http://HOST:PORT/".
uint16_t testweb_port (const char *url);
//  What a browser test (node and puppeteer-core) needs: the page script
//  $PARLEY_TEST_DIR/web/view.test.js in `script`, and where to put its
//  screenshot, $PARLEY_BIN_DIR/../<shot_name>, in `shot` (each `size`
//  bytes). Fails the test when either variable is unset or puppeteer-core
//  is not installed.
void testweb_browser (const char *shot_name, char *script, char *shot, size_t size);

#endif
